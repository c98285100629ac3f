// Phone-set normalisation: every timeline carries lower-case ARPAbet without stress digits, or `sil`
// (types.ts), whichever engine produced it. festival's voices use the "radio" phoneset (pau, ax,
// axr, dx...), pocketsphinx upper-case CMU phones and fillers (SIL, +NOISE+, +BREATH+...).
import type { TimedPhoneme } from './types.js';

export const ARPABET = new Set([
  'aa', 'ae', 'ah', 'ao', 'aw', 'ay', 'b', 'ch', 'd', 'dh', 'eh', 'er', 'ey', 'f', 'g', 'hh', 'ih',
  'iy', 'jh', 'k', 'l', 'm', 'n', 'ng', 'ow', 'oy', 'p', 'r', 's', 'sh', 't', 'th', 'uh', 'uw', 'v',
  'w', 'y', 'z', 'zh',
]); // prettier-ignore

/** Phones outside the 39 that some sets use, folded onto their nearest ARPAbet phone. */
const FOLD: Record<string, string> = {
  ax: 'ah',
  axr: 'er',
  ix: 'ih',
  ux: 'uw',
  dx: 'd',
  nx: 'n',
  el: 'l',
  em: 'm',
  en: 'n',
  eng: 'ng',
  hv: 'hh',
  q: 't',
};

const SILENCES = new Set(['pau', 'sil', 'h#', 'sp', 'ssil', 'brth', 'spn', 'nsn', 'garbage']);

/**
 * One phone of any supported set as lower-case ARPAbet without stress, `sil` for pauses and noise
 * fillers, or null when the symbol is not a phone at all.
 */
export function normalisePhone(raw: string): string | null {
  const p = raw
    .trim()
    .toLowerCase()
    .replace(/[0-9]+$/, '');
  if (p === '') return null;
  if (SILENCES.has(p) || /^\+.*\+$/.test(p) || /^<.*>$/.test(p)) return 'sil';
  if (ARPABET.has(p)) return p;
  return FOLD[p] ?? null;
}

/** A phone in pocketsphinx's en-us model notation (upper case; SIL for silence). */
export function toSphinxPhone(phone: string): string {
  return phone === 'sil' ? 'SIL' : phone.toUpperCase();
}

/** Lips closed: the phones a viseme engine must see as a closed mouth. */
export const BILABIALS = new Set(['p', 'b', 'm']);

/**
 * Merges adjacent pauses into one and drops zero-length phones, so that every timeline has the same
 * shape whatever engine produced it.
 */
export function tidyPhonemes(phonemes: readonly TimedPhoneme[]): TimedPhoneme[] {
  const out: TimedPhoneme[] = [];
  for (const p of phonemes) {
    if (p.endMs <= p.startMs) continue;
    const last = out.at(-1);
    if (last && last.phone === 'sil' && p.phone === 'sil' && last.endMs >= p.startMs) {
      last.endMs = Math.max(last.endMs, p.endMs);
      continue;
    }
    out.push({ ...p });
  }
  return out;
}
