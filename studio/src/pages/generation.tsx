import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { TERMINAL, type Generation } from '../types.js';

/** One generation: waits for it with the API's long-poll, then shows the result. */
export function GenerationPage({ id }: { id: string }) {
  const [g, setG] = useState<Generation | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stopped = false;
    (async () => {
      let current = await get<Generation>(`/v2/generate/${encodeURIComponent(id)}`);
      setG(current);
      while (!stopped && !TERMINAL.has(current.status)) {
        current = await get<Generation>(`/v2/generate/${encodeURIComponent(id)}?wait=true&timeout=10`);
        if (!stopped) setG(current);
      }
    })().catch((e) => !stopped && setError(e));
    return () => {
      stopped = true;
    };
  }, [id]);
  return (
    <section aria-labelledby="generation-title">
      <h1 id="generation-title">Generation</h1>
      <ErrorMessage error={error} />
      {g ? (
        <>
          <p role="status">Status: {g.status}</p>
          {g.status === 'COMPLETED' && g.outputUrl ? (
            <video controls src={g.outputUrl} class="player" />
          ) : null}
          {g.error ? <ErrorMessage error={new Error(g.error)} /> : null}
        </>
      ) : null}
    </section>
  );
}
