import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import type { Estimate } from '../types.js';

/**
 * What to ask for a quote. `exact`: the whole request, priced from its media (POST /v2/analyze/cost).
 * `upTo`: a length the result cannot exceed, for a script not yet spoken (POST /v2/generations/estimate).
 */
export type Quote =
  | { kind: 'exact'; body: Record<string, unknown> }
  | { kind: 'upTo' | 'length'; model: string; seconds: number }
  | { kind: 'unknown'; why: string }
  | null;

export function money(dollars: number): string {
  return dollars < 0.01 && dollars > 0 ? `less than $0.01` : `$${dollars.toFixed(2)}`;
}

function words(e: Estimate, atMost: boolean): string {
  const fps = Number.isInteger(e.fps) ? `${e.fps}` : e.fps.toFixed(2);
  const credits = e.estimatedCredits === null ? '' : ` (${e.estimatedCredits} credits)`;
  return `The result will last ${atMost ? 'at most' : 'about'} ${e.duration.toFixed(1)} seconds: ${e.estimatedFrameCount} frames at ${fps} frames a second. Estimated cost: ${atMost ? 'at most ' : ''}${money(e.estimatedGenerationCost)}${credits}.`;
}

/** The price before the run, in words; asked again (after a pause) whenever the request changes. */
export function CostEstimate({ quote, onEstimate }: { quote: Quote; onEstimate: (e: Estimate) => void }) {
  const [state, setState] = useState<{ text: string; error: unknown; loading: boolean }>({
    text: '',
    error: null,
    loading: false,
  });
  const key = JSON.stringify(quote);
  useEffect(() => {
    if (!quote) return setState({ text: '', error: null, loading: false });
    if (quote.kind === 'unknown') return setState({ text: quote.why, error: null, loading: false });
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    const t = setTimeout(() => {
      const ask =
        quote.kind === 'exact'
          ? api<Estimate[]>('POST', '/v2/analyze/cost', quote.body).then((list) => list[0]!)
          : api<Estimate>('POST', '/v2/generations/estimate', {
              model: quote.model,
              duration: quote.seconds,
            });
      ask.then(
        (e) => {
          if (!live) return;
          // Only a quote from the media knows the video's real frame rate.
          if (quote.kind === 'exact') onEstimate(e);
          const tail = quote.kind === 'upTo' ? ' The exact length is known once the script is spoken.' : '';
          setState({ text: words(e, quote.kind === 'upTo') + tail, error: null, loading: false });
        },
        (error) => live && setState({ text: '', error, loading: false }),
      );
    }, 400);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [key]);
  return (
    <section class="estimate" aria-labelledby="estimate-title">
      <h2 id="estimate-title">Cost</h2>
      <p aria-live="polite" data-testid="estimate">
        {!quote ? 'Choose the inputs to see the cost.' : state.loading ? 'Working out the cost…' : state.text}
      </p>
      <ErrorMessage error={state.error} />
    </section>
  );
}
