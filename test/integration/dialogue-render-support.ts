// Media measurements for the dialogue tests: decoded frames, PSNR, loudness envelopes, draft word times.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { SourceWord } from '../../src/speech/dialogue/index.js';

const run = promisify(execFile);

/** Word times of a recording by pocketsphinx recognition (a draft transcript, as the service makes). */
export async function recognize(wav: string): Promise<SourceWord[]> {
  const { stdout } = await run('pocketsphinx_continuous', [
    '-infile',
    wav,
    '-time',
    'yes',
    '-logfn',
    '/dev/null',
  ]);
  return stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 4 && /^[a-z']+(\(\d+\))?$/.test(f[0]))
    .map((f, i) => ({
      id: `w${i}`,
      text: f[0].replace(/\(\d+\)$/, ''),
      startMs: Math.round(Number(f[1]) * 1000),
      endMs: Math.round(Number(f[2]) * 1000),
    }));
}

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
