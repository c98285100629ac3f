// Submit-to-COMPLETED time of a real generation (a fixture face clip and a WAV, sync_mode cut_off)
// through the API and the in-process worker of a real server process, against the pipeline's own
// media work on the same inputs measured in the same run:
//
//   pipeline ffmpeg  the pipeline's conform and encode (prepareConform + renderConformed, the same
//                    ffmpeg runs the job makes), called directly
//   one-pass ffmpeg  for reference: one plain ffmpeg command that cuts, re-encodes and muxes
//
// Printed: medians over N runs (at least 3), the overhead beyond the pipeline's own ffmpeg work as
// issue 15 defines it (submit-to-COMPLETED wall time minus the pipeline's ffmpeg steps measured in the
// same run, paired per run) against its 150 ms target, its ratio, and where the time goes.
//
// The model is mapped to the passthrough engine (LIPSYNC_ENGINES_FILE) so that the job's media work is
// exactly the conform + encode of the baseline; --engine=cpu measures another engine, whose own work
// then counts as overhead.
//
//   node --import tsx bench/submit-overhead.ts [--quick] [--runs=N] [--video=face_1.mp4]
//                                              [--audio=audio_1.wav] [--engine=passthrough]
//                                              [--size=1280x720] [--recognize=1] [--warm-up=0]
//                                              [--viseme-model=none]
//
// --size: the fixture clip is first re-encoded to that size (scaled to the height and padded to the
// width, as bench/engine.ts makes its 720p case; the scaled clip must not be wider), and that file is
// the input. --recognize=1: the words of the recording are recognized for the mouth shapes
// (LIPSYNC_ARTICULATION_RECOGNIZE=1; off by default, as in the server). --warm-up=0: the worker does
// not load the engine at start (LIPSYNC_ENGINE_WARM_UP=0), so the first generation loads it. The first
// generation after the start is printed on its own; the runs measured come after it. --viseme-model:
// LIPSYNC_VISEME_MODEL of the server (`none`: the lips without the shipped model, as before issue 32).
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { startServiceServer, type BenchChild } from './lib/child.js';
import { deployment } from './lib/deployment.js';
import { machineLine, median, num, printTable, processCpuSeconds, ratio, wallNow } from './lib/stats.js';
import { fixture } from '../test/helpers/paths.js';
import { prepareConform, renderConformed } from '../src/media/conform.js';
import { ffprobeMedia, probeMedia } from '../src/media/probe.js';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { aacArgs, containerArgs, h264Args } from '../src/media/encoding.js';
import type { GenerationRecord } from '../src/store/generations.js';

const args = parseArgs();
const RUNS = intOption(args, 'runs', args.quick ? 3 : 5);
const TARGET_OVERHEAD_MS = 150;
let VIDEO = fixture(`media/${args.values.video ?? 'face_1.mp4'}`);
const AUDIO = fixture(`media/${args.values.audio ?? 'audio_1.wav'}`);
const ENGINE = args.values.engine ?? 'passthrough';
const MODEL = 'lipsync-2';
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'REJECTED']);

interface ServiceRun {
  totalMs: number;
  /** POST /v2/generate until its 201 arrived (inputs located and probed, row and job written). */
  postMs: number;
  /** From the row's createdAt to the worker's claim (startedAt). */
  queueMs: number;
  /** From the claim to the terminal state (finishedAt): the job as the worker runs it. */
  jobMs: number;
  /** From finishedAt until the long-poll answer had arrived. */
  notifyMs: number;
  /** CPU seconds the server process and its ffmpeg children spent on it (Linux; null elsewhere). */
  cpuSeconds: number | null;
  /** Of which the server process itself (the rest: its ffmpeg runs). */
  ownCpuSeconds: number | null;
  /** Minor page faults of the server process itself meanwhile (Linux; null elsewhere). */
  minorFaults: number | null;
}

async function time<T>(fn: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** The pipeline's conform + encode, as run-generation.ts calls them, in a fresh folder. */
async function pipelineFfmpeg(
  work: string,
  probes: { video: Awaited<ReturnType<typeof probeMedia>>; audio: Awaited<ReturnType<typeof probeMedia>> },
): Promise<number> {
  const dir = await mkdtemp(join(work, 'pipeline-'));
  try {
    return await time(async () => {
      const prepared = await prepareConform(
        {
          visual: { path: VIDEO, probe: probes.video },
          audio: { path: AUDIO, probe: probes.audio },
          options: {
            syncMode: 'cut_off',
            outputFormat: 'mp4',
            speedup: 1,
            fps: null,
            outputResolution: null,
            segments: [],
          },
        },
        dir,
      );
      await renderConformed(prepared, join(dir, 'output.mp4'), 'mp4');
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** CPU seconds of the ffmpeg runs of this process, per one-pass re-encode (Linux; empty elsewhere). */
const onePassCpu: number[] = [];

/** One plain ffmpeg command: the face clip's picture cut to the audio's length, re-encoded, muxed. */
async function onePassFfmpeg(work: string, seconds: number): Promise<number> {
  const out = join(work, `one-pass-${Date.now()}.mp4`);
  const before = processCpuSeconds('self');
  try {
    return await time(() =>
      runFfmpeg([
        '-an',
        '-i',
        VIDEO,
        '-i',
        AUDIO,
        '-map',
        '0:v:0',
        '-map',
        '1:a:0',
        '-t',
        seconds.toFixed(3),
        ...h264Args(),
        ...aacArgs(),
        ...containerArgs('mp4'),
        out,
      ]),
    );
  } finally {
    const after = processCpuSeconds('self');
    if (before && after) onePassCpu.push(after.children - before.children);
    await rm(out, { force: true });
  }
}

async function upload(server: BenchChild, path: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([await readFile(path)]), basename(path));
  const res = await fetch(`${server.ready.url}/v2/assets/upload`, {
    method: 'POST',
    headers: { 'x-api-key': server.ready.apiKey as string },
    body: form,
  });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 201 || !body.id)
    throw new Error(`uploading ${path} answered ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

/** The same generation as a multipart form with both files (each probed once, when it is saved). */
async function formBody(): Promise<FormData> {
  const form = new FormData();
  form.append('model', MODEL);
  form.append('options', JSON.stringify({ sync_mode: 'cut_off' }));
  form.append('video', new Blob([await readFile(VIDEO)]), basename(VIDEO));
  form.append('audio', new Blob([await readFile(AUDIO)]), basename(AUDIO));
  return form;
}

/** One generation: by asset ids (uploaded before the runs) or, with assets null, as a multipart form. */
async function serviceRun(
  server: BenchChild,
  assets: { video: string; audio: string } | null,
): Promise<ServiceRun> {
  const headers = { 'x-api-key': server.ready.apiKey as string };
  const form = assets ? null : await formBody();
  const pid = server.process.pid;
  const cpuBefore = pid ? processCpuSeconds(pid) : null;
  const t0 = wallNow();
  const res = await fetch(`${server.ready.url}/v2/generate`, {
    method: 'POST',
    headers: form ? headers : { ...headers, 'content-type': 'application/json' },
    body:
      form ??
      JSON.stringify({
        model: MODEL,
        input: [
          { type: 'video', assetId: assets?.video },
          { type: 'audio', assetId: assets?.audio },
        ],
        options: { sync_mode: 'cut_off' },
      }),
  });
  const created = (await res.json()) as { id?: string };
  const tCreated = wallNow();
  if (res.status !== 201 || !created.id)
    throw new Error(`POST /v2/generate answered ${res.status} ${JSON.stringify(created)}`);
  let status = '';
  for (let poll = 0; poll < 60 && !TERMINAL.has(status); poll++) {
    const r = await fetch(`${server.ready.url}/v2/generate/${created.id}?wait=true&timeout=10`, { headers });
    status = ((await r.json()) as { status: string }).status;
  }
  const tDone = wallNow();
  const cpuAfter = pid ? processCpuSeconds(pid) : null;
  const g = await server.call<GenerationRecord>({ cmd: 'generation', id: created.id });
  if (status !== 'COMPLETED') throw new Error(`generation ${created.id} ended ${status}: ${g.error ?? ''}`);
  const createdAt = Date.parse(g.createdAt);
  const startedAt = Date.parse(g.startedAt as string);
  const finishedAt = Date.parse(g.finishedAt as string);
  return {
    totalMs: tDone - t0,
    postMs: tCreated - t0,
    queueMs: startedAt - createdAt,
    jobMs: finishedAt - startedAt,
    notifyMs: tDone - finishedAt,
    cpuSeconds:
      cpuBefore && cpuAfter ? cpuAfter.own + cpuAfter.children - (cpuBefore.own + cpuBefore.children) : null,
    ownCpuSeconds: cpuBefore && cpuAfter ? cpuAfter.own - cpuBefore.own : null,
    minorFaults: cpuBefore && cpuAfter ? cpuAfter.minorFaults - cpuBefore.minorFaults : null,
  };
}

await runMain(
  'submit-overhead',
  async () => {
    console.log("# Submit to COMPLETED against the pipeline's own ffmpeg work");
    console.log(machineLine());
    const work = await mkdtemp(join(tmpdir(), 'lipsync-bench-'));
    onCleanup(`temp folder ${work}`, () => rm(work, { recursive: true, force: true }));
    const size = /^(\d+)x(\d+)$/.exec(args.values.size ?? '');
    if (size) {
      const [w, h] = [Number(size[1]), Number(size[2])];
      const resized = join(work, `input-${w}x${h}.mp4`);
      const filter = `scale=-2:${h},pad=${w}:${h}:(ow-iw)/2:0`;
      await runFfmpeg([
        '-i',
        VIDEO,
        '-vf',
        filter,
        ...h264Args({ preset: 'veryfast', crf: 18 }),
        '-an',
        resized,
      ]);
      VIDEO = resized;
    }
    const probes = { video: await probeMedia(VIDEO), audio: await probeMedia(AUDIO) };
    const seconds = probes.audio.durationSeconds as number;
    const v = probes.video.video;
    console.log(
      `inputs: ${basename(VIDEO)} (${v?.width}x${v?.height}, ${num(v?.fps ?? NaN, 2)} fps, ` +
        `${num(probes.video.durationSeconds ?? NaN, 2)} s) + ${basename(AUDIO)} (${num(seconds, 2)} s), ` +
        `sync_mode cut_off, model ${MODEL} on the ${ENGINE} engine; ${RUNS} run(s) after one warm-up of each`,
    );

    if (ENGINE !== 'passthrough') {
      console.log(`note: the ${ENGINE} engine works on every frame; its work counts as overhead here`);
    }
    const enginesFile = join(work, 'engines.json');
    await writeFile(enginesFile, JSON.stringify({ [MODEL]: { engine: ENGINE } }));
    const dep = await deployment('sqlite', {
      LIPSYNC_ENGINES_FILE: enginesFile,
      LIPSYNC_ARTICULATION_RECOGNIZE: args.values.recognize === '1' ? '1' : '0',
      LIPSYNC_ENGINE_WARM_UP: args.values['warm-up'] === '0' ? '0' : '1',
      ...(args.values['viseme-model'] ? { LIPSYNC_VISEME_MODEL: args.values['viseme-model'] } : {}),
    });
    const server = await startServiceServer('server (sqlite, LIPSYNC_ROLE=all)', dep.env);
    const assets = { video: await upload(server, VIDEO), audio: await upload(server, AUDIO) };

    // Warm-up (disk cache, JIT, the worker's first job), then alternate so that drift hits all alike.
    await pipelineFfmpeg(work, probes);
    await onePassFfmpeg(work, seconds);
    const first = await serviceRun(server, assets);
    const firstBaseline = await pipelineFfmpeg(work, probes);
    const firstOnePass = await onePassFfmpeg(work, seconds);
    console.log(
      `  first generation after the server started: ${num(first.totalMs, 0)} ms ` +
        `(${(first.totalMs / firstBaseline).toFixed(2)}x the pipeline ffmpeg run after it, ` +
        `${(first.totalMs / firstOnePass).toFixed(2)}x the one-pass re-encode)`,
    );
    await serviceRun(server, null);
    const pipeline: number[] = [];
    const onePass: number[] = [];
    const service: ServiceRun[] = [];
    const viaForm: ServiceRun[] = [];
    const probeMs: number[] = [];
    for (let i = 1; i <= RUNS; i++) {
      pipeline.push(await pipelineFfmpeg(work, probes));
      onePass.push(await onePassFfmpeg(work, seconds));
      // ffprobe itself: probeMedia would read this h264 MP4 from its boxes.
      probeMs.push(await time(async () => ffprobeMedia(VIDEO, (await stat(VIDEO)).size)));
      const s = await serviceRun(server, assets);
      service.push(s);
      const f = await serviceRun(server, null);
      viaForm.push(f);
      console.log(
        `  run ${i}/${RUNS}: service ${num(s.totalMs, 0)} ms (multipart ${num(f.totalMs, 0)} ms), ` +
          `pipeline ffmpeg ${num(pipeline[i - 1], 0)} ms, one-pass ffmpeg ${num(onePass[i - 1], 0)} ms`,
      );
    }
    await server.stop();

    // Each run's service time is paired with the baseline measured just before it, so the overhead
    // and ratio are medians of per-run differences and quotients (drift cancels within a pair).
    const m = (runs: ServiceRun[], f: (s: ServiceRun) => number) => median(runs.map(f));
    const pipe = median(pipeline);
    const one = median(onePass);
    const overheadOf = (runs: ServiceRun[]) => median(runs.map((s, i) => s.totalMs - pipeline[i]));
    const ratioOf = (runs: ServiceRun[]) =>
      `${median(runs.map((s, i) => s.totalMs / pipeline[i])).toFixed(2)}x`;
    const overhead = overheadOf(service);
    const formOverhead = overheadOf(viaForm);
    console.log('');
    console.log(`Medians over ${RUNS} runs`);
    printTable([
      ['', 'ms', 'x pipeline ffmpeg'],
      [
        'submit -> COMPLETED, inputs by assetId',
        num(
          m(service, (s) => s.totalMs),
          0,
        ),
        ratioOf(service),
      ],
      [
        'submit -> COMPLETED, inputs as multipart files',
        num(
          m(viaForm, (s) => s.totalMs),
          0,
        ),
        ratioOf(viaForm),
      ],
      ['pipeline ffmpeg, called directly (baseline)', num(pipe, 0), '1.00x'],
      ['one-pass plain ffmpeg (reference)', num(one, 0), ratio(one, pipe)],
      [
        'overhead by assetId: service - pipeline ffmpeg (paired per run)',
        num(overhead, 0),
        ratio(overhead, pipe),
      ],
      [
        'overhead, multipart: service - pipeline ffmpeg (paired per run)',
        num(formOverhead, 0),
        ratio(formOverhead, pipe),
      ],
    ]);
    console.log('');
    console.log('Where the service run spends its time (medians; server timestamps have 1 ms resolution)');
    printTable([
      ['part', 'by assetId, ms', 'multipart, ms'],
      [
        'POST /v2/generate until 201 (by assetId: upload probes reused; multipart: files saved + probed)',
        num(
          m(service, (s) => s.postMs),
          0,
        ),
        num(
          m(viaForm, (s) => s.postMs),
          0,
        ),
      ],
      [
        'queued: createdAt -> worker claim (startedAt)',
        num(
          m(service, (s) => s.queueMs),
          0,
        ),
        num(
          m(viaForm, (s) => s.queueMs),
          0,
        ),
      ],
      [
        'job: claim -> terminal state (ffmpeg, output read from its boxes, store, finish)',
        num(
          m(service, (s) => s.jobMs),
          0,
        ),
        num(
          m(viaForm, (s) => s.jobMs),
          0,
        ),
      ],
      [
        'finishedAt -> long-poll answer received',
        num(
          m(service, (s) => s.notifyMs),
          0,
        ),
        num(
          m(viaForm, (s) => s.notifyMs),
          0,
        ),
      ],
      [
        'job - pipeline ffmpeg, paired per run (the worker around ffmpeg)',
        num(median(service.map((s, i) => s.jobMs - pipeline[i])), 0),
        num(median(viaForm.map((s, i) => s.jobMs - pipeline[i])), 0),
      ],
      ['one ffprobe of the face clip, for scale', num(median(probeMs), 0), ''],
    ]);
    console.log('');
    const verdict = (ms: number) =>
      ENGINE !== 'passthrough'
        ? 'the engine counts as overhead here'
        : ms <= TARGET_OVERHEAD_MS
          ? 'met'
          : 'not met';
    console.log(
      `overhead beyond the pipeline's own ffmpeg work (median of ${RUNS} paired runs; target <= ` +
        `${TARGET_OVERHEAD_MS} ms): by assetId ${num(overhead, 0)} ms (${verdict(overhead)}), ` +
        `multipart ${num(formOverhead, 0)} ms (${verdict(formOverhead)})`,
    );
    if (ENGINE !== 'passthrough') {
      // Issue 15's speed targets for the whole generation: against one plain re-encode of the same
      // inputs, paired per run, and as a multiple of real time.
      const vsPlain = median(service.map((s, i) => s.totalMs / onePass[i]));
      const realTime = (seconds * 1000) / m(service, (s) => s.totalMs);
      const is720p = v?.width === 1280 && v?.height === 720;
      // CPU time moves far less with the machine's speed than wall time does: the job's own cost.
      const cpu = service.map((x) => x.cpuSeconds).filter((x): x is number => x !== null);
      const plainCpu = onePassCpu.slice(-RUNS);
      if (cpu.length === RUNS && plainCpu.length === RUNS) {
        console.log(
          `CPU per generation (the server and its ffmpeg runs): ${median(cpu).toFixed(2)} s against ` +
            `${median(plainCpu).toFixed(2)} s for the one-pass re-encode ` +
            `(${median(cpu.map((c, i) => c / plainCpu[i])).toFixed(2)}x, median of ${RUNS} paired runs)`,
        );
        const own = service.map((x) => x.ownCpuSeconds ?? 0);
        console.log(
          `  of which the server process itself: ${median(own).toFixed(2)} s ` +
            `(${median(own.map((c, i) => c / plainCpu[i])).toFixed(2)}x the one-pass re-encode); ` +
            `its ffmpeg runs: ${median(cpu.map((c, i) => c - own[i])).toFixed(2)} s`,
        );
      }
      const faults = service.map((x) => x.minorFaults).filter((x): x is number => x !== null);
      if (faults.length === RUNS) {
        // After every spawn the server process faults once per page it writes
        // (bench/results/2026-history.md, "Fewer processes per job").
        console.log(
          `minor page faults of the server process per generation: ${num(median(faults), 0)} (median)`,
        );
      }
      console.log(
        `the whole generation (submit -> COMPLETED, by assetId) against the one-pass plain re-encode: ` +
          `${vsPlain.toFixed(2)}x (median of ${RUNS} paired runs; target <= 2.0x: ` +
          `${vsPlain <= 2 ? 'met' : 'not met'}), ${realTime.toFixed(2)}x real time` +
          (is720p ? ` (target >= 3x at 720p: ${realTime >= 3 ? 'met' : 'not met'})` : ''),
      );
    }
  },
  { maxMs: (RUNS + 2) * 120_000 + 60_000 },
);
