import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import type { Generation } from '../types.js';
import { uuid } from './new-request.js';

const ENDED = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);

interface Props {
  /** The full run's request, or null while an input is missing. */
  request: Record<string, unknown> | null;
  /** The moment the video player was paused on (seconds), the default of the field. */
  moment: number | null;
}

/**
 * "Preview one second": the request as it stands, rendered for one second from a chosen moment
 * (options.preview), shown as a still and a short clip before the whole video is generated.
 */
export function PreviewSecond({ request, moment }: Props) {
  const [at, setAt] = useState('0');
  const [g, setG] = useState<Generation | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const run = useRef(0);
  // The paused frame of the player is the moment, until the field is edited.
  useEffect(() => {
    if (moment !== null) setAt(moment.toFixed(2));
  }, [moment]);
  // Another request (inputs, options) makes an earlier preview stale.
  const sent = request ? JSON.stringify(request) : '';
  useEffect(() => {
    run.current++;
    setG(null);
    setError(null);
    setBusy(false);
  }, [sent]);

  const seconds = Number(at);
  const valid = at.trim() !== '' && Number.isFinite(seconds) && seconds >= 0;
  const preview = async () => {
    if (!request || !valid || busy) return;
    const mine = ++run.current;
    setBusy(true);
    setError(null);
    setG(null);
    try {
      const options = {
        ...(request.options as Record<string, unknown>),
        preview: { atMs: Math.round(seconds * 1000) },
      };
      let current = await api<Generation>(
        'POST',
        '/v2/generate',
        { ...request, options },
        { 'Idempotency-Key': uuid() },
      );
      if (mine !== run.current) return;
      setG(current);
      while (!ENDED.has(current.status)) {
        current = await get<Generation>(
          `/v2/generate/${encodeURIComponent(current.id)}?wait=true&timeout=10`,
        );
        if (mine !== run.current) return;
        setG(current);
      }
    } catch (err) {
      if (mine === run.current)
        setError(err instanceof ApiError ? err : new ApiError('Something went wrong.', 0));
    } finally {
      if (mine === run.current) setBusy(false);
    }
  };

  const done = g?.status === 'COMPLETED' ? g : null;
  const shownAt = g?.preview ? (g.preview.atMs / 1000).toFixed(2) : at;
  return (
    <section aria-labelledby="preview-title" class="preview-second">
      <h2 id="preview-title">Preview one second</h2>
      <p class="muted">
        Check the face and the mouth on one second before the whole video: pause the video on a moment, or
        type it. The second is priced as one second.
      </p>
      <label>
        From (seconds)
        <input
          type="number"
          min="0"
          step="0.04"
          value={at}
          aria-invalid={error?.field?.startsWith('options.preview') ? true : undefined}
          onInput={(e) => setAt(e.currentTarget.value)}
        />
      </label>{' '}
      <button type="button" class="secondary" disabled={!request || !valid || busy} onClick={preview}>
        {busy ? 'Rendering the preview…' : 'Preview one second'}
      </button>
      <p role="status">
        {g && !ENDED.has(g.status)
          ? `Rendering one second from ${shownAt} s…`
          : done
            ? `Preview ready: one second from ${shownAt} s.`
            : g
              ? `The preview ended ${g.status.toLowerCase()}: ${g.error ?? ''}`
              : ''}
      </p>
      <ErrorMessage error={error} />
      {done?.outputUrl ? (
        <div class="preview-result">
          {done.preview?.stillUrl ? (
            <img src={done.preview.stillUrl} alt={`The frame at ${shownAt} s, as the generation draws it`} />
          ) : null}
          <video src={done.outputUrl} controls loop preload="auto" aria-label="The preview clip" />
        </div>
      ) : null}
    </section>
  );
}
