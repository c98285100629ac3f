// Throughput of the CPU lip-sync engine (decode -> engine -> encode, as the pipeline runs it) as a
// ratio to a plain ffmpeg decode + re-encode of the same clip with the same output settings, measured
// in the same run. Also the raw-frame round trip without the engine (decoder and encoder connected
// through Node), to show what the engine itself adds.
//
//   node --import tsx bench/engine.ts [--quick] [--rounds=N] [--seconds=S] [--cases=a,b]
//
// Cases: face (a 590x590 fixture face clip), 720p (a face clip scaled and padded to 1280x720),
// portrait (the 1080x1920 HEVC fixture scaled to 720x1280). Prints frames per second, times, the
// real-time factor (clip duration / processing time) and the ratio to the plain re-encode.
import os from 'node:os';
import { join } from 'node:path';
import { CpuEngine } from '../src/engines/cpu/index.js';
import { faceModels } from '../src/engines/cpu/face-models.js';
import { normaliseOptions } from '../src/domain/generation-request.js';
import { DEFAULT_H264, aacArgs, h264Args } from '../src/media/encoding.js';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { decodeFrames, encodeFrames } from '../src/media/frames.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';
import { fixture } from '../test/helpers/paths.js';

interface Case {
  name: string;
  video: string;
  audio: string;
  width: number;
  height: number;
  fps: number;
  /** Filter that turns the source into width x height frames. */
  filter: string;
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
];

function option(name: string): string | undefined {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a?.slice(name.length + 3);
}
const quick = process.argv.includes('--quick');
const rounds = Number(option('rounds') ?? (quick ? 1 : 3));
const seconds = Number(option('seconds') ?? (quick ? 2 : 4));
const only = option('cases')?.split(',');

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
      `${seconds} s per clip, ${rounds} round(s), x264 ${DEFAULT_H264.preset} crf ${DEFAULT_H264.crf}`,
  );
  const t0 = performance.now();
  await faceModels();
  console.log(
    `model load ${((performance.now() - t0) / 1000).toFixed(2)} s (once per process, not counted below)`,
  );

  const dir = await makeTempDir('bench-engine');
  const rows: string[][] = [
    ['case', 'size', 'frames', 'ffmpeg s', 'pipes s', 'engine s', 'engine fps', 'x real time', 'vs ffmpeg'],
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
      const decode = () =>
        decodeFrames({
          inputArgs: ['-i', c.video],
          width: c.width,
          height: c.height,
          videoFilter: `${c.filter},fps=${c.fps}`,
          maxFrames: frames,
        });
      const encodeSpec = {
        width: c.width,
        height: c.height,
        fps: String(c.fps),
        outputPath: out,
        format: 'mp4' as const,
        audioPath: audio,
        durationSeconds: seconds,
      };
      const base: number[] = [];
      const pipes: number[] = [];
      const engine: number[] = [];
      for (let r = 0; r < rounds; r++) {
        base.push(
          await timed(() =>
            runFfmpeg([
              '-i',
              c.video,
              '-i',
              audio,
              '-map',
              '0:v:0',
              '-map',
              '1:a:0',
              '-vf',
              `${c.filter},fps=${c.fps}`,
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
        pipes.push(await timed(() => encodeFrames(decode(), encodeSpec)));
        engine.push(
          await timed(async () => {
            const run = new CpuEngine().start({
              frames: decode(),
              width: c.width,
              height: c.height,
              fps: c.fps,
              frameCount: frames,
              audioPath: audio,
              activeSpans: null,
              options: normaliseOptions({}, 'lipsync-2'),
              settings: {},
              signal: new AbortController().signal,
            });
            await encodeFrames(run.frames, encodeSpec);
            const rep = run.report();
            if (rep.framesWithFace === 0) console.log(`  (${c.name}: no face found)`);
          }),
        );
      }
      const b = median(base);
      const p = median(pipes);
      const e = median(engine);
      rows.push([
        c.name,
        `${c.width}x${c.height}`,
        String(frames),
        b.toFixed(2),
        p.toFixed(2),
        e.toFixed(2),
        (frames / e).toFixed(1),
        `${(seconds / e).toFixed(2)}x`,
        `${(e / b).toFixed(2)}x`,
      ]);
    }
  } finally {
    await removeTempDir(dir);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((v, i) => v.padStart(widths[i])).join('  '));
  console.log(
    'x real time: clip seconds per processing second (>= 1 keeps up); vs ffmpeg: engine time / plain re-encode time',
  );
}

await main();
