// What the fake speech servers (fake-speech-servers.ts) share: a node:http server on 127.0.0.1 that
// records every request and answers it in the mode it was told, real speech from festival, and the
// ElevenLabs-style character alignment computed from festival's word times.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { requireFfmpeg } from './paths.js';

const run = promisify(execFile);

export type FakeMode =
  | 'ok'
  /** Accepts the request and never answers (the client's deadline must fire). */
  | 'hang'
  | 'invalid_key'
  /** The service's quota answer (ElevenLabs: 401 detail.status quota_exceeded; OpenAI: 429 insufficient_quota). */
  | 'quota'
  | 'payment_required'
  /** 429 for rate or concurrency, not quota. */
  | 'rate_limited'
  | 'server_error'
  | 'overloaded'
  /** 200 with a body that is neither the expected JSON nor audio. */
  | 'garbage'
  | 'unknown_voice'
  /** 400 (OpenAI) / 422 validation error (ElevenLabs). */
  | 'bad_request';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface FakeSpeechOptions {
  /** Keys accepted in 'ok' mode (any key, or none, when not given). */
  keys?: string[];
}

/** What festival said: the WAV and its words with times (seconds). */
export interface Spoken {
  wav: Buffer;
  words: { word: string; start: number; end: number }[];
}

/** Speech for `text` from festival, at `speed` (1 = its own rate). */
export async function speak(text: string, speed: number, dir: string): Promise<Spoken> {
  const name = randomBytes(6).toString('hex');
  const wavPath = join(dir, `${name}.wav`);
  const quoted = text.replace(/[\\"]/g, (c) => `\\${c}`);
  const script = [
    `(Parameter.set 'Duration_Stretch ${(1 / speed).toFixed(3)})`,
    `(set! utt (SynthText "${quoted}"))`,
    `(utt.save.wave utt "${wavPath}" 'riff)`,
    `(mapcar (lambda (w) (format t "%s %f %f\\n" (item.name w) (item.feat w "word_start") (item.feat w "word_end"))) (utt.relation.items utt 'Word))`,
  ].join('\n');
  await writeFile(join(dir, `${name}.scm`), script);
  const { stdout } = await run('festival', ['-b', join(dir, `${name}.scm`)]);
  const words = stdout
    .trim()
    .split('\n')
    .map((l) => l.split(' '))
    .filter((p) => p.length === 3)
    .map(([word, s, e]) => ({ word, start: Number(s), end: Number(e) }));
  return { wav: await readFile(wavPath), words };
}

export async function ffmpeg(input: Buffer, args: string[], dir: string): Promise<Buffer> {
  requireFfmpeg();
  const name = join(dir, randomBytes(6).toString('hex'));
  await writeFile(`${name}.in`, input);
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-i',
    `${name}.in`,
    ...args,
    `${name}.out`,
  ]);
  return readFile(`${name}.out`);
}

/**
 * ElevenLabs-style character alignment: each word's characters share festival's span for that word
 * (proportionally over the whole speech when festival split the words differently, e.g. numbers);
 * spaces and punctuation fill the gaps between words.
 */
export function characterAlignment(text: string, spoken: Spoken['words']) {
  const chars = Array.from(text);
  const tokens: { from: number; to: number }[] = [];
  for (let i = 0; i < chars.length;) {
    if (!/[\p{L}\p{N}'’]/u.test(chars[i])) {
      i++;
      continue;
    }
    const from = i;
    while (i < chars.length && /[\p{L}\p{N}'’]/u.test(chars[i])) i++;
    tokens.push({ from, to: i });
  }
  const first = spoken[0]?.start ?? 0;
  const last = spoken.at(-1)?.end ?? 0;
  const total = tokens.reduce((n, t) => n + t.to - t.from, 0) || 1;
  let done = 0;
  const spans = tokens.map((t, k) => {
    if (spoken.length === tokens.length) return { start: spoken[k].start, end: spoken[k].end };
    const start = first + ((last - first) * done) / total;
    done += t.to - t.from;
    return { start, end: first + ((last - first) * done) / total };
  });
  const starts: number[] = [];
  const ends: number[] = [];
  let k = 0;
  chars.forEach((_c, i) => {
    while (k < tokens.length && tokens[k].to <= i) k++;
    const t = tokens[k];
    if (t && t.from <= i) {
      const step = (spans[k].end - spans[k].start) / (t.to - t.from);
      starts.push(spans[k].start + (i - t.from) * step);
      ends.push(spans[k].start + (i + 1 - t.from) * step);
    } else {
      // A space or punctuation: the gap between the word before and the word after.
      const before = k > 0 ? spans[k - 1].end : 0;
      starts.push(before);
      ends.push(t ? spans[k].start : Math.max(before, last));
    }
  });
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    characters: chars,
    character_start_times_seconds: starts.map(r),
    character_end_times_seconds: ends.map(r),
  };
}

export type Reply = { status: number; type?: string; body: string | Buffer } | 'hang';

export abstract class FakeSpeechServer {
  readonly requests: RecordedRequest[] = [];
  private server: http.Server | null = null;
  private dir = '';
  private modes: FakeMode[] = [];
  private mode: FakeMode = 'ok';
  url = '';

  constructor(protected readonly opts: FakeSpeechOptions = {}) {}

  async start(): Promise<this> {
    this.dir = await mkdtemp(join(tmpdir(), 'fake-speech-'));
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rec = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks),
        };
        this.requests.push(rec);
        const mode = this.modes.shift() ?? this.mode;
        this.reply(rec, mode, this.dir).then(
          (r) => {
            if (r !== 'hang')
              res.writeHead(r.status, { 'content-type': r.type ?? 'application/json' }).end(r.body);
          },
          (err: Error) =>
            res.writeHead(500, { 'content-type': 'text/plain' }).end(`fake failed: ${err.message}`),
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** `mode` for every later request, or, with `times`, for the next `times` requests only. */
  setMode(mode: FakeMode, times?: number): void {
    if (times === undefined) [this.mode, this.modes] = [mode, []];
    else for (let i = 0; i < times; i++) this.modes.push(mode);
  }

  /** Forgets the recorded requests and goes back to 'ok'. */
  reset(): void {
    this.requests.length = 0;
    this.setMode('ok');
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  protected keyAccepted(key: string | undefined): boolean {
    return !this.opts.keys || (key !== undefined && this.opts.keys.includes(key));
  }

  protected json(status: number, value: unknown): Reply {
    return { status, body: JSON.stringify(value) };
  }

  protected abstract reply(req: RecordedRequest, mode: FakeMode, dir: string): Promise<Reply>;
}
