// The ElevenLabs timeline: words from the character alignment the API returns with the audio, and
// phonemes either from our forced alignment (re-attached to those words) or, when alignment fails,
// spread over each word's span from its spelling.
import type { SpeechTimeline, TimedPhoneme, TimedWord } from './types.js';

/** ElevenLabs' `alignment` / `normalized_alignment`: one entry per character of the text. */
export interface CharAlignment {
  characters: string[];
  character_start_times_seconds: number[];
  character_end_times_seconds: number[];
}

export function isAlignment(a: unknown): a is CharAlignment {
  const o = a as Partial<CharAlignment> | null;
  return (
    !!o &&
    Array.isArray(o.characters) &&
    Array.isArray(o.character_start_times_seconds) &&
    Array.isArray(o.character_end_times_seconds) &&
    o.characters.length === o.character_start_times_seconds.length &&
    o.characters.length === o.character_end_times_seconds.length
  );
}

const WORD_CHAR = /[\p{L}\p{N}'’]/u;

/** Words from the character alignment: runs of letters, digits and apostrophes, with their span. */
export function wordsFromCharacters(a: CharAlignment): TimedWord[] {
  const words: TimedWord[] = [];
  let text = '';
  let start = 0;
  let end = 0;
  const flush = (): void => {
    const t = text.replace(/^['’]+|['’]+$/g, '');
    if (t !== '') words.push({ text: t, startMs: Math.round(start * 1000), endMs: Math.round(end * 1000) });
    text = '';
  };
  a.characters.forEach((c, i) => {
    if (!WORD_CHAR.test(c)) return flush();
    if (text === '') start = a.character_start_times_seconds[i];
    text += c;
    end = a.character_end_times_seconds[i];
  });
  flush();
  return words;
}

// Spelling-to-sound, only for the fallback: digraphs first, then single letters ("x" is k+s).
const SOUNDS = new Map(
  (
    'sh:sh ch:ch th:th ng:ng ph:f wh:w ck:k qu:k.w ee:iy ea:iy oo:uw ou:aw ow:ow ai:ey ay:ey oi:oy oy:oy ' +
    'a:ae b:b c:k d:d e:eh f:f g:g h:hh i:ih j:jh k:k l:l m:m n:n o:aa p:p q:k r:r s:s t:t u:ah v:v w:w ' +
    'x:k.s y:y z:z'
  )
    .split(' ')
    .map((pair) => pair.split(':') as [string, string])
    .map(([letters, phones]) => [letters, phones.split('.')]),
);

function spell(word: string): string[] {
  // A final silent "e" (make, note) has no sound of its own.
  const w = word
    .toLowerCase()
    .replace(/[^a-z]/g, '')
    .replace(/(?<=..)e$/, '');
  const phones: string[] = [];
  for (let i = 0; i < w.length;) {
    const two = SOUNDS.get(w.slice(i, i + 2));
    if (two) {
      phones.push(...two);
      i += 2;
    } else phones.push(...(SOUNDS.get(w[i++]) ?? []));
  }
  return phones.length > 0 ? phones : ['ah'];
}

/** Phonemes spread evenly over each word's span, `sil` in the gaps. */
export function phonemesFromWords(words: TimedWord[], durationMs: number): TimedPhoneme[] {
  const out: TimedPhoneme[] = [];
  let at = 0;
  words.forEach((w, word) => {
    if (w.startMs > at) out.push({ phone: 'sil', startMs: at, endMs: w.startMs });
    const phones = spell(w.text);
    const step = (w.endMs - w.startMs) / phones.length;
    phones.forEach((phone, k) => {
      const startMs = Math.round(w.startMs + k * step);
      out.push({ phone, startMs, endMs: Math.round(w.startMs + (k + 1) * step), word });
    });
    at = Math.max(at, w.endMs);
  });
  if (durationMs > at) out.push({ phone: 'sil', startMs: at, endMs: durationMs });
  return out;
}

/** The aligner's phonemes, re-attached to ElevenLabs' words by where each phoneme's middle falls. */
export function attach(aligned: SpeechTimeline, words: TimedWord[]): TimedPhoneme[] {
  return aligned.phonemes.map((p) => {
    if (p.phone === 'sil') return { phone: p.phone, startMs: p.startMs, endMs: p.endMs };
    const mid = (p.startMs + p.endMs) / 2;
    let best = -1;
    let bestDist = Infinity;
    words.forEach((w, i) => {
      const dist = mid < w.startMs ? w.startMs - mid : mid > w.endMs ? mid - w.endMs : 0;
      if (dist < bestDist) [best, bestDist] = [i, dist];
    });
    return best >= 0 ? { ...p, word: best } : { phone: p.phone, startMs: p.startMs, endMs: p.endMs };
  });
}
