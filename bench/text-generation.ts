// Extra time of a text-driven generation over the same generation from a pre-made WAV, in one run:
//
//   from WAV   the speech synthesized once beforehand (POST /v2/tts), downloaded and uploaded again as
//              a plain audio asset (no timeline: the engine shapes the mouth from loudness)
//   from text  a text input {type: "text", provider: {name: "local", voiceId, script}}: synthesized
//              while the request is admitted, then the engine shapes the mouth from the phonemes
//
// Both drive the same face clip through the API and the in-process worker of one real server process
// (the cpu engine). Printed: medians of submit -> COMPLETED, the POST alone (where synthesis
// happens) and the job, and the text-driven run as a ratio of the WAV-driven one (paired per run).
//
//   node --import tsx bench/text-generation.ts [--quick] [--runs=N] [--video=face_1.mp4] [--voice=slt-hts]
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { startServiceServer, type BenchChild } from './lib/child.js';
import { deployment } from './lib/deployment.js';
import { machineLine, median, num, printTable, wallNow } from './lib/stats.js';
import { fixture } from '../test/helpers/paths.js';
import type { GenerationRecord } from '../src/store/generations.js';

const args = parseArgs();
const RUNS = intOption(args, 'runs', args.quick ? 1 : 3);
const VIDEO = fixture(`media/${args.values.video ?? 'face_1.mp4'}`);
const VOICE = args.values.voice ?? 'slt-hts';
const SCRIPT = 'Bob bought a map by the big blue boat, and we saw two cool moons.';
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'REJECTED']);

interface Run {
  totalMs: number;
  postMs: number;
  jobMs: number;
}

function headers(server: BenchChild): Record<string, string> {
  return { 'x-api-key': server.ready.apiKey as string, 'content-type': 'application/json' };
}

async function upload(server: BenchChild, name: string, bytes: Buffer): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const res = await fetch(`${server.ready.url}/v2/assets/upload`, {
    method: 'POST',
    headers: { 'x-api-key': server.ready.apiKey as string },
    body: form,
  });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 201 || !body.id)
    throw new Error(`upload answered ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

/** The speech as a plain uploaded WAV: synthesized once, downloaded, uploaded (no timeline). */
async function premadeWav(server: BenchChild): Promise<string> {
  const res = await fetch(`${server.ready.url}/v2/tts`, {
    method: 'POST',
    headers: headers(server),
    body: JSON.stringify({ script: SCRIPT, voiceId: VOICE, provider: 'local' }),
  });
  const tts = (await res.json()) as { url?: string };
  if (res.status !== 200 || !tts.url)
    throw new Error(`POST /v2/tts answered ${res.status} ${JSON.stringify(tts)}`);
  // The signed URL names the configured public address; the bench server listens on its own port.
  const u = new URL(tts.url);
  const wav = Buffer.from(await (await fetch(`${server.ready.url}${u.pathname}${u.search}`)).arrayBuffer());
  return upload(server, 'speech.wav', wav);
}

async function generate(server: BenchChild, video: string, driver: Record<string, unknown>): Promise<Run> {
  const t0 = wallNow();
  const res = await fetch(`${server.ready.url}/v2/generate`, {
    method: 'POST',
    headers: headers(server),
    body: JSON.stringify({ model: 'lipsync-2', input: [{ type: 'video', assetId: video }, driver] }),
  });
  const created = (await res.json()) as { id?: string };
  const tCreated = wallNow();
  if (res.status !== 201 || !created.id)
    throw new Error(`POST /v2/generate answered ${res.status} ${JSON.stringify(created)}`);
  let status = '';
  for (let poll = 0; poll < 120 && !TERMINAL.has(status); poll++) {
    const r = await fetch(`${server.ready.url}/v2/generate/${created.id}?wait=true&timeout=10`, {
      headers: headers(server),
    });
    status = ((await r.json()) as { status: string }).status;
  }
  const tDone = wallNow();
  const g = await server.call<GenerationRecord>({ cmd: 'generation', id: created.id });
  if (status !== 'COMPLETED') throw new Error(`generation ${created.id} ended ${status}: ${g.error ?? ''}`);
  return {
    totalMs: tDone - t0,
    postMs: tCreated - t0,
    jobMs: Date.parse(g.finishedAt as string) - Date.parse(g.startedAt as string),
  };
}

await runMain(
  'text-generation',
  async () => {
    console.log('# A text-driven generation against the same generation from a pre-made WAV');
    console.log(machineLine());
    console.log(
      `inputs: ${basename(VIDEO)} + "${SCRIPT}" (voice ${VOICE}); ${RUNS} run(s) after one warm-up of each`,
    );
    const work = await mkdtemp(join(tmpdir(), 'lipsync-bench-'));
    onCleanup(`temp folder ${work}`, () => rm(work, { recursive: true, force: true }));
    const dep = await deployment('sqlite', {});
    const server = await startServiceServer('server (sqlite, LIPSYNC_ROLE=all)', dep.env);
    const video = await upload(server, basename(VIDEO), await readFile(VIDEO));
    const wav = await premadeWav(server);
    const fromWav = { type: 'audio', assetId: wav };
    const fromText = { type: 'text', provider: { name: 'local', voiceId: VOICE, script: SCRIPT } };

    await generate(server, video, fromWav);
    await generate(server, video, fromText);
    const w: Run[] = [];
    const t: Run[] = [];
    for (let i = 1; i <= RUNS; i++) {
      w.push(await generate(server, video, fromWav));
      t.push(await generate(server, video, fromText));
      console.log(
        `  run ${i}/${RUNS}: from WAV ${num(w[i - 1].totalMs, 0)} ms, from text ${num(t[i - 1].totalMs, 0)} ms`,
      );
    }
    await server.stop();
    const m = (runs: Run[], f: (r: Run) => number) => num(median(runs.map(f)), 0);
    const paired = median(t.map((r, i) => r.totalMs / w[i].totalMs));
    const extra = median(t.map((r, i) => r.totalMs - w[i].totalMs));
    console.log('');
    console.log(`Medians over ${RUNS} runs`);
    printTable([
      ['', 'submit -> COMPLETED ms', 'POST ms', 'job ms', 'x from WAV'],
      [
        'from a pre-made WAV (baseline)',
        m(w, (r) => r.totalMs),
        m(w, (r) => r.postMs),
        m(w, (r) => r.jobMs),
        '1.00x',
      ],
      [
        'from text (synthesis at submit)',
        m(t, (r) => r.totalMs),
        m(t, (r) => r.postMs),
        m(t, (r) => r.jobMs),
        `${paired.toFixed(2)}x`,
      ],
      ['extra time of text (paired per run)', num(extra, 0), '', '', ''],
    ]);
  },
  { maxMs: 15 * 60_000 },
);
