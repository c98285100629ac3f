// Media measurements for the dialogue-render tests: decoded frames, PSNR, loudness envelopes.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One decoded frame (rgb24) at `seconds`, scaled to `width` x `height`. */
export async function frameAt(path: string, seconds: number, width: number, height: number): Promise<Buffer> {
  const r = await run(
    'ffmpeg',
    [
      ...['-v', 'error', '-ss', seconds.toFixed(4), '-i', path, '-frames:v', '1'],
      ...['-vf', `scale=${width}:${height}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 64 << 20 },
  );
  return r.stdout;
}

/** PSNR (dB) of two rgb24 frames over rows [y0, y1) and columns [x0, x1). */
export function psnr(a: Buffer, b: Buffer, width: number, box?: [number, number, number, number]): number {
  const rows = a.length / 3 / width;
  const [x0, y0, x1, y1] = box ?? [0, 0, width, rows];
  let se = 0;
  let n = 0;
  for (let y = y0; y < y1; y++)
    for (let i = (y * width + x0) * 3; i < (y * width + x1) * 3; i++) {
      se += (a[i] - b[i]) ** 2;
      n++;
    }
  const mse = se / n;
  return mse === 0 ? 99 : 10 * Math.log10((255 * 255) / mse);
}

/** RMS per 20 ms of the first audio stream, decoded to mono 16 kHz. */
export async function envelope(path: string): Promise<number[]> {
  const r = await run(
    'ffmpeg',
    ['-v', 'error', '-i', path, '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-f', 's16le', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 256 << 20 },
  );
  const pcm = new Int16Array(r.stdout.buffer, r.stdout.byteOffset, r.stdout.length >> 1);
  const out: number[] = [];
  for (let i = 0; i + 320 <= pcm.length; i += 320) {
    let s = 0;
    for (let k = i; k < i + 320; k++) s += pcm[k] * pcm[k];
    out.push(Math.sqrt(s / 320));
  }
  return out;
}

/** Pearson correlation of two series over their common length. */
export function correlation(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  const mean = (x: number[]) => x.slice(0, n).reduce((s, v) => s + v, 0) / n;
  const [ma, mb] = [mean(a), mean(b)];
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  return sab / Math.sqrt(saa * sbb);
}

/** The lowest PSNR of any `size` x `size` block: a local change (a redrawn mouth) shows here. */
export function worstBlockPsnr(a: Buffer, b: Buffer, width: number, size = 32): number {
  const rows = a.length / 3 / width;
  let worst = 99;
  for (let y = 0; y + size <= rows; y += size / 2)
    for (let x = 0; x + size <= width; x += size / 2)
      worst = Math.min(worst, psnr(a, b, width, [x, y, x + size, y + size]));
  return worst;
}

/**
 * A 64-bit difference hash (dHash) of an rgb24 frame: grey means of a 9x8 grid, one bit per
 * left-to-right step. Frames that look the same hash the same, whatever the encoder did to the pixels.
 */
export function dHash(frame: Buffer, width: number): bigint {
  const height = frame.length / 3 / width;
  const cells = new Float64Array(9 * 8);
  const counts = new Float64Array(9 * 8);
  for (let y = 0; y < height; y++) {
    const cy = Math.min(7, Math.floor((y * 8) / height));
    for (let x = 0; x < width; x++) {
      const cx = Math.min(8, Math.floor((x * 9) / width));
      const i = (y * width + x) * 3;
      cells[cy * 9 + cx] += 0.299 * frame[i] + 0.587 * frame[i + 1] + 0.114 * frame[i + 2];
      counts[cy * 9 + cx]++;
    }
  }
  let h = 0n;
  for (let y = 0; y < 8; y++)
    for (let x = 0; x < 8; x++) {
      const left = cells[y * 9 + x] / counts[y * 9 + x];
      const right = cells[y * 9 + x + 1] / counts[y * 9 + x + 1];
      h = (h << 1n) | (left < right ? 1n : 0n);
    }
  return h;
}

/** Bits in which two hashes differ. */
export function hammingDistance(a: bigint, b: bigint): number {
  let d = a ^ b;
  let n = 0;
  while (d) {
    n += Number(d & 1n);
    d >>= 1n;
  }
  return n;
}
