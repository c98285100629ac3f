// Recognition through any server that speaks OpenAI's `POST /v1/audio/transcriptions` with word
// timestamps (OpenAI itself, or self-hosted Whisper servers: faster-whisper-server / speaches,
// whisper.cpp's server, LocalAI). Whisper's word times are rough (often 100-300 ms off at word edges),
// which is why refine.ts re-times them by forced alignment.
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { probeMedia } from '../../media/probe.js';
import { endpoint, multipartBody, parseJson, speechRequest } from '../http-speech.js';
import { SpeechProviderError } from '../types.js';
import type { RecognitionProvider, RecognitionResult, RecognizedWord, TranscribeOptions } from './types.js';

export interface OpenAiRecognitionOptions {
  /** The server's root, without `/v1` (https://api.openai.com, http://whisper:8000). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; null for servers without authentication. */
  apiKey: string | null;
  /** The `model` field (default 'whisper-1'). */
  model?: string;
  /** Deadline for the whole request; default 60 s plus two seconds per second of audio. */
  timeoutMs?: number;
  /** Whether the server may be on a private address (a LAN Whisper server). */
  allowPrivate: boolean;
}

/** OpenAI refuses uploads over 25 MB; a little under it leaves room for the multipart framing. */
const MAX_UPLOAD_BYTES = 24 * 1024 * 1024;
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

let languageCodes: Map<string, string> | null = null;

/** Whisper servers name the language ("english"); the ISO 639-1 code when it is one we can map. */
export function languageCode(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const v = value.trim().toLowerCase();
  if (/^[a-z]{2}$/.test(v)) return v;
  if (!languageCodes) {
    // Reversing the platform's own language names covers every name Whisper uses without a table.
    languageCodes = new Map();
    const names = new Intl.DisplayNames(['en'], { type: 'language' });
    for (let a = 97; a < 123; a++)
      for (let b = 97; b < 123; b++) {
        const code = String.fromCharCode(a, b);
        const name = names.of(code);
        if (name && name !== code) languageCodes.set(name.toLowerCase(), code);
      }
  }
  return languageCodes.get(v) ?? v;
}

function timedWord(o: unknown): RecognizedWord | null {
  if (!o || typeof o !== 'object') return null;
  const w = o as Record<string, unknown>;
  const text = typeof w.word === 'string' ? w.word.trim() : typeof w.text === 'string' ? w.text.trim() : '';
  const start = Number(w.start);
  const end = Number(w.end);
  if (!/[\p{L}\p{N}]/u.test(text) || !Number.isFinite(start) || !Number.isFinite(end)) return null;
  const startMs = Math.max(0, Math.round(start * 1000));
  const word: RecognizedWord = { text, startMs, endMs: Math.max(startMs, Math.round(end * 1000)) };
  const p = Number(w.probability);
  if (Number.isFinite(p)) word.confidence = Math.min(1, Math.max(0, p));
  return word;
}

/**
 * The words of a verbose_json answer: top-level `words` (OpenAI), else each segment's `words`
 * (faster-whisper style). An answer with text but no word times is unusable for editing.
 */
export function parseTranscription(json: unknown): RecognitionResult {
  if (!json || typeof json !== 'object') throw new Error('the answer is not an object');
  const o = json as Record<string, unknown>;
  let raw: unknown[] = Array.isArray(o.words) ? o.words : [];
  if (raw.length === 0 && Array.isArray(o.segments)) {
    raw = o.segments.flatMap((s) => {
      const ws = (s as { words?: unknown } | null)?.words;
      return Array.isArray(ws) ? (ws as unknown[]) : [];
    });
  }
  const words = raw.map(timedWord).filter((w): w is RecognizedWord => w !== null);
  const text = typeof o.text === 'string' ? o.text.trim() : '';
  if (words.length === 0 && /[\p{L}\p{N}]/u.test(text)) throw new Error('the answer has no word timestamps');
  if (words.length === 0 && typeof o.text !== 'string') throw new Error('the answer is not a transcription');
  return { words, language: languageCode(o.language) };
}

export class OpenAiRecognitionProvider implements RecognitionProvider {
  readonly name = 'openai' as const;

  constructor(private readonly opts: OpenAiRecognitionOptions) {}

  /** 16 kHz mono WAV (what Whisper resamples to anyway) or, when that is over the limit, 48 kb/s MP3. */
  private async upload(input: string, opts: TranscribeOptions): Promise<{ path: string; type: string }> {
    const convert = async (out: string, codec: string[]) => {
      try {
        await runFfmpeg(['-i', input, '-vn', '-ac', '1', '-ar', '16000', ...codec, out], {
          signal: opts.signal,
          timeoutMs: 300_000,
        });
      } catch (err) {
        opts.signal?.throwIfAborted();
        throw new SpeechProviderError(
          'rejected',
          'openai',
          `the audio could not be read: ${(err as Error).message}`,
        );
      }
      return (await stat(out)).size;
    };
    const dir = await mkdtemp(join(opts.workDir, 'transcribe-'));
    const wav = join(dir, 'x16k.wav');
    if ((await convert(wav, ['-c:a', 'pcm_s16le'])) <= MAX_UPLOAD_BYTES)
      return { path: wav, type: 'audio/wav' };
    const mp3 = join(dir, 'x16k.mp3');
    if ((await convert(mp3, ['-c:a', 'libmp3lame', '-b:a', '48k'])) <= MAX_UPLOAD_BYTES) {
      return { path: mp3, type: 'audio/mpeg' };
    }
    throw new SpeechProviderError('rejected', 'openai', 'the audio is too long for one upload');
  }

  async transcribe(wavPath: string, opts: TranscribeOptions): Promise<RecognitionResult> {
    opts.signal?.throwIfAborted();
    const file = await this.upload(wavPath, opts);
    const seconds = (await probeMedia(file.path)).durationSeconds ?? 0;
    const fields: Record<string, string> = {
      model: this.opts.model ?? 'whisper-1',
      response_format: 'verbose_json',
      'timestamp_granularities[]': 'word',
    };
    if (opts.language) fields.language = opts.language.slice(0, 2).toLowerCase();
    const { body, contentType } = await multipartBody(fields, [
      {
        name: 'file',
        filename: file.type === 'audio/wav' ? 'audio.wav' : 'audio.mp3',
        type: file.type,
        content: await readFile(file.path),
      },
    ]);
    const key = this.opts.apiKey;
    const headers: Record<string, string> = { 'content-type': contentType, accept: 'application/json' };
    if (key) headers.authorization = `Bearer ${key}`;
    const answer = await speechRequest({
      provider: 'openai',
      method: 'POST',
      url: endpoint(this.opts.baseUrl, '/v1/audio/transcriptions'),
      headers,
      body,
      timeoutMs: this.opts.timeoutMs ?? 60_000 + seconds * 2000,
      maxResponseBytes: MAX_ANSWER_BYTES,
      allowPrivate: this.opts.allowPrivate,
      secret: key,
      signal: opts.signal,
    });
    try {
      return parseTranscription(parseJson(answer, 'openai'));
    } catch (err) {
      if (err instanceof SpeechProviderError) throw err;
      throw new SpeechProviderError('unavailable', 'openai', (err as Error).message);
    }
  }
}
