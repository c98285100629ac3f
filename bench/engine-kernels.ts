// The CPU engine's per-frame kernels on yuv420p frames in isolation (no ffmpeg, no threads), each
// against the way the same pixels would go through rgb, in the same run:
//
//   warp   the mouth re-drawn on the planes (warpYuvInPlace) vs the region converted to rgb, warped
//          with the rgb kernel and converted back (what the engine did before issue 15's fourth pass);
//   crop   FaceMesh's 192x192 input sampled from the yuv420p frame (crop-yuv.ts) vs the crop's
//          footprint converted to rgb and cropped there (cropRotated), at five crop sizes;
//   mesh   FaceMesh itself on onnxruntime vs tfjs WASM (the same weights).
//
//   node --import tsx bench/engine-kernels.ts [--quick] [--rounds=N]
//
// Prints the median time per call over interleaved rounds and the ratio of each to its baseline.
import os from 'node:os';
import { faceModels, meshLayout, MESH_INPUT, MESH_POINTS } from '../src/engines/cpu/face-models.js';
import { cropRotatedYuvBilinear, cropRotatedYuvLarge } from '../src/engines/cpu/crop-yuv.js';
import { cropRotated } from '../src/engines/cpu/image-ops.js';
import { MouthRig, buildTopology } from '../src/engines/cpu/mouth-rig.js';
import { MouthInterior, warpInPlace } from '../src/engines/cpu/mouth-warp.js';
import { warpYuvInPlace } from '../src/engines/cpu/mouth-warp-yuv.js';
import { clamped, rgbToYuv, yuvToRgb } from '../src/engines/cpu/yuv.js';

const quick = process.argv.includes('--quick');
const roundsArg = process.argv.find((a) => a.startsWith('--rounds='));
const rounds = roundsArg ? Number(roundsArg.split('=')[1]) : quick ? 3 : 7;
const calls = quick ? 40 : 150;

const W = 1280;
const H = 720;

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Milliseconds per call of each function, rounds interleaved so that drift hits both alike. */
async function compare(fns: Record<string, () => unknown>): Promise<Record<string, number>> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  for (const fn of Object.values(fns)) for (let i = 0; i < 10; i++) await fn();
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(fns)) {
      const t = performance.now();
      for (let i = 0; i < calls; i++) await fn();
      times[name].push((performance.now() - t) / calls);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

function print(title: string, res: Record<string, number>, baseline: string): void {
  console.log(`\n${title}`);
  for (const [name, ms] of Object.entries(res))
    console.log(`  ${name.padEnd(56)} ${ms.toFixed(3).padStart(8)} ms  ${(ms / res[baseline]).toFixed(2)}x`);
}

async function main(): Promise<void> {
  console.log('# CPU engine kernels on a 1280x720 yuv420p frame');
  console.log(
    `node ${process.version}, ${os.cpus()[0]?.model ?? '?'}, load ${os.loadavg()[0].toFixed(2)}, ` +
      `${rounds} interleaved rounds of ${calls} calls, medians`,
  );
  // A textured frame and a face of about 400 pixels laid out from the mesh's canonical layout.
  const rgb = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      rgb[i] = 128 + 100 * Math.sin(x / 7) * Math.cos(y / 11);
      rgb[i + 1] = 128 + 90 * Math.sin((x + y) / 5);
      rgb[i + 2] = (x * 3 + y * 5) % 256;
    }
  const yuv = new Uint8Array(W * H * 1.5);
  rgbToYuv(rgb, W, H, clamped(yuv), { x0: 0, y0: 0, x1: W, y1: H });
  const { triangulation, uv } = meshLayout();
  const points = new Float32Array(MESH_POINTS * 2);
  for (let i = 0; i < MESH_POINTS; i++) {
    points[2 * i] = 440 + uv[i][0] * 400;
    points[2 * i + 1] = 140 + uv[i][1] * 420;
  }
  const g = new MouthRig(buildTopology(triangulation, uv), { fps: 25 }).deform(
    points,
    { open: 0.8, width: 0.2, round: 0 },
    1,
  );
  const interior = new MouthInterior();
  interior.observe(rgb, W, H, points, g.sourceGap, g.scale);
  const look = interior.look();
  const frame = new Uint8Array(yuv.length);
  const canvas = new Uint8Array(W * H * 3);
  const canvas2 = new Uint8Array(W * H * 3);
  const scratchRgb = new Uint8Array(W * H * 3);
  const scratchYuv = new Uint8Array(yuv.length);
  const [bx0, by0, bx1, by1] = g.bounds;
  const warp = await compare({
    'frame copy only (the harness, in both)': () => frame.set(yuv),
    'region to rgb, rgb warp, back to yuv (before)': () => {
      frame.set(yuv);
      yuvToRgb(frame, W, H, clamped(canvas), { x0: bx0 - 4, y0: by0 - 4, x1: bx1 + 4, y1: by1 + 4 });
      warpInPlace(canvas, scratchRgb, W, H, g, look);
      rgbToYuv(canvas, W, H, clamped(frame), { x0: bx0 - 3, y0: by0 - 3, x1: bx1 + 3, y1: by1 + 3 });
    },
    'on the planes (warpYuvInPlace)': () => {
      frame.set(yuv);
      warpYuvInPlace(frame, scratchYuv, W, H, g, look, { source: canvas, target: canvas2 });
    },
  });
  print(
    `warp: region ${Math.round(bx1 - bx0)}x${Math.round(by1 - by0)} px, open mouth`,
    warp,
    'region to rgb, rgb warp, back to yuv (before)',
  );

  // FaceMesh's input at crop sizes around the tracker's switches (face-tracker.ts YUV_CROP_FROM, and
  // 2x, where the samples change from bilinear to four nearest pixels).
  const angle = 0.1;
  const crop = new Float32Array(MESH_INPUT * MESH_INPUT * 3);
  for (const size of [150, 230, 307, 384, 420]) {
    const half = (size / 2) * (Math.abs(Math.cos(angle)) + Math.abs(Math.sin(angle))) + 2;
    const fromYuv = size > 2 * MESH_INPUT ? cropRotatedYuvLarge : cropRotatedYuvBilinear;
    const crops = await compare({
      'footprint to rgb, then cropRotated': () => {
        yuvToRgb(yuv, W, H, clamped(canvas), {
          x0: 640 - half,
          y0: 360 - half,
          x1: 640 + half,
          y1: 360 + half,
        });
        cropRotated({ data: canvas, width: W, height: H }, 640, 360, size, angle, MESH_INPUT, crop);
      },
      [fromYuv.name]: () => fromYuv(yuv, W, H, 640, 360, size, angle, MESH_INPUT, crop),
    });
    print(
      `crop: ${size} px into ${MESH_INPUT}x${MESH_INPUT} (${(size / MESH_INPUT).toFixed(1)}x)`,
      crops,
      'footprint to rgb, then cropRotated',
    );
  }

  const models = await faceModels();
  const mesh = await compare({
    'FaceMesh on tfjs WASM': () => models.landmarks(crop, 'tfjs'),
    [`FaceMesh on ${models.meshRuntime()}`]: () => models.landmarks(crop, 'onnx'),
  });
  print('FaceMesh, one 192x192 crop', mesh, 'FaceMesh on tfjs WASM');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
