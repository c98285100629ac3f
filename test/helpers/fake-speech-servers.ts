// Protocol-level stand-ins for the speech APIs we cannot reach in tests: an OpenAI-compatible
// `/v1/audio/speech` server and an ElevenLabs server (with-timestamps synthesis, voices, cloning).
// Both listen on 127.0.0.1 (random port), answer with REAL speech synthesized by festival, record
// every request (`requests`), and misbehave on demand (`setMode`) with the real services' answers.
//
//   const fake = await new FakeElevenLabsServer({ keys: ['k'] }).start();
//   fake.url; fake.requests; fake.setMode('quota', 1); fake.reset(); await fake.close();
import { randomBytes } from 'node:crypto';
import {
  characterAlignment,
  FakeSpeechServer,
  ffmpeg,
  speak,
  type FakeMode,
  type FakeSpeechOptions,
  type RecordedRequest,
  type Reply,
} from './fake-speech-base.js';

export { FakeSpeechServer, type FakeMode, type FakeSpeechOptions, type RecordedRequest };

function parseBody(req: RecordedRequest): Record<string, unknown> | null {
  try {
    const v = JSON.parse(req.body.toString('utf8')) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export interface FakeOpenAiOptions extends FakeSpeechOptions {
  /** Voices the server knows (default alloy, echo, nova). */
  voices?: string[];
  /** Offer `GET /v1/audio/voices` as some self-hosted servers do (OpenAI itself does not). */
  listVoices?: boolean;
  /** Answer in this format whatever response_format asks (servers that ignore it); 'pcm' is 24 kHz s16le. */
  format?: 'wav' | 'mp3' | 'pcm';
}

export class FakeOpenAiServer extends FakeSpeechServer {
  readonly voices: string[];

  constructor(private readonly o: FakeOpenAiOptions = {}) {
    super(o);
    this.voices = o.voices ?? ['alloy', 'echo', 'nova'];
  }

  private failure(mode: FakeMode, key: string | undefined, voice: unknown): Reply | null {
    const error = (status: number, message: string, code: string | null, type = 'invalid_request_error') =>
      this.json(status, { error: { message, type, param: null, code } });
    switch (mode) {
      case 'hang':
        return 'hang';
      case 'invalid_key':
        // The real service quotes (part of) the key it was given: the client must not pass it on.
        return error(401, `Incorrect API key provided: ${key ?? ''}.`, 'invalid_api_key');
      case 'quota':
        return error(429, 'You exceeded your current quota.', 'insufficient_quota', 'insufficient_quota');
      case 'payment_required':
        return error(402, 'Payment required.', null);
      case 'rate_limited':
        return error(429, 'Rate limit reached for requests.', 'rate_limit_exceeded', 'requests');
      case 'server_error':
        return error(500, 'The server had an error while processing your request.', null, 'server_error');
      case 'overloaded':
        return { status: 503, type: 'text/plain', body: 'Service Unavailable' };
      case 'garbage':
        return { status: 200, type: 'audio/wav', body: randomBytes(4096) };
      case 'unknown_voice':
        return error(404, `Voice '${String(voice)}' not found.`, 'voice_not_found');
      case 'bad_request':
        return error(400, 'Input is too long.', 'string_too_long');
      default:
        return null;
    }
  }

  protected async reply(req: RecordedRequest, mode: FakeMode, dir: string): Promise<Reply> {
    const key = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (req.method === 'GET' && req.path === '/v1/audio/voices' && this.o.listVoices) {
      return this.failure(mode, key, null) ?? this.json(200, { voices: this.voices });
    }
    if (req.method !== 'POST' || req.path !== '/v1/audio/speech') {
      return this.json(404, { error: { message: 'Not found', type: 'invalid_request_error', code: null } });
    }
    const body = parseBody(req);
    const failed = this.failure(mode, key, body?.voice);
    if (failed) return failed;
    if (!this.keyAccepted(key)) return this.failure('invalid_key', key, null)!;
    if (typeof body?.input !== 'string' || typeof body.voice !== 'string' || typeof body.model !== 'string') {
      return this.failure('bad_request', key, null)!;
    }
    if (!this.voices.includes(body.voice)) return this.failure('unknown_voice', key, body.voice)!;
    const speed = typeof body.speed === 'number' ? body.speed : 1;
    const { wav } = await speak(body.input, speed, dir);
    const format = this.o.format ?? body.response_format ?? 'mp3';
    if (format === 'wav') return { status: 200, type: 'audio/wav', body: wav };
    if (format === 'pcm') {
      const pcm = await ffmpeg(wav, ['-ar', '24000', '-ac', '1', '-f', 's16le'], dir);
      return { status: 200, type: 'audio/pcm', body: pcm };
    }
    return { status: 200, type: 'audio/mpeg', body: await ffmpeg(wav, ['-b:a', '64k', '-f', 'mp3'], dir) };
  }
}

export interface FakeVoice {
  voice_id: string;
  name: string;
  category: string;
  labels: Record<string, string>;
  preview_url: string | null;
}

export interface FakeElevenLabsOptions extends FakeSpeechOptions {
  /** Answer requires_verification: true to clones. */
  requireVerification?: boolean;
}

export class FakeElevenLabsServer extends FakeSpeechServer {
  readonly voices: FakeVoice[] = [
    {
      voice_id: '21m00Tcm4TlvDq8ikWAM',
      name: 'Rachel',
      category: 'premade',
      labels: { accent: 'american', gender: 'female', age: 'young' },
      preview_url: 'https://storage.example/rachel.mp3',
    },
  ];
  /** The samples received by `POST /v1/voices/add`. */
  readonly clones: { name: string; filename: string; sample: Buffer }[] = [];

  constructor(private readonly o: FakeElevenLabsOptions = {}) {
    super(o);
  }

  private failure(mode: FakeMode, key: string | undefined, voice: string | null): Reply | null {
    const detail = (status: number, s: string, message: string) =>
      this.json(status, { detail: { status: s, message } });
    switch (mode) {
      case 'hang':
        return 'hang';
      case 'invalid_key':
        return detail(401, 'invalid_api_key', `Invalid API key: ${key ?? '(none)'}`);
      case 'quota':
        return detail(
          401,
          'quota_exceeded',
          'This request exceeds your quota of 10000. You have 3 credits remaining.',
        );
      case 'payment_required':
        return detail(402, 'payment_required', 'Your subscription has a failed or incomplete payment.');
      case 'rate_limited':
        return detail(429, 'too_many_concurrent_requests', 'Too many concurrent requests.');
      case 'server_error':
        return detail(500, 'internal_server_error', 'Internal server error.');
      case 'overloaded':
        return {
          status: 503,
          type: 'text/html',
          body: '<html><body>503 Service Temporarily Unavailable</body></html>',
        };
      case 'garbage':
        return { status: 200, type: 'text/html', body: '<html><body>Maintenance</body></html>' };
      case 'unknown_voice':
        return detail(404, 'voice_not_found', `A voice with the voice_id ${voice ?? ''} was not found.`);
      case 'bad_request':
        return this.json(422, {
          detail: [{ loc: ['body', 'text'], msg: 'field required', type: 'value_error.missing' }],
        });
      default:
        return null;
    }
  }

  protected async reply(req: RecordedRequest, mode: FakeMode, dir: string): Promise<Reply> {
    const key = req.headers['xi-api-key'] as string | undefined;
    const tts = /^\/v1\/text-to-speech\/([^/?]+)\/with-timestamps(\?.*)?$/.exec(req.path);
    const voicePath = /^\/v1\/voices\/([^/?]+)$/.exec(req.path);
    const voiceId = tts?.[1] ?? voicePath?.[1] ?? null;
    const failed = this.failure(mode, key, voiceId);
    if (failed) return failed;
    if (!this.keyAccepted(key)) return this.failure('invalid_key', key, null)!;
    const known = (id: string | null) => this.voices.findIndex((v) => v.voice_id === id);
    if (req.method === 'GET' && req.path === '/v1/voices') return this.json(200, { voices: this.voices });
    if (req.method === 'DELETE' && voicePath) {
      const at = known(voicePath[1]);
      if (at < 0) return this.failure('unknown_voice', key, voicePath[1])!;
      this.voices.splice(at, 1);
      return this.json(200, { status: 'ok' });
    }
    if (req.method === 'POST' && req.path === '/v1/voices/add') {
      const form = await new Request('http://fake.invalid/', {
        method: 'POST',
        headers: { 'content-type': String(req.headers['content-type'] ?? '') },
        body: req.body,
      })
        .formData()
        .catch(() => null);
      const name = form?.get('name');
      const file = form?.get('files');
      if (typeof name !== 'string' || !(file instanceof Blob)) return this.failure('bad_request', key, null)!;
      const voice_id = randomBytes(10).toString('hex');
      const filename = (file as File).name ?? '';
      this.clones.push({ name, filename, sample: Buffer.from(await file.arrayBuffer()) });
      this.voices.push({ voice_id, name, category: 'cloned', labels: {}, preview_url: null });
      return this.json(200, { voice_id, requires_verification: this.o.requireVerification === true });
    }
    if (req.method !== 'POST' || !tts) return this.json(404, { detail: 'Not Found' });
    if (known(tts[1]) < 0) return this.failure('unknown_voice', key, tts[1])!;
    const body = parseBody(req);
    if (typeof body?.text !== 'string' || body.text.trim() === '')
      return this.failure('bad_request', key, null)!;
    const settings = (body.voice_settings ?? {}) as { speed?: unknown };
    const speed = typeof settings.speed === 'number' ? settings.speed : 1;
    const spoken = await speak(body.text, speed, dir);
    // The real API answers mp3_44100_128 unless output_format says otherwise.
    const mp3 = await ffmpeg(spoken.wav, ['-ar', '44100', '-ac', '1', '-b:a', '128k', '-f', 'mp3'], dir);
    const alignment = characterAlignment(body.text, spoken.words);
    return this.json(200, {
      audio_base64: mp3.toString('base64'),
      alignment,
      normalized_alignment: alignment,
    });
  }
}
