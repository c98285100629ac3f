// Sample-level helpers for splicing: reading a WAV into memory as mono 16-bit samples, writing one,
// levels, and finding the quietest point near a cut.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { readWavInfo } from '../local-wav.js';

export interface Pcm {
  samples: Int16Array;
  sampleRate: number;
}

/**
 * Reads a WAV as mono 16-bit samples. A mono 16-bit PCM file is read as it is (so untouched parts of
 * the preview are the source's own samples); anything else is converted by ffmpeg at its own rate.
 */
export async function readPcm(
  path: string,
  opts: { workDir: string; signal?: AbortSignal; rate?: number },
): Promise<Pcm> {
  let file = path;
  const info = await readWavInfo(path).catch(() => null);
  const usable =
    info && info.channels === 1 && info.bitsPerSample === 16 && (!opts.rate || info.sampleRate === opts.rate);
  if (!usable) {
    file = join(opts.workDir, `pcm-${randomUUID().slice(0, 8)}.wav`);
    const rate = opts.rate ? ['-ar', String(opts.rate)] : [];
    await runFfmpeg(['-i', path, '-vn', '-ac', '1', ...rate, '-c:a', 'pcm_s16le', file], {
      signal: opts.signal,
      timeoutMs: 120_000,
    });
  }
  const w = await readWavInfo(file);
  const buf = await readFile(file);
  const n = Math.floor(w.dataBytes / 2);
  const samples = new Int16Array(n);
  for (let i = 0; i < n; i++) samples[i] = buf.readInt16LE(w.dataOffset + 2 * i);
  return { samples, sampleRate: w.sampleRate };
}

/** Writes mono 16-bit PCM. */
export async function writePcm(path: string, pcm: Pcm): Promise<void> {
  const { samples, sampleRate } = pcm;
  const h = Buffer.alloc(44);
  const bytes = samples.length * 2;
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + bytes, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(bytes, 40);
  const body = Buffer.from(samples.buffer, samples.byteOffset, bytes);
  await writeFile(path, Buffer.concat([h, body]));
}

export const msToSamples = (ms: number, rate: number): number => Math.round((ms * rate) / 1000);
export const samplesToMs = (n: number, rate: number): number => Math.round((n * 1000) / rate);

/** Sum of squares and count over [from, to) spans of `samples` (spans clamped to the buffer). */
function energy(samples: Int16Array, spans: readonly [number, number][]): { sum: number; n: number } {
  let sum = 0;
  let n = 0;
  for (const [a, b] of spans) {
    for (let i = Math.max(0, a); i < Math.min(samples.length, b); i++) {
      sum += samples[i] * samples[i];
      n++;
    }
  }
  return { sum, n };
}

/** RMS over the spans (0 when they hold no samples). */
export function rms(samples: Int16Array, spans: readonly [number, number][]): number {
  const { sum, n } = energy(samples, spans);
  return n === 0 ? 0 : Math.sqrt(sum / n);
}

/**
 * The cut point in [lo, hi] nearest in energy terms to silence: the centre of the quietest
 * `windowSamples` stretch whose centre lies in the range (ties go to the one nearest `target`).
 */
export function quietestCut(
  samples: Int16Array,
  target: number,
  lo: number,
  hi: number,
  windowSamples: number,
): number {
  lo = Math.max(0, Math.round(lo));
  hi = Math.min(samples.length, Math.round(hi));
  if (hi <= lo) return Math.min(Math.max(Math.round(target), 0), samples.length);
  const half = Math.floor(windowSamples / 2);
  // Running energy of the window centred on each candidate.
  const at = (i: number): number => (i >= 0 && i < samples.length ? samples[i] * samples[i] : 0);
  let e = 0;
  for (let i = lo - half; i < lo - half + windowSamples; i++) e += at(i);
  let best = lo;
  let bestE = e;
  for (let c = lo + 1; c <= hi; c++) {
    e += at(c - half + windowSamples - 1) - at(c - half - 1);
    if (e < bestE - 1e-9 || (Math.abs(e - bestE) <= 1e-9 && Math.abs(c - target) < Math.abs(best - target))) {
      best = c;
      bestE = e;
    }
  }
  return best;
}

/**
 * The level of what lies under the speech: the 2nd percentile of 20 ms frame RMS over [from, to).
 * Even continuous speech has stop closures and pauses a few frames long, so a clean recording reaches
 * its noise floor there while a background bed (music, room noise) keeps every frame above it.
 */
export function noiseFloor(samples: Int16Array, from: number, to: number, rate: number): number {
  const frame = Math.max(1, Math.round(rate * 0.02));
  const levels: number[] = [];
  for (let a = Math.max(0, from); a + frame <= Math.min(samples.length, to); a += frame) {
    levels.push(rms(samples, [[a, a + frame]]));
  }
  if (levels.length === 0) return 0;
  levels.sort((x, y) => x - y);
  return levels[Math.floor(levels.length * 0.02)];
}
