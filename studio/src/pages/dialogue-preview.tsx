// A finished preview: its WAV with the edited transcript beneath, the word being heard marked as it
// plays and the new words (ids `<word>_e<k>`, docs/dialogue-editing.md) marked throughout.
import { useRef, useState } from 'preact/hooks';
import type { DialogueEditJob } from '../types.js';

export function DialoguePreview({ job }: { job: DialogueEditJob }) {
  const audio = useRef<HTMLAudioElement>(null);
  const [nowMs, setNowMs] = useState(-1);
  const words = job.resultTranscript?.segments.flatMap((s) => s.words) ?? [];
  const playing = words.find((w) => nowMs >= w.startMs && nowMs < w.endMs);

  return (
    <section class="dialogue-preview" aria-label="Preview">
      <h2>Preview</h2>
      {job.status === 'COMPLETED_PARTIAL' ? (
        <p class="hint">Some synthesized words lack the room tone around them: listen before rendering.</p>
      ) : null}
      {job.previewAudioUrl ? (
        <div class="dialogue-bar">
          <audio
            ref={audio}
            controls
            src={job.previewAudioUrl}
            aria-label="Preview of the edited speech"
            onTimeUpdate={(e) => setNowMs(e.currentTarget.currentTime * 1000)}
            onEnded={() => setNowMs(-1)}
          />
          <button type="button" onClick={() => void audio.current?.play()}>
            Play preview
          </button>
        </div>
      ) : null}
      <p class="dialogue-result" aria-label="Edited transcript">
        {words.map((w) => (
          <span
            key={w.id}
            class={`${/_e\d+$/.test(w.id) ? 'new' : ''}${playing?.id === w.id ? ' playing' : ''}`}
          >
            {w.text}{' '}
          </span>
        ))}
      </p>
    </section>
  );
}
