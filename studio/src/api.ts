// The studio's one way to the server: same-origin fetch with the session cookie (the browser adds the
// Origin header the server's CSRF check reads). Every failure becomes an ApiError carrying the
// catalogue's message and suggestion, so pages never show a raw status.

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly suggestion?: string,
    readonly field?: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

type Json = Record<string, unknown> | unknown[];

/** The catalogue's error body of a failed answer, as an ApiError. */
export async function errorOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  const message =
    typeof body.message === 'string' && body.message
      ? body.message
      : res.status === 401
        ? 'You are signed out.'
        : 'The server could not answer this request.';
  return new ApiError(
    message,
    res.status,
    typeof body.errorCode === 'string' ? body.errorCode : undefined,
    typeof body.suggestion === 'string' ? body.suggestion : undefined,
    typeof body.field === 'string' ? body.field : undefined,
    body,
  );
}

/** Listeners told when a call finds the session gone (the app then shows the sign-in page). */
const signedOutListeners = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export async function request(
  method: string,
  path: string,
  body?: Json | FormData,
  headers: Record<string, string> = {},
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers:
        body && !(body instanceof FormData) ? { 'content-type': 'application/json', ...headers } : headers,
      body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
    });
  } catch {
    throw new ApiError('The server cannot be reached.', 0, undefined, 'Check your connection and try again.');
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && path.startsWith('/v2/')) for (const l of signedOutListeners) l();
    throw err;
  }
  return res;
}

export async function api<T>(
  method: string,
  path: string,
  body?: Json | FormData,
  headers?: Record<string, string>,
): Promise<T> {
  const res = await request(method, path, body, headers);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T>(path: string) => api<T>('GET', path);

/** POST with upload progress (fetch has none): resolves with the JSON answer. */
export function upload<T>(
  path: string,
  form: FormData,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.withCredentials = true;
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      const res = new Response(xhr.responseText, {
        status: xhr.status,
        headers: { 'content-type': 'application/json' },
      });
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText || 'null') as T);
      else void errorOf(res).then(reject);
    };
    xhr.onerror = () =>
      reject(
        new ApiError('The upload was interrupted.', 0, undefined, 'Check your connection and try again.'),
      );
    xhr.onabort = () => reject(new ApiError('The upload was canceled.', 0));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}

export interface Session {
  user: { id: string; email: string; name: string };
  organization: { id: string; name: string; draft?: boolean } | null;
  role: 'owner' | 'admin' | 'member' | null;
}

/** The signed-in user, or null. */
export async function currentSession(): Promise<Session | null> {
  const res = await request('GET', '/api/auth/session');
  const body = (await res.json().catch(() => null)) as Session | null;
  return body && body.user ? body : null;
}
