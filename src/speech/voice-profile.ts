// Measures a speaker's voice profile (pitch, formants, long-term spectrum) with Praat: the target of
// local voice cloning (voice-convert.ts). Method and figures: shared research, speech-options.md (c).
import { runFfmpeg } from '../media/ffmpeg.js';
import { runPraat } from './praat.js';
import type { VoiceProfile } from './types.js';

/** Pitch search range: covers low male (~70 Hz) to high female/child speech. */
export const PITCH_FLOOR_HZ = 60;
export const PITCH_CEILING_HZ = 500;
/** Half-octave LTAS band centres, 100 Hz .. 6400 Hz (the top band reaches ~7.6 kHz). */
export const LTAS_BANDS_HZ: number[] = Array.from({ length: 13 }, (_, i) => Math.round(100 * 2 ** (i / 2)));
/**
 * Below this much voiced speech a profile is too noisy to use; callers should reject the sample. From
 * 2 s of voiced speech the pitch median lies within about 1.2 semitones of a long sample's, and the
 * nearest base voice is the same (six fixture speakers, test/integration/speech-voice-clone.test.ts).
 */
export const MIN_VOICED_SECONDS = 2;
/** Samples longer than this are cut: two minutes already give stable statistics. */
export const MAX_SAMPLE_SECONDS = 120;

/**
 * Praat lines printing the "ltas" row of the Sound `snd`: LTAS over its non-silent intervals, band mean
 * energy in dB. Also run inside voice conversion on its own result (ltasOf reads the row).
 */
export const LTAS_LINES = `selectObject: snd
tg = To TextGrid (silences): 100, 0, -30, 0.1, 0.05, "silent", "sounding"
selectObject: snd, tg
Extract intervals where: 1, "no", "is equal to", "sounding"
speech = Concatenate
ltas = To Ltas: 20
line$ = "ltas"
for i from 0 to 12
  fc = 100 * 2 ^ (i / 2)
  v = Get mean: fc / 2 ^ 0.25, fc * 2 ^ 0.25, "energy"
  line$ = line$ + " " + fixed$ (v, 3)
endfor
appendInfoLine: line$
`;

// Pitch quantiles over voiced frames; formant means over the same frames (Burg, ceiling 5 kHz for low
// voices, 5.5 kHz otherwise); LTAS over the non-silent intervals, band mean energy in dB.
const ANALYZE_SCRIPT = `form Analyze
  sentence Path
  real Min_pitch 60
  real Max_pitch 500
endform
snd = Read from file: path$
nch = Get number of channels
if nch > 1
  mono = Convert to mono
  removeObject: snd
  snd = mono
endif
dur = Get total duration
nsamples = Get number of samples
rate = Get sampling frequency
appendInfoLine: "duration ", fixed$ (dur, 5)
appendInfoLine: "samples ", nsamples, " ", rate
if dur < 0.2
  exitScript ()
endif
step = 0.01
pitch = To Pitch: step, min_pitch, max_pitch
nvoiced = Count voiced frames
appendInfoLine: "voiced ", fixed$ (nvoiced * step, 3)
if nvoiced < 3
  exitScript ()
endif
med = Get quantile: 0, 0, 0.5, "Hertz"
q10 = Get quantile: 0, 0, 0.1, "Hertz"
q90 = Get quantile: 0, 0, 0.9, "Hertz"
appendInfoLine: "pitch ", fixed$ (med, 3), " ", fixed$ (q10, 3), " ", fixed$ (q90, 3)
maxf = 5500
if med < 160
  maxf = 5000
endif
selectObject: snd
formant = To Formant (burg): step, 5, maxf, 0.025, 50
selectObject: pitch
nframes = Get number of frames
for j to 3
  sum[j] = 0
  n[j] = 0
endfor
for i to nframes
  selectObject: pitch
  f0 = Get value in frame: i, "Hertz"
  if f0 <> undefined
    t = Get time from frame number: i
    selectObject: formant
    for j to 3
      f = Get value at time: j, t, "hertz", "linear"
      if f <> undefined
        sum[j] += f
        n[j] += 1
      endif
    endfor
  endif
endfor
appendInfoLine: "formants ", fixed$ (sum[1] / max (n[1], 1), 2), " ", fixed$ (sum[2] / max (n[2], 1), 2), " ", fixed$ (sum[3] / max (n[3], 1), 2)
${LTAS_LINES}`;

export interface VoiceMeasurement {
  profile: Omit<VoiceProfile, 'baseVoice'>;
  /** Seconds of voiced frames; the profile is all zeros when there are fewer than 3 frames. */
  voicedSeconds: number;
  durationSeconds: number;
  /** Exact length and rate of the analysed file (voice-convert keeps them). */
  samples: number;
  sampleRate: number;
}

/** Measures a WAV (any rate, mono or stereo). A silent or tiny file gives voicedSeconds 0. */
export async function measureVoiceProfile(
  wavPath: string,
  opts: { workDir: string; signal?: AbortSignal },
): Promise<VoiceMeasurement> {
  const out = await runPraat(ANALYZE_SCRIPT, [wavPath, PITCH_FLOOR_HZ, PITCH_CEILING_HZ], opts);
  const rows = infoRows(out);
  const num = (key: string, i = 0): number => {
    const v = rows.get(key)?.[i];
    return v !== undefined && Number.isFinite(v) ? v : 0;
  };
  return {
    profile: {
      pitchMedianHz: num('pitch', 0),
      pitchQ10Hz: num('pitch', 1),
      pitchQ90Hz: num('pitch', 2),
      formantsHz: [num('formants', 0), num('formants', 1), num('formants', 2)],
      ltasDb: ltasOf(rows),
      ltasBandsHz: [...LTAS_BANDS_HZ],
    },
    voicedSeconds: num('voiced'),
    durationSeconds: num('duration'),
    samples: num('samples', 0),
    sampleRate: num('samples', 1),
  };
}

/** Praat's info lines as rows: the first word is the key, the rest numbers. */
export function infoRows(out: string): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const line of out.split(/\r?\n/)) {
    const [key, ...values] = line.trim().split(/\s+/);
    // Praat prints "--undefined--" (bands above Nyquist): NaN here, filled below.
    if (key)
      rows.set(
        key,
        values.map((v) => Number(v)),
      );
  }
  return rows;
}

/** The LTAS row LTAS_LINES printed (zeros where there was none). */
export function ltasOf(rows: Map<string, number[]>): number[] {
  const raw = rows.get('ltas') ?? [];
  return raw.length > 0 ? fillUndefined(raw) : LTAS_BANDS_HZ.map(() => 0);
}

/** Bands Praat could not measure (above the file's Nyquist) take their nearest lower neighbour. */
function fillUndefined(values: number[]): number[] {
  const firstDefined = values.find((v) => Number.isFinite(v)) ?? 0;
  let last = firstDefined;
  return values.map((v) => (Number.isFinite(v) ? (last = v) : last));
}

/**
 * Turns an audio or video file into the mono 16-bit WAV that profiles are measured from: its first
 * `maxSeconds` (120), resampled to `sampleRate` (16 kHz: enough for the 7 kHz LTAS top band).
 */
export async function extractSample(
  input: string,
  outWav: string,
  opts: { signal?: AbortSignal; sampleRate?: number; maxSeconds?: number; timeoutMs?: number } = {},
): Promise<void> {
  const rate = opts.sampleRate ?? 16000;
  const seconds = opts.maxSeconds ?? MAX_SAMPLE_SECONDS;
  await runFfmpeg(
    [
      '-i',
      input,
      '-map',
      '0:a:0',
      '-vn',
      '-t',
      String(seconds),
      '-ac',
      '1',
      '-ar',
      String(rate),
      '-c:a',
      'pcm_s16le',
      outWav,
    ],
    { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 120_000 },
  );
}

/** Semitones from `fromHz` to `toHz`. */
export function semitones(fromHz: number, toHz: number): number {
  return 12 * Math.log2(toHz / fromHz);
}

/**
 * Spectral-shape distance of two LTAS (dB RMS of the band differences after removing their mean, so
 * that overall level does not count): the research's "LTAS d".
 */
export function ltasDistanceDb(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  if (n === 0) return 0;
  const d = Array.from({ length: n }, (_, i) => a[i] - b[i]);
  const m = d.reduce((x, y) => x + y, 0) / n;
  return Math.sqrt(d.reduce((x, y) => x + (y - m) ** 2, 0) / n);
}

/**
 * Pitch medians of the local provider's built-in voices, measured with measureVoiceProfile (60-500 Hz)
 * on five Harvard sentences (list 1, 1-5) each, synthesized with `RHVoice-test -p <voice>` (24 kHz)
 * and festival `text2wave -eval '(voice_cmu_us_slt_arctic_hts)'`.
 */
export const LOCAL_VOICE_PITCH_HZ: Readonly<Record<string, number>> = {
  'slt-hts': 173.6,
  'rhvoice-clb': 178.7,
  'rhvoice-bdl': 118.0,
  'rhvoice-slt': 172.0,
  'rhvoice-alan': 132.6,
};

export interface BaseVoiceCandidate {
  providerVoiceId: string;
  pitchMedianHz: number;
}

/** The local voices as candidates for nearestBaseVoice. */
export const LOCAL_BASE_VOICES: readonly BaseVoiceCandidate[] = Object.entries(LOCAL_VOICE_PITCH_HZ).map(
  ([providerVoiceId, pitchMedianHz]) => ({ providerVoiceId, pitchMedianHz }),
);

/**
 * The base voice whose pitch median is nearest (in semitones) to the profile's: the smaller the shift
 * Change gender has to make, the more natural the result (large downward shifts sound worst).
 */
export function nearestBaseVoice(
  profile: Pick<VoiceProfile, 'pitchMedianHz'>,
  candidates: readonly BaseVoiceCandidate[],
): string {
  let best: BaseVoiceCandidate | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (!(c.pitchMedianHz > 0) || !(profile.pitchMedianHz > 0)) continue;
    const d = Math.abs(semitones(c.pitchMedianHz, profile.pitchMedianHz));
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  if (best) return best.providerVoiceId;
  if (candidates.length === 0) throw new RangeError('nearestBaseVoice: no candidates');
  return candidates[0].providerVoiceId;
}
