// Synthesis through any server that speaks OpenAI's speech API (`POST /v1/audio/speech`): OpenAI
// itself, or self-hosted servers with the same protocol (Kokoro-FastAPI, openedai-speech, ...). The
// protocol gives no timings, so the words and phonemes come from forced alignment of the known text
// on the returned audio. It has no notion of stability or similarity: those settings are ignored.
import { endpoint, speechRequest, toMonoWav } from './http-speech.js';
import type {
  AlignTranscript,
  ProviderVoice,
  SynthesisProvider,
  SynthesisRequest,
  SynthesisResult,
} from './types.js';

/** OpenAI's own voices, offered when the server cannot list its voices. */
export const OPENAI_DEFAULT_VOICES: readonly string[] = [
  'alloy',
  'ash',
  'coral',
  'echo',
  'fable',
  'nova',
  'onyx',
  'sage',
  'shimmer',
];

export interface OpenAiSpeechProviderOptions {
  /** The server's root, without `/v1` (e.g. https://api.openai.com or http://kokoro:8880). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; null for servers without authentication. */
  apiKey: string | null;
  /** The `model` field (default 'tts-1'). */
  model?: string;
  /** Voices offered when the server has no `GET /v1/audio/voices` (default OPENAI_DEFAULT_VOICES). */
  voices?: readonly string[];
  /** One deadline per request, reading the whole answer included (default 60 000). */
  timeoutMs?: number;
  /** Whether the server may be on a private address (LIPSYNC_ALLOW_PRIVATE_URLS, or a LAN server). */
  allowPrivate: boolean;
  /** Forced alignment of the text on the audio (alignTranscript from ./align.js). */
  align: AlignTranscript;
}

const MAX_AUDIO_BYTES = 64 * 1024 * 1024;
const MAX_LIST_BYTES = 1024 * 1024;

/** A voice list as self-hosted servers answer it: {voices:[...]} or an array, of names or objects. */
function parseVoiceList(json: unknown): ProviderVoice[] | null {
  const list = Array.isArray(json) ? json : (json as { voices?: unknown } | null)?.voices;
  if (!Array.isArray(list)) return null;
  const voices: ProviderVoice[] = [];
  for (const v of list) {
    if (typeof v === 'string' && v !== '') voices.push({ providerVoiceId: v, name: v });
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const id = [o.id, o.voice_id, o.voice, o.name].find((x) => typeof x === 'string' && x !== '');
      if (typeof id === 'string')
        voices.push({ providerVoiceId: id, name: typeof o.name === 'string' ? o.name : id });
    }
  }
  return voices;
}

export class OpenAiSpeechProvider implements SynthesisProvider {
  readonly name = 'openai' as const;
  private readonly model: string;
  private readonly voices: readonly string[];
  private readonly timeoutMs: number;

  constructor(private readonly opts: OpenAiSpeechProviderOptions) {
    this.model = opts.model ?? 'tts-1';
    this.voices = opts.voices && opts.voices.length > 0 ? opts.voices : OPENAI_DEFAULT_VOICES;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  /** The organization's own key wins over the server-wide one. */
  private keyFor(apiKey: string | null | undefined): string | null {
    return apiKey || this.opts.apiKey || null;
  }

  private headers(key: string | null, extra: Record<string, string> = {}): Record<string, string> {
    return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
  }

  /**
   * The server's own list when it offers `GET /v1/audio/voices` (several self-hosted servers do);
   * the configured list when that endpoint does not exist (404/405/501) or answers something else.
   */
  async listVoices(opts: { apiKey?: string | null; signal?: AbortSignal }): Promise<ProviderVoice[]> {
    const key = this.keyFor(opts.apiKey);
    const configured = this.voices.map((v) => ({ providerVoiceId: v, name: v }));
    const answer = await speechRequest({
      provider: this.name,
      method: 'GET',
      url: endpoint(this.opts.baseUrl, '/v1/audio/voices'),
      headers: this.headers(key, { accept: 'application/json' }),
      timeoutMs: this.timeoutMs,
      maxResponseBytes: MAX_LIST_BYTES,
      allowPrivate: this.opts.allowPrivate,
      secret: key,
      passStatuses: [404, 405, 501],
      signal: opts.signal,
    });
    if (answer.status >= 300) return configured;
    let json: unknown;
    try {
      json = JSON.parse(answer.body.toString('utf8'));
    } catch {
      return configured;
    }
    const listed = parseVoiceList(json);
    return listed && listed.length > 0 ? listed : configured;
  }

  async synthesize(req: SynthesisRequest): Promise<SynthesisResult> {
    const key = this.keyFor(req.apiKey);
    const payload: Record<string, unknown> = {
      model: this.model,
      input: req.text,
      voice: req.providerVoiceId,
      response_format: 'wav',
    };
    // OpenAI accepts 0.25..4; our settings range is 0.5..2, inside it.
    if (req.settings.speed !== undefined) payload.speed = req.settings.speed;
    const answer = await speechRequest({
      provider: this.name,
      method: 'POST',
      url: endpoint(this.opts.baseUrl, '/v1/audio/speech'),
      headers: this.headers(key, { 'content-type': 'application/json', accept: 'audio/wav' }),
      body: JSON.stringify(payload),
      timeoutMs: this.timeoutMs,
      maxResponseBytes: MAX_AUDIO_BYTES,
      allowPrivate: this.opts.allowPrivate,
      secret: key,
      voiceRequest: true,
      signal: req.signal,
    });
    // Servers may ignore response_format and send mp3 or headerless PCM (OpenAI's 'pcm' is 24 kHz).
    const rawPcmRate = /audio\/(pcm|l16)/i.test(answer.contentType) ? 24_000 : undefined;
    const audio = await toMonoWav(answer.body, {
      provider: this.name,
      workDir: req.workDir,
      name: 'openai-speech',
      rawPcmRate,
      signal: req.signal,
    });
    const timeline = await this.opts.align(audio.audioPath, req.text, {
      workDir: req.workDir,
      signal: req.signal,
    });
    return { ...audio, timeline };
  }
}
