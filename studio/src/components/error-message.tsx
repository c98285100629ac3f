import { ApiError } from '../api.js';

/** A failure in the catalogue's words: what went wrong and what to do, announced to screen readers. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const e =
    error instanceof ApiError
      ? error
      : new ApiError(error instanceof Error ? error.message : 'Something went wrong.', 0);
  return (
    <div class="error" role="alert">
      <p>{e.message}</p>
      {e.suggestion ? <p class="suggestion">{e.suggestion}</p> : null}
    </div>
  );
}
