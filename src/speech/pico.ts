// SVOX Pico voices (`pico2wave`, Debian's non-free libttspico-utils): smoother than the MBROLA diphones,
// but Pico reports no phone times. They are found by alignment to a reference whose times are known:
// espeak-ng plans the same text in the same language (phones, durations: espeak.ts), the plan is
// stretched to Pico's length and rendered by an MBROLA voice, both WAVs become 10 ms cepstral frames
// (the viseme model's log-mel, viseme-model.ts), dynamic time warping (dtw.ts) pairs the frames, and
// each reference phone boundary is carried through the path onto the Pico audio. The error of this
// mapping was measured before the voices were offered (bench/pico-alignment.ts, docs/dubbing-voices.md).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dtw, warpPositions, warpTimes } from './dtw.js';
import { phoneBoundaries, planEspeak, planTimeline, renderMbrola, type EspeakVoice } from './espeak.js';
import type { PhoPhone } from './foreign-phones.js';
import type { TimedPiece } from './local-wav.js';
import { readWavInfo } from './local-wav.js';
import { runTool } from './tools.js';
import {
  resample,
  VISEME_FEATURES,
  VISEME_MELS,
  VISEME_SAMPLE_RATE,
  visemeFeatures,
} from './viseme-model.js';

/** A Pico language and the espeak-ng + MBROLA voice its phone times are aligned from. */
export interface PicoVoice {
  /** pico2wave's language (-l). */
  lang: string;
  reference: EspeakVoice;
}

export const FRAME_MS = 10;
export const WINDOW_MS = 25;
/** Cepstral coefficients per frame (c1..c12 of the 13 log-mel bands) plus the frame's level. */
export const CEPS = VISEME_MELS - 1;
export const ALIGN_DIM = CEPS + 1;
/** The level's weight against the cepstra: pauses and stop closures are where the level drops. */
const LEVEL_WEIGHT = 0.5;

/** Mono 16-bit PCM WAV samples in -1..1, and their rate. */
export async function readMonoWav(path: string): Promise<{ samples: Float32Array; sampleRate: number }> {
  const info = await readWavInfo(path);
  if (info.channels !== 1 || info.bitsPerSample !== 16) throw new Error(`${path} is not mono 16-bit`);
  const buf = await readFile(path);
  const n = Math.floor(info.dataBytes / 2);
  const samples = new Float32Array(n);
  for (let i = 0; i < n; i++) samples[i] = buf.readInt16LE(info.dataOffset + 2 * i) / 32768;
  return { samples, sampleRate: info.sampleRate };
}

/**
 * Frames for alignment, ALIGN_DIM wide: the DCT of the viseme model's 13 log-mel bands without c0,
 * less their mean over the clip (two voices differ in their long-term spectrum), then the frame's
 * level in dB below the clip's loudest frame, scaled to the cepstra's range and floored at -60 dB.
 */
export function alignmentFeatures(samples: Float32Array, sampleRate: number): Float32Array {
  const x = resample(samples, sampleRate, VISEME_SAMPLE_RATE);
  const f = visemeFeatures(x);
  const frames = f.length / VISEME_FEATURES;
  const out = new Float32Array(frames * ALIGN_DIM);
  const level = new Float64Array(frames);
  for (let t = 0; t < frames; t++) {
    let sum = 0;
    for (let m = 0; m < VISEME_MELS; m++) sum += 10 ** (f[t * VISEME_FEATURES + m] / 10);
    level[t] = 10 * Math.log10(Math.max(sum, 1e-10));
    for (let c = 1; c <= CEPS; c++) {
      let s = 0;
      for (let m = 0; m < VISEME_MELS; m++)
        s += f[t * VISEME_FEATURES + m] * Math.cos((Math.PI * c * (m + 0.5)) / VISEME_MELS);
      out[t * ALIGN_DIM + c - 1] = (s * Math.SQRT2) / Math.sqrt(VISEME_MELS);
    }
  }
  for (let c = 0; c < CEPS; c++) {
    let mean = 0;
    for (let t = 0; t < frames; t++) mean += out[t * ALIGN_DIM + c];
    mean /= frames;
    for (let t = 0; t < frames; t++) out[t * ALIGN_DIM + c] -= mean;
  }
  const top = Math.max(...level);
  for (let t = 0; t < frames; t++) out[t * ALIGN_DIM + CEPS] = LEVEL_WEIGHT * Math.max(-60, level[t] - top);
  return out;
}

/**
 * Carries boundaries (ms) of the reference audio onto the target audio: the ends map onto the ends,
 * everything between through the DTW path of the two clips' alignment features.
 */
export function mapBoundaries(
  boundariesMs: readonly number[],
  ref: { samples: Float32Array; sampleRate: number },
  target: { samples: Float32Array; sampleRate: number },
): number[] {
  const a = alignmentFeatures(ref.samples, ref.sampleRate);
  const b = alignmentFeatures(target.samples, target.sampleRate);
  // The reference was stretched to the target's length, so the path keeps near the diagonal: a band
  // of a fifth of the length (at least half a second) bounds the work of long chunks.
  const frames = Math.max(a.length, b.length) / ALIGN_DIM;
  const path = dtw(a, b, ALIGN_DIM, Math.max(50, Math.ceil(frames / 5)));
  const toDurationMs = (target.samples.length * 1000) / target.sampleRate;
  const out = warpTimes(boundariesMs, warpPositions(path), {
    hopMs: FRAME_MS,
    windowMs: WINDOW_MS,
    toDurationMs,
  });
  out[0] = 0;
  out[out.length - 1] = toDurationMs;
  return out;
}

/** Phones with their durations scaled so that they sum to `totalMs` (the pitch points are percentages). */
export function scalePho(phoText: string, phones: readonly PhoPhone[], totalMs: number): string {
  const sum = phones.reduce((s, p) => s + p.durMs, 0);
  const k = sum > 0 ? totalMs / sum : 1;
  return phoText
    .split(/\r?\n/)
    .map((line) => {
      const m = /^([^;\s]\S*)(\s+)(\d+(?:\.\d+)?)(.*)$/.exec(line);
      return m ? `${m[1]}${m[2]}${Math.max(1, Math.round(Number(m[3]) * k))}${m[4]}` : line;
    })
    .join('\n');
}

export interface PicoOptions {
  voice: PicoVoice;
  workDir: string;
  /** Speaking rate, 0.5..2 (Pico's `<speed>` level is 100 times this). */
  speed: number;
  signal?: AbortSignal;
}

/** Text as pico2wave may read it: no control characters, no markup of its own. */
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f<>[\]]/g, ' ').trim();
}

/** Renders each chunk with Pico (16 kHz mono), with phone times aligned from an espeak-ng reference. */
export async function synthesizePico(chunks: readonly string[], opts: PicoOptions): Promise<TimedPiece[]> {
  const pieces: TimedPiece[] = [];
  const espeakOpts = { voice: opts.voice.reference, workDir: opts.workDir, speed: 1, signal: opts.signal };
  for (const [i, text] of chunks.entries()) {
    const dir = join(opts.workDir, `pico-${i}`);
    await mkdir(dir, { recursive: true });
    const wavPath = join(dir, 'speech.wav');
    const speed = Math.round(100 * Math.min(2, Math.max(0.5, opts.speed)));
    const said = speed === 100 ? clean(text) : `<speed level="${speed}">${clean(text)}</speed>`;
    await writeFile(join(dir, 'text.txt'), said);
    await runTool('pico2wave', ['-l', opts.voice.lang, '-w', wavPath], {
      stdin: said,
      signal: opts.signal,
      timeoutMs: 30_000 + text.length * 50,
    });
    const pico = await readMonoWav(wavPath);
    const picoMs = (pico.samples.length * 1000) / pico.sampleRate;
    const plan = await planEspeak(text, espeakOpts, dir);
    // The reference is said at Pico's pace, so that the warping has less to do.
    const refWav = join(dir, 'reference.wav');
    await renderMbrola(scalePho(plan.phoText, plan.phones, picoMs), espeakOpts, dir, refWav);
    const ref = await readMonoWav(refWav);
    const refMs = (ref.samples.length * 1000) / ref.sampleRate;
    const mapped = mapBoundaries(phoneBoundaries(plan.phones, refMs), ref, pico);
    pieces.push({ wavPath, timeline: planTimeline(plan, mapped) });
  }
  return pieces;
}
