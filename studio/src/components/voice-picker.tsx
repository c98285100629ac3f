import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, get } from '../api.js';
import type { Voice } from '../types.js';
import { ErrorMessage } from './error-message.js';

/** The text input's voice settings (the provider object of a `text` input). */
export interface VoiceSettings {
  voiceId: string;
  /** The voice's provider (a voice id alone may exist at two providers). */
  provider?: string;
  speed: number;
  /** Left out (the provider's default) until the user moves it. */
  stability: number | null;
}

const SAMPLE = 'Hello! This is how I sound when I read your script.';

/** The first sentence of the script, short enough for a quick sample; else a stock sentence. */
export function sampleText(script: string): string {
  const first = /^[^.!?]*[.!?]?/.exec(script.trim())?.[0].trim() ?? '';
  return first.length >= 8 && first.length <= 160 ? first : SAMPLE;
}

interface Props {
  value: VoiceSettings;
  onChange: (v: VoiceSettings) => void;
  script: string;
  errors: { voice?: ApiError | null; settings?: ApiError | null };
  /** Only voices that can speak this language (a dub's target); the sample reads `script` as is. */
  language?: string;
  /** The fieldset's legend and the select's label (default: the script's voice). */
  legend?: string;
  label?: string;
}

/** A voice that names its languages must speak the target; others (clones, remote voices) may. */
export function voiceFits(v: Voice, lang: string): boolean {
  const spoken = v.labels?.languages ?? v.labels?.language;
  if (!spoken) return true;
  return spoken
    .split(',')
    .map((l) => l.trim().toLowerCase())
    .some((l) => l === lang || l.split('-')[0] === lang.split('-')[0]);
}

/** Which voice reads the script, how fast and how steady, with a short sample to listen to. */
export function VoicePicker({ value, onChange, script, errors, language, legend, label }: Props) {
  const [voices, setVoices] = useState<Voice[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [sample, setSample] = useState<{ url: string; key: string } | null>(null);
  const [sampleError, setSampleError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    get<Voice[]>('/v2/voices').then((all) => {
      const list = language ? all.filter((v) => voiceFits(v, language)) : all;
      setVoices(list);
      const usable = list.find((v) => !v.restriction);
      if (!value.voiceId && usable) onChange({ ...value, voiceId: usable.id, provider: usable.provider });
    }, setLoadError);
  }, []);

  const listen = async () => {
    setBusy(true);
    setSampleError(null);
    try {
      const speech = await api<{ url: string }>('POST', '/v2/tts', {
        script: language ? script : sampleText(script),
        voiceId: value.voiceId,
        ...(value.provider ? { provider: value.provider } : {}),
        ...(language ? {} : { speed: value.speed }),
        ...(value.stability === null || language ? {} : { stability: value.stability }),
      });
      setSample({ url: speech.url, key: `${Date.now()}` });
    } catch (e) {
      setSampleError(e);
    } finally {
      setBusy(false);
    }
  };

  const builtin = (voices ?? []).filter((v) => v.type !== 'cloned');
  const cloned = (voices ?? []).filter((v) => v.type === 'cloned');
  const option = (v: Voice) => (
    <option key={v.id} value={v.id} disabled={!!v.restriction}>
      {v.name}
      {v.labels?.gender ? ` (${v.labels.gender})` : ''}
      {v.restriction ? ` — ${v.restriction.message}` : ''}
    </option>
  );

  return (
    <fieldset class="voice-picker">
      <legend>{legend ?? 'Voice'}</legend>
      <ErrorMessage error={loadError} />
      <label>
        {label ?? 'Voice that reads the script'}
        <select
          value={value.voiceId}
          disabled={voices === null}
          aria-invalid={errors.voice ? true : undefined}
          onChange={(e) => {
            const id = e.currentTarget.value;
            onChange({ ...value, voiceId: id, provider: voices?.find((v) => v.id === id)?.provider });
          }}
        >
          {voices === null ? <option value="">Loading voices…</option> : null}
          {builtin.length ? <optgroup label="Stock voices">{builtin.map(option)}</optgroup> : null}
          {cloned.length ? <optgroup label="Your cloned voices">{cloned.map(option)}</optgroup> : null}
        </select>
      </label>
      <ErrorMessage error={errors.voice} />
      {language ? null : (
        <div class="sliders">
          <Slider
            id="voice-speed"
            label="Speed"
            shown={`${value.speed.toFixed(2)}×`}
            spoken={`${value.speed.toFixed(2)} times the normal speed`}
            hint="1 is normal, 0.5 half as fast, 2 twice as fast."
            min={0.5}
            max={2}
            value={value.speed}
            onInput={(speed) => onChange({ ...value, speed })}
          />
          <Slider
            id="voice-stability"
            label="Steadiness"
            shown={value.stability === null ? 'the voice’s own' : value.stability.toFixed(2)}
            spoken={value.stability === null ? 'the voice’s own' : value.stability.toFixed(2)}
            hint="0 more lively, 1 flatter and steadier."
            min={0}
            max={1}
            value={value.stability ?? 0.5}
            onInput={(stability) => onChange({ ...value, stability })}
          />
        </div>
      )}
      <ErrorMessage error={errors.settings} />
      <p>
        <button type="button" class="secondary" disabled={busy || !value.voiceId} onClick={listen}>
          {busy ? 'Making a sample…' : 'Listen to this voice'}
        </button>
      </p>
      <p class="muted">
        The sample reads{' '}
        {language ? `“${script}”` : script.trim() ? 'the first sentence of your script' : 'a short sentence'}.
      </p>
      <ErrorMessage error={sampleError} />
      {sample ? (
        <audio
          key={sample.key}
          src={sample.url}
          controls
          autoPlay
          aria-label={legend ? `${legend}: sample` : 'Voice sample'}
          onError={() =>
            setSampleError(new ApiError('The sample could not be played.', 0, undefined, 'Try again.'))
          }
        />
      ) : null}
    </fieldset>
  );
}

function Slider(p: {
  id: string;
  label: string;
  shown: string;
  spoken: string;
  hint: string;
  min: number;
  max: number;
  value: number;
  onInput: (v: number) => void;
}) {
  return (
    <div class="slider">
      <label for={p.id}>{p.label}</label>: <output for={p.id}>{p.shown}</output>{' '}
      <span id={`${p.id}-hint`} class="muted">
        {p.hint}
      </span>
      <input
        id={p.id}
        type="range"
        min={p.min}
        max={p.max}
        step={0.05}
        value={p.value}
        aria-valuetext={p.spoken}
        aria-describedby={`${p.id}-hint`}
        onInput={(e) => p.onInput(Number(e.currentTarget.value))}
      />
    </div>
  );
}
