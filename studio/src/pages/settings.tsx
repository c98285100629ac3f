import { useEffect, useState } from 'preact/hooks';
import { get, type Session } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import type { Route } from '../router.js';
import type { ApiKey } from '../types.js';

/** The organization's settings: its API keys (a member sees only its own). */
export function Settings(_props: { session: Session; route: Route }) {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<ApiKey[]>('/v2/api-keys').then(setKeys, setError);
  }, []);
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <h2>API keys</h2>
      <ErrorMessage error={error} />
      <ul>
        {(keys ?? []).map((k) => (
          <li key={k.id}>
            {k.name} <code>{k.prefix}…</code> ({k.role})
          </li>
        ))}
      </ul>
    </section>
  );
}
