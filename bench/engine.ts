// Throughput of the CPU lip-sync engine (decode -> engine -> encode, as the pipeline runs it) as a
// ratio to a plain ffmpeg decode + re-encode of the same clip with the same output settings, measured
// in the same run. Also the raw-frame round trip without the engine (decoder and encoder connected
// through Node), to show what the engine itself adds.
//
//   node --import tsx bench/engine.ts [--quick] [--rounds=N] [--seconds=S] [--cases=a,b] [--in-thread]
//                                     [--mesh-every-frame] [--mesh-tfjs] [--rgb24 | --yuv420p] [--no-pool]
//                                     [--pipe] [--meter-every=N]
//
// Cases: face (a 590x590 fixture face clip), 720p (a face clip scaled and padded to 1280x720),
// portrait (the 1080x1920 HEVC fixture scaled to 720x1280), hevc1080 (the same at its own size),
// speakers (two faces side by side at 1280x720 with active_speaker: scan + draw). Prints frames per second, times, the
// real-time factor (clip duration / processing time), the ratio to the plain re-encode, and the CPU
// time of this process (the job's thread and the tracking thread, not ffmpeg) per engine frame.
import os from 'node:os';
import { join } from 'node:path';
import { CpuEngine } from '../src/engines/cpu/index.js';
import { faceModels } from '../src/engines/cpu/face-models.js';
import { trackInWorker } from '../src/engines/cpu/tracker-thread.js';
import { normaliseOptions } from '../src/domain/generation-request.js';
import { DEFAULT_H264, aacArgs, h264Args } from '../src/media/encoding.js';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { decodeFrames, encodeFrames, FramePool, frameBytes, type PixelFormat } from '../src/media/frames.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';
import { sceneSize, type EngineScene } from '../src/media/scene.js';
import { fixture } from '../test/helpers/paths.js';

interface Case {
  name: string;
  video: string;
  audio: string;
  width: number;
  height: number;
  fps: number;
  /** Filter that turns the source into width x height frames (each half, with `second`). */
  filter: string;
  /** A second clip put beside the first (same filter), making a two-person picture. */
  second?: string;
  /** Run with active_speaker (the engine gets a scene to scan). */
  activeSpeaker?: boolean;
}

/** Input arguments and the video filter (-filter_complex when two clips are stacked) for a case. */
function source(c: Case): { inputArgs: string[]; graph: string } {
  if (!c.second) return { inputArgs: ['-i', c.video], graph: `[0:v]${c.filter},fps=${c.fps}[v]` };
  return {
    inputArgs: ['-i', c.video, '-i', c.second],
    graph: `[0:v]${c.filter},setsar=1[a];[1:v]${c.filter},setsar=1[b];[a][b]hstack=inputs=2,fps=${c.fps}[v]`,
  };
}

const CASES: Case[] = [
  {
    name: 'face',
    video: fixture('media/face_3.mp4'),
    audio: fixture('media/speech_short.wav'),
    width: 590,
    height: 590,
    fps: 25,
    filter: 'scale=590:590',
  },
  {
    name: '720p',
    video: fixture('media/face_2.mp4'),
    audio: fixture('media/speech_short.wav'),
    width: 1280,
    height: 720,
    fps: 25,
    filter: 'scale=720:720,pad=1280:720:280:0',
  },
  {
    name: 'portrait',
    video: fixture('media/latentsync_demo1.mp4'),
    audio: fixture('media/latentsync_demo1.wav'),
    width: 720,
    height: 1280,
    fps: 25,
    filter: 'scale=720:1280',
  },
  {
    name: 'hevc1080',
    video: fixture('media/latentsync_demo1.mp4'),
    audio: fixture('media/latentsync_demo1.wav'),
    width: 1080,
    height: 1920,
    fps: 25,
    filter: 'null',
  },
  {
    // Two people side by side (face_1 speaking on the soundtrack, face_5 listening) with
    // active_speaker: the engine scans the video once more before drawing.
    name: 'speakers',
    video: fixture('media/face_1.mp4'),
    second: fixture('media/face_5.mp4'),
    audio: fixture('media/speech_short.wav'),
    width: 1280,
    height: 720,
    fps: 25,
    filter: 'scale=640:640,pad=640:720:0:40',
    activeSpeaker: true,
  },
];

function option(name: string): string | undefined {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a?.slice(name.length + 3);
}
const quick = process.argv.includes('--quick');
const rounds = Number(option('rounds') ?? (quick ? 1 : 3));
const seconds = Number(option('seconds') ?? (quick ? 2 : 4));
const only = option('cases')?.split(',');
// --in-thread: track faces on the main thread (engine setting trackerThread: false), for comparison.
const inThread = process.argv.includes('--in-thread');
// --mesh-every-frame: FaceMesh on every frame (engine setting interpolateLandmarks: false), for comparison.
const meshEveryFrame = process.argv.includes('--mesh-every-frame');
// --mesh-tfjs: FaceMesh on the tfjs WASM backend (engine setting meshRuntime: "tfjs"), for comparison.
const meshTfjs = process.argv.includes('--mesh-tfjs');
// --rgb24 / --yuv420p: that frame format through the pipes, instead of the engine's own choice for the
// size (CpuEngine.pixelFormatFor, as the pipeline asks it).
// --no-pool: fresh frame buffers per frame instead of the pool the pipeline passes round.
const usePool = !process.argv.includes('--no-pool');
// --pipe: decoded frames read from ffmpeg's stdout pipe (a buffer per read) instead of the FIFO.
const viaPipe = process.argv.includes('--pipe');
// --meter-every=N: the realism meters on one frame pair in N (engine setting meterEvery; 0: off).
const meterEvery = option('meter-every');
const forcedFormat: PixelFormat | null = process.argv.includes('--rgb24')
  ? 'rgb24'
  : process.argv.includes('--yuv420p')
    ? 'yuv420p'
    : null;

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

async function main(): Promise<void> {
  console.log('# CPU lip-sync engine against a plain ffmpeg re-encode');
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load ${os.loadavg()[0].toFixed(2)}, ` +
      `${seconds} s per clip, ${rounds} round(s), x264 ${DEFAULT_H264.preset} crf ${DEFAULT_H264.crf}, ` +
      `face tracking ${inThread ? 'on the main thread' : 'on a worker thread'}, ` +
      `${forcedFormat ?? "the engine's choice of"} frames, ${usePool ? 'pooled' : 'fresh'} frame buffers, ` +
      `decoded frames ${viaPipe ? "from ffmpeg's stdout pipe" : 'through a FIFO'}, ` +
      `FaceMesh ${meshEveryFrame ? 'on every frame' : 'spared where the face holds still'} ` +
      `on ${meshTfjs ? 'tfjs (WASM)' : 'onnxruntime'}`,
  );
  const t0 = performance.now();
  await faceModels();
  // The tracking thread loads its own models once; start it here so no case pays for that.
  async function* one(): AsyncGenerator<Buffer> {
    yield Buffer.alloc(64 * 64 * 3);
  }
  for await (const _ of trackInWorker(
    one(),
    64,
    64,
    { fps: 25 },
    { detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 },
  ));
  console.log(
    `model load ${((performance.now() - t0) / 1000).toFixed(2)} s (here and on the tracking thread, once per process, not counted below)`,
  );

  const dir = await makeTempDir('bench-engine');
  const rows: string[][] = [
    [
      'case',
      'size',
      'frames',
      'ffmpeg s',
      'pipes s',
      'engine s',
      'engine fps',
      'x real time',
      'vs ffmpeg',
      'node cpu ms/frame',
    ],
  ];
  try {
    for (const c of CASES) {
      if (only && !only.includes(c.name)) continue;
      const frames = Math.round(seconds * c.fps);
      const audio = join(dir, `${c.name}.wav`);
      await runFfmpeg([
        '-i',
        c.audio,
        '-t',
        String(seconds),
        '-ac',
        '2',
        '-ar',
        '48000',
        '-c:a',
        'pcm_s16le',
        '-f',
        'wav',
        audio,
      ]);
      const out = join(dir, `${c.name}.mp4`);
      const src = source(c);
      const pixelFormat = forcedFormat ?? new CpuEngine().pixelFormatFor(c.width, c.height, {});
      const newPool = () =>
        usePool ? new FramePool(frameBytes({ width: c.width, height: c.height, pixelFormat })) : undefined;
      const decode = (
        width = c.width,
        height = c.height,
        format: PixelFormat = pixelFormat,
        pool?: FramePool,
      ) =>
        decodeFrames(
          {
            pixelFormat: format,
            inputArgs: src.inputArgs,
            filterComplex: {
              graph:
                width === c.width ? src.graph : src.graph.replace(/\[v\]$/, `,scale=${width}:${height}[v]`),
              output: 'v',
            },
            width,
            height,
            maxFrames: frames,
          },
          { pool, viaPipe },
        );
      // The scene active-speaker detection looks at (as src/media/scene.ts makes it): the frames
      // again, downscaled to at most 1024 px, and the first clip's own soundtrack.
      const { width: sceneW, height: sceneH } = sceneSize(c.width, c.height);
      const sourceAudio = join(dir, `${c.name}-source.wav`);
      const scene: EngineScene | undefined = c.activeSpeaker
        ? {
            width: sceneW,
            height: sceneH,
            downscale: c.width / sceneW,
            frames: () => decode(sceneW, sceneH, 'rgb24'),
            sourceAudio: async () => {
              await runFfmpeg(['-i', c.video, '-vn', '-ac', '1', '-ar', '16000', sourceAudio]);
              return sourceAudio;
            },
            sourceTimeAt: (t) => t / c.fps,
          }
        : undefined;
      const encodeSpec = {
        width: c.width,
        height: c.height,
        pixelFormat,
        fps: String(c.fps),
        outputPath: out,
        format: 'mp4' as const,
        audioPath: audio,
        durationSeconds: seconds,
      };
      const base: number[] = [];
      const pipes: number[] = [];
      const engine: number[] = [];
      // CPU time of this process (the job's thread and the tracking thread) per engine frame: the
      // engine's own cost, which a loaded machine stretches far less than it stretches wall time.
      const engineCpu: number[] = [];
      const meterMs: number[] = [];
      for (let r = 0; r < rounds; r++) {
        base.push(
          await timed(() =>
            runFfmpeg([
              ...src.inputArgs,
              '-i',
              audio,
              '-filter_complex',
              src.graph,
              '-map',
              '[v]',
              '-map',
              `${src.inputArgs.length / 2}:a:0`,
              '-frames:v',
              String(frames),
              ...h264Args(),
              ...aacArgs(),
              '-t',
              String(seconds),
              '-f',
              'mp4',
              out,
            ]),
          ),
        );
        pipes.push(
          await timed(() => {
            const pool = newPool();
            return encodeFrames(decode(c.width, c.height, pixelFormat, pool), encodeSpec, { pool });
          }),
        );
        const cpu0 = process.cpuUsage();
        engine.push(
          await timed(async () => {
            const pool = newPool();
            const run = new CpuEngine().start({
              frames: decode(c.width, c.height, pixelFormat, pool),
              pixelFormat,
              width: c.width,
              height: c.height,
              fps: c.fps,
              frameCount: frames,
              audioPath: audio,
              activeSpans: null,
              options: normaliseOptions(c.activeSpeaker ? { active_speaker: true } : {}, 'lipsync-2'),
              settings: {
                ...(inThread ? { trackerThread: false } : {}),
                ...(meshEveryFrame ? { interpolateLandmarks: false } : {}),
                ...(meshTfjs ? { meshRuntime: 'tfjs' } : {}),
                ...(meterEvery !== undefined ? { meterEvery: Number(meterEvery) } : {}),
              },
              signal: new AbortController().signal,
              scene,
            });
            await encodeFrames(run.frames, encodeSpec, { pool });
            const rep = run.report();
            if (rep.framesWithFace === 0) console.log(`  (${c.name}: no face found)`);
            const m = rep.meters as { ms?: number } | null | undefined;
            if (typeof m?.ms === 'number') meterMs.push(m.ms);
          }),
        );
        const cpu = process.cpuUsage(cpu0);
        engineCpu.push((cpu.user + cpu.system) / 1000 / frames);
      }
      const b = median(base);
      const p = median(pipes);
      const e = median(engine);
      if (meterMs.length) {
        const ms = median(meterMs);
        console.log(
          `  (${c.name}: the meters took ${ms} ms, ${((ms / (e * 1000)) * 100).toFixed(1)} % of the engine's time)`,
        );
      }
      rows.push([
        c.name,
        `${c.width}x${c.height} ${pixelFormat}`,
        String(frames),
        b.toFixed(2),
        p.toFixed(2),
        e.toFixed(2),
        (frames / e).toFixed(1),
        `${(seconds / e).toFixed(2)}x`,
        `${(e / b).toFixed(2)}x`,
        median(engineCpu).toFixed(1),
      ]);
    }
  } finally {
    await removeTempDir(dir);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((v, i) => v.padStart(widths[i])).join('  '));
  console.log(
    'x real time: clip seconds per processing second (>= 1 keeps up); vs ffmpeg: engine time / plain re-encode time; ' +
      'node cpu: CPU time of this process (job thread + tracking thread, not ffmpeg) per frame of the engine run',
  );
}

await main();
