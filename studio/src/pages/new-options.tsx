import { useEffect, useState } from 'preact/hooks';
import { ApiError, get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import type { Project } from '../types.js';

export const SYNC_MODES = [
  [
    'cut_off',
    'Stop at the shorter one',
    'The result ends when the video or the sound ends, whichever is first.',
  ],
  ['loop', 'Repeat the video', 'A short video starts over until the sound ends; a long one is cut.'],
  [
    'bounce',
    'Play the video back and forth',
    'A short video plays forwards, then backwards, until the sound ends; a long one is cut.',
  ],
  [
    'silence',
    'Keep the whole video',
    'The result lasts as long as the video: silence after the sound ends, or the sound is cut.',
  ],
  [
    'remap',
    'Stretch the video to the sound',
    'The video is slowed down or sped up to last as long as the sound.',
  ],
] as const;
export type SyncMode = (typeof SYNC_MODES)[number][0];

export function SyncModeChoice({
  value,
  onChange,
  error,
}: {
  value: SyncMode;
  onChange: (m: SyncMode) => void;
  error?: ApiError | null;
}) {
  return (
    <fieldset class="choices">
      <legend>When the sound and the video have different lengths</legend>
      {SYNC_MODES.map(([mode, title, line]) => (
        <label key={mode} class="choice">
          <input
            type="radio"
            name="sync_mode"
            value={mode}
            checked={value === mode}
            onChange={() => onChange(mode)}
          />
          <span>
            <strong>{title}</strong>
            <span class="muted"> — {line}</span>
          </span>
        </label>
      ))}
      <ErrorMessage error={error} />
    </fieldset>
  );
}

/** A part of the video that gets the new sound, from `audioStart` seconds into the sound. */
export interface Segment {
  start: string;
  end: string;
  audioStart: string;
}

export function segmentsBody(segments: Segment[]) {
  return segments.map((s) => ({
    startTime: Number(s.start),
    endTime: Number(s.end),
    ...(s.audioStart.trim() ? { audioInput: { startTime: Number(s.audioStart) } } : {}),
  }));
}

export function SegmentsEditor({
  value,
  onChange,
  error,
}: {
  value: Segment[] | null;
  onChange: (s: Segment[] | null) => void;
  error?: ApiError | null;
}) {
  const set = (i: number, patch: Partial<Segment>) =>
    onChange(value!.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  const num = (label: string, v: string, on: (v: string) => void, placeholder?: string) => (
    <label>
      {label}
      <input
        type="number"
        min={0}
        step={0.01}
        inputMode="decimal"
        value={v}
        placeholder={placeholder}
        onInput={(e) => on(e.currentTarget.value)}
      />
    </label>
  );
  return (
    <fieldset class="segments">
      <legend>Which parts of the video to change</legend>
      <label class="choice">
        <input
          type="checkbox"
          checked={value !== null}
          onChange={(e) =>
            onChange(e.currentTarget.checked ? [{ start: '', end: '', audioStart: '' }] : null)
          }
        />
        <span>
          Only some parts{' '}
          <span class="muted">
            — the rest keeps its own picture and sound; the length setting above does not apply.
          </span>
        </span>
      </label>
      {value?.map((s, i) => (
        <div class="segment-row" role="group" aria-label={`Part ${i + 1}`} key={i}>
          {num('From (seconds)', s.start, (start) => set(i, { start }))}
          {num('To (seconds)', s.end, (end) => set(i, { end }))}
          {num('Sound starts at (seconds)', s.audioStart, (audioStart) => set(i, { audioStart }), '0')}
          <button
            type="button"
            class="link"
            onClick={() => onChange(value.length > 1 ? value.filter((_, j) => j !== i) : null)}
          >
            Remove part {i + 1}
          </button>
        </div>
      ))}
      {value ? (
        <button
          type="button"
          class="secondary"
          onClick={() => onChange([...value, { start: '', end: '', audioStart: '' }])}
        >
          Add a part
        </button>
      ) : null}
      <ErrorMessage error={error} />
    </fieldset>
  );
}

export function ProjectChoice({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (id: string) => void;
  error?: ApiError | null;
}) {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  useEffect(() => {
    get<Project[]>('/v2/projects').then(setProjects, setLoadError);
  }, []);
  return (
    <>
      <label>
        Project
        <select
          value={value}
          onChange={(e) => onChange(e.currentTarget.value)}
          aria-invalid={error ? true : undefined}
        >
          <option value="">No project</option>
          {(projects ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <ErrorMessage error={loadError ?? error} />
    </>
  );
}
