// Helpers for the generation tests (integration and e2e): small inputs cut from the shared fixtures with
// real ffmpeg in a temp folder, ffprobe facts of outputs, a local media server, and inject shortcuts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fixture, requireFfmpeg } from '../helpers/paths.js';
import { encodeForm, type FormPart } from '../helpers/multipart.js';
import type { App } from '../../src/http/app.js';

const run = promisify(execFile);

/**
 * The generation-lifecycle tests (integration and e2e) test queueing, state, storage and delivery, not
 * lip-sync, and some of their clips are synthetic (no face: the default `cpu` engine would fail them
 * with generation_no_face_detected). Their deployments run the passthrough engine explicitly; the
 * engine through the API is tested by test/e2e/engine-api.test.ts.
 */
export const LIFECYCLE_ENGINE_ENV: Readonly<Record<string, string>> = {
  LIPSYNC_DEFAULT_ENGINE: 'passthrough',
};

async function ffmpeg(args: string[]): Promise<void> {
  requireFfmpeg();
  await run('ffmpeg', ['-v', 'error', '-y', ...args]);
}

/** Short inputs made from the shared fixtures (never copied into the repository). */
export interface TestMedia {
  readonly dir: string;
  /** 2.0 s, 25 fps, 256x256, with a sound track. */
  readonly video: string;
  /** 1.5 s of speech (WAV). */
  readonly audioShort: string;
  /** 3.0 s of speech (WAV). */
  readonly audioLong: string;
  /** 61 s of tone (WAV, 8 kHz mono): over the free plan's 60 s. */
  readonly audio61: string;
  /** One frame of the face as PNG. */
  readonly image: string;
  cleanup(): Promise<void>;
}

export const VIDEO_SECONDS = 2;
export const AUDIO_SHORT_SECONDS = 1.5;
export const AUDIO_LONG_SECONDS = 3;

export async function makeTestMedia(): Promise<TestMedia> {
  const dir = await mkdtemp(join(tmpdir(), 'lipsync-gen-media-'));
  const video = join(dir, 'face.mp4');
  const audioShort = join(dir, 'short.wav');
  const audioLong = join(dir, 'long.wav');
  const audio61 = join(dir, 'tone61.wav');
  const image = join(dir, 'face.png');
  await Promise.all([
    ffmpeg([
      '-i',
      fixture('media/face_5.mp4'),
      '-t',
      String(VIDEO_SECONDS),
      '-vf',
      'scale=256:256,fps=25',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-ar',
      '44100',
      video,
    ]),
    ffmpeg(['-i', fixture('media/hello.wav'), '-t', String(AUDIO_SHORT_SECONDS), audioShort]),
    ffmpeg(['-i', fixture('media/audio_1.wav'), '-t', String(AUDIO_LONG_SECONDS), audioLong]),
    ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=220:sample_rate=8000', '-t', '61', '-ac', '1', audio61]),
    ffmpeg(['-i', fixture('media/face_5.mp4'), '-frames:v', '1', '-vf', 'scale=256:256', image]),
  ]);
  return {
    dir,
    video,
    audioShort,
    audioLong,
    audio61,
    image,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface ProbeFacts {
  formatName: string;
  duration: number;
  video: { width: number; height: number; fps: number; codec: string } | null;
  audio: { codec: string; duration: number } | null;
}

/** ffprobe of a file on disk. */
export async function probeFile(path: string): Promise<ProbeFacts> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_streams',
    '-show_format',
    path,
  ]);
  const j = JSON.parse(stdout) as {
    streams: Record<string, string | number>[];
    format: { format_name: string; duration: string };
  };
  const v = j.streams.find((s) => s.codec_type === 'video');
  const a = j.streams.find((s) => s.codec_type === 'audio');
  const rate = (r: string) => {
    const [n, d] = r.split('/').map(Number);
    return d ? n / d : n;
  };
  return {
    formatName: j.format.format_name,
    duration: Number(j.format.duration),
    video: v
      ? {
          width: Number(v.width),
          height: Number(v.height),
          fps: rate(String(v.avg_frame_rate)),
          codec: String(v.codec_name),
        }
      : null,
    audio: a ? { codec: String(a.codec_name), duration: Number(a.duration) } : null,
  };
}

export async function fileSize(path: string): Promise<number> {
  return (await stat(path)).size;
}

/** A local HTTP server for media URLs; each route can serve a file, hold, lie about its size or fail. */
export interface MediaRoute {
  file?: string;
  status?: number;
  /** Declares this Content-Length and sends only a few bytes (a "huge" file that is never sent). */
  claimLength?: number;
  /** Resolves when the response may be sent (to hold a request in flight). */
  gate?: Promise<void>;
}

export interface MediaServer {
  readonly base: string;
  /** Requests seen per path. */
  readonly hits: Map<string, number>;
  route(path: string, r: MediaRoute): string;
  close(): Promise<void>;
}

export async function startMediaServer(host = '127.0.0.1'): Promise<MediaServer> {
  const routes = new Map<string, MediaRoute>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const r = routes.get(path);
    void (async () => {
      if (!r) {
        res.writeHead(404).end('not found');
        return;
      }
      if (r.gate) await r.gate;
      if (r.status) {
        res.writeHead(r.status).end('no');
        return;
      }
      if (r.claimLength) {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(r.claimLength) });
        res.write(Buffer.alloc(1024));
        res.on('close', () => undefined);
        return; // never finishes: the client must give up on the declared size alone
      }
      const size = await fileSize(r.file as string);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
      createReadStream(r.file as string).pipe(res);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const base = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits,
    route(path, r) {
      routes.set(path, r);
      return `${base}${path}`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Uploads a file as an asset through POST /v2/assets/upload; returns its id. */
export async function uploadAsset(app: App, headers: Record<string, string>, path: string): Promise<string> {
  const form = await encodeForm([{ name: 'file', file: path }]);
  const res = await app.inject({
    method: 'POST',
    url: '/v2/assets/upload',
    headers: { ...headers, ...form.headers },
    payload: form.payload,
  });
  assert.equal(res.statusCode, 201, res.body);
  return (res.json() as { id: string }).id;
}

export async function postGenerate(
  app: App,
  headers: Record<string, string>,
  body: unknown,
  extraHeaders: Record<string, string | string[]> = {},
) {
  return app.inject({
    method: 'POST',
    url: '/v2/generate',
    headers: { ...headers, 'content-type': 'application/json', ...extraHeaders },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function postGenerateForm(app: App, headers: Record<string, string>, parts: FormPart[]) {
  const form = await encodeForm(parts);
  return app.inject({
    method: 'POST',
    url: '/v2/generate',
    headers: { ...headers, ...form.headers },
    payload: form.payload,
  });
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);

/** Long-polls GET /v2/generate/{id}?wait=true until the generation is terminal (or the deadline). */
export async function waitTerminal(
  app: App,
  headers: Record<string, string>,
  id: string,
  deadlineMs = 60_000,
): Promise<Record<string, any>> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/v2/generate/${id}?wait=true&timeout=10`, headers });
    assert.equal(res.statusCode, 200, res.body);
    const g = res.json() as Record<string, any>;
    if (TERMINAL.has(g.status)) return g;
    if (Date.now() > end) assert.fail(`generation ${id} still ${g.status} after ${deadlineMs} ms`);
  }
}

/** Fetches a signed local file URL through the app (the host part is the configured public URL). */
export async function fetchSigned(app: App, url: string) {
  const u = new URL(url);
  return app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
}
