// Deterministic background noises for speech tests and measurement scripts, a mixer at a given
// speech-to-noise ratio, and reading/writing 16 kHz mono audio. Every generator takes a seed and returns
// the same samples for it, normalised to an RMS of 0.1 (about -20 dBFS).
import { concatSamples, readMono } from '../../src/media/mono.js';
import { writePcm } from '../../src/speech/dialogue/pcm.js';

export { concatSamples, readMono };

const TARGET_RMS = 0.1;

/** mulberry32: a small seeded generator of uniform numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function rmsOf(x: Float32Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  return x.length ? Math.sqrt(s / x.length) : 0;
}

/** Scales in place to the given RMS (a silent input stays silent). */
function normalise(x: Float32Array, rms = TARGET_RMS): Float32Array {
  const r = rmsOf(x);
  if (r > 0) for (let i = 0; i < x.length; i++) x[i] *= rms / r;
  return x;
}

export function whiteNoise(n: number, seed: number): Float32Array {
  const rnd = seededRandom(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rnd() * 2 - 1;
  return normalise(out);
}

/** 1/f noise (Paul Kellett's filter over white noise): hiss with the weight of broadband crowd noise. */
export function pinkNoise(n: number, seed: number): Float32Array {
  const rnd = seededRandom(seed);
  const out = new Float32Array(n);
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  let b3 = 0;
  let b4 = 0;
  let b5 = 0;
  let b6 = 0;
  for (let i = 0; i < n; i++) {
    const w = rnd() * 2 - 1;
    b0 = 0.99886 * b0 + w * 0.0555179;
    b1 = 0.99332 * b1 + w * 0.0750759;
    b2 = 0.969 * b2 + w * 0.153852;
    b3 = 0.8665 * b3 + w * 0.3104856;
    b4 = 0.55 * b4 + w * 0.5329522;
    b5 = -0.7616 * b5 - w * 0.016898;
    out[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w * 0.5362;
    b6 = w * 0.115926;
  }
  return normalise(out);
}

/** 1/f² noise (leaky integral of white noise): the low rumble of street traffic. */
export function brownNoise(n: number, seed: number): Float32Array {
  const rnd = seededRandom(seed);
  const out = new Float32Array(n);
  let y = 0;
  let mean = 0;
  for (let i = 0; i < n; i++) {
    y = 0.998 * y + (rnd() * 2 - 1) * 0.05;
    // Remove the slow drift so the result is a rumble, not an offset.
    mean += (y - mean) * 0.0005;
    out[i] = y - mean;
  }
  return normalise(out);
}

/** Quiet room: a soft pink floor, ventilation rumble and mains hum (50 Hz and harmonics). */
export function roomTone(n: number, sampleRate: number, seed: number): Float32Array {
  const pink = pinkNoise(n, seed);
  const brown = brownNoise(n, seed + 1);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / sampleRate;
    const hum =
      0.06 * Math.sin(2 * Math.PI * 50 * t) +
      0.03 * Math.sin(2 * Math.PI * 100 * t + 0.3) +
      0.015 * Math.sin(2 * Math.PI * 150 * t + 1.1);
    out[i] = 0.5 * pink[i] + 0.8 * brown[i] + hum;
  }
  return normalise(out);
}

const midiHz = (m: number): number => 440 * 2 ** ((m - 69) / 12);

/** Adds a decaying harmonic tone (harmonics 1/h) to `out` from sample `at` for `len` samples. */
function addTone(
  out: Float32Array,
  sampleRate: number,
  at: number,
  len: number,
  hz: number,
  amp: number,
  harmonics: number,
  decayS: number,
): void {
  const end = Math.min(out.length, at + len);
  const attack = 0.01 * sampleRate;
  const release = 0.02 * sampleRate;
  for (let i = Math.max(0, at); i < end; i++) {
    const k = i - at;
    const t = k / sampleRate;
    const env = Math.min(1, k / attack, (end - i) / release) * Math.exp(-t / decayS);
    // A slow vibrato keeps the partials from being perfectly stationary, as in played music.
    const phase = 2 * Math.PI * hz * t + 0.4 * Math.sin(2 * Math.PI * 5 * t);
    let s = 0;
    for (let h = 1; h <= harmonics; h++) {
      if (hz * h >= sampleRate / 2) break;
      s += Math.sin(h * phase) / h;
    }
    out[i] += amp * env * s;
  }
}

/**
 * A synthetic music bed at 120 bpm: a I-V-vi-IV chord progression (bass plus a triad of harmonic
 * tones) changing every two beats, a melody of harmonic notes changing every half beat, a kick drum on
 * the beat and a hi-hat between. Pitched, voice-like energy in the speech band that fools loudness gates.
 */
export function musicNoise(n: number, sampleRate: number, seed: number): Float32Array {
  const rnd = seededRandom(seed);
  const out = new Float32Array(n);
  const beat = Math.round(sampleRate * 0.5);
  const chords = [
    [60, 64, 67],
    [55, 59, 62],
    [57, 60, 64],
    [53, 57, 60],
  ];
  const scale = [60, 62, 64, 65, 67, 69, 71, 72, 74, 76];
  for (let b = 0; b * beat < n; b++) {
    const at = b * beat;
    if (b % 2 === 0) {
      const chord = chords[(b / 2) % chords.length];
      addTone(out, sampleRate, at, 2 * beat, midiHz(chord[0] - 24), 0.5, 6, 1.5);
      for (const note of chord) addTone(out, sampleRate, at, 2 * beat, midiHz(note), 0.18, 8, 2);
    }
    for (let h = 0; h < 2; h++) {
      const note = scale[Math.floor(rnd() * scale.length)] + 12;
      addTone(out, sampleRate, at + (h * beat) / 2, beat / 2, midiHz(note), 0.2, 10, 0.4);
    }
    // Kick: a sine falling from 120 to 50 Hz, decaying in about 150 ms.
    for (let k = 0; k < 0.25 * sampleRate && at + k < n; k++) {
      const t = k / sampleRate;
      const hz = 50 + 70 * Math.exp(-t / 0.03);
      out[at + k] += 0.8 * Math.exp(-t / 0.06) * Math.sin(2 * Math.PI * hz * t);
    }
    // Hi-hat on the off-beat: high-passed white noise, 40 ms decay.
    const hat = at + beat / 2;
    let prev = 0;
    for (let k = 0; k < 0.12 * sampleRate && hat + k < n; k++) {
      const w = rnd() * 2 - 1;
      out[hat + k] += 0.15 * Math.exp(-k / sampleRate / 0.04) * (w - prev);
      prev = w;
    }
  }
  return normalise(out);
}

/**
 * Per-sample speech mask from levels: 1 in the 20 ms frames whose RMS is within `rangeDb` of the
 * loudest frame (and above -60 dBFS), 0 elsewhere.
 */
export function activeSpeechMask(speech: Float32Array, sampleRate = 16000, rangeDb = 30): Uint8Array {
  const hop = Math.round(sampleRate * 0.02);
  const frames = Math.ceil(speech.length / hop);
  const db = new Float32Array(frames);
  let max = -Infinity;
  for (let f = 0; f < frames; f++) {
    const part = speech.subarray(f * hop, Math.min(speech.length, (f + 1) * hop));
    db[f] = 20 * Math.log10(rmsOf(part) + 1e-12);
    if (db[f] > max) max = db[f];
  }
  const floor = Math.max(max - rangeDb, -60);
  const mask = new Uint8Array(speech.length);
  for (let f = 0; f < frames; f++) {
    if (db[f] >= floor) mask.fill(1, f * hop, Math.min(speech.length, (f + 1) * hop));
  }
  return mask;
}

/**
 * Speech plus noise at `snrDb`: the RMS of the speech over its speech regions (`speechMask`, one
 * truthy value per speech sample; from levels by default) against the RMS of the noise over the whole
 * mix. The noise is repeated when it is shorter than the speech. The mix is scaled down as a whole when
 * it would clip, which keeps the ratio.
 */
export function mixAtSnr(
  speech: Float32Array,
  noise: Float32Array,
  snrDb: number,
  speechMask?: ArrayLike<number>,
  sampleRate = 16000,
): Float32Array {
  if (noise.length === 0) throw new Error('mixAtSnr: empty noise');
  const mask = speechMask ?? activeSpeechMask(speech, sampleRate);
  let s = 0;
  let ns = 0;
  for (let i = 0; i < speech.length; i++) {
    if (mask[i]) {
      s += speech[i] * speech[i];
      ns++;
    }
  }
  if (ns === 0) throw new Error('mixAtSnr: the speech has no speech regions');
  const speechRms = Math.sqrt(s / ns);
  let e = 0;
  for (let i = 0; i < speech.length; i++) {
    const v = noise[i % noise.length];
    e += v * v;
  }
  const noiseRms = Math.sqrt(e / Math.max(1, speech.length));
  const gain = noiseRms > 0 ? speechRms / 10 ** (snrDb / 20) / noiseRms : 0;
  const out = new Float32Array(speech.length);
  let peak = 0;
  for (let i = 0; i < out.length; i++) {
    out[i] = speech[i] + gain * noise[i % noise.length];
    peak = Math.max(peak, Math.abs(out[i]));
  }
  if (peak > 0.99) for (let i = 0; i < out.length; i++) out[i] *= 0.99 / peak;
  return out;
}

/** Writes mono 16-bit PCM WAV (clipped to [-1, 1]). */
export async function writeWav16(path: string, samples: Float32Array, sampleRate = 16000): Promise<void> {
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    pcm[i] = Math.round(Math.max(-1, Math.min(1, samples[i])) * 32767);
  }
  await writePcm(path, { samples: pcm, sampleRate });
}

/**
 * Frame IoU of two segment lists over [0, durationMs) in `stepMs` frames: frames inside a segment of
 * both over frames inside a segment of either (1 when neither has any).
 */
export function segmentIoU(
  a: readonly { startMs: number; endMs: number }[],
  b: readonly { startMs: number; endMs: number }[],
  durationMs: number,
  stepMs = 10,
): number {
  const inside = (segs: typeof a, t: number): boolean => segs.some((s) => t >= s.startMs && t < s.endMs);
  let both = 0;
  let either = 0;
  for (let t = stepMs / 2; t < durationMs; t += stepMs) {
    const x = inside(a, t);
    const y = inside(b, t);
    if (x && y) both++;
    if (x || y) either++;
  }
  return either === 0 ? 1 : both / either;
}
