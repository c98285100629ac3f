// Hash routes (#/history, #/generations/ID): the server serves one page at `/`, so a route never
// collides with an API path and a reload keeps its place.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  name: 'new' | 'history' | 'generation' | 'settings' | 'dub' | 'edit' | 'batch';
  id?: string;
  query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?');
  const query = new URLSearchParams(search);
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'history') return { name: 'history', query };
  if (parts[0] === 'batch') return { name: 'batch', id: parts[1] ? decoded(parts[1]) : undefined, query };
  if (parts[0] === 'settings') return { name: 'settings', id: parts[1], query };
  if (parts[0] === 'dub') return { name: 'dub', id: parts[1] ? decoded(parts[1]) : undefined, query };
  if (parts[0] === 'edit') return { name: 'edit', query };
  if (parts[0] === 'generations' && parts[1]) return { name: 'generation', id: decoded(parts[1]), query };
  return { name: 'new', id: parts[1], query };
}

/** A malformed escape (a hand-edited link) is kept as typed: the API then answers it with a 404. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export function href(path: string): string {
  return `#/${path.replace(/^\//, '')}`;
}

export function navigate(path: string): void {
  location.hash = href(path);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
