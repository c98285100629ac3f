// Scale out: what a remote worker and a direct upload cost, each figure a ratio to a baseline measured
// in the same run, against real `lipsync` processes over real HTTP:
//
//   remote    submit-to-COMPLETED time of a short generation (passthrough engine, the 2 s clip and
//             1.5 s of speech of makeTestMedia) run by a remote worker (an API-only server,
//             LIPSYNC_ROLE=api, and one `lipsync worker --server URL` process with its own data folder
//             and a worker token), against the same generation on a `lipsync serve` with the default
//             role (all: its workers in the process); N sequential generations on each, alternating,
//             after one warm-up each; medians and remote / in-process
//   upload    direct upload on the local store: a ~50 MB video (cut from the fixture clip at a high
//             bitrate into a temp folder) announced (POST /v2/assets/upload, JSON), PUT to its signed
//             uploadUrl with fetch (the file streamed), and registered (POST /v2/assets, which probes
//             and hashes it: timed on its own), against `curl -T FILE <uploadUrl>` (spawned; its
//             process start is in its time) to the uploadUrl of another announcement to the same
//             server; MB/s of each PUT (1 MB = 10^6 bytes) and fetch / curl
//
// It runs bin/lipsync.js, which runs the compiled dist/: build first.
//
//   npm run build && node --import tsx bench/scale-out.ts [--quick] [--generations=8] [--uploads=3]
//                                                         [--upload-mb=50]
import { spawn } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { machineLine, median, num, printTable } from './lib/stats.js';
import {
  createDeployment,
  fixture,
  repoRoot,
  runCliJson,
  startServer,
  type TestServer,
} from '../test/helpers/index.js';
import { LIFECYCLE_ENGINE_ENV, makeTestMedia } from '../test/integration/generations-support.js';
import { api, cliOrg, uploadOverHttp, type E2eOrg } from '../test/e2e/generations-support.js';
import { startWorker } from '../test/e2e/worker-processes.js';

const args = parseArgs();
const GENERATIONS = intOption(args, 'generations', args.quick ? 3 : 8);
const UPLOADS = intOption(args, 'uploads', args.quick ? 1 : 3);
const UPLOAD_MB = intOption(args, 'upload-mb', 50);
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);

/** A ratio as "1.23x". */
const times = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}x` : '-');

function run(cmd: string, argv: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

interface Target {
  label: string;
  server: TestServer;
  org: E2eOrg;
  video: string;
  audio: string;
}

/** Submit to COMPLETED (long-polled), ms. */
async function generation(t: Target): Promise<number> {
  const t0 = performance.now();
  const r = await api(t.server, t.org, 'POST', '/v2/generate', {
    model: 'lipsync-2',
    input: [
      { type: 'video', assetId: t.video },
      { type: 'audio', assetId: t.audio },
    ],
  });
  if (r.status !== 201) throw new Error(`${t.label}: POST /v2/generate answered ${r.status}: ${r.text}`);
  const id = String(r.json.id);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const g = await api(t.server, t.org, 'GET', `/v2/generate/${id}?wait=true&timeout=10`);
    if (g.status !== 200) throw new Error(`${t.label}: GET /v2/generate answered ${g.status}: ${g.text}`);
    if (TERMINAL.has(g.json.status)) {
      if (g.json.status !== 'COMPLETED') throw new Error(`${t.label}: generation ${id} ended ${g.text}`);
      return performance.now() - t0;
    }
    if (Date.now() > deadline) throw new Error(`${t.label}: generation ${id} still ${g.json.status}`);
  }
}

async function announce(server: TestServer, org: E2eOrg, size: number) {
  const r = await api(server, org, 'POST', '/v2/assets/upload', {
    fileName: 'big.mp4',
    contentType: 'video/mp4',
    size,
  });
  if (r.status !== 201) throw new Error(`announce answered ${r.status}: ${r.text}`);
  return r.json as { uploadUrl: string; url: string };
}

async function register(server: TestServer, org: E2eOrg, url: string): Promise<number> {
  const t0 = performance.now();
  const r = await api(server, org, 'POST', '/v2/assets', { url, type: 'VIDEO' });
  if (r.status !== 201) throw new Error(`POST /v2/assets answered ${r.status}: ${r.text}`);
  return performance.now() - t0;
}

async function putWithFetch(uploadUrl: string, file: string, size: number): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': 'video/mp4', 'content-length': String(size) },
    body: Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`PUT (fetch) answered ${res.status}: ${text}`);
  return ms;
}

async function putWithCurl(uploadUrl: string, file: string): Promise<number> {
  const t0 = performance.now();
  const r = await run('curl', [
    '-sS',
    '-T',
    file,
    '-H',
    'Content-Type: video/mp4',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    uploadUrl,
  ]);
  const ms = performance.now() - t0;
  if (r.code !== 0 || r.out.trim() !== '200') throw new Error(`curl -T exited ${r.code}: ${r.out}`);
  return ms;
}

async function main(): Promise<void> {
  if (!existsSync(join(repoRoot, 'dist', 'cli', 'index.js'))) {
    throw new Error('dist/ is missing: this benchmark runs bin/lipsync.js; run `npm run build` first');
  }
  console.log(machineLine());
  const m = await makeTestMedia();
  onCleanup('test media', () => m.cleanup());
  const tmp = await mkdtemp(join(tmpdir(), 'lipsync-bench-scale-'));
  onCleanup('temp folder', () => rm(tmp, { recursive: true, force: true }));

  // ~UPLOAD_MB MB of real video: the fixture clip looped, constant bitrate.
  const big = join(tmp, 'big.mp4');
  const seconds = 5;
  const bitrate = `${Math.round((UPLOAD_MB * 8) / seconds)}M`;
  const made = await run('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-stream_loop',
    '-1',
    '-i',
    fixture('media/face_5.mp4'),
    '-t',
    String(seconds),
    '-vf',
    'scale=640:480',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-b:v',
    bitrate,
    '-minrate',
    bitrate,
    '-maxrate',
    bitrate,
    '-bufsize',
    bitrate,
    '-x264-params',
    'nal-hrd=cbr',
    '-c:a',
    'aac',
    big,
  ]);
  if (made.code !== 0) throw new Error(`ffmpeg failed: ${made.out}`);
  const size = (await stat(big)).size;

  const env = { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_ALLOW_PRIVATE_URLS: 'true' };
  const [apiDep, allDep] = await Promise.all([
    createDeployment({ database: 'sqlite', env }),
    createDeployment({ database: 'sqlite', env }),
  ]);
  onCleanup('api deployment', () => apiDep.cleanup());
  onCleanup('all deployment', () => allDep.cleanup());
  const [apiServer, allServer] = await Promise.all([
    startServer({ env: { ...apiDep.env, LIPSYNC_ROLE: 'api' } }),
    startServer({ env: { ...allDep.env } }),
  ]);
  onCleanup('api server', async () => void (await apiServer.stop()));
  onCleanup('all server', async () => void (await allServer.stop()));

  const token = await runCliJson(['worker-token', 'create', '--name', 'bench'], { env: { ...apiDep.env } });
  const workerDir = await mkdtemp(join(tmpdir(), 'lipsync-bench-worker-'));
  onCleanup('worker folder', () => rm(workerDir, { recursive: true, force: true }));
  const worker = startWorker(
    'remote worker',
    {
      ...LIFECYCLE_ENGINE_ENV,
      LOG_LEVEL: 'info',
      LIPSYNC_DATA_DIR: workerDir,
      LIPSYNC_ARTICULATION_RECOGNIZE: '0',
      LIPSYNC_WORKER_TOKEN: String(token.token),
    },
    ['--server', apiServer.url, '--kinds', 'generation'],
  );
  onCleanup('remote worker', () => worker.stop());
  await worker.ready();

  const targets: Target[] = [];
  for (const [label, server, dep] of [
    ['remote', apiServer, apiDep],
    ['in-process', allServer, allDep],
  ] as const) {
    const org = await cliOrg({ ...dep.env });
    const [video, audio] = await Promise.all([
      uploadOverHttp(server, org, m.video),
      uploadOverHttp(server, org, m.audioShort),
    ]);
    targets.push({ label, server, org, video, audio });
  }
  const [remote, local] = targets as [Target, Target];

  // 1. Remote worker vs in-process worker.
  await generation(remote);
  await generation(local);
  const ms: Record<string, number[]> = { remote: [], 'in-process': [] };
  for (let i = 0; i < GENERATIONS; i++) {
    const order = i % 2 === 0 ? [remote, local] : [local, remote];
    for (const t of order) ms[t.label]!.push(await generation(t));
  }
  const rRemote = median(ms.remote!);
  const rLocal = median(ms['in-process']!);
  console.log(
    `\nSubmit to COMPLETED, ${GENERATIONS} sequential generations each, alternating (passthrough, 2 s video, 1.5 s audio), ms`,
  );
  printTable([
    ['worker', 'median', 'min', 'max', 'all'],
    ...[remote, local].map((t) => {
      const v = ms[t.label]!;
      return [
        t.label,
        num(median(v), 0),
        num(Math.min(...v), 0),
        num(Math.max(...v), 0),
        v.map((x) => x.toFixed(0)).join(' '),
      ];
    }),
  ]);
  console.log(`  remote / in-process (medians): ${times(rRemote / rLocal)}`);

  // 2. Direct upload: PUT with fetch (streamed) vs curl -T, to the in-process server's local store.
  const up = {
    fetch: [] as number[],
    curl: [] as number[],
    regFetch: [] as number[],
    regCurl: [] as number[],
  };
  const once = async (how: 'fetch' | 'curl') => {
    const a = await announce(allServer, local.org, size);
    const put =
      how === 'fetch' ? await putWithFetch(a.uploadUrl, big, size) : await putWithCurl(a.uploadUrl, big);
    const reg = await register(allServer, local.org, a.url);
    up[how].push(put);
    (how === 'fetch' ? up.regFetch : up.regCurl).push(reg);
  };
  await once('fetch'); // warm-up of each
  await once('curl');
  up.fetch.length = up.curl.length = up.regFetch.length = up.regCurl.length = 0;
  for (let i = 0; i < UPLOADS; i++) {
    for (const how of i % 2 === 0 ? (['fetch', 'curl'] as const) : (['curl', 'fetch'] as const))
      await once(how);
  }
  const mbps = (v: number[]) => size / 1e6 / (median(v) / 1000);
  console.log(
    `\nDirect upload of ${(size / 1e6).toFixed(1)} MB (local store), ${UPLOADS} PUTs each, alternating, after one warm-up each`,
  );
  printTable([
    ['PUT with', 'median ms', 'MB/s', 'all ms', 'register ms (median)'],
    [
      'fetch (streamed)',
      num(median(up.fetch), 0),
      num(mbps(up.fetch), 0),
      up.fetch.map((x) => x.toFixed(0)).join(' '),
      num(median(up.regFetch), 0),
    ],
    [
      'curl -T',
      num(median(up.curl), 0),
      num(mbps(up.curl), 0),
      up.curl.map((x) => x.toFixed(0)).join(' '),
      num(median(up.regCurl), 0),
    ],
  ]);
  console.log(`  fetch / curl (MB/s): ${times(mbps(up.fetch) / mbps(up.curl))}`);
}

await runMain('scale-out', main, { maxMs: 240_000 });
