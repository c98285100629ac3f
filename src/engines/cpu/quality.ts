// Measuring a lip-synced video:
//  - sync score: Pearson correlation between the mouth opening measured on the video (with the face
//    tracker) and the audio's loudness in dB per frame, at the best lag within +-3 frames;
//  - PSNR outside the lower face against the input video (what the engine must leave alone);
//  - per frame also the mouth's width, for the phoneme measures (phoneme-quality.ts);
//  - the realism meters (meters.ts: seam, jitter, dark holes), against the reference's own.
// Used by scripts/quality.ts, the engine's integration test and the benchmark.
import { join } from 'node:path';
import { decodeFrames } from '../../media/frames.js';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { probeMedia } from '../../media/probe.js';
import { withTempDir } from '../../media/tempdir.js';
import { analyseAudio } from './audio-features.js';
import { faceModels, meshLayout } from './face-models.js';
import { MeterStream, compareMeters, outlinePoints, regionOutlineLoop, type StreamMeters } from './meters.js';
import { MouthRig, buildTopology } from './mouth-rig.js';
import { FaceTracker } from './face-tracker.js';
import {
  CORNER_OUTER,
  FACE_OVAL,
  NOSE_BOTTOM,
  NOSE_TIP,
  dist,
  interocular,
  mouthOpening,
} from './landmarks.js';
import { bestLagCorrelation } from './stats.js';

export const SYNC_MAX_LAG = 3;

export interface VideoFacts {
  width: number;
  height: number;
  fps: number;
  durationSeconds: number;
}

export async function videoFacts(path: string): Promise<VideoFacts> {
  const p = await probeMedia(path);
  if (!p.video) throw new Error(`${path} has no video stream`);
  return {
    width: p.video.width,
    height: p.video.height,
    fps: p.video.fps ?? 25,
    durationSeconds: p.durationSeconds ?? 0,
  };
}

/**
 * Per frame: mouth opening and width (NaN without a face) and the lower-face box [x0, y0, x1, y1]
 * (null without a face).
 */
export interface MouthMeasure {
  opening: number[];
  width: number[];
  lowerFace: ([number, number, number, number] | null)[];
}

/**
 * The part of the frame the engine may change, [x0, y0, x1, y1]: from just above the nose base down
 * past the jaw line, including the band under the jaw that the rig stretches (0.9 face scales, plus
 * a margin).
 */
export function lowerFaceBox(
  points: Float32Array,
  scale: number,
  width: number,
  height: number,
): [number, number, number, number] {
  const lower = FACE_OVAL.slice(FACE_OVAL.indexOf(323), FACE_OVAL.indexOf(93) + 1);
  const noseX = points[2 * NOSE_TIP];
  const noseY = points[2 * NOSE_TIP + 1];
  let x0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  const reach = scale * 1.0;
  for (const v of lower) {
    const x = points[2 * v];
    const y = points[2 * v + 1];
    const len = Math.max(1e-3, Math.hypot(x - noseX, y - noseY));
    for (const k of [0, reach]) {
      const px = x + ((x - noseX) / len) * k;
      const py = y + ((y - noseY) / len) * k;
      x0 = Math.min(x0, px);
      x1 = Math.max(x1, px);
      y1 = Math.max(y1, py);
    }
  }
  return [
    Math.max(0, Math.floor(x0)),
    Math.max(0, Math.floor(points[2 * NOSE_BOTTOM + 1] - scale * 0.15)),
    Math.min(width, Math.ceil(x1)),
    Math.min(height, Math.ceil(y1)),
  ];
}

/** Mouth width: outer corner to outer corner over the inter-ocular distance (size-free, like the opening). */
export function mouthWidth(points: ArrayLike<number>): number {
  const scale = interocular(points);
  return scale > 0 ? dist(points, CORNER_OUTER[0], CORNER_OUTER[1]) / scale : NaN;
}

/** Tracks the face through a video and measures its mouth in every frame. */
export async function measureMouth(
  path: string,
  facts?: VideoFacts,
  maxFrames?: number,
): Promise<MouthMeasure> {
  const f = facts ?? (await videoFacts(path));
  const models = await faceModels();
  const tracker = new FaceTracker(models, f.width, f.height, { fps: f.fps, searchEvery: 1, smooth: false });
  const opening: number[] = [];
  const width: number[] = [];
  const lowerFace: MouthMeasure['lowerFace'] = [];
  // A constant frame rate (the probed average), so frame i is at i / fps even in a variable-rate file.
  const decode = decodeFrames({
    inputArgs: ['-i', path],
    width: f.width,
    height: f.height,
    maxFrames,
    videoFilter: `fps=${f.fps}`,
  });
  for await (const frame of decode) {
    const obs = await tracker.track(frame);
    opening.push(obs ? mouthOpening(obs.raw) : NaN);
    width.push(obs ? mouthWidth(obs.raw) : NaN);
    lowerFace.push(obs ? lowerFaceBox(obs.raw, obs.scale, f.width, f.height) : null);
  }
  return { opening, width, lowerFace };
}

/** Loudness (dBFS) per video frame of any file with an audio stream. */
export async function loudnessPerFrame(
  audioPath: string,
  fps: number,
  frames: number,
): Promise<Float32Array> {
  return withTempDir('lipsync-quality', async (dir) => {
    const wav = join(dir, 'audio.wav');
    await runFfmpeg([
      '-i',
      audioPath,
      '-vn',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      wav,
    ]);
    return (await analyseAudio(wav, fps, frames)).db;
  });
}

export interface SyncScore {
  /** Best Pearson correlation within +-3 frames (NaN when no face or a constant signal). */
  score: number;
  /** Lag (frames) of the best correlation: positive when the audio comes after the mouth. */
  lag: number;
  frames: number;
  framesWithFace: number;
}

export function syncScore(opening: ArrayLike<number>, loudnessDb: ArrayLike<number>): SyncScore {
  const { r, lag } = bestLagCorrelation(opening, loudnessDb, SYNC_MAX_LAG);
  let withFace = 0;
  for (let i = 0; i < opening.length; i++) if (Number.isFinite(opening[i])) withFace++;
  return { score: r, lag, frames: opening.length, framesWithFace: withFace };
}

export interface PsnrResult {
  /** PSNR (dB) over all pixels outside the lower face, all frames together. */
  psnr: number;
  frames: number;
  /** Share of the pixels that were compared. */
  coverage: number;
}

/**
 * PSNR of `outputPath` against `referencePath` (scaled to the output's size and frame rate) over the
 * pixels outside the lower-face box of each frame (boxes from `measure`, from either video's faces).
 */
export async function psnrOutsideLowerFace(
  outputPath: string,
  referencePath: string,
  measure: Pick<MouthMeasure, 'lowerFace'> & Partial<MouthMeasure>,
  facts?: VideoFacts,
): Promise<PsnrResult> {
  const f = facts ?? (await videoFacts(outputPath));
  const out = decodeFrames({
    inputArgs: ['-i', outputPath],
    width: f.width,
    height: f.height,
    videoFilter: `fps=${f.fps}`,
  })[Symbol.asyncIterator]();
  const ref = decodeFrames({
    inputArgs: ['-i', referencePath],
    width: f.width,
    height: f.height,
    videoFilter: `fps=${f.fps},scale=${f.width}:${f.height}`,
  })[Symbol.asyncIterator]();
  let sse = 0;
  let count = 0;
  let frames = 0;
  let total = 0;
  const stride = f.width * 3;
  try {
    for (;;) {
      const [a, b] = await Promise.all([out.next(), ref.next()]);
      if (a.done || b.done) break;
      const box = measure.lowerFace[frames] ?? null;
      frames++;
      const A = a.value;
      const B = b.value;
      for (let y = 0; y < f.height; y++) {
        const inRows = box !== null && y >= box[1] && y < box[3];
        const row = y * stride;
        for (let x = 0; x < f.width; x++) {
          total++;
          if (inRows && x >= box[0] && x < box[2]) continue;
          const i = row + x * 3;
          const d0 = A[i] - B[i];
          const d1 = A[i + 1] - B[i + 1];
          const d2 = A[i + 2] - B[i + 2];
          sse += d0 * d0 + d1 * d1 + d2 * d2;
          count += 3;
        }
      }
    }
  } finally {
    await out.return?.(undefined);
    await ref.return?.(undefined);
  }
  const mse = count > 0 ? sse / count : 0;
  return {
    psnr: mse > 0 ? 10 * Math.log10((255 * 255) / mse) : Infinity,
    frames,
    coverage: total > 0 ? count / 3 / total : 0,
  };
}

export interface VideoMeters {
  output: Omit<StreamMeters, 'seamEdgeSum'>;
  /** With a reference: the reference's own meters and the output's relative to them. */
  source: Omit<StreamMeters, 'seamEdgeSum'> | null;
  seamVsSource: number | null;
  jitterVsSource: number | null;
}

/**
 * The realism meters of a video on every frame (meters.ts): the seam along the outline of the region
 * the CPU engine re-draws (from each frame's landmarks), the mouth's jitter and the dark-hole frames;
 * with `referencePath`, the same on the reference (tracked on its own) and the ratios to it.
 */
export async function measureMeters(
  path: string,
  referencePath: string | null,
  facts?: VideoFacts,
  maxFrames?: number,
): Promise<VideoMeters> {
  const f = facts ?? (await videoFacts(path));
  const models = await faceModels();
  const layout = meshLayout();
  const rig = new MouthRig(buildTopology(layout.triangulation, layout.uv), { fps: f.fps });
  const loop = regionOutlineLoop(rig.topology);
  const still = { open: 0, width: 0, round: 0 };
  const streams = [path, referencePath]
    .filter((p): p is string => p !== null)
    .map((p) => ({
      frames: decodeFrames({
        inputArgs: ['-i', p],
        width: f.width,
        height: f.height,
        maxFrames,
        videoFilter: `fps=${f.fps},scale=${f.width}:${f.height}`,
      })[Symbol.asyncIterator](),
      tracker: new FaceTracker(models, f.width, f.height, { fps: f.fps, searchEvery: 1, smooth: false }),
      meters: new MeterStream(),
      prev: null as { frame: Uint8Array; points: Float32Array } | null,
    }));
  const view = (data: Uint8Array) => ({ data, width: f.width, height: f.height, format: 'rgb24' as const });
  try {
    for (;;) {
      const next = await Promise.all(streams.map((s) => s.frames.next()));
      if (next.some((n) => n.done)) break;
      // The outline from the output's landmarks serves both (the region's edge is where the engine
      // left the picture alone); each stream's mouth is measured with its own landmarks.
      let ring: Float32Array | null = null;
      for (let k = 0; k < streams.length; k++) {
        const s = streams[k];
        const frame = new Uint8Array(next[k].value as Uint8Array);
        const obs = await s.tracker.track(frame);
        if (!obs) {
          s.prev = null;
          continue;
        }
        const points = Float32Array.from(obs.raw);
        if (k === 0) ring = outlinePoints(loop, rig.deform(points, still, 0).src);
        s.meters.add(
          view(frame),
          points,
          ring,
          s.prev && { frame: view(s.prev.frame), points: s.prev.points },
        );
        s.prev = { frame, points };
      }
    }
  } finally {
    for (const s of streams) await s.frames.return?.(undefined);
  }
  const out = streams[0].meters.summary();
  if (streams.length === 1) {
    const { seamEdgeSum: _, ...output } = out;
    return { output, source: null, seamVsSource: null, jitterVsSource: null };
  }
  return compareMeters(out, streams[1].meters.summary());
}
