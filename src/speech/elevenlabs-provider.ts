// Synthesis, voice listing and instant voice cloning through the ElevenLabs HTTP API (or a server
// that speaks it). Word times come from the character alignment ElevenLabs returns with the audio;
// phonemes from forced alignment of the text on that audio, or, when alignment fails, spread over
// each word's span from its spelling (coarse, but the mouth still moves with the words).
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { attach, isAlignment, phonemesFromWords, wordsFromCharacters } from './elevenlabs-timeline.js';
import { endpoint, multipartBody, parseJson, speechRequest, toMonoWav } from './http-speech.js';
import {
  SpeechProviderError,
  type AlignTranscript,
  type CloneRequest,
  type CloneResult,
  type ProviderVoice,
  type SynthesisProvider,
  type SynthesisRequest,
  type SynthesisResult,
  type TimedPhoneme,
} from './types.js';

export interface ElevenLabsSpeechProviderOptions {
  /** Default https://api.elevenlabs.io. */
  baseUrl?: string;
  /** The server-wide key (`xi-api-key`); an organization's own key (req.apiKey) overrides it. */
  apiKey: string | null;
  /** The `model_id` (default 'eleven_multilingual_v2'). */
  modelId?: string;
  /** One deadline per request, reading the whole answer included (default 60 000). */
  timeoutMs?: number;
  /** Whether the server may be on a private address (only for self-hosted look-alikes and tests). */
  allowPrivate: boolean;
  /** Forced alignment of the text on the audio (alignTranscript from ./align.js). */
  align: AlignTranscript;
}

const MAX_AUDIO_BYTES = 64 * 1024 * 1024;

/** ElevenLabs' English-only models: text in another language goes to the multilingual model instead. */
const ENGLISH_ONLY_MODEL = /^eleven_(monolingual_v1|turbo_v2|flash_v2)$/;
/** The models that take `language_code` (ElevenLabs answers an error to it on the others). */
const LANGUAGE_CODE_MODEL = /_v2_5$/;

/** The model that speaks `language` (null: the configured one), and the language_code to send with it. */
export function elevenLabsModelFor(
  configured: string,
  language: string | undefined,
): { modelId: string; languageCode: string | null } {
  const lang = language?.toLowerCase().split('-')[0];
  if (!lang) return { modelId: configured, languageCode: null };
  const modelId =
    lang !== 'en' && ENGLISH_ONLY_MODEL.test(configured) ? 'eleven_multilingual_v2' : configured;
  return { modelId, languageCode: LANGUAGE_CODE_MODEL.test(modelId) ? lang : null };
}
const MAX_JSON_BYTES = 4 * 1024 * 1024;

export class ElevenLabsSpeechProvider implements SynthesisProvider {
  readonly name = 'elevenlabs' as const;
  private readonly baseUrl: string;
  private readonly modelId: string;
  private readonly timeoutMs: number;

  constructor(private readonly opts: ElevenLabsSpeechProviderOptions) {
    this.baseUrl = opts.baseUrl ?? 'https://api.elevenlabs.io';
    this.modelId = opts.modelId ?? 'eleven_multilingual_v2';
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  /** The organization's key, else the server's; with neither the provider is not available. */
  private keyFor(apiKey: string | null | undefined): string {
    const key = apiKey || this.opts.apiKey;
    if (!key) throw new SpeechProviderError('unavailable', this.name, 'no ElevenLabs API key is configured');
    return key;
  }

  private call(
    key: string,
    o: Omit<Parameters<typeof speechRequest>[0], 'provider' | 'secret' | 'allowPrivate'>,
  ) {
    return speechRequest({
      ...o,
      provider: this.name,
      headers: { ...o.headers, 'xi-api-key': key },
      secret: key,
      allowPrivate: this.opts.allowPrivate,
    });
  }

  async listVoices(opts: { apiKey?: string | null; signal?: AbortSignal }): Promise<ProviderVoice[]> {
    const key = this.keyFor(opts.apiKey);
    const answer = await this.call(key, {
      method: 'GET',
      url: endpoint(this.baseUrl, '/v1/voices'),
      timeoutMs: this.timeoutMs,
      maxResponseBytes: MAX_JSON_BYTES,
      signal: opts.signal,
    });
    const voices = (parseJson(answer, this.name) as { voices?: unknown }).voices;
    if (!Array.isArray(voices))
      throw new SpeechProviderError('unavailable', this.name, 'no voices in the answer');
    return voices.flatMap((v: Record<string, unknown>) => {
      if (typeof v?.voice_id !== 'string') return [];
      const labels: Record<string, string> = {};
      for (const [k, l] of Object.entries((v.labels as object | null) ?? {}))
        if (typeof l === 'string') labels[k] = l;
      if (typeof v.category === 'string') labels.category = v.category;
      const name = typeof v.name === 'string' ? v.name : v.voice_id;
      return [{ providerVoiceId: v.voice_id, name, labels }];
    });
  }

  /**
   * stability and similarityBoost go to voice_settings (ElevenLabs' defaults 0.5 and 0.75 fill the
   * one not given); speed is clamped to the 0.7..1.2 ElevenLabs accepts. A known language other than
   * English never goes to an English-only model, and is sent as language_code where the model takes it.
   */
  async synthesize(req: SynthesisRequest): Promise<SynthesisResult> {
    const key = this.keyFor(req.apiKey);
    const { stability, similarityBoost, speed } = req.settings;
    const model = elevenLabsModelFor(this.modelId, req.language);
    const payload: Record<string, unknown> = { text: req.text, model_id: model.modelId };
    if (model.languageCode) payload.language_code = model.languageCode;
    if (stability !== undefined || similarityBoost !== undefined || speed !== undefined) {
      payload.voice_settings = {
        stability: stability ?? 0.5,
        similarity_boost: similarityBoost ?? 0.75,
        ...(speed !== undefined ? { speed: Math.min(1.2, Math.max(0.7, speed)) } : {}),
      };
    }
    const answer = await this.call(key, {
      method: 'POST',
      url: endpoint(
        this.baseUrl,
        `/v1/text-to-speech/${encodeURIComponent(req.providerVoiceId)}/with-timestamps`,
      ),
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(payload),
      timeoutMs: this.timeoutMs,
      maxResponseBytes: MAX_AUDIO_BYTES,
      voiceRequest: true,
      signal: req.signal,
    });
    const json = parseJson(answer, this.name) as Record<string, unknown>;
    const alignment = isAlignment(json.alignment) ? json.alignment : json.normalized_alignment;
    if (typeof json.audio_base64 !== 'string' || !isAlignment(alignment)) {
      throw new SpeechProviderError('unavailable', this.name, 'the answer has no audio or no alignment');
    }
    const audio = await toMonoWav(Buffer.from(json.audio_base64, 'base64'), {
      provider: this.name,
      workDir: req.workDir,
      name: 'elevenlabs-speech',
      signal: req.signal,
    });
    const words = wordsFromCharacters(alignment);
    let phonemes: TimedPhoneme[];
    try {
      const aligned = await this.opts.align(audio.audioPath, req.text, {
        workDir: req.workDir,
        signal: req.signal,
      });
      phonemes =
        aligned.phonemes.length > 0 ? attach(aligned, words) : phonemesFromWords(words, audio.durationMs);
    } catch (err) {
      if (req.signal?.aborted) throw err;
      phonemes = phonemesFromWords(words, audio.durationMs);
    }
    return { ...audio, timeline: { words, phonemes } };
  }

  /** Instant voice cloning: the sample is uploaded as is; ElevenLabs keeps the voice. */
  async clone(req: CloneRequest): Promise<CloneResult> {
    const key = this.keyFor(req.apiKey);
    const sample = await readFile(req.samplePath);
    const form = await multipartBody({ name: req.name }, [
      { name: 'files', filename: basename(req.samplePath), type: 'audio/wav', content: sample },
    ]);
    const answer = await this.call(key, {
      method: 'POST',
      url: endpoint(this.baseUrl, '/v1/voices/add'),
      headers: { 'content-type': form.contentType, accept: 'application/json' },
      body: form.body,
      timeoutMs: this.timeoutMs,
      maxResponseBytes: MAX_JSON_BYTES,
      signal: req.signal,
    });
    const json = parseJson(answer, this.name) as { voice_id?: unknown; requires_verification?: unknown };
    if (typeof json.voice_id !== 'string' || json.voice_id === '') {
      throw new SpeechProviderError('unavailable', this.name, 'the answer has no voice_id');
    }
    return {
      providerVoiceId: json.voice_id,
      profile: null,
      requiresVerification: json.requires_verification === true,
    };
  }

  /** A voice that ElevenLabs no longer knows counts as deleted. */
  async deleteVoice(providerVoiceId: string, opts: { apiKey?: string | null }): Promise<void> {
    const key = this.keyFor(opts.apiKey);
    try {
      await this.call(key, {
        method: 'DELETE',
        url: endpoint(this.baseUrl, `/v1/voices/${encodeURIComponent(providerVoiceId)}`),
        timeoutMs: this.timeoutMs,
        maxResponseBytes: MAX_JSON_BYTES,
        voiceRequest: true,
      });
    } catch (err) {
      if (!(err instanceof SpeechProviderError && err.reason === 'voice_not_found')) throw err;
    }
  }
}
