// yuv420p frames (the decoder's and the encoder's own format) and the rgb24 canvas the engine draws
// on: only the rectangles the engine reads or re-draws are converted, so the rest of a frame goes
// from decoder to encoder untouched, with no colour conversion in either ffmpeg (issue 15: the two
// rgb24 conversions cost about as much CPU as the whole re-encode at 720p). BT.601, limited range,
// as ffmpeg's own conversion of untagged video, in fixed point.

/** Bytes of a yuv420p frame: a full-size luma plane and two quarter-size chroma planes. */
export function yuvFrameBytes(width: number, height: number): number {
  return width * height + 2 * (width / 2) * (height / 2);
}

export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** The rectangle clipped to the frame and widened to even corners (whole chroma samples). */
export function evenRect(r: Rect, width: number, height: number): Rect | null {
  const x0 = Math.max(0, Math.floor(r.x0) & ~1);
  const y0 = Math.max(0, Math.floor(r.y0) & ~1);
  const x1 = Math.min(width, (Math.ceil(r.x1) + 1) & ~1);
  const y1 = Math.min(height, (Math.ceil(r.y1) + 1) & ~1);
  return x0 < x1 && y0 < y1 ? { x0, y0, x1, y1 } : null;
}

/**
 * Converts a rectangle of a yuv420p frame into the same pixels of an rgb24 canvas of the frame's
 * size (`rgb` is written through a clamped view, so values saturate). Integer arithmetic in 1/256
 * steps: the usual fixed-point BT.601 coefficients.
 */
export function yuvToRgb(
  yuv: Uint8Array,
  width: number,
  height: number,
  rgb: Uint8ClampedArray,
  rect: Rect,
): void {
  const r = evenRect(rect, width, height);
  if (!r) return;
  const cw = width >> 1;
  const uPlane = width * height;
  const vPlane = uPlane + cw * (height >> 1);
  for (let y = r.y0; y < r.y1; y++) {
    const row = y * width;
    const crow = uPlane + (y >> 1) * cw;
    const vrow = vPlane + (y >> 1) * cw;
    let o = (row + r.x0) * 3;
    // Two pixels per chroma sample.
    for (let x = r.x0; x < r.x1; x += 2, o += 6) {
      const ci = x >> 1;
      const d = yuv[crow + ci] - 128;
      const e = yuv[vrow + ci] - 128;
      const rv = 409 * e + 128;
      const gv = -100 * d - 208 * e + 128;
      const bv = 516 * d + 128;
      const c0 = 298 * (yuv[row + x] - 16);
      rgb[o] = (c0 + rv) >> 8;
      rgb[o + 1] = (c0 + gv) >> 8;
      rgb[o + 2] = (c0 + bv) >> 8;
      const c1 = 298 * (yuv[row + x + 1] - 16);
      rgb[o + 3] = (c1 + rv) >> 8;
      rgb[o + 4] = (c1 + gv) >> 8;
      rgb[o + 5] = (c1 + bv) >> 8;
    }
  }
}

/** A value clamped to a byte (for sums of converted pixels that no clamped array stores). */
export function clamp8(x: number): number {
  return x < 0 ? 0 : x > 255 ? 255 : x;
}

/**
 * Writes a rectangle of the rgb24 canvas back into the yuv420p frame: luma per pixel, chroma from the
 * sum of each 2x2 block (the rectangle is widened to even corners).
 */
export function rgbToYuv(
  rgb: Uint8Array,
  width: number,
  height: number,
  yuv: Uint8ClampedArray,
  rect: Rect,
): void {
  const r = evenRect(rect, width, height);
  if (!r) return;
  const cw = width >> 1;
  const uPlane = width * height;
  const vPlane = uPlane + cw * (height >> 1);
  for (let y = r.y0; y < r.y1; y += 2) {
    const row0 = y * width;
    const row1 = row0 + width;
    const crow = (y >> 1) * cw;
    for (let x = r.x0; x < r.x1; x += 2) {
      let rs = 0;
      let gs = 0;
      let bs = 0;
      for (let k = 0; k < 4; k++) {
        const p = (k < 2 ? row0 : row1) + x + (k & 1);
        const i = p * 3;
        const R = rgb[i];
        const G = rgb[i + 1];
        const B = rgb[i + 2];
        yuv[p] = ((66 * R + 129 * G + 25 * B + 128) >> 8) + 16;
        rs += R;
        gs += G;
        bs += B;
      }
      const ci = crow + (x >> 1);
      yuv[uPlane + ci] = ((-38 * rs - 74 * gs + 112 * bs + 512) >> 10) + 128;
      yuv[vPlane + ci] = ((112 * rs - 94 * gs - 18 * bs + 512) >> 10) + 128;
    }
  }
}

/** A clamped view of the same bytes (writes round and saturate instead of wrapping). */
export function clamped(a: Uint8Array): Uint8ClampedArray {
  return new Uint8ClampedArray(a.buffer, a.byteOffset, a.length);
}
