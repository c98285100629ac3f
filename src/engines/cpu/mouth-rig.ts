// The mouth rig: which part of the face is re-drawn and how its landmarks move to a target mouth shape.
//
// Topology (fixed for a job, so the warp is stable from frame to frame): the FaceMesh triangles of the
// lower face (below the nose, between the cheeks), a strip of triangles from the jaw line out to a ring
// of virtual points under the chin (so a jaw that moves up or down stretches the neck region instead of
// leaving a double chin), and the mouth opening (the mesh has a hole there) triangulated by columns.
//
// Motion, per frame: the source lips are "closed" column by column (the measured inner-lip gap is
// removed, the upper lip taking `UPPER_SHARE` of the motion and the jaw the rest) and opened again to
// the target gap from the audio, with an elliptical profile from corner to corner; the mouth width is
// set from the face's running neutral width and the spread/round parameters; the chin follows the jaw.
// Every other vertex of the region gets a harmonic (membrane) interpolation of those motions, with the
// region's border fixed, so the warp fades to nothing at its edge.
import {
  CORNER_INNER,
  CORNER_OUTER,
  FACE_OVAL,
  LIPS,
  NOSE_BOTTOM,
  NOSE_TIP,
  interocular,
} from './landmarks.js';

export interface MouthParams {
  open: number;
  width: number;
  round: number;
}

/** Extra margins (pixels) around the re-drawn region: [top, bottom, left, right] (the API's `pads`). */
export type Pads = [number, number, number, number];

export interface RigTopology {
  /** Mesh vertices (468) plus the virtual ring under the chin. */
  vertexCount: number;
  /** Warped triangles (vertex ids, 3 per triangle). */
  triangles: Uint32Array;
  /** Triangles of the mouth opening. */
  cavity: Uint32Array;
  /** 0 free (interpolated), 1 fixed at zero motion (region border, ring), 2 driven (lips, jaw). */
  role: Uint8Array;
  /** Vertices of the region (mesh ids and ring ids). */
  vertices: Uint32Array;
  /** Neighbour lists (CSR) for the harmonic interpolation. */
  neighbourStart: Uint32Array;
  neighbours: Uint32Array;
  /** Jaw line under the mouth (mesh ids, left to right) and, for each, its ring vertex id. */
  jaw: number[];
  ring: number[];
  /** Per-vertex attributes of the mouth opening: 0 at the upper inner lip, 1 at the lower, 0.5 at the corners. */
  cavityDepth: Float32Array;
  /** And across it: -1 at the left corner, 0 in the middle, 1 at the right corner. */
  cavityAcross: Float32Array;
}

export const FIXED = 1;
export const DRIVEN = 2;

const UPPER_RINGS = [LIPS.upperOuter, LIPS.upperSemiOuter, LIPS.upperSemiInner, LIPS.upperInner];
const LOWER_RINGS = [LIPS.lowerOuter, LIPS.lowerSemiOuter, LIPS.lowerSemiInner, LIPS.lowerInner];

/** Share of an opening change taken by the upper lip (the jaw and lower lip take the rest). */
const UPPER_SHARE = 0.3;
/** How much more open a parted source mouth is taken to be than its landmarks say. */
const SOURCE_GAP_GAIN = 1.15;
const SOURCE_GAP_BIAS = 0.008;

/**
 * Builds the rig topology from the mesh triangulation and the canonical UV layout of its vertices.
 * `topUv` is how far above the nose base (in UV units) the region reaches (0 = at the nose base).
 */
export function buildTopology(
  triangulation: readonly number[],
  uv: readonly (readonly [number, number])[],
  topUv = 0,
): RigTopology {
  const meshCount = uv.length;
  const vTop = uv[NOSE_BOTTOM][1] + 0.012 - topUv;
  const inRegion = new Uint8Array(meshCount);
  for (let i = 0; i < meshCount; i++) {
    const [u, v] = uv[i];
    if (v >= vTop && Math.abs(u - 0.5) <= 0.4) inRegion[i] = 1;
  }
  const tris: number[] = [];
  const touchedOutside = new Uint8Array(meshCount);
  for (let t = 0; t < triangulation.length; t += 3) {
    const a = triangulation[t];
    const b = triangulation[t + 1];
    const c = triangulation[t + 2];
    const n = inRegion[a] + inRegion[b] + inRegion[c];
    if (n === 3) tris.push(a, b, c);
    else if (n > 0) for (const v of [a, b, c]) touchedOutside[v] = 1;
  }
  const used = new Uint8Array(meshCount);
  for (const v of tris) used[v] = 1;

  // The jaw line (face outline) inside the region, left to right, and its ring.
  const ovalLower = FACE_OVAL.slice(FACE_OVAL.indexOf(361), FACE_OVAL.indexOf(132) + 1).reverse();
  const jaw = ovalLower.filter((v) => used[v]);
  const ring = jaw.map((_, k) => meshCount + k);
  const vertexCount = meshCount + ring.length;
  for (let k = 0; k + 1 < jaw.length; k++) {
    tris.push(jaw[k], jaw[k + 1], ring[k]);
    tris.push(jaw[k + 1], ring[k + 1], ring[k]);
  }

  // Drawing order: skin, then the lower lip, then the upper lip, so where a closing mouth presses the
  // lips together the upper lip lies over the lower one along a clean seam.
  const upperLip = new Set<number>(UPPER_RINGS.flat());
  const lowerLip = new Set<number>(LOWER_RINGS.flat());
  const layer = (t: number) =>
    upperLip.has(tris[t]) || upperLip.has(tris[t + 1]) || upperLip.has(tris[t + 2])
      ? 2
      : lowerLip.has(tris[t]) || lowerLip.has(tris[t + 1]) || lowerLip.has(tris[t + 2])
        ? 1
        : 0;
  const ordered: number[] = [];
  for (const want of [0, 1, 2])
    for (let t = 0; t < tris.length; t += 3)
      if (layer(t) === want) ordered.push(tris[t], tris[t + 1], tris[t + 2]);
  tris.length = 0;
  tris.push(...ordered);

  const role = new Uint8Array(vertexCount);
  for (let i = 0; i < meshCount; i++) if (used[i] && touchedOutside[i]) role[i] = FIXED;
  for (const r of ring) role[r] = FIXED;
  for (const ringArr of [...UPPER_RINGS, ...LOWER_RINGS]) for (const v of ringArr) role[v] = DRIVEN;
  for (let k = 1; k + 1 < jaw.length; k++) role[jaw[k]] = DRIVEN;
  if (jaw.length) {
    role[jaw[0]] = FIXED;
    role[jaw[jaw.length - 1]] = FIXED;
  }

  // The mouth opening, column by column between the inner lips.
  const up = LIPS.upperInner;
  const lo = LIPS.lowerInner;
  const cav: number[] = [CORNER_INNER[0], up[0], lo[1]];
  for (let j = 0; j + 1 < up.length; j++) {
    cav.push(up[j], up[j + 1], lo[j + 2]);
    cav.push(up[j], lo[j + 2], lo[j + 1]);
  }
  cav.push(up[up.length - 1], CORNER_INNER[1], lo[lo.length - 2]);
  const cavityDepth = new Float32Array(vertexCount);
  for (const v of up) cavityDepth[v] = 0;
  for (const v of lo) cavityDepth[v] = 1;
  cavityDepth[CORNER_INNER[0]] = 0.5;
  cavityDepth[CORNER_INNER[1]] = 0.5;
  const cavityAcross = new Float32Array(vertexCount);
  const half = (up.length + 1) / 2;
  for (let j = 0; j < up.length; j++) {
    cavityAcross[up[j]] = (j + 1 - half) / half;
    cavityAcross[lo[j + 1]] = (j + 1 - half) / half;
  }
  cavityAcross[CORNER_INNER[0]] = -1;
  cavityAcross[CORNER_INNER[1]] = 1;

  const vertices: number[] = [];
  for (let i = 0; i < meshCount; i++) if (used[i]) vertices.push(i);
  vertices.push(...ring);

  const adj: Set<number>[] = Array.from({ length: vertexCount }, () => new Set<number>());
  for (let t = 0; t < tris.length; t += 3) {
    const a = tris[t];
    const b = tris[t + 1];
    const c = tris[t + 2];
    adj[a].add(b).add(c);
    adj[b].add(a).add(c);
    adj[c].add(a).add(b);
  }
  const neighbourStart = new Uint32Array(vertexCount + 1);
  for (let i = 0; i < vertexCount; i++) neighbourStart[i + 1] = neighbourStart[i] + adj[i].size;
  const neighbours = new Uint32Array(neighbourStart[vertexCount]);
  for (let i = 0; i < vertexCount; i++) neighbours.set([...adj[i]], neighbourStart[i]);

  return {
    vertexCount,
    triangles: Uint32Array.from(tris),
    cavity: Uint32Array.from(cav),
    role,
    vertices: Uint32Array.from(vertices),
    neighbourStart,
    neighbours,
    jaw,
    ring,
    cavityDepth,
    cavityAcross,
  };
}

/** One frame's warp: where every rig vertex is in the source and where it goes. */
export interface WarpGeometry {
  topology: RigTopology;
  src: Float32Array;
  dst: Float32Array;
  /** Blend weight per vertex (0 at the region's border). */
  alpha: Float32Array;
  /** Source and target inner-lip gap at the mouth's centre, pixels. */
  sourceGap: number;
  targetGap: number;
  /** Target mouth width (outer corners), pixels. */
  mouthWidth: number;
  /** Face scale (inter-ocular distance), pixels. */
  scale: number;
  /** Unit vector down the face (from the upper lip towards the chin). */
  down: [number, number];
  /** Bounding box of everything touched, [x0, y0, x1, y1] (pixels, unclipped). */
  bounds: [number, number, number, number];
}

export interface MouthRigOptions {
  fps: number;
  pads?: Pads | null;
  /** The widest opening (open = 1) as a fraction of the neutral mouth width (default 0.5). */
  maxOpening?: number;
  /**
   * How far `width` and `round` move the mouth corners, as a multiple of the default range (default 1:
   * +12 % spread, -30 % narrowed and rounded, never under 0.75 of the present width). The phoneme
   * path, whose rounded and spread targets are deliberate, asks for more (`PHONEME_SHAPE_RANGE`).
   */
  shapeRange?: number;
}

function smoothstep(e0: number, e1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - e0) / (e1 - e0)));
  return t * t * (3 - 2 * t);
}

export class MouthRig {
  private neutralWidth = 0;
  private readonly disp: Float32Array;
  private readonly pads: Pads;

  constructor(
    readonly topology: RigTopology,
    private readonly opts: MouthRigOptions,
  ) {
    this.disp = new Float32Array(topology.vertexCount * 2);
    this.pads = opts.pads ?? [0, 0, 0, 0];
  }

  /** Forgets the running neutral width (a new face). */
  reset(): void {
    this.neutralWidth = 0;
    this.disp.fill(0);
  }

  /**
   * The warp for one frame: `points` are the face's 468 landmarks, `target` the mouth shape, `weight`
   * (0..1) how far to go from the source mouth to the target (0 = identity).
   */
  deform(points: Float32Array, target: MouthParams, weight: number): WarpGeometry {
    const topo = this.topology;
    const n = topo.vertexCount;
    const P = (i: number) => [points[2 * i], points[2 * i + 1]] as const;
    const scale = Math.max(1, interocular(points));
    const [c0x, c0y] = P(CORNER_INNER[0]);
    const [c1x, c1y] = P(CORNER_INNER[1]);
    const ox = (c0x + c1x) / 2;
    const oy = (c0y + c1y) / 2;
    let ex = c1x - c0x;
    let ey = c1y - c0y;
    const innerHalf = Math.max(1, Math.hypot(ex, ey) / 2);
    ex /= innerHalf * 2;
    ey /= innerHalf * 2;
    // Down the face (towards the chin).
    const nx = -ey;
    const ny = ex;
    const along = (x: number, y: number) => (x - ox) * ex + (y - oy) * ey;
    const across = (x: number, y: number) => (x - ox) * nx + (y - oy) * ny;

    const [o0x, o0y] = P(CORNER_OUTER[0]);
    const [o1x, o1y] = P(CORNER_OUTER[1]);
    const outerHalf = Math.max(1, Math.hypot(o1x - o0x, o1y - o0y) / 2);
    const ratio = outerHalf / scale;
    const k = 1 - Math.exp(-1 / (2 * this.opts.fps));
    this.neutralWidth = this.neutralWidth === 0 ? ratio : this.neutralWidth + k * (ratio - this.neutralWidth);
    const neutralHalf = this.neutralWidth * scale;
    const range = this.opts.shapeRange ?? 1;
    const targetHalf = neutralHalf * (1 + range * 0.12 * target.width - range * 0.18 * target.round);
    const widthScale = Math.min(1.3, Math.max(1 - 0.25 * range, targetHalf / outerHalf));
    const maxGap = (this.opts.maxOpening ?? 0.5) * 2 * neutralHalf;
    const targetCentre = Math.max(0, Math.min(1, target.open)) * maxGap;
    const power = 0.7 - 0.4 * Math.max(0, Math.min(1, target.round));

    // Column by column: source gap, target gap, change.
    const up = LIPS.upperInner;
    const lo = LIPS.lowerInner;
    const delta = new Float32Array(up.length);
    let sourceGap = 0;
    let targetGap = 0;
    for (let j = 0; j < up.length; j++) {
      const [ux, uy] = P(up[j]);
      const [lx, ly] = P(lo[j + 1]);
      const gap = Math.max(0, across(lx, ly) - across(ux, uy));
      const xm = along((ux + lx) / 2, (uy + ly) / 2) / innerHalf;
      const prof = Math.pow(Math.max(0, 1 - xm * xm), power);
      const t = targetCentre * prof;
      // The landmarks under-read a parted mouth a little (and trail it when it moves fast): when the
      // target is (nearly) closed, take a parted source mouth as slightly more open than measured, so
      // closing it leaves no slit.
      const under =
        gap > 0.02 * scale
          ? (gap * (SOURCE_GAP_GAIN - 1) + SOURCE_GAP_BIAS * scale) * Math.max(0, 1 - t / (0.1 * scale))
          : 0;
      delta[j] = (t - gap - under) * weight;
      if (j === (up.length - 1) / 2) {
        sourceGap = gap;
        targetGap = Math.max(0, gap + delta[j]);
      }
    }
    const centre = delta[(up.length - 1) / 2];

    const d = this.disp;
    const role = topo.role;
    // Driven vertices: lips and jaw.
    const setDriven = (v: number, dAlong: number, dAcross: number) => {
      d[2 * v] = dAlong * ex + dAcross * nx;
      d[2 * v + 1] = dAlong * ey + dAcross * ny;
    };
    const stretch = (v: number) => (widthScale - 1) * along(points[2 * v], points[2 * v + 1]) * weight;
    // The inner lip points of a column are brought to the same place along the mouth, so that a closed
    // target leaves no zig-zag of uncovered pixels between the lips.
    const align = (v: number, other: number) =>
      weight *
      ((along(points[2 * other], points[2 * other + 1]) - along(points[2 * v], points[2 * v + 1])) / 2);
    for (const ringArr of UPPER_RINGS) {
      for (let j = 0; j < ringArr.length; j++) {
        const v = ringArr[j];
        const a = ringArr === LIPS.upperInner ? align(v, lo[j + 1]) : 0;
        setDriven(v, stretch(v) + a, -UPPER_SHARE * delta[j]);
      }
    }
    for (const ringArr of LOWER_RINGS) {
      for (let i = 0; i < ringArr.length; i++) {
        const v = ringArr[i];
        const corner = i === 0 || i === ringArr.length - 1;
        const dy = corner ? 0.15 * (1 - UPPER_SHARE) * centre : (1 - UPPER_SHARE) * delta[i - 1];
        const a = ringArr === LIPS.lowerInner && !corner ? align(v, up[i - 1]) : 0;
        setDriven(v, stretch(v) + a, dy);
      }
    }
    const jawDrop = (1 - UPPER_SHARE) * centre;
    for (let q = 1; q + 1 < topo.jaw.length; q++) {
      const v = topo.jaw[q];
      const xn = Math.abs(along(points[2 * v], points[2 * v + 1])) / scale;
      setDriven(v, 0, jawDrop * (1 - smoothstep(0.45, 1.3, xn)));
    }

    // Source positions (the ring from the jaw line, pushed away from the nose).
    const src = new Float32Array(n * 2);
    src.set(points.subarray(0, Math.min(points.length, 2 * (n - topo.ring.length))));
    const [noseX, noseY] = P(NOSE_TIP);
    const [, padBottom, padLeft, padRight] = this.pads;
    for (let q = 0; q < topo.jaw.length; q++) {
      const v = topo.jaw[q];
      const r = topo.ring[q];
      const vx = points[2 * v] - noseX;
      const vy = points[2 * v + 1] - noseY;
      const len = Math.max(1e-3, Math.hypot(vx, vy));
      const side = along(points[2 * v], points[2 * v + 1]) < 0 ? padLeft : padRight;
      const m = 0.9 * scale + padBottom * Math.max(0, vy / len) + side * Math.abs(vx / len);
      src[2 * r] = points[2 * v] + (vx / len) * m;
      src[2 * r + 1] = points[2 * v + 1] + (vy / len) * m;
    }

    // Harmonic interpolation of the free vertices (Gauss-Seidel, warm-started from the last frame).
    for (const v of topo.vertices) if (role[v] === FIXED) d[2 * v] = d[2 * v + 1] = 0;
    const { neighbourStart, neighbours } = topo;
    for (let it = 0; it < 40; it++) {
      for (const v of topo.vertices) {
        if (role[v] !== 0) continue;
        let sx = 0;
        let sy = 0;
        const a = neighbourStart[v];
        const b = neighbourStart[v + 1];
        for (let e = a; e < b; e++) {
          const w = neighbours[e];
          sx += d[2 * w];
          sy += d[2 * w + 1];
        }
        d[2 * v] = sx / (b - a);
        d[2 * v + 1] = sy / (b - a);
      }
    }

    const dst = Float32Array.from(src);
    for (const v of topo.vertices) {
      dst[2 * v] = src[2 * v] + d[2 * v];
      dst[2 * v + 1] = src[2 * v + 1] + d[2 * v + 1];
    }
    const alpha = new Float32Array(n);
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    for (const v of topo.vertices) {
      alpha[v] = role[v] === FIXED ? 0 : 1;
      for (const [x, y] of [
        [src[2 * v], src[2 * v + 1]],
        [dst[2 * v], dst[2 * v + 1]],
      ]) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
    return {
      topology: topo,
      src,
      dst,
      alpha,
      sourceGap,
      targetGap,
      mouthWidth: 2 * targetHalf,
      scale,
      down: [nx, ny],
      bounds: [x0, y0, x1, y1],
    };
  }
}
