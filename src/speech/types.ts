// The speech interfaces every provider, aligner and voice tool shares (DESIGN.md, "Speech").
// Times are integer milliseconds from the start of the audio they describe.
import type { ProviderName, SynthesisSettings } from '../domain/tts.js';

export type { ProviderName, SynthesisSettings } from '../domain/tts.js';

/** A word as spoken, with its span. */
export interface TimedWord {
  text: string;
  startMs: number;
  endMs: number;
}

/**
 * A phoneme with its span. `phone` is lower-case ARPAbet without stress digits (aa, ae, ah, ao, aw,
 * ay, b, ch, d, dh, eh, er, ey, f, g, hh, ih, iy, jh, k, l, m, n, ng, ow, oy, p, r, s, sh, t, th, uh,
 * uw, v, w, y, z, zh) or `sil` for a pause; `word` is the index into `words` (absent for pauses).
 */
export interface TimedPhoneme {
  phone: string;
  startMs: number;
  endMs: number;
  word?: number;
}

export interface SpeechTimeline {
  words: TimedWord[];
  phonemes: TimedPhoneme[];
}

/** Settings a client may give with a script; each provider documents what it does with them. */
/** A voice as a provider knows it. */
export interface ProviderVoice {
  /** The provider's own id of the voice (festival voice name, ElevenLabs voice_id, OpenAI voice name). */
  providerVoiceId: string;
  name: string;
  /** Free-form labels: gender, accent, engine. */
  labels?: Record<string, string>;
}

/**
 * A measured voice profile (local cloning, src/speech/voice-profile.ts): applied on top of a base
 * voice's synthesis so that pitch and timbre move towards the sample's speaker.
 */
export interface VoiceProfile {
  /** Pitch median and 10th/90th percentiles over voiced frames, Hz. */
  pitchMedianHz: number;
  pitchQ10Hz: number;
  pitchQ90Hz: number;
  /** Mean F1..F3 over voiced frames, Hz. */
  formantsHz: [number, number, number];
  /** Long-term average spectrum, dB, at the centres of `ltasBandsHz`. */
  ltasDb: number[];
  ltasBandsHz: number[];
  /** The base voice (provider voice id of the local provider) the profile is applied to. */
  baseVoice: string;
}

export interface SynthesisRequest {
  text: string;
  /** The provider's own voice id. */
  providerVoiceId: string;
  settings: SynthesisSettings;
  /** A local clone's profile, applied after synthesis (local provider only). */
  profile?: VoiceProfile | null;
  /** An organization's own key for the provider (the spec's "own connected account"). */
  apiKey?: string | null;
  /** The language of the text when the caller knows it (a dub's target); providers that take one use it. */
  language?: string;
  /** A folder the provider may write into; the caller removes it. */
  workDir: string;
  signal?: AbortSignal;
}

export interface SynthesisResult {
  /** A mono 16-bit PCM WAV inside workDir. */
  audioPath: string;
  durationMs: number;
  sampleRate: number;
  timeline: SpeechTimeline;
}

export interface CloneRequest {
  name: string;
  /** The sample as a WAV (mono, any rate) inside workDir. */
  samplePath: string;
  apiKey?: string | null;
  workDir: string;
  signal?: AbortSignal;
}

export interface CloneResult {
  /** The provider's id of the new voice (ElevenLabs voice_id) or null for a local profile. */
  providerVoiceId: string | null;
  profile: VoiceProfile | null;
  /** The provider asks for consent verification before the voice may be used. */
  requiresVerification?: boolean;
}

export interface SynthesisProvider {
  readonly name: ProviderName;
  /** Voices the provider offers (built-in or account voices). */
  listVoices(opts: { apiKey?: string | null; signal?: AbortSignal }): Promise<ProviderVoice[]>;
  synthesize(req: SynthesisRequest): Promise<SynthesisResult>;
  /** Makes a new voice from a sample; absent when the provider cannot clone. */
  clone?(req: CloneRequest): Promise<CloneResult>;
  /** Removes a cloned voice at the provider (providers that keep clones). */
  deleteVoice?(providerVoiceId: string, opts: { apiKey?: string | null }): Promise<void>;
}

/**
 * Why a provider could not do what was asked. The service maps it onto the error catalogue
 * (timeout -> 504 provider_service_unavailable, unavailable -> 503, quota -> 402
 * provider_quota_exceeded, key_invalid -> provider_api_key_invalid, voice_not_found -> 422
 * voice_not_found, rejected -> 422 with the provider's reason in the log only).
 */
export type SpeechFailure =
  'timeout' | 'unavailable' | 'quota' | 'key_invalid' | 'voice_not_found' | 'rejected';

export class SpeechProviderError extends Error {
  constructor(
    readonly reason: SpeechFailure,
    readonly provider: ProviderName,
    /** For the log only: never shown to clients (may hold a provider's own words). */
    readonly detail?: string,
    options?: ErrorOptions,
  ) {
    super(`${provider}: ${reason}${detail ? ` (${detail})` : ''}`, options);
    this.name = 'SpeechProviderError';
  }
}

/** Forced alignment of a known text to audio (src/speech/align.ts). */
export type AlignTranscript = (
  wavPath: string,
  text: string,
  opts: { workDir: string; signal?: AbortSignal },
) => Promise<SpeechTimeline>;
