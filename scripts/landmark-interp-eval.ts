// How far interpolated landmarks are from FaceMesh's own, on the fixture faces (docs/engine.md,
// "Interpolated landmarks"):
//   node --import tsx scripts/landmark-interp-eval.ts [--clips face_1,face_2] [--seconds 6] [--smooth] [--json]
// Each clip is tracked twice, unsmoothed (--smooth: smoothed as the engine does, and the smoothed
// points compared): FaceMesh on every frame (the reference), and with
// interpolation (FaceTracker.trackPair). For every interpolated frame the lip points' error against
// the reference is measured in eye distances; FaceMesh's own repeatability is the error of the frames
// both runs meshed (the same frame on a slightly different crop), the floor any tracker sits on.
import { parseArgs } from 'node:util';
import { faceModels } from '../src/engines/cpu/face-models.js';
import type { FaceObservation } from '../src/engines/cpu/face-tracker.js';
import { interocular, LIPS } from '../src/engines/cpu/landmarks.js';
import { trackInProcess, type TrackerStats } from '../src/engines/cpu/tracker-thread.js';
import { decodeFrames } from '../src/media/frames.js';
import { probeMedia } from '../src/media/probe.js';
import { fixture } from '../test/helpers/paths.js';

const { values } = parseArgs({
  options: {
    clips: { type: 'string', default: 'face_1,face_2,face_3,face_4,face_5,wda_speaker_a,wda_speaker_b' },
    seconds: { type: 'string', default: '6' },
    json: { type: 'boolean', default: false },
    // Compare the smoothed landmarks (what the engine draws with) instead of the raw ones.
    smooth: { type: 'boolean', default: false },
  },
});

const LIP_POINTS = [...new Set(Object.values(LIPS).flat())];

/** Mean and largest distance between the lip points of two landmark sets, in eye distances. */
function lipError(a: Float32Array, b: Float32Array): { mean: number; max: number } {
  const scale = interocular(a);
  let sum = 0;
  let max = 0;
  for (const i of LIP_POINTS) {
    const d = Math.hypot(a[2 * i] - b[2 * i], a[2 * i + 1] - b[2 * i + 1]) / scale;
    sum += d;
    if (d > max) max = d;
  }
  return { mean: sum / LIP_POINTS.length, max };
}

async function track(path: string, seconds: number, interpolate: boolean) {
  const info = await probeMedia(path);
  const v = info.video!;
  const frames = decodeFrames({
    inputArgs: ['-t', String(seconds), '-i', path],
    width: v.width,
    height: v.height,
  });
  const stats: TrackerStats = { detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 };
  const models = await faceModels();
  const out: (FaceObservation | null)[] = [];
  const opts = { fps: v.fps ?? 25, smooth: values.smooth, interpolate };
  for await (const { obs } of trackInProcess(models, frames, v.width, v.height, opts, stats)) out.push(obs);
  return { out, stats };
}

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const rows = [];
for (const clip of values.clips.split(',')) {
  const path = fixture(`media/${clip}.mp4`);
  const seconds = Number(values.seconds);
  const full = await track(path, seconds, false);
  const inter = await track(path, seconds, true);
  // A frame was interpolated when its raw landmarks are the midpoint of its neighbours' (FaceMesh's
  // own never are, to a thousandth of a pixel).
  const interpErr: number[] = [];
  const interpMax: number[] = [];
  const meshedErr: number[] = [];
  for (let t = 1; t + 1 < inter.out.length; t++) {
    const a = inter.out[t];
    const ref = full.out[t];
    const prev = inter.out[t - 1];
    const next = inter.out[t + 1];
    if (!a || !ref || !prev || !next) continue;
    let isMid = true;
    for (let i = 0; i < a.raw.length && isMid; i++) {
      if (Math.abs(a.raw[i] - (prev.raw[i] + next.raw[i]) / 2) > 1e-3) isMid = false;
    }
    const e = values.smooth ? lipError(ref.points, a.points) : lipError(ref.raw, a.raw);
    if (isMid) {
      interpErr.push(e.mean);
      interpMax.push(e.max);
    } else meshedErr.push(e.mean);
  }
  const frames = inter.out.length;
  rows.push({
    clip,
    frames,
    interpolated: inter.stats.interpolated,
    share: inter.stats.interpolated / Math.max(1, frames),
    meanErrInterp: interpErr.reduce((s, x) => s + x, 0) / Math.max(1, interpErr.length),
    p95ErrInterp: quantile(interpErr, 0.95),
    maxErrInterp: interpMax.length ? Math.max(...interpMax) : NaN,
    meanErrMeshed: meshedErr.reduce((s, x) => s + x, 0) / Math.max(1, meshedErr.length),
    p95ErrMeshed: quantile(meshedErr, 0.95),
  });
}

if (values.json) console.log(JSON.stringify(rows, null, 2));
else {
  console.log(
    'clip            frames  interp  share   lip err interp mean/p95/max (iod)   lip err meshed mean/p95',
  );
  for (const r of rows) {
    console.log(
      `${r.clip.padEnd(15)} ${String(r.frames).padStart(6)} ${String(r.interpolated).padStart(7)} ` +
        `${(100 * r.share).toFixed(0).padStart(4)}%   ` +
        `${r.meanErrInterp.toFixed(4)} / ${r.p95ErrInterp.toFixed(4)} / ${r.maxErrInterp.toFixed(4)}        ` +
        `${r.meanErrMeshed.toFixed(4)} / ${r.p95ErrMeshed.toFixed(4)}`,
    );
  }
}
process.exit(0);
