// Rules for a text-to-speech request: the body of POST /v2/tts and /v2/tts/jobs, and the `provider`
// object of a text input of POST /v2/generate (the same rules for every entry point). Pure.
import { AppError } from './errors.js';
import type { JobStatus } from './jobs.js';
import { speakableText } from './spoken-text.js';

/** The speech providers a voice or a request may name. */
export type ProviderName = 'local' | 'openai' | 'elevenlabs';

export interface SynthesisSettings {
  /** 0..1: higher is steadier prosody (less pitch variation). */
  stability?: number;
  /** 0..1: how close to a cloned voice's profile. */
  similarityBoost?: number;
  /** Speaking rate, 0.5..2 (1 = the voice's own). */
  speed?: number;
}

export const PROVIDER_NAMES: readonly ProviderName[] = ['local', 'openai', 'elevenlabs'];
export const SCRIPT_MAX_CHARACTERS = 5000;
/**
 * The most characters a script may have once numbers and symbols are spelled out: what is synthesized
 * (and so the audio's length) is bounded, not only what is typed. Three times the typed limit leaves
 * room for text dense with figures ("$3.50" is spoken as "three point five zero dollars"); 5,000 digits
 * in a row (spoken one by one, about 23 minutes) do not fit.
 */
export const SPOKEN_MAX_CHARACTERS = 3 * SCRIPT_MAX_CHARACTERS;

export interface TtsRequest {
  script: string;
  voiceId: string;
  /** Null: the voice's own provider (a clone) or the server's default. */
  provider: ProviderName | null;
  settings: SynthesisSettings;
}

function bad(field: string, message: string): never {
  throw new AppError('invalid_request', { field, message });
}

function unit(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1)
    bad(field, `${field} must be from 0 to 1`);
  return v;
}

export function isProviderName(v: unknown): v is ProviderName {
  return typeof v === 'string' && (PROVIDER_NAMES as readonly string[]).includes(v);
}

/**
 * Reads script, voiceId, provider and the settings from `raw`; `prefix` names the object in error
 * fields ('' for a TTS body, 'input[1].provider.' for a text input), `providerField` is where the
 * provider's name is ('provider' in a TTS body, 'name' in a text input's provider object).
 */
export function normaliseTtsRequest(
  raw: Record<string, unknown>,
  opts: { prefix?: string; providerField?: string } = {},
): TtsRequest {
  const prefix = opts.prefix ?? '';
  const providerField = opts.providerField ?? 'provider';
  const script = raw.script;
  if (typeof script !== 'string' || script.trim() === '')
    bad(`${prefix}script`, `${prefix}script is required`);
  // Characters as people count them (code points), not UTF-16 units.
  if ([...script].length > SCRIPT_MAX_CHARACTERS)
    bad(`${prefix}script`, `${prefix}script must be at most ${SCRIPT_MAX_CHARACTERS} characters`);
  const spoken = [...speakableText(script)].length;
  if (spoken > SPOKEN_MAX_CHARACTERS)
    throw new AppError('invalid_request', {
      field: `${prefix}script`,
      message: `${prefix}script is ${spoken} characters long once numbers and symbols are spelled out; at most ${SPOKEN_MAX_CHARACTERS} are spoken`,
      suggestion: 'Shorten the script, or write long numbers in words or as fewer digits, then retry.',
    });
  const voiceId = raw.voiceId;
  if (typeof voiceId !== 'string' || voiceId.trim() === '' || voiceId.length > 200)
    bad(`${prefix}voiceId`, `${prefix}voiceId is required (see GET /v2/voices)`);
  const p = raw[providerField];
  if (p !== undefined && p !== null && !isProviderName(p))
    bad(`${prefix}${providerField}`, `${prefix}${providerField} must be one of ${PROVIDER_NAMES.join(', ')}`);
  const speed = raw.speed;
  if (speed !== undefined && speed !== null && (typeof speed !== 'number' || !(speed >= 0.5 && speed <= 2)))
    bad(`${prefix}speed`, `${prefix}speed must be from 0.5 to 2`);
  const settings: SynthesisSettings = {};
  const stability = unit(raw.stability, `${prefix}stability`);
  const similarityBoost = unit(raw.similarityBoost, `${prefix}similarityBoost`);
  if (stability !== undefined) settings.stability = stability;
  if (similarityBoost !== undefined) settings.similarityBoost = similarityBoost;
  if (typeof speed === 'number') settings.speed = speed;
  return {
    script: script.trim(),
    voiceId: voiceId.trim(),
    provider: isProviderName(p) ? p : null,
    settings,
  };
}

export type TtsJobStatus = 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';

/** A TTS job's status for each state of its job: a cancel or a timeout is a failure to the client. */
export function ttsJobStatusOf(s: JobStatus): TtsJobStatus {
  return s === 'queued'
    ? 'PENDING'
    : s === 'running'
      ? 'PROCESSING'
      : s === 'completed'
        ? 'SUCCESS'
        : 'FAILED';
}
