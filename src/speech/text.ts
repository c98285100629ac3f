// Text preparation shared by the local synthesizers and the aligner. Synthesis and alignment must agree
// on what is said, so numbers and symbols are spelled out once, in domain/spoken-text.ts (the engines'
// own expansions differ: festival reads "12 o'clock" as "one two"), and characters an engine would
// read aloud (backslash, at sign...) are dropped before synthesis.

export { speakableText } from '../domain/spoken-text.js';
import { speakableText } from '../domain/spoken-text.js';

/** A word of a transcript: as written (for the timeline) and its dictionary key (for the aligner). */
export interface TranscriptWord {
  text: string;
  key: string;
}

/** The words of a (speakable) text, in order, lower-cased and stripped of punctuation for lookup. */
export function transcriptWords(text: string): TranscriptWord[] {
  const out: TranscriptWord[] = [];
  for (const raw of speakableText(text).split(/[\s-]+/)) {
    const display = raw.replace(/^[^\p{L}0-9]+|[^\p{L}0-9]+$/gu, '');
    const key = display
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^a-z']/g, '')
      .replace(/^'+|'+$/g, '');
    if (key) out.push({ text: display, key });
  }
  return out;
}

/**
 * Sentences grouped into chunks of at most `maxChars` (a sentence longer than that is cut at commas,
 * then at spaces), so that each engine call and each alignment stays short.
 */
export function splitIntoChunks(text: string, maxChars = 300): string[] {
  const sentences = text.match(/[^.!?]+(?:[.!?]+["')\]]*|$)/g)?.map((s) => s.trim()) ?? [];
  const pieces: string[] = [];
  for (const s of sentences.filter(Boolean)) {
    if (s.length <= maxChars) pieces.push(s);
    else pieces.push(...cut(s, maxChars));
  }
  const chunks: string[] = [];
  for (const p of pieces) {
    const last = chunks.at(-1);
    if (last !== undefined && last.length + 1 + p.length <= maxChars)
      chunks[chunks.length - 1] = `${last} ${p}`;
    else chunks.push(p);
  }
  return chunks;
}

function cut(s: string, maxChars: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars);
    let at = window.lastIndexOf(', ');
    if (at < maxChars / 3) at = window.lastIndexOf(' ');
    if (at <= 0) at = maxChars;
    out.push(rest.slice(0, at + 1).trim());
    rest = rest.slice(at + 1).trim();
  }
  if (rest) out.push(rest);
  return out;
}
