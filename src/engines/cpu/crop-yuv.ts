// FaceMesh's input cropped straight from a yuv420p frame, for the face tracker: the same samples as
// `cropRotated` (image-ops.ts) takes from the frame's rgb24 conversion, with Y, U and V combined
// first and converted once per output pixel. The conversion is affine, so the result is the rgb
// path's up to rounding (and saturation of out-of-gamut colours), without converting the crop's
// whole footprint first: that footprint grows with the square of the crop, the samples do not.
import { cropAxes } from './image-ops.js';

/**
 * `cropRotated`'s bilinear sampling (crops up to twice the output) of a yuv420p frame: the four
 * pixels around each sample position weighted as there, each with its own chroma sample (nearest,
 * as yuvToRgb reads it).
 */
export function cropRotatedYuvBilinear(
  yuv: Uint8Array,
  width: number,
  height: number,
  cx: number,
  cy: number,
  size: number,
  angle: number,
  out: number,
  dest: Float32Array,
): Float32Array {
  const { ax, ay, bx, by, ox, oy } = cropAxes(cx, cy, size, angle, out);
  const cw = width >> 1;
  const uPlane = width * height;
  const vPlane = uPlane + cw * (height >> 1);
  const k = 1 / (255 * 256);
  for (let v = 0; v < out; v++) {
    let x = ox + v * bx;
    let y = oy + v * by;
    let o = v * out * 3;
    for (let u = 0; u < out; u++, x += ax, y += ay, o += 3) {
      const x0 = Math.floor(x);
      const y0 = Math.floor(y);
      if (x0 < 0 || y0 < 0 || x0 + 1 >= width || y0 + 1 >= height) {
        dest[o] = dest[o + 1] = dest[o + 2] = 0;
        continue;
      }
      const fx = x - x0;
      const fy = y - y0;
      const w00 = (1 - fx) * (1 - fy);
      const w10 = fx * (1 - fy);
      const w01 = (1 - fx) * fy;
      const w11 = fx * fy;
      const i00 = y0 * width + x0;
      const i01 = i00 + width;
      const ys = yuv[i00] * w00 + yuv[i00 + 1] * w10 + yuv[i01] * w01 + yuv[i01 + 1] * w11;
      // The chroma samples of the four pixels: rows y0 and y0 + 1, columns x0 and x0 + 1, halved.
      const ca = (y0 >> 1) * cw + (x0 >> 1);
      const cb = (y0 >> 1) * cw + ((x0 + 1) >> 1);
      const cc = ((y0 + 1) >> 1) * cw + (x0 >> 1);
      const cd = ((y0 + 1) >> 1) * cw + ((x0 + 1) >> 1);
      const us =
        yuv[uPlane + ca] * w00 + yuv[uPlane + cb] * w10 + yuv[uPlane + cc] * w01 + yuv[uPlane + cd] * w11;
      const vs =
        yuv[vPlane + ca] * w00 + yuv[vPlane + cb] * w10 + yuv[vPlane + cc] * w01 + yuv[vPlane + cd] * w11;
      // BT.601 limited range as yuvToRgb, in 1/256 steps.
      const c = 298 * (ys - 16) + 128;
      const d = us - 128;
      const e = vs - 128;
      const r = c + 409 * e;
      const g = c - 100 * d - 208 * e;
      const b = c + 516 * d;
      dest[o] = (r < 0 ? 0 : r > 65280 ? 65280 : r) * k;
      dest[o + 1] = (g < 0 ? 0 : g > 65280 ? 65280 : g) * k;
      dest[o + 2] = (b < 0 ? 0 : b > 65280 ? 65280 : b) * k;
    }
  }
  return dest;
}

/**
 * `cropRotated` of a yuv420p frame when the crop is more than twice the output: the same four taps
 * per output pixel, their Y, U and V averaged and converted to RGB once per output pixel (the
 * conversion is affine, so this is the average of the taps' colours except where a tap's colour
 * would saturate). Converting the whole footprint first would convert several times the pixels the
 * taps read, and converting each tap four times the pixels this converts. Smaller crops convert their
 * footprint into an rgb24 canvas and use `cropRotated` (see FaceTracker).
 */
export function cropRotatedYuvLarge(
  yuv: Uint8Array,
  width: number,
  height: number,
  cx: number,
  cy: number,
  size: number,
  angle: number,
  out: number,
  dest: Float32Array,
): Float32Array {
  const { ax, ay, bx, by, ox, oy } = cropAxes(cx, cy, size, angle, out);
  // The four taps' offsets, rounded as cropRotated rounds them (x + offset + 0.5, floored).
  const t0x = 0.25 * (ax + bx) + 0.5;
  const t0y = 0.25 * (ay + by) + 0.5;
  const t1x = 0.25 * (ax - bx) + 0.5;
  const t1y = 0.25 * (ay - by) + 0.5;
  const t2x = -0.25 * (ax + bx) + 0.5;
  const t2y = -0.25 * (ay + by) + 0.5;
  const t3x = -0.25 * (ax - bx) + 0.5;
  const t3y = -0.25 * (ay - by) + 0.5;
  const cw = width >> 1;
  const uPlane = width * height;
  const vPlane = uPlane + cw * (height >> 1);
  // Taps outside the frame count as black, as in cropRotated: each tap adds its RGB / 4.
  const k = 1 / (255 * 256 * 4);
  for (let v = 0; v < out; v++) {
    let x = ox + v * bx;
    let y = oy + v * by;
    let o = v * out * 3;
    for (let u = 0; u < out; u++, x += ax, y += ay, o += 3) {
      let n = 0;
      let ys = 0;
      let us = 0;
      let vs = 0;
      // The four taps, unrolled (a loop over them measured about an eighth slower).
      let xi = Math.floor(x + t0x);
      let yi = Math.floor(y + t0y);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const ci = (yi >> 1) * cw + (xi >> 1);
        ys += yuv[yi * width + xi];
        us += yuv[uPlane + ci];
        vs += yuv[vPlane + ci];
        n++;
      }
      xi = Math.floor(x + t1x);
      yi = Math.floor(y + t1y);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const ci = (yi >> 1) * cw + (xi >> 1);
        ys += yuv[yi * width + xi];
        us += yuv[uPlane + ci];
        vs += yuv[vPlane + ci];
        n++;
      }
      xi = Math.floor(x + t2x);
      yi = Math.floor(y + t2y);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const ci = (yi >> 1) * cw + (xi >> 1);
        ys += yuv[yi * width + xi];
        us += yuv[uPlane + ci];
        vs += yuv[vPlane + ci];
        n++;
      }
      xi = Math.floor(x + t3x);
      yi = Math.floor(y + t3y);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const ci = (yi >> 1) * cw + (xi >> 1);
        ys += yuv[yi * width + xi];
        us += yuv[uPlane + ci];
        vs += yuv[vPlane + ci];
        n++;
      }
      if (n === 0) {
        dest[o] = 0;
        dest[o + 1] = 0;
        dest[o + 2] = 0;
        continue;
      }
      // BT.601 limited range as yuvToRgb, on the taps' means, in 1/256 steps; times n/4 for the taps
      // outside the frame.
      const c = 298 * (ys / n - 16) + 128;
      const d = us / n - 128;
      const e = vs / n - 128;
      const r = c + 409 * e;
      const g = c - 100 * d - 208 * e;
      const b = c + 516 * d;
      dest[o] = (r < 0 ? 0 : r > 65280 ? 65280 : r) * n * k;
      dest[o + 1] = (g < 0 ? 0 : g > 65280 ? 65280 : g) * n * k;
      dest[o + 2] = (b < 0 ? 0 : b > 65280 ? 65280 : b) * n * k;
    }
  }
  return dest;
}
