// A dub against a plain lip-sync of the same clip, in one run (docs/dubbing.md, "Measured"):
//
//   lip-sync   the clip re-animated to its own soundtrack (the baseline: what a dub adds to)
//   dub        the same clip with dubParams {targetLang}: recognition, speakers, translation, voices,
//              synthesis, timing, mix, then the same lip-sync
//
// The clip: a fixture face looped under real English speech (latentsync_demo1 + demo2, 29.4 s), on a
// real `lipsync serve` with the cpu engine and the local providers. Printed: submit -> COMPLETED per
// run, the dub as a ratio of the lip-sync (paired per run), time per output second, the dub's stage
// seconds, how many segments fit without stretch, and the lips at the translation's p, b, m.
//
//   node --import tsx bench/dubbing.ts [--quick] [--runs=N] [--to=es] [--seconds=30]
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { startServiceServer, type BenchChild } from './lib/child.js';
import { deployment } from './lib/deployment.js';
import { machineLine, median, num, printTable, wallNow } from './lib/stats.js';
import { fixture } from '../test/helpers/paths.js';
import { measureMouth } from '../src/engines/cpu/quality.js';
import { phonemeShapes } from '../src/engines/cpu/phoneme-quality.js';

const run = promisify(execFile);
const args = parseArgs();
const RUNS = intOption(args, 'runs', args.quick ? 1 : 2);
const TO = args.values.to ?? 'es';
const SECONDS = intOption(args, 'seconds', 30);
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'REJECTED']);

function headers(server: BenchChild): Record<string, string> {
  return { 'x-api-key': server.ready.apiKey as string, 'content-type': 'application/json' };
}

async function call(server: BenchChild, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.ready.url}${path}`, {
    method,
    headers: headers(server),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${text}`);
  return JSON.parse(text);
}

async function upload(server: BenchChild, path: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([await readFile(path)]), 'clip.mp4');
  const res = await fetch(`${server.ready.url}/v2/assets/upload`, {
    method: 'POST',
    headers: { 'x-api-key': server.ready.apiKey as string },
    body: form,
  });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 201 || !body.id) throw new Error(`upload answered ${res.status}`);
  return body.id;
}

/** submit -> COMPLETED, ms, and the generation with its quality report. */
async function generate(server: BenchChild, body: unknown): Promise<{ ms: number; g: any }> {
  const t0 = wallNow();
  const { id } = await call(server, 'POST', '/v2/generate', body);
  let g: any = { status: '' };
  while (!TERMINAL.has(g.status)) g = await call(server, 'GET', `/v2/generate/${id}?wait=true&timeout=10`);
  const ms = wallNow() - t0;
  if (g.status !== 'COMPLETED') throw new Error(`generation ${id} ended ${g.status}: ${g.error}`);
  return { ms, g: await call(server, 'GET', `/v2/generate/${id}?include=quality`) };
}

await runMain(
  'dubbing',
  async () => {
    console.log(`# A ${SECONDS} s English clip dubbed into ${TO} offline, against its plain lip-sync`);
    console.log(machineLine());
    const work = await mkdtemp(join(tmpdir(), 'lipsync-bench-dub-'));
    onCleanup(`temp folder ${work}`, () => rm(work, { recursive: true, force: true }));
    const clip = join(work, 'clip.mp4');
    await run('ffmpeg', [
      ...['-v', 'error', '-y', '-stream_loop', '-1', '-i', fixture('media/face_3.mp4')],
      ...['-i', fixture('media/latentsync_demo1.wav'), '-i', fixture('media/latentsync_demo2.wav')],
      ...['-filter_complex', '[1:a][2:a]concat=n=2:v=0:a=1,apad[a]', '-map', '0:v', '-map', '[a]'],
      ...['-t', String(SECONDS), '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18'],
      ...['-pix_fmt', 'yuv420p', '-c:a', 'aac', clip],
    ]);
    const dep = await deployment('sqlite', {});
    const server = await startServiceServer('server (sqlite, LIPSYNC_ROLE=all)', dep.env);
    const video = await upload(server, clip);
    const plain = {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: video },
      ],
    };
    const dub = {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video }],
      dubParams: { targetLang: TO },
    };

    const lips: number[] = [];
    const dubs: number[] = [];
    let last: any = null;
    for (let i = 1; i <= RUNS; i++) {
      lips.push((await generate(server, plain)).ms);
      const d = await generate(server, dub);
      dubs.push(d.ms);
      last = d.g;
      console.log(`  run ${i}/${RUNS}: lip-sync ${num(lips.at(-1)!, 0)} ms, dub ${num(dubs.at(-1)!, 0)} ms`);
    }
    const transcript = await call(server, 'GET', `/v2/generations/${last.id}/transcript`);
    const signed = await (
      await fetch(`${server.ready.url}/v2/generations/${last.id}/download`, { headers: headers(server) })
    ).text();
    // The signed URL names the configured public address; the bench server listens on its own port.
    const u = new URL(signed);
    const out = join(work, 'dub.mp4');
    const file = await fetch(`${server.ready.url}${u.pathname}${u.search}`);
    await writeFile(out, Buffer.from(await file.arrayBuffer()));
    const fps = last.quality.fps as number;
    const shapes = phonemeShapes(await measureMouth(out), transcript.timeline.phonemes, fps);
    await server.stop();

    const ratio = median(dubs.map((d, i) => d / lips[i]));
    const segs = transcript.segments as { stretch: number; fits: boolean }[];
    console.log('');
    printTable([
      ['', 'submit -> COMPLETED ms (median)', 'per output second', 'x lip-sync'],
      [
        'lip-sync to its own sound (baseline)',
        num(median(lips), 0),
        num(median(lips) / 1000 / SECONDS, 2),
        '1.00x',
      ],
      ['dub', num(median(dubs), 0), num(median(dubs) / 1000 / SECONDS, 2), `${ratio.toFixed(2)}x`],
    ]);
    console.log('');
    console.log(`stage seconds of the last dub: ${JSON.stringify(last.quality.dub.stageSeconds)}`);
    console.log(
      `segments: ${segs.length}; untouched (stretch 1) ${segs.filter((s) => s.stretch === 1).length}, ` +
        `within 0.9-1.1 ${segs.filter((s) => s.stretch >= 0.9 && s.stretch <= 1.1).length}, ` +
        `fit before the next ${segs.filter((s) => s.fits).length}`,
    );
    console.log(
      `lips at the translation's p/b/m: ${shapes.bilabial.count} measured, opening ratio to open vowels ${shapes.openRatio.toFixed(3)}`,
    );
    console.log('');
    for (const s of transcript.segments)
      console.log(`  [${s.speaker}] ${s.sourceText}\n      -> ${s.translatedText}`);
  },
  { maxMs: 30 * 60_000 },
);
