// Joins pieces of audio (stretches of the source, reused words, synthesized speech) end to end with a
// short raised-cosine crossfade centred on each join. Each piece reads its own neighbouring samples
// for the fade (the audio just past its cut), so the output has exactly the pieces' nominal lengths
// and source stretches copied at unit gain are bit-exact outside the fades.

export interface Piece {
  /** Where the samples come from. */
  buf: Int16Array;
  /** The nominal stretch [start, end) of `buf`; samples outside it are read only inside a fade. */
  start: number;
  end: number;
  /** Level applied to the piece (1 = untouched). */
  gain: number;
}

export interface Assembled {
  samples: Int16Array;
  /** Output index where each piece's nominal stretch begins. */
  offsets: number[];
  /** Output index of each join (between piece k and k+1) and the half-length of its fade. */
  joins: { at: number; half: number }[];
}

function sampleOf(p: Piece, i: number): number {
  return i >= 0 && i < p.buf.length ? p.buf[i] * p.gain : 0;
}

const clip16 = (v: number): number => Math.max(-32768, Math.min(32767, Math.round(v)));

/** Concatenates the pieces with crossfades of up to 2 x `halfFade` samples at each join. */
export function assemble(pieces: readonly Piece[], halfFade: number): Assembled {
  const lengths = pieces.map((p) => Math.max(0, p.end - p.start));
  const total = lengths.reduce((a, b) => a + b, 0);
  const out = new Int16Array(total);
  const offsets: number[] = [];
  let pos = 0;
  pieces.forEach((p, k) => {
    offsets.push(pos);
    if (p.gain === 1) out.set(p.buf.subarray(p.start, p.start + lengths[k]), pos);
    else for (let i = 0; i < lengths[k]; i++) out[pos + i] = clip16(p.buf[p.start + i] * p.gain);
    pos += lengths[k];
  });
  const joins: { at: number; half: number }[] = [];
  for (let k = 0; k + 1 < pieces.length; k++) {
    const a = pieces[k];
    const b = pieces[k + 1];
    const at = offsets[k + 1];
    // A fade never reaches past the middle of a short piece (it would meet that piece's other fade).
    const half = Math.min(halfFade, Math.floor(lengths[k] / 2), Math.floor(lengths[k + 1] / 2));
    joins.push({ at, half });
    for (let n = at - half; n < at + half; n++) {
      const t = (n - (at - half) + 0.5) / (2 * half);
      const fadeIn = 0.5 - 0.5 * Math.cos(Math.PI * t);
      const va = sampleOf(a, a.start + (n - offsets[k]));
      const vb = sampleOf(b, b.start + (n - at));
      out[n] = clip16(va * (1 - fadeIn) + vb * fadeIn);
    }
  }
  return { samples: out, offsets, joins };
}

/** The gain that brings `current` RMS to `target` RMS, limited to +-`maxDb` (1 when unmeasurable). */
export function matchGain(target: number, current: number, maxDb: number): number {
  if (!(target > 0) || !(current > 0)) return 1;
  const limit = 10 ** (maxDb / 20);
  return Math.min(limit, Math.max(1 / limit, target / current));
}

/** Lowers a gain so the piece's loudest sample stays below full scale. */
export function limitGain(p: Piece): number {
  let peak = 0;
  for (let i = Math.max(0, p.start); i < Math.min(p.buf.length, p.end); i++)
    peak = Math.max(peak, Math.abs(p.buf[i]));
  return peak * p.gain > 32000 ? 32000 / peak : p.gain;
}
