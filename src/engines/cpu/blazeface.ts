// BlazeFace (the face detector shipped in `@vladmandic/human`) on onnxruntime: the package's tfjs
// weights converted in memory (tfjs-to-onnx.ts), and the detector's pre- and post-processing written
// here as Human does it (a bilinear resize to 256x256, anchors, sigmoid scores, greedy non-maximum
// suppression, the box enlarged 1.4x and squared), so the faces found are Human's to a pixel. On tfjs
// WASM one detection cost ~50 ms of a core at 640x360 (bench/results/2026-history.md); a job pays it before its
// first frame, and active-speaker detection on every scanned frame.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { convertTfjsGraph, type TfjsGraphModel } from './tfjs-to-onnx.js';

/** A face found by the detector, in the pixel coordinates of the image given to `detect`. */
export interface DetectedFace {
  /** [x, y, width, height] of the (enlarged, square) detector box. */
  box: [number, number, number, number];
  score: number;
  /** Six key points: right eye, left eye, nose, mouth, right ear, left ear (image coordinates). */
  keypoints: [number, number][];
}

/** What Human's face detector is configured with in face-models.ts (and this detector does alike). */
export interface DetectorLimits {
  maxDetected: number;
  minConfidence: number;
  iouThreshold: number;
}

export const DETECT_INPUT = 256;
const KEYPOINTS = 6;
/** The detector's box grown around the face, as Human's default `face.detector.scale`. */
const BOX_SCALE = 1.4;
// The graph's outputs: scores and regressors of the 16x16 grid (2 anchors each), then the 8x8 (6 each).
const OUTPUTS = ['Identity', 'Identity_2', 'Identity_1', 'Identity_3'] as const;

/** Anchor centres (input pixels) in the order of the graph's rows: 512 of stride 16, then 384 of stride 32. */
function anchors(size: number): Float32Array {
  const specs = [
    { stride: size / 16, count: 2 },
    { stride: size / 8, count: 6 },
  ];
  const out: number[] = [];
  for (const { stride, count } of specs) {
    const cells = Math.floor((size + stride - 1) / stride);
    for (let gy = 0; gy < cells; gy++)
      for (let gx = 0; gx < cells; gx++)
        for (let n = 0; n < count; n++) out.push(stride * (gx + 0.5), stride * (gy + 0.5));
  }
  return Float32Array.from(out);
}

/**
 * The detector's input: `rgb` (width x height) resized to 256x256 the way tfjs's resizeBilinear does
 * by default (corners not aligned, no half-pixel offset), scaled to -1..1, NHWC.
 */
export function detectorInput(rgb: Uint8Array, width: number, height: number, out: Float32Array): void {
  const n = DETECT_INPUT;
  const sy = height / n;
  const sx = width / n;
  for (let y = 0; y < n; y++) {
    const fy = y * sy;
    const y0 = Math.floor(fy);
    const y1 = Math.min(height - 1, Math.ceil(fy));
    const ay = fy - y0;
    for (let x = 0; x < n; x++) {
      const fx = x * sx;
      const x0 = Math.floor(fx);
      const x1 = Math.min(width - 1, Math.ceil(fx));
      const ax = fx - x0;
      const i00 = (y0 * width + x0) * 3;
      const i01 = (y0 * width + x1) * 3;
      const i10 = (y1 * width + x0) * 3;
      const i11 = (y1 * width + x1) * 3;
      const o = (y * n + x) * 3;
      for (let c = 0; c < 3; c++) {
        const top = rgb[i00 + c] + (rgb[i01 + c] - rgb[i00 + c]) * ax;
        const bottom = rgb[i10 + c] + (rgb[i11 + c] - rgb[i10 + c]) * ax;
        out[o + c] = (top + (bottom - top) * ay) / 127.5 - 1;
      }
    }
  }
}

/** Intersection over union of two [x0, y0, x1, y1] boxes stored at a and b of `boxes`. */
function iou(boxes: Float32Array, a: number, b: number): number {
  const ax0 = Math.min(boxes[4 * a], boxes[4 * a + 2]);
  const ay0 = Math.min(boxes[4 * a + 1], boxes[4 * a + 3]);
  const ax1 = Math.max(boxes[4 * a], boxes[4 * a + 2]);
  const ay1 = Math.max(boxes[4 * a + 1], boxes[4 * a + 3]);
  const bx0 = Math.min(boxes[4 * b], boxes[4 * b + 2]);
  const by0 = Math.min(boxes[4 * b + 1], boxes[4 * b + 3]);
  const bx1 = Math.max(boxes[4 * b], boxes[4 * b + 2]);
  const by1 = Math.max(boxes[4 * b + 1], boxes[4 * b + 3]);
  const areaA = (ax1 - ax0) * (ay1 - ay0);
  const areaB = (bx1 - bx0) * (by1 - by0);
  if (areaA <= 0 || areaB <= 0) return 0;
  const iw = Math.max(0, Math.min(ax1, bx1) - Math.max(ax0, bx0));
  const ih = Math.max(0, Math.min(ay1, by1) - Math.max(ay0, by0));
  const inter = iw * ih;
  return inter / (areaA + areaB - inter);
}

/**
 * Greedy non-maximum suppression: the best-scoring boxes above the score limit, none overlapping a
 * kept one by the IoU limit or more, at most maxDetected.
 */
export function suppress(boxes: Float32Array, scores: Float32Array, limits: DetectorLimits): number[] {
  const candidates: number[] = [];
  for (let i = 0; i < scores.length; i++) if (scores[i] > limits.minConfidence) candidates.push(i);
  // Stable: equal scores keep the anchors' order.
  candidates.sort((a, b) => scores[b] - scores[a] || a - b);
  const kept: number[] = [];
  for (const c of candidates) {
    if (kept.length >= limits.maxDetected) break;
    if (kept.every((k) => iou(boxes, c, k) < limits.iouThreshold)) kept.push(c);
  }
  return kept;
}

/**
 * Faces from the graph's rows (score logit, box centre offset and size, six key points, per anchor),
 * in the coordinates of a `width` x `height` image.
 */
export function decodeFaces(
  rows: Float32Array,
  anchorCentres: Float32Array,
  width: number,
  height: number,
  limits: DetectorLimits,
): DetectedFace[] {
  const count = anchorCentres.length / 2;
  const stride = 1 + 4 + 2 * KEYPOINTS;
  const boxes = new Float32Array(count * 4);
  const scores = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const r = i * stride;
    const cx = rows[r + 1] + anchorCentres[2 * i];
    const cy = rows[r + 2] + anchorCentres[2 * i + 1];
    const hw = rows[r + 3] / 2;
    const hh = rows[r + 4] / 2;
    boxes[4 * i] = cx - hw;
    boxes[4 * i + 1] = cy - hh;
    boxes[4 * i + 2] = cx + hw;
    boxes[4 * i + 3] = cy + hh;
    scores[i] = 1 / (1 + Math.exp(-rows[r]));
  }
  const fx = width / DETECT_INPUT;
  const fy = height / DETECT_INPUT;
  const faces: DetectedFace[] = [];
  for (const i of suppress(boxes, scores, limits)) {
    const x0 = boxes[4 * i] * fx;
    const y0 = boxes[4 * i + 1] * fy;
    const x1 = boxes[4 * i + 2] * fx;
    const y1 = boxes[4 * i + 3] * fy;
    // Enlarged about its centre, then squared on its longer side (whole pixels), then clipped to the image.
    const cx = x0 + (x1 - x0) / 2;
    const cy = y0 + (y1 - y0) / 2;
    const half = (Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0)) * BOX_SCALE) / 2;
    const sx0 = Math.round(cx - half);
    const sy0 = Math.round(cy - half);
    const sx1 = Math.round(cx + half);
    const sy1 = Math.round(cy + half);
    if (sx1 - sx0 <= 0 || sy1 - sy0 <= 0) continue;
    const r = i * stride;
    const keypoints: [number, number][] = [];
    for (let k = 0; k < KEYPOINTS; k++) {
      keypoints.push([
        (rows[r + 5 + 2 * k] + anchorCentres[2 * i]) * fx,
        (rows[r + 6 + 2 * k] + anchorCentres[2 * i + 1]) * fy,
      ]);
    }
    faces.push({
      box: [
        Math.trunc(Math.max(0, sx0)),
        Math.trunc(Math.max(0, sy0)),
        Math.trunc(Math.min(width, sx1) - Math.max(0, sx0)),
        Math.trunc(Math.min(height, sy1) - Math.max(0, sy0)),
      ],
      score: Math.round(100 * scores[i]) / 100,
      keypoints,
    });
  }
  return faces;
}

type Ort = typeof import('onnxruntime-node');

/** BlazeFace on onnxruntime, from the package's tfjs weights converted in memory. */
export class OnnxFaceDetector {
  private readonly anchorCentres = anchors(DETECT_INPUT);

  private constructor(
    private readonly ort: Ort,
    private readonly session: InferenceSession,
    private readonly limits: DetectorLimits,
  ) {}

  static async load(modelsDir: string, limits: DetectorLimits): Promise<OnnxFaceDetector> {
    const ort: Ort = await import('onnxruntime-node');
    const json = JSON.parse(await readFile(join(modelsDir, 'blazeface.json'), 'utf8')) as TfjsGraphModel;
    const weights = await readFile(join(modelsDir, 'blazeface.bin'));
    const bytes = convertTfjsGraph(json, weights, {
      inputShape: [DETECT_INPUT, DETECT_INPUT, 3],
      outputs: [...OUTPUTS],
    });
    // One thread, as FaceMesh: the engine's other thread and ffmpeg use the second core.
    const session = await ort.InferenceSession.create(bytes, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
    return new OnnxFaceDetector(ort, session, limits);
  }

  /** Faces in an rgb24 image. */
  async detect(rgb: Uint8Array, width: number, height: number): Promise<DetectedFace[]> {
    // A buffer per call: onnxruntime reads it on its own thread while other detections (another job
    // tracking on the same thread) may fill theirs.
    const pixels = new Float32Array(DETECT_INPUT * DETECT_INPUT * 3);
    detectorInput(rgb, width, height, pixels);
    const input = new this.ort.Tensor('float32', pixels, [1, DETECT_INPUT, DETECT_INPUT, 3]);
    const out: Record<string, OrtTensor> = await this.session.run({ input });
    const [scoresA, boxesA, scoresB, boxesB] = OUTPUTS.map((o) => out[o].data as Float32Array);
    return decodeFaces(
      rowsOf([scoresA, scoresB], [boxesA, boxesB], this.anchorCentres.length / 2),
      this.anchorCentres,
      width,
      height,
      this.limits,
    );
  }
}

/** One row per anchor (score logit, then the 16 regressors), the two grids one after the other. */
function rowsOf(scores: Float32Array[], regressors: Float32Array[], count: number): Float32Array {
  const stride = 1 + 4 + 2 * KEYPOINTS;
  const rows = new Float32Array(count * stride);
  let row = 0;
  for (let g = 0; g < scores.length; g++) {
    const s = scores[g];
    const r = regressors[g];
    for (let i = 0; i < s.length; i++, row++) {
      rows[row * stride] = s[i];
      rows.set(r.subarray(i * (stride - 1), (i + 1) * (stride - 1)), row * stride + 1);
    }
  }
  if (row !== count) throw new Error(`the detector gave ${row} rows for ${count} anchors`);
  return rows;
}
