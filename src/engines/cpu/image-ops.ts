// Small pixel helpers over rgb24 buffers (width*height*3 bytes, row-major): a box downscale for the
// detector and a rotated, scaled crop into the FaceMesh input. Tight loops over typed arrays only.

export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Downscales by an integer factor (box average); factor 1 returns the image itself. */
export function downscale(img: RgbImage, factor: number): RgbImage {
  const f = Math.max(1, Math.floor(factor));
  if (f === 1) return img;
  const w = Math.floor(img.width / f);
  const h = Math.floor(img.height / f);
  const out = new Uint8Array(w * h * 3);
  const src = img.data;
  const stride = img.width * 3;
  const area = f * f;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let dy = 0; dy < f; dy++) {
        let i = (y * f + dy) * stride + x * f * 3;
        for (let dx = 0; dx < f; dx++, i += 3) {
          r += src[i];
          g += src[i + 1];
          b += src[i + 2];
        }
      }
      const o = (y * w + x) * 3;
      out[o] = r / area;
      out[o + 1] = g / area;
      out[o + 2] = b / area;
    }
  }
  return { data: out, width: w, height: h };
}

/**
 * Where the output pixels of a rotated square crop lie in the image: output pixel (u, v) samples
 * image position (ox + u * ax + v * bx, oy + u * ay + v * by), at pixel centres; `step` is the crop's
 * size over the output's. Shared by every crop kernel (here and crop-yuv.ts), which must sample alike.
 */
export function cropAxes(cx: number, cy: number, size: number, angle: number, out: number) {
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const step = size / out;
  const ax = cos * step;
  const ay = sin * step;
  const bx = -sin * step;
  const by = cos * step;
  const ox = cx - (size / 2) * (cos - sin) + (ax + bx) / 2 - 0.5;
  const oy = cy - (size / 2) * (sin + cos) + (ay + by) / 2 - 0.5;
  return { step, ax, ay, bx, by, ox, oy };
}

/**
 * A square crop of side `size` pixels centred on (cx, cy), rotated by `angle` radians (the crop's x
 * axis points along (cos a, sin a) in the image), resampled to out x out float RGB in 0..1 (HWC).
 * Pixels outside the image are black. Bilinear sampling when the crop is at most twice the output;
 * larger crops average a 2x2 grid of nearest pixels per output pixel instead (cheaper, no aliasing
 * to speak of at that reduction).
 */
export function cropRotated(
  img: RgbImage,
  cx: number,
  cy: number,
  size: number,
  angle: number,
  out: number,
  dest?: Float32Array,
): Float32Array {
  const res = dest ?? new Float32Array(out * out * 3);
  const { data, width, height } = img;
  const { step, ax, ay, bx, by, ox, oy } = cropAxes(cx, cy, size, angle, out);
  const inv = 1 / 255;
  if (step <= 2) {
    for (let v = 0; v < out; v++) {
      let x = ox + v * bx;
      let y = oy + v * by;
      let o = v * out * 3;
      for (let u = 0; u < out; u++, x += ax, y += ay, o += 3) {
        const x0 = Math.floor(x);
        const y0 = Math.floor(y);
        if (x0 < 0 || y0 < 0 || x0 + 1 >= width || y0 + 1 >= height) {
          res[o] = res[o + 1] = res[o + 2] = 0;
          continue;
        }
        const fx = x - x0;
        const fy = y - y0;
        const i00 = (y0 * width + x0) * 3;
        const i01 = i00 + width * 3;
        const w00 = (1 - fx) * (1 - fy);
        const w10 = fx * (1 - fy);
        const w01 = (1 - fx) * fy;
        const w11 = fx * fy;
        res[o] = (data[i00] * w00 + data[i00 + 3] * w10 + data[i01] * w01 + data[i01 + 3] * w11) * inv;
        res[o + 1] =
          (data[i00 + 1] * w00 + data[i00 + 4] * w10 + data[i01 + 1] * w01 + data[i01 + 4] * w11) * inv;
        res[o + 2] =
          (data[i00 + 2] * w00 + data[i00 + 5] * w10 + data[i01 + 2] * w01 + data[i01 + 5] * w11) * inv;
      }
    }
    return res;
  }
  // Four nearest pixels at (+-1/4, +-1/4) of the output pixel's footprint.
  const dxa = 0.25 * (ax + bx);
  const dya = 0.25 * (ay + by);
  const dxb = 0.25 * (ax - bx);
  const dyb = 0.25 * (ay - by);
  const inv4 = inv / 4;
  const stride = width * 3;
  // The four taps inlined (a closure per tap cost more than the arithmetic): the nearest pixel of
  // each, or nothing when it falls outside the image.
  for (let v = 0; v < out; v++) {
    let x = ox + v * bx;
    let y = oy + v * by;
    let o = v * out * 3;
    for (let u = 0; u < out; u++, x += ax, y += ay, o += 3) {
      let r = 0;
      let g = 0;
      let b = 0;
      let xi = Math.floor(x + dxa + 0.5);
      let yi = Math.floor(y + dya + 0.5);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const i = yi * stride + xi * 3;
        r += data[i];
        g += data[i + 1];
        b += data[i + 2];
      }
      xi = Math.floor(x - dxa + 0.5);
      yi = Math.floor(y - dya + 0.5);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const i = yi * stride + xi * 3;
        r += data[i];
        g += data[i + 1];
        b += data[i + 2];
      }
      xi = Math.floor(x + dxb + 0.5);
      yi = Math.floor(y + dyb + 0.5);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const i = yi * stride + xi * 3;
        r += data[i];
        g += data[i + 1];
        b += data[i + 2];
      }
      xi = Math.floor(x - dxb + 0.5);
      yi = Math.floor(y - dyb + 0.5);
      if (xi >= 0 && yi >= 0 && xi < width && yi < height) {
        const i = yi * stride + xi * 3;
        r += data[i];
        g += data[i + 1];
        b += data[i + 2];
      }
      res[o] = r * inv4;
      res[o + 1] = g * inv4;
      res[o + 2] = b * inv4;
    }
  }
  return res;
}
