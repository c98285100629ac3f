// A protocol-level stand-in for OpenAI-compatible speech recognition (`POST /v1/audio/transcriptions`,
// as OpenAI and self-hosted Whisper servers speak it). It does not recognize anything: a test tells it
// the words that were really said (`answerWith`), and it answers them with Whisper-like rough times
// (edges shifted by up to `roughMs`, deterministically) so that refinement has something to fix.
// Records every request and misbehaves on demand like the fake speech servers.
//
//   const fake = await new FakeTranscriptionServer({ keys: ['k'] }).start();
//   fake.answerWith(words, { roughMs: 200, layout: 'segments' }); fake.setMode('quota', 1);
import { randomBytes } from 'node:crypto';
import {
  FakeSpeechServer,
  type FakeMode,
  type FakeSpeechOptions,
  type RecordedRequest,
  type Reply,
} from './fake-speech-base.js';

export interface TruthWord {
  word: string;
  /** Seconds. */
  start: number;
  end: number;
}

export interface AnswerOptions {
  /** Largest shift of a word edge, ms (default 200). */
  roughMs?: number;
  /** Where the words go: top-level `words` (OpenAI) or `segments[].words` (faster-whisper). */
  layout?: 'words' | 'segments';
  language?: string;
}

/** The form of the last good request (file bytes included), for assertions. */
export interface TranscriptionForm {
  fields: Record<string, string>;
  file: { name: string; type: string; bytes: Buffer } | null;
}

export class FakeTranscriptionServer extends FakeSpeechServer {
  private truth: TruthWord[] = [];
  private answer: AnswerOptions = {};
  readonly forms: TranscriptionForm[] = [];

  constructor(o: FakeSpeechOptions = {}) {
    super(o);
  }

  answerWith(words: TruthWord[], opts: AnswerOptions = {}): void {
    this.truth = words;
    this.answer = opts;
  }

  /** The answered words: each edge moved by a fixed pseudo-random amount within roughMs. */
  roughWords(): TruthWord[] {
    const rough = (this.answer.roughMs ?? 200) / 1000;
    // Whisper tends to start words early and end them late; the shifts lean that way but vary.
    const shift = (i: number, k: number) => rough * (((i * 7919 + k * 104729) % 200) / 100 - 1);
    let prev = -1;
    return this.truth.map((w, i) => {
      // Whisper's times are rough but keep the spoken order.
      const start = Math.max(0, prev + 0.02, w.start + shift(i, 1));
      prev = start;
      const end = Math.max(start + 0.05, w.end + shift(i, 2) + rough / 2);
      return { word: ` ${w.word}`, start: +start.toFixed(2), end: +end.toFixed(2), probability: 0.9 };
    });
  }

  private failure(mode: FakeMode, key: string | undefined): Reply | null {
    const error = (status: number, message: string, code: string | null, type = 'invalid_request_error') =>
      this.json(status, { error: { message, type, param: null, code } });
    switch (mode) {
      case 'hang':
        return 'hang';
      case 'invalid_key':
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
        return { status: 200, type: 'text/html', body: `<html>${randomBytes(64).toString('hex')}</html>` };
      case 'bad_request':
        return error(400, 'Invalid file format.', 'invalid_value');
      default:
        return null;
    }
  }

  protected async reply(req: RecordedRequest, mode: FakeMode): Promise<Reply> {
    const key = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (req.method !== 'POST' || req.path !== '/v1/audio/transcriptions') {
      return this.json(404, { error: { message: 'Not found', type: 'invalid_request_error', code: null } });
    }
    const failed = this.failure(mode, key);
    if (failed) return failed;
    if (!this.keyAccepted(key)) return this.failure('invalid_key', key)!;
    const form = await new Request('http://fake.invalid/', {
      method: 'POST',
      headers: { 'content-type': String(req.headers['content-type'] ?? '') },
      body: req.body,
    })
      .formData()
      .catch(() => null);
    const file = form?.get('file');
    if (!form || !(file instanceof Blob) || typeof form.get('model') !== 'string') {
      return this.failure('bad_request', key)!;
    }
    const fields: Record<string, string> = {};
    form.forEach((v, k) => {
      if (typeof v === 'string') fields[k] = v;
    });
    const bytes = Buffer.from(await file.arrayBuffer());
    this.forms.push({ fields, file: { name: (file as File).name, type: file.type, bytes } });
    const words = this.roughWords();
    const text = this.truth.map((w) => w.word).join(' ');
    const language = this.answer.language ?? 'english';
    if (fields.response_format !== 'verbose_json') return { status: 200, type: 'text/plain', body: text };
    // Like the real API: word times only when asked for with timestamp_granularities[]=word.
    const wantWords = form.getAll('timestamp_granularities[]').includes('word');
    const duration = this.truth.at(-1)?.end ?? 0;
    if (this.answer.layout === 'segments') {
      const segment = { id: 0, start: 0, end: duration, text, ...(wantWords ? { words } : {}) };
      return this.json(200, { task: 'transcribe', language, duration, text, segments: [segment] });
    }
    return this.json(200, { task: 'transcribe', language, duration, text, ...(wantWords ? { words } : {}) });
  }
}
