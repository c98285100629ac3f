// Face and lip landmarks on a stream of frames: the detector (BlazeFace) finds a face when none is
// tracked, then FaceMesh follows it from frame to frame on a rotated crop placed from the previous
// frame's landmarks (no detector while tracking). Landmarks are smoothed with a One-Euro filter whose
// speeds are measured in face sizes, so a still face is steady and a talking mouth is not delayed.
// Several faces: the largest, unless active-speaker hints say which one.
//
// FaceMesh is the largest cost per frame, so `trackPair` meshes only the second of two frames while
// the face holds still: when no landmark moved more than a small fraction of the eye distance
// between the frames around the first one, the first takes the midpoint of its neighbours'
// landmarks (docs/engine.md, "Interpolated landmarks"). Any larger motion meshes both.
import type { ActiveSpeakerHint } from '../../domain/generation-request.js';
import type { DetectedFace, FaceModels, MeshRuntime } from './face-models.js';
import { MESH_INPUT, MESH_POINTS } from './face-models.js';
import { cropRotatedYuvBilinear, cropRotatedYuvLarge } from './crop-yuv.js';
import { cropRotated, downscale, type RgbImage } from './image-ops.js';
import { interocular, LIPS, rollAngle } from './landmarks.js';
import { OneEuroFilter } from './one-euro.js';
import { clamped, yuvToRgb, type Rect } from './yuv.js';
import type { PixelFormat } from '../../media/frames.js';

export interface FaceObservation {
  /** Index of the frame in the stream. */
  frame: number;
  /** 468 smoothed landmarks, flat [x0, y0, x1, y1, ...] in frame pixels. */
  points: Float32Array;
  /** The same landmarks before smoothing. */
  raw: Float32Array;
  /** FaceMesh confidence 0..1. */
  score: number;
  /** Landmark bounding box [x, y, width, height] in frame pixels. */
  box: Box;
  /** Face size in pixels: the larger side of `box`. */
  size: number;
  /** Distance between the eye centres, pixels. */
  scale: number;
  /** True when this frame started a new track (after a detection). */
  fresh: boolean;
}

export interface FaceTrackerOptions {
  fps: number;
  activeSpeaker?: ActiveSpeakerHint | null;
  /** While no face is tracked, run the detector on every n-th frame (default 3). */
  searchEvery?: number;
  /** FaceMesh confidence below which the track is lost (default 0.5). */
  minScore?: number;
  /** Smooth landmarks over time (default true). */
  smooth?: boolean;
  /** Longest side of the image given to the detector (default 512). */
  detectSize?: number;
  /** Per frame, the box of the face to follow as found by active-speaker detection (undefined: no choice). */
  speakerBoxes?: readonly (Box | undefined)[] | null;
  /**
   * Let `trackPair` take a frame's landmarks from its neighbours while the face holds still (default
   * true; false meshes every frame).
   */
  interpolate?: boolean;
  /** The frames' format (default rgb24); yuv420p is converted only where the models look. */
  pixelFormat?: PixelFormat;
  /** What runs the detector and FaceMesh (default onnx; see FaceModels.meshRuntime). */
  meshRuntime?: MeshRuntime;
}

/**
 * Crops of a yuv420p frame larger than this many times FaceMesh's input are sampled from the frame
 * itself (crop-yuv.ts: the rgb path's samples up to rounding); smaller ones convert their footprint to
 * rgb first, which is cheaper there: the footprint grows with the square of the crop, the samples
 * stay the same. bench/engine-kernels.ts: 1.17x at 0.8x, 0.79x at 1.2x, 0.40x at 2x.
 */
const YUV_CROP_FROM = 1;

/**
 * Largest landmark motion (in eye distances) between the two meshed frames around an interpolated
 * one: on the lips, and anywhere on the face. A pause or slow speech stays under these; fast lip
 * motion and head turns do not. Chosen so that the interpolated lips stay within about 1.3x
 * FaceMesh's own frame-to-frame jitter (docs/engine.md, "Interpolated landmarks").
 */
export const STILL_LIPS = 0.05;
export const STILL_FACE = 0.075;

const LIP_POINTS: readonly number[] = [...new Set(Object.values(LIPS).flat())];

/**
 * Whether the face held still between two sets of landmarks (frame pixels), judged against the eye
 * distance `scale`: the most any lip point moved, and the most any point moved.
 */
export function heldStill(a: Float32Array, b: Float32Array, scale: number): boolean {
  const lipLimit = (STILL_LIPS * scale) ** 2;
  for (const i of LIP_POINTS) {
    const dx = a[2 * i] - b[2 * i];
    const dy = a[2 * i + 1] - b[2 * i + 1];
    if (dx * dx + dy * dy > lipLimit) return false;
  }
  const faceLimit = (STILL_FACE * scale) ** 2;
  for (let i = 0; i < a.length; i += 2) {
    const dx = a[i] - b[i];
    const dy = a[i + 1] - b[i + 1];
    if (dx * dx + dy * dy > faceLimit) return false;
  }
  return true;
}

export interface Crop {
  cx: number;
  cy: number;
  size: number;
  angle: number;
}

/** Crop side as a multiple of the landmarks' extent (the framing FaceMesh was trained on). */
const CROP_SCALE = 1.5;

export type Box = [number, number, number, number];

/** Intersection over union of two [x, y, w, h] boxes. */
export function iou(a: Box, b: Box): number {
  const x1 = Math.max(a[0], b[0]);
  const y1 = Math.max(a[1], b[1]);
  const x2 = Math.min(a[0] + a[2], b[0] + b[2]);
  const y2 = Math.min(a[1] + a[3], b[1] + b[3]);
  const inter = Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
  const union = a[2] * a[3] + b[2] * b[3] - inter;
  return union > 0 ? inter / union : 0;
}

export class FaceTracker {
  private crop: Crop | null = null;
  private frameIndex = -1;
  private lastSearch = -Infinity;
  private readonly filter = new OneEuroFilter(MESH_POINTS * 2, { minCutoff: 1.2, beta: 6, dCutoff: 1 });
  private readonly cropBuffer = new Float32Array(MESH_INPUT * MESH_INPUT * 3);
  private readonly searchEvery: number;
  private readonly minScore: number;
  private readonly smooth: boolean;
  private readonly detectSize: number;
  private readonly interpolate: boolean;
  /** rgb24 pixels of the parts of yuv420p frames that FaceMesh and the detector look at. */
  private canvas: Uint8Array | null = null;
  /** Raw landmarks and score of the previous frame when FaceMesh measured them and the track goes on. */
  private previous: { raw: Float32Array; score: number } | null = null;
  /**
   * Detector runs, frames that saw more than one face, tracks lost, and frames whose landmarks were
   * interpolated instead of meshed (for the report).
   */
  readonly stats: {
    detections: number;
    multiFaceFrames: number;
    lost: number;
    interpolated: number;
    /** What ran FaceMesh. */
    meshRuntime?: MeshRuntime;
  } = { detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 };

  constructor(
    private readonly models: FaceModels,
    private readonly width: number,
    private readonly height: number,
    private readonly opts: FaceTrackerOptions,
  ) {
    this.searchEvery = Math.max(1, opts.searchEvery ?? 3);
    this.minScore = opts.minScore ?? 0.5;
    this.smooth = opts.smooth ?? true;
    this.detectSize = opts.detectSize ?? 512;
    this.interpolate = opts.interpolate ?? true;
    this.stats.meshRuntime = models.meshRuntime(opts.meshRuntime);
  }

  /**
   * Whether `trackPair` could spare FaceMesh on the next frame: a face is tracked, FaceMesh measured
   * the frame before, and no active-speaker hint covers the next two frames (hints may switch faces).
   * A caller that holds the next frame back until the one after it arrives asks this first.
   */
  canInterpolateNext(): boolean {
    const next = this.frameIndex + 1;
    return (
      this.interpolate &&
      this.crop !== null &&
      this.previous !== null &&
      this.hintBox(next) === undefined &&
      this.hintBox(next + 1) === undefined
    );
  }

  /**
   * Landmarks of the next two frames. When the face held still around the first, FaceMesh runs on the
   * second only and the first gets the midpoint of its neighbours' raw landmarks; otherwise both are
   * tracked as by `track`.
   */
  async trackPair(
    first: Uint8Array,
    second: Uint8Array,
  ): Promise<[FaceObservation | null, FaceObservation | null]> {
    if (!this.canInterpolateNext()) return [await this.track(first), await this.track(second)];
    const before = this.previous as { raw: Float32Array; score: number };
    const crop = this.crop as Crop;
    const after = await this.mesh(second, crop);
    if (!after) return [await this.track(first), await this.track(second)];
    if (!heldStill(before.raw, after.points, interocular(before.raw))) {
      // It moved: the first frame is meshed too. The second keeps the landmarks just measured when
      // its crop would have been nearly the same (FaceMesh framed it well), else it is meshed again.
      const a = await this.track(first);
      if (a && !a.fresh && this.crop && similarCrops(crop, this.crop)) {
        return [a, this.accept(++this.frameIndex, after.points, after.score, false)];
      }
      return [a, await this.track(second)];
    }
    const mid = new Float32Array(before.raw.length);
    for (let i = 0; i < mid.length; i++) mid[i] = (before.raw[i] + after.points[i]) / 2;
    this.stats.interpolated++;
    const a = this.accept(++this.frameIndex, mid, Math.min(before.score, after.score), false);
    const b = this.accept(++this.frameIndex, after.points, after.score, false);
    return [a, b];
  }

  /** Landmarks of the followed face in the next frame of the stream, or null when there is none. */
  async track(frame: Uint8Array): Promise<FaceObservation | null> {
    const index = ++this.frameIndex;
    const hintBox = this.hintBox(index);
    if (hintBox === null) {
      // The hints say nobody speaks in this frame.
      this.drop();
      return null;
    }

    let fresh = false;
    if (this.crop && hintBox) {
      // Follow the hinted box: re-detect when the tracked face is not the one it marks.
      const cur = this.cropBox(this.crop);
      if (this.clientHint(index) ? iou(cur, hintBox) < 0.2 : sameFace(cur, hintBox) === 0) this.drop();
    }
    if (!this.crop) {
      if (index - this.lastSearch < this.searchEvery) return null;
      this.lastSearch = index;
      const face = await this.detect(frame, hintBox);
      if (!face) return null;
      this.crop = face;
      fresh = true;
    }

    let result = await this.mesh(frame, this.crop);
    if (!result && !fresh) {
      // Lost while tracking: one immediate detection before giving up on this frame.
      this.stats.lost++;
      this.drop();
      this.lastSearch = index;
      const face = await this.detect(frame, hintBox);
      if (face) {
        fresh = true;
        this.crop = face;
        result = await this.mesh(frame, face);
      }
    }
    if (!result) {
      this.drop();
      return null;
    }

    return this.accept(index, result.points, result.score, fresh);
  }

  /** Takes a frame's raw landmarks: the next crop, the smoothed points and the observation. */
  private accept(index: number, raw: Float32Array, score: number, fresh: boolean): FaceObservation {
    this.crop = this.nextCrop(raw);
    // A copy: the observation's arrays may be transferred to another thread.
    this.previous = { raw: Float32Array.from(raw), score };
    const points = Float32Array.from(raw);
    const scale = interocular(raw);
    if (fresh) this.filter.reset();
    if (this.smooth) this.filter.filter(points, 1 / this.opts.fps, Math.max(1, scale));
    const box = this.bounds(points);
    return {
      frame: index,
      points,
      raw,
      score,
      box,
      size: Math.max(box[2], box[3]),
      scale,
      fresh,
    };
  }

  private drop(): void {
    this.crop = null;
    this.previous = null;
    this.filter.reset();
  }

  /** undefined: no hint for this frame; null: hinted that no one speaks; else the speaker's box [x, y, w, h]. */
  private clientHint(index: number): boolean {
    const boxes = this.opts.activeSpeaker?.boundingBoxes;
    return !!boxes && index < boxes.length;
  }

  private hintBox(index: number): Box | null | undefined {
    const boxes = this.opts.activeSpeaker?.boundingBoxes;
    if (!boxes || index >= boxes.length) return this.opts.speakerBoxes?.[index];
    const b = boxes[index];
    if (!b) return null;
    return [Math.min(b[0], b[2]), Math.min(b[1], b[3]), Math.abs(b[2] - b[0]), Math.abs(b[3] - b[1])];
  }

  private cropBox(c: Crop): Box {
    const s = c.size / CROP_SCALE;
    return [c.cx - s / 2, c.cy - s / 2, s, s];
  }

  private async detect(frame: Uint8Array, hintBox: Box | undefined): Promise<Crop | null> {
    this.stats.detections++;
    const faces = await detectFaces(
      this.models,
      this.rgb(frame, null),
      this.detectSize,
      this.opts.meshRuntime,
    );
    if (faces.length === 0) return null;
    if (faces.length > 1) this.stats.multiFaceFrames++;
    const chosen = this.choose(faces, hintBox);
    if (!chosen) return null;
    return cropFromDetection(chosen);
  }

  private choose(faces: DetectedFace[], hintBox: Box | undefined): DetectedFace | null {
    const area = (f: DetectedFace) => f.box[2] * f.box[3];
    if (hintBox) {
      let best: DetectedFace | null = null;
      let bestIou = 0.05;
      for (const f of faces) {
        const v = iou(f.box, hintBox);
        if (v > bestIou) {
          bestIou = v;
          best = f;
        }
      }
      return best;
    }
    const point = this.opts.activeSpeaker?.coordinates;
    if (point) {
      // The face containing the point, else the nearest one.
      const [x, y] = point;
      let best = faces[0];
      let bestD = Infinity;
      for (const f of faces) {
        const [bx, by, bw, bh] = f.box;
        const inside = x >= bx && x <= bx + bw && y >= by && y <= by + bh;
        const d = inside ? -area(f) : Math.hypot(bx + bw / 2 - x, by + bh / 2 - y);
        if (d < bestD) {
          bestD = d;
          best = f;
        }
      }
      return best;
    }
    return faces.reduce((a, b) => (area(b) > area(a) ? b : a));
  }

  private mesh(frame: Uint8Array, c: Crop): Promise<{ points: Float32Array; score: number } | null> {
    const ratio = c.size / MESH_INPUT;
    if (this.opts.pixelFormat === 'yuv420p' && ratio > YUV_CROP_FROM) {
      // A large crop reads a fraction of its footprint's pixels: converted where they are read.
      const { width, height } = this;
      const crop = ratio > 2 ? cropRotatedYuvLarge : cropRotatedYuvBilinear;
      crop(frame, width, height, c.cx, c.cy, c.size, c.angle, MESH_INPUT, this.cropBuffer);
      return meshOnCrop(this.models, null, c, this.cropBuffer, this.minScore, this.opts.meshRuntime);
    }
    // The crop's footprint: a square of side c.size turned by c.angle, and a pixel for the taps.
    const half = (c.size / 2) * (Math.abs(Math.cos(c.angle)) + Math.abs(Math.sin(c.angle))) + 2;
    const img = this.rgb(frame, { x0: c.cx - half, y0: c.cy - half, x1: c.cx + half, y1: c.cy + half });
    return meshOnCrop(this.models, img, c, this.cropBuffer, this.minScore, this.opts.meshRuntime);
  }

  /**
   * The frame as an rgb24 image. A yuv420p frame is converted into the tracker's canvas, only within
   * `rect` (null: all of it); the image is valid there only.
   */
  private rgb(frame: Uint8Array, rect: Rect | null): RgbImage {
    const { width, height } = this;
    if (this.opts.pixelFormat !== 'yuv420p') return { data: frame, width, height };
    this.canvas ??= new Uint8Array(width * height * 3);
    yuvToRgb(frame, width, height, clamped(this.canvas), rect ?? { x0: 0, y0: 0, x1: width, y1: height });
    return { data: this.canvas, width, height };
  }

  private nextCrop(p: Float32Array): Crop {
    return cropFromLandmarks(p);
  }

  private bounds(p: Float32Array): Box {
    return landmarkBounds(p);
  }
}

/** Two crops that frame the face nearly alike: centres within 4% of the size, sizes within 4%, roll within 0.04 rad. */
export function similarCrops(a: Crop, b: Crop): boolean {
  const size = Math.max(a.size, b.size);
  return (
    Math.hypot(a.cx - b.cx, a.cy - b.cy) <= 0.04 * size &&
    Math.abs(a.size - b.size) <= 0.04 * size &&
    Math.abs(a.angle - b.angle) <= 0.04
  );
}

function scaleFace(f: DetectedFace, k: number): DetectedFace {
  if (k === 1) return f;
  return {
    box: [f.box[0] * k, f.box[1] * k, f.box[2] * k, f.box[3] * k],
    score: f.score,
    keypoints: f.keypoints.map(([x, y]) => [x * k, y * k] as [number, number]),
  };
}

/** Faces in a frame (frame pixels); the detector sees a copy whose longest side is about `detectSize`. */
export async function detectFaces(
  models: FaceModels,
  img: RgbImage,
  detectSize: number,
  runtime?: MeshRuntime,
): Promise<DetectedFace[]> {
  const factor = Math.max(1, Math.floor(Math.max(img.width, img.height) / detectSize));
  const small = downscale(img, factor);
  return (await models.detect(small.data, small.width, small.height, runtime)).map((f) =>
    scaleFace(f, factor),
  );
}

/**
 * How surely two boxes frame the same face, 0..1 (0: not the same): their centres closer than half
 * the larger box. Centres, not overlap, because landmark boxes are tighter than the detector's.
 */
export function sameFace(a: Box, b: Box): number {
  const d = Math.hypot(a[0] + a[2] / 2 - b[0] - b[2] / 2, a[1] + a[3] / 2 - b[1] - b[3] / 2);
  const size = Math.max(a[2], a[3], b[2], b[3]);
  return size > 0 ? Math.max(0, 1 - d / (0.5 * size)) : 0;
}

/** The crop FaceMesh wants around a detected face, upright along the eyes. */
export function cropFromDetection(face: DetectedFace): Crop {
  const [x, y, w, h] = face.box;
  const [a, b] = face.keypoints;
  let angle = a && b ? Math.atan2(b[1] - a[1], b[0] - a[0]) : 0;
  if (a && b && b[0] < a[0]) angle = Math.atan2(a[1] - b[1], a[0] - b[0]);
  // The detector's box is already enlarged around the face; FaceMesh wants a little more context.
  return { cx: x + w / 2, cy: y + h / 2, size: Math.max(w, h) * 1.1, angle };
}

/** FaceMesh landmarks (frame pixels) on a rotated crop, or null when its confidence is below minScore. */
export async function meshOnCrop(
  models: FaceModels,
  img: RgbImage | null,
  c: Crop,
  buffer: Float32Array,
  minScore: number,
  runtime?: MeshRuntime,
): Promise<{ points: Float32Array; score: number } | null> {
  if (c.size < 16) return null;
  // No image: `buffer` already holds the crop.
  if (img) cropRotated(img, c.cx, c.cy, c.size, c.angle, MESH_INPUT, buffer);
  const out = await models.landmarks(buffer, runtime);
  if (!(out.score >= minScore)) return null;
  const points = new Float32Array(MESH_POINTS * 2);
  const cos = Math.cos(c.angle);
  const sin = Math.sin(c.angle);
  const k = c.size / MESH_INPUT;
  for (let i = 0; i < MESH_POINTS; i++) {
    const lx = out.coords[3 * i] * k - c.size / 2;
    const ly = out.coords[3 * i + 1] * k - c.size / 2;
    points[2 * i] = c.cx + lx * cos - ly * sin;
    points[2 * i + 1] = c.cy + lx * sin + ly * cos;
  }
  return { points, score: out.score };
}

/** The crop for the next frame: the landmarks' extent in the face's own axes, enlarged. */
export function cropFromLandmarks(p: Float32Array): Crop {
  const angle = rollAngle(p);
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  let minU = Infinity;
  let maxU = -Infinity;
  let minV = Infinity;
  let maxV = -Infinity;
  for (let i = 0; i < MESH_POINTS; i++) {
    const x = p[2 * i];
    const y = p[2 * i + 1];
    const u = x * cos + y * sin;
    const v = -x * sin + y * cos;
    if (u < minU) minU = u;
    if (u > maxU) maxU = u;
    if (v < minV) minV = v;
    if (v > maxV) maxV = v;
  }
  const cu = (minU + maxU) / 2;
  const cv = (minV + maxV) / 2;
  return {
    cx: cu * cos - cv * sin,
    cy: cu * sin + cv * cos,
    size: Math.max(maxU - minU, maxV - minV) * CROP_SCALE,
    angle,
  };
}

/** [x, y, w, h] of a set of landmarks. */
export function landmarkBounds(p: Float32Array): Box {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < p.length; i += 2) {
    if (p[i] < minX) minX = p[i];
    if (p[i] > maxX) maxX = p[i];
    if (p[i + 1] < minY) minY = p[i + 1];
    if (p[i + 1] > maxY) maxY = p[i + 1];
  }
  return [minX, minY, maxX - minX, maxY - minY];
}
