// Local voice cloning: moves synthesized speech towards a measured VoiceProfile with DSP (shared
// research, speech-options.md (c)): Praat "Change gender" (PSOLA: pitch median and range, formant
// ratio; timing untouched) -> LTAS-difference EQ (ffmpeg firequalizer) -> loudness match. The output
// has exactly the input's samples, so word and phoneme timelines of the input stay valid.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { runFfmpeg } from '../media/ffmpeg.js';
import { runPraat } from './praat.js';
import type { VoiceProfile } from './types.js';
import {
  LTAS_LINES,
  PITCH_CEILING_HZ,
  PITCH_FLOOR_HZ,
  infoRows,
  ltasOf,
  measureVoiceProfile,
  semitones,
} from './voice-profile.js';

const FORMANT_RATIO_MIN = 0.8;
const FORMANT_RATIO_MAX = 1.25;
const RANGE_FACTOR_MIN = 0.2;
const RANGE_FACTOR_MAX = 4;
const EQ_LIMIT_DB = 12;

const CHANGE_GENDER_SCRIPT = `form Change
  sentence In
  sentence Out
  real Min_pitch 60
  real Max_pitch 500
  real Formant_ratio 1
  real New_median 0
  real Range_factor 1
endform
snd = Read from file: in$
nch = Get number of channels
if nch > 1
  mono = Convert to mono
  removeObject: snd
  snd = mono
endif
out = Change gender: min_pitch, max_pitch, formant_ratio, new_median, range_factor, 1
Save as 32-bit WAV file: out$
nsamples = Get number of samples
rate = Get sampling frequency
appendInfoLine: "samples ", nsamples, " ", rate
snd = out
${LTAS_LINES}`;

// Exactly the reference's samples (firequalizer and PSOLA must not move anything), the reference's
// intensity, peaks kept below full scale, saved as mono 16-bit WAV at the reference's rate.
const FINISH_SCRIPT = `form Finish
  sentence Processed
  sentence Reference
  sentence Out
endform
ref = Read from file: reference$
nch = Get number of channels
if nch > 1
  mono = Convert to mono
  removeObject: ref
  ref = mono
endif
n = Get number of samples
rate = Get sampling frequency
db = Get intensity (dB)
proc = Read from file: processed$
m = Get number of samples
out = Create Sound from formula: "out", 1, 0, n / rate, rate, "if col <= m then object[proc, 1, col] else 0 fi"
if db <> undefined
  if db > 0
    Scale intensity: db
  endif
endif
peak = Get absolute extremum: 0, 0, "none"
if peak > 0.99
  Scale peak: 0.99
endif
Save as WAV file: out$
`;

export interface ConvertVoiceOptions {
  /** The target voice; null = no voice match, only the pitch range is scaled. */
  profile: VoiceProfile | null;
  /** 0..1: how far towards the profile (pitch shift in semitones, ln formant ratio, EQ dB scale by it). */
  similarity: number;
  /** Multiplies the pitch range (q10-q90 spread) around the median: >1 livelier, <1 steadier. */
  rangeFactor: number;
  workDir: string;
  signal?: AbortSignal;
}

/** The Change gender settings and EQ strength for a source measurement; exported for the docs/tests. */
export function conversionParams(
  source: Pick<VoiceProfile, 'pitchMedianHz' | 'pitchQ10Hz' | 'pitchQ90Hz' | 'formantsHz'>,
  opts: Pick<ConvertVoiceOptions, 'profile' | 'similarity' | 'rangeFactor'>,
): { newMedianHz: number; formantRatio: number; rangeFactor: number } {
  const s = clamp(Number.isFinite(opts.similarity) ? opts.similarity : 1, 0, 1);
  const target = opts.profile;
  let newMedianHz = 0; // Praat: 0 keeps the source median.
  let formantRatio = 1;
  let rangeFactor = opts.rangeFactor;
  if (target && target.pitchMedianHz > 0 && source.pitchMedianHz > 0) {
    newMedianHz =
      source.pitchMedianHz * 2 ** ((s * semitones(source.pitchMedianHz, target.pitchMedianHz)) / 12);
    const ratios = [0, 1, 2]
      .filter((i) => target.formantsHz[i] > 0 && source.formantsHz[i] > 0)
      .map((i) => Math.log(target.formantsHz[i] / source.formantsHz[i]));
    if (ratios.length > 0) {
      const lnK = Math.log(clamp(Math.exp(mean(ratios)), FORMANT_RATIO_MIN, FORMANT_RATIO_MAX));
      formantRatio = Math.exp(s * lnK);
    }
    const spreadT = Math.log(target.pitchQ90Hz / target.pitchQ10Hz);
    const spreadS = Math.log(source.pitchQ90Hz / source.pitchQ10Hz);
    // Similarity scales the range match too (log domain), so similarity 0 is "no voice match".
    if (spreadT > 0 && spreadS > 0) rangeFactor *= Math.exp(s * Math.log(spreadT / spreadS));
  }
  return { newMedianHz, formantRatio, rangeFactor: clamp(rangeFactor, RANGE_FACTOR_MIN, RANGE_FACTOR_MAX) };
}

/**
 * EQ gains (dB per LTAS band) that move `current`'s spectral shape to `target`'s: difference of the
 * mean-removed spectra (levels are matched separately), clipped to +-12 dB, scaled by similarity.
 */
export function eqGainsDb(targetDb: number[], currentDb: number[], similarity: number): number[] {
  const n = Math.min(targetDb.length, currentDb.length);
  const t = targetDb.slice(0, n);
  const c = currentDb.slice(0, n);
  const offset = mean(t) - mean(c);
  const s = clamp(similarity, 0, 1);
  return t.map((v, i) => s * clamp(v - c[i] - offset, -EQ_LIMIT_DB, EQ_LIMIT_DB));
}

/** Converts `inputWav` (mono or stereo WAV) into `outputWav` (mono 16-bit, same rate and length). */
export async function convertVoice(
  inputWav: string,
  outputWav: string,
  opts: {
    profile: VoiceProfile | null;
    similarity: number;
    rangeFactor: number;
    workDir: string;
    signal?: AbortSignal;
  },
): Promise<void> {
  const { workDir, signal } = opts;
  const tag = randomUUID().slice(0, 8);
  const cgWav = path.join(workDir, `vc-${tag}-cg.wav`);
  const eqWav = path.join(workDir, `vc-${tag}-eq.wav`);
  try {
    const source = await measureVoiceProfile(inputWav, { workDir, signal });
    const params = conversionParams(source.profile, opts);
    const voiced = source.voicedSeconds > 0 && source.profile.pitchMedianHz > 0;
    const changesPitch =
      params.newMedianHz > 0 || params.formantRatio !== 1 || Math.abs(params.rangeFactor - 1) > 1e-3;
    if (!voiced || (!opts.profile && !changesPitch)) {
      // Nothing to change (or nothing Praat could analyse): a format-normalising copy.
      await runFfmpeg(['-i', inputWav, '-ac', '1', '-c:a', 'pcm_s16le', outputWav], {
        signal,
        timeoutMs: 120_000,
      });
      return;
    }
    // The result's spectrum is measured in the same Praat run (one process start and no pitch or
    // formant analysis fewer than measuring the file again: bench/results/2026-12-07-clone-synthesis.md).
    const changed = await runPraat(
      CHANGE_GENDER_SCRIPT,
      [
        inputWav,
        cgWav,
        PITCH_FLOOR_HZ,
        PITCH_CEILING_HZ,
        params.formantRatio,
        params.newMedianHz,
        params.rangeFactor,
      ],
      { workDir, signal },
    );
    let processed = cgWav;
    if (opts.profile && opts.profile.ltasDb.length > 0 && opts.similarity > 0) {
      const rows = infoRows(changed);
      const [samples, sampleRate] = rows.get('samples') ?? [];
      const gains = eqGainsDb(opts.profile.ltasDb, ltasOf(rows), opts.similarity);
      await equalize(cgWav, eqWav, opts.profile.ltasBandsHz, gains, { samples, sampleRate }, signal);
      processed = eqWav;
    }
    await runPraat(FINISH_SCRIPT, [processed, inputWav, outputWav], { workDir, signal });
  } finally {
    await Promise.all([rm(cgWav, { force: true }), rm(eqWav, { force: true })]);
  }
}

/**
 * Applies per-band gains with firequalizer (linear interpolation between band centres, flat beyond).
 * firequalizer delays its output by its filter delay; zero_phase moves that into the timestamps and
 * atrim cuts back to exactly the input's samples, so nothing shifts in time.
 */
async function equalize(
  inWav: string,
  outWav: string,
  bandsHz: number[],
  gainsDb: number[],
  input: { samples: number; sampleRate: number },
  signal?: AbortSignal,
): Promise<void> {
  const nyquist = input.sampleRate / 2;
  const points: [number, number][] = [[0, gainsDb[0]]];
  bandsHz.forEach((f, i) => {
    if (f < nyquist && gainsDb[i] !== undefined) points.push([f, gainsDb[i]]);
  });
  points.push([nyquist, points[points.length - 1][1]]);
  const entries = points.map(([f, g]) => `entry(${f.toFixed(1)},${g.toFixed(2)})`).join(';');
  const filter =
    `firequalizer=zero_phase=1:gain_entry='${entries}',` +
    `atrim=start_pts=0:end_pts=${input.samples},asetpts=PTS-STARTPTS`;
  await runFfmpeg(['-i', inWav, '-af', filter, '-c:a', 'pcm_f32le', outWav], { signal, timeoutMs: 120_000 });
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
