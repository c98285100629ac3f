// Audio-visual active-speaker detection for `active_speaker` / `auto_detect`: a first pass over the
// (downscaled) frames follows every face and measures its mouth opening per frame (SpeakerScanner);
// then, per half second, each face is scored by how well its mouth follows the video's own soundtrack
// (or, without one, by how much its mouth moves), and a Viterbi path with a switching cost picks one
// face per stretch (chooseSpeakers). The result is a per-frame box the main tracker follows, exactly
// like a client's bounding_boxes hint. Memory: a few numbers per face per frame.
import type { FaceModels } from './face-models.js';
import { MESH_INPUT } from './face-models.js';
import {
  cropFromDetection,
  cropFromLandmarks,
  detectFaces,
  iou,
  landmarkBounds,
  meshOnCrop,
  sameFace,
  type Box,
  type Crop,
} from './face-tracker.js';
import type { RgbImage } from './image-ops.js';
import { mouthOpening } from './landmarks.js';
import { bestLagCorrelation } from './stats.js';

export interface ScanTrack {
  id: number;
  /** Mouth opening per frame (NaN where not measured). */
  opening: Float32Array;
  /** Face box per frame, 4 values [x, y, w, h] in full-frame pixels (NaN where the face was not seen). */
  boxes: Float32Array;
  /** Frames in which the face was seen. */
  seen: number;
}

export interface SpeakerScanResult {
  frames: number;
  tracks: ScanTrack[];
  /** Frames in which two or more faces were seen at once. */
  multiFaceFrames: number;
}

export interface SpeakerScannerOptions {
  /** Frames between detector runs (default 3). */
  detectEvery?: number;
  /** Longest side given to the detector (default 512). */
  detectSize?: number;
  /** Scan frames are this many times smaller than the engine's frames (boxes are scaled back). */
  downscale?: number;
  /** Faces smaller than this (scan pixels) are ignored (default 24). */
  minFaceSize?: number;
  maxTracks?: number;
}

interface LiveTrack {
  track: ScanTrack;
  crop: Crop | null;
  lastBox: Box;
  lastSeen: number;
}

/** Follows every face in a frame stream and measures each one's mouth opening where faces overlap in time. */
export class SpeakerScanner {
  private index = -1;
  private readonly live: LiveTrack[] = [];
  private multiFaceFrames = 0;
  private readonly buffer = new Float32Array(MESH_INPUT * MESH_INPUT * 3);
  private readonly detectEvery: number;
  private readonly detectSize: number;
  private readonly k: number;
  private readonly minFaceSize: number;
  private readonly maxTracks: number;
  private readonly staleFrames: number;

  constructor(
    private readonly models: FaceModels,
    private readonly width: number,
    private readonly height: number,
    private readonly frameCount: number,
    fps: number,
    opts: SpeakerScannerOptions = {},
  ) {
    this.detectEvery = Math.max(1, opts.detectEvery ?? 3);
    this.detectSize = opts.detectSize ?? 512;
    this.k = opts.downscale ?? 1;
    this.minFaceSize = opts.minFaceSize ?? 24;
    this.maxTracks = opts.maxTracks ?? 8;
    // A face unseen for two seconds is someone new when a face shows up there again.
    this.staleFrames = Math.round(2 * fps);
  }

  async push(frame: Uint8Array): Promise<void> {
    const t = ++this.index;
    if (t >= this.frameCount) return;
    const img: RgbImage = { data: frame, width: this.width, height: this.height };
    if (t % this.detectEvery === 0) await this.detect(img, t);

    const active = this.live.filter((l) => l.crop);
    if (active.length >= 2) this.multiFaceFrames++;
    for (const l of active) {
      if (active.length < 2) {
        // Alone in the picture: nobody to choose between, so no landmarks are needed; the box from
        // the last detection stands for the face.
        this.record(l, t, l.lastBox, NaN);
        continue;
      }
      const mesh = await meshOnCrop(this.models, img, l.crop as Crop, this.buffer, 0.5);
      if (!mesh) {
        l.crop = null;
        continue;
      }
      l.crop = cropFromLandmarks(mesh.points);
      this.record(l, t, landmarkBounds(mesh.points), mouthOpening(mesh.points));
    }
    this.dropDuplicates();
  }

  result(): SpeakerScanResult {
    return {
      frames: Math.min(this.frameCount, this.index + 1),
      tracks: this.live.map((l) => l.track).filter((tr) => tr.seen > 0),
      multiFaceFrames: this.multiFaceFrames,
    };
  }

  private record(l: LiveTrack, t: number, box: Box, opening: number): void {
    l.lastBox = box;
    l.lastSeen = t;
    const tr = l.track;
    if (Number.isNaN(tr.boxes[4 * t])) tr.seen++;
    for (let i = 0; i < 4; i++) tr.boxes[4 * t + i] = box[i] * this.k;
    tr.opening[t] = opening;
  }

  private async detect(img: RgbImage, t: number): Promise<void> {
    const faces = (await detectFaces(this.models, img, this.detectSize)).filter(
      (f) => Math.max(f.box[2], f.box[3]) >= this.minFaceSize,
    );
    const taken = new Set<LiveTrack>();
    for (const f of faces.sort((a, b) => b.score - a.score)) {
      let best: LiveTrack | null = null;
      let bestIou = 0;
      for (const l of this.live) {
        if (taken.has(l) || t - l.lastSeen > this.staleFrames) continue;
        const v = sameFace(l.lastBox, f.box);
        if (v > bestIou) {
          bestIou = v;
          best = l;
        }
      }
      if (!best) {
        if (this.live.length >= this.maxTracks) continue;
        best = {
          track: {
            id: this.live.length,
            opening: new Float32Array(this.frameCount).fill(NaN),
            boxes: new Float32Array(4 * this.frameCount).fill(NaN),
            seen: 0,
          },
          crop: null,
          lastBox: f.box,
          lastSeen: t,
        };
        this.live.push(best);
      }
      taken.add(best);
      if (!best.crop) best.crop = cropFromDetection(f);
      best.lastBox = f.box;
      best.lastSeen = t;
    }
    // A tracked face the detector no longer sees (it left, or turned away) stops being followed.
    for (const l of this.live) if (l.crop && !taken.has(l) && faces.length > 0) l.crop = null;
  }

  /** Two tracks that drifted onto the same face: the younger one stops. */
  private dropDuplicates(): void {
    const active = this.live.filter((l) => l.crop);
    for (let i = 0; i < active.length; i++) {
      for (let j = i + 1; j < active.length; j++) {
        if (active[i].crop && active[j].crop && iou(active[i].lastBox, active[j].lastBox) > 0.5) {
          active[j].crop = null;
        }
      }
    }
  }
}

export interface SpeakerChoice {
  /** Per frame: the box of the chosen speaker (full-frame pixels [x, y, w, h]), or undefined (no choice). */
  boxes: (Box | undefined)[];
  /** How many frames each track was chosen for. */
  chosenFrames: Map<number, number>;
  /** Whether the choice used the soundtrack (true) or mouth motion alone (false). */
  usedAudio: boolean;
  /** Faces followed during the scan. */
  faces: number;
  /** Changes of the chosen face from one stretch to the next. */
  switches: number;
  /** The frames where another face takes over (the first frame of the new face). */
  changes: number[];
}

export interface ChooseOptions {
  fps: number;
  /** The video's own loudness (dB) per frame, or null when it has no soundtrack. */
  audioDb: Float32Array | null;
  /** Half-width of the scoring window, seconds (default 2.5). */
  windowSeconds?: number;
  /** Score lost by switching from one face to another (default 0.6). */
  switchCost?: number;
  /** Weight of mouth movement next to the audio correlation (default 0.3; alone without audio). */
  motionWeight?: number;
}

const MAX_LAG = 2;
/** Score given for the face's size relative to the largest face (decides only when nothing else does). */
const SIZE_TIE_BREAK = 0.02;

/** Standard deviation of the finite values, and how many there were. */
function spread(x: ArrayLike<number>, a: number, b: number): { sd: number; n: number } {
  let s = 0;
  let s2 = 0;
  let n = 0;
  for (let i = a; i < b; i++) {
    const v = x[i];
    if (!Number.isFinite(v)) continue;
    s += v;
    s2 += v * v;
    n++;
  }
  if (n < 2) return { sd: 0, n };
  const m = s / n;
  return { sd: Math.sqrt(Math.max(0, s2 / n - m * m)), n };
}

/** Frames over which the re-drawn mouth fades out on one face and in on the next at a change of speaker. */
export const SPEAKER_RAMP_FRAMES = 4;

/**
 * Weight (0..1) of the re-drawn mouth per frame around changes of speaker: 0 on the last frame of the
 * old face and the first of the new one, 1 from SPEAKER_RAMP_FRAMES away, so neither mouth jumps
 * between the new speech and its own. Null when there is no change.
 */
export function changeWeights(changes: readonly number[], frames: number): Float32Array | null {
  if (changes.length === 0) return null;
  const w = new Float32Array(frames).fill(1);
  for (const s of changes) {
    for (let d = 0; d < SPEAKER_RAMP_FRAMES; d++) {
      const v = d / SPEAKER_RAMP_FRAMES;
      if (s - 1 - d >= 0) w[s - 1 - d] = Math.min(w[s - 1 - d], v);
      if (s + d < frames) w[s + d] = Math.min(w[s + d], v);
    }
  }
  return w;
}

/** Mean absolute change of the opening from one measured frame to the next, over [a, b). */
function movement(x: ArrayLike<number>, a: number, b: number): { speed: number } {
  let s = 0;
  let n = 0;
  for (let i = a + 1; i < b; i++) {
    if (!Number.isFinite(x[i]) || !Number.isFinite(x[i - 1])) continue;
    s += Math.abs(x[i] - x[i - 1]);
    n++;
  }
  return { speed: n > 0 ? s / n : 0 };
}

/**
 * Picks the speaking face per stretch of the video. Score per face and half-second block, over a
 * window around the block: the correlation of its mouth opening with the soundtrack's loudness (best
 * lag within two frames) plus its mouth movement relative to the most moving face; without a
 * soundtrack the movement alone. A Viterbi path over the blocks charges `switchCost` per change of
 * face, so the choice does not flicker between two people.
 */
export function chooseSpeakers(scan: SpeakerScanResult, opts: ChooseOptions): SpeakerChoice {
  const { fps, audioDb } = opts;
  const frames = scan.frames;
  const tracks = scan.tracks;
  const block = Math.max(1, Math.round(fps / 2));
  const blocks = Math.ceil(frames / block);
  const half = Math.max(block, Math.round((opts.windowSeconds ?? 2.5) * fps));
  const switchCost = opts.switchCost ?? 0.6;
  const motionWeight = opts.motionWeight ?? 0.3;
  const usedAudio = audioDb !== null && spread(audioDb, 0, Math.min(frames, audioDb.length)).sd > 1;

  // Emission score per block and track; -Infinity where the face is not in the block.
  const score: Float64Array[] = [];
  for (let b = 0; b < blocks; b++) {
    const a0 = b * block;
    const a1 = Math.min(frames, a0 + block);
    const w0 = Math.max(0, a0 + ((a1 - a0) >> 1) - half);
    const w1 = Math.min(frames, a0 + ((a1 - a0) >> 1) + half);
    const row = new Float64Array(tracks.length).fill(-Infinity);
    // Movement is local (half a second either side): a listener who starts talking later must not
    // borrow that movement for the stretch where they only listen.
    const m0 = Math.max(0, a0 - Math.round(fps / 2));
    const m1 = Math.min(frames, a1 + Math.round(fps / 2));
    const motion = tracks.map((tr) => ({ ...movement(tr.opening, m0, m1), n: spread(tr.opening, w0, w1).n }));
    const most = Math.max(1e-6, ...motion.map((m) => (m.n >= 6 ? m.speed : 0)));
    const sizes = tracks.map((tr) => {
      let sum = 0;
      let present = 0;
      for (let t = a0; t < a1; t++) {
        if (Number.isNaN(tr.boxes[4 * t])) continue;
        sum += Math.max(tr.boxes[4 * t + 2], tr.boxes[4 * t + 3]);
        present++;
      }
      return { present, size: present ? sum / present : 0 };
    });
    const largest = Math.max(1e-6, ...sizes.map((z) => z.size));
    tracks.forEach((tr, k) => {
      if (sizes[k].present * 2 < a1 - a0) return;
      const m = motion[k];
      // Measured nowhere in the window: the face was alone, so it is the only candidate anyway.
      if (m.n < 6) {
        row[k] = 0;
        return;
      }
      let s = m.speed / most;
      if (usedAudio && audioDb) {
        s *= motionWeight;
        const r = bestLagCorrelation(tr.opening.subarray(w0, w1), audioDb.subarray(w0, w1), MAX_LAG).r;
        if (Number.isFinite(r)) s += r;
      }
      // With no other evidence (a still picture, nobody moving) the largest face wins, as without
      // active_speaker; next to real evidence this is negligible.
      s += SIZE_TIE_BREAK * (sizes[k].size / largest);
      row[k] = s;
    });
    score.push(row);
  }

  // Viterbi over blocks; state = track index, or `none` where no face is present.
  const n = tracks.length;
  const none = n;
  const back: Int16Array[] = [];
  let prev = new Float64Array(n + 1);
  for (let b = 0; b < blocks; b++) {
    const cur = new Float64Array(n + 1).fill(-Infinity);
    const from = new Int16Array(n + 1).fill(none);
    const anyFace = score[b].some((v) => v > -Infinity);
    for (let s = 0; s <= n; s++) {
      const emit = s === none ? (anyFace ? -Infinity : 0) : score[b][s];
      if (emit === -Infinity) continue;
      for (let p = 0; p <= n; p++) {
        if (prev[p] === -Infinity) continue;
        const cost = b === 0 || p === s || p === none || s === none ? 0 : switchCost;
        const v = prev[p] + emit - cost;
        if (v > cur[s]) {
          cur[s] = v;
          from[s] = p;
        }
      }
    }
    back.push(from);
    prev = cur;
  }
  const path = new Int16Array(blocks);
  let s = 0;
  for (let k = 1; k <= n; k++) if (prev[k] > prev[s]) s = k;
  for (let b = blocks - 1; b >= 0; b--) {
    path[b] = s;
    s = back[b][s];
  }

  let switches = 0;
  let last = none;
  for (let b = 0; b < blocks; b++) {
    if (path[b] === none) continue;
    if (last !== none && path[b] !== last) switches++;
    last = path[b];
  }
  // Per frame, then each change of face moved to the frame where the evidence turns (blocks are
  // half a second; a turn of speech does not start on a block boundary).
  const who = new Int16Array(frames);
  for (let t = 0; t < frames; t++) who[t] = path[Math.floor(t / block)];
  for (let b = 1; b < blocks; b++) {
    const p = path[b - 1];
    const q = path[b];
    if (p === q || p === none || q === none) continue;
    const lo = (b - 1) * block;
    const hi = Math.min(frames, (b + 1) * block);
    const cut = turnFrame(tracks[p].opening, tracks[q].opening, lo, hi, b * block);
    for (let t = lo; t < hi; t++) who[t] = t < cut ? p : q;
  }

  const boxes: (Box | undefined)[] = new Array<Box | undefined>(frames).fill(undefined);
  const chosenFrames = new Map<number, number>();
  for (let t = 0; t < frames; t++) {
    const k = who[t];
    if (k === none) continue;
    const tr = tracks[k];
    const box = nearestBox(tr, t, frames);
    if (!box) continue;
    boxes[t] = box;
    chosenFrames.set(tr.id, (chosenFrames.get(tr.id) ?? 0) + 1);
  }
  const changes: number[] = [];
  let current = none;
  for (let t = 0; t < frames; t++) {
    if (who[t] === none) continue;
    if (current !== none && who[t] !== current) changes.push(t);
    current = who[t];
  }
  return { boxes, chosenFrames, usedAudio, faces: tracks.length, switches, changes };
}

/**
 * Where, in [lo, hi), the mouth moving most passes from `from` to `to`: the cut that maximises how
 * much more `from` moves before it and `to` moves after it. `fallback` when neither was measured.
 */
function turnFrame(from: Float32Array, to: Float32Array, lo: number, hi: number, fallback: number): number {
  const step = (x: Float32Array, t: number) =>
    t > 0 && Number.isFinite(x[t]) && Number.isFinite(x[t - 1]) ? Math.abs(x[t] - x[t - 1]) : 0;
  // gain(c) = sum_{t<c} (from - to) + sum_{t>=c} (to - from) = total(to - from) + 2 * sum_{t<c} (from - to)
  let best = fallback;
  let bestGain = 0;
  let acc = 0;
  let fallbackAcc = 0;
  for (let c = lo; c <= hi; c++) {
    if (c === fallback) fallbackAcc = acc;
    if (c > lo && acc > bestGain) {
      bestGain = acc;
      best = c;
    }
    if (c < hi) acc += step(from, c) - step(to, c);
  }
  return bestGain > fallbackAcc ? best : fallback;
}

/** The track's box at frame t, else its nearest box within half a second. */
function nearestBox(tr: ScanTrack, t: number, frames: number): Box | undefined {
  for (let d = 0; d < 15; d++) {
    for (const u of [t - d, t + d]) {
      if (u < 0 || u >= frames || Number.isNaN(tr.boxes[4 * u])) continue;
      return [tr.boxes[4 * u], tr.boxes[4 * u + 1], tr.boxes[4 * u + 2], tr.boxes[4 * u + 3]];
    }
  }
  return undefined;
}
