// Pronunciations for the aligner: the CMU dictionary that ships with pocketsphinx's en-us model (all
// variants), and festival's lexicon + letter-to-sound rules for words it lacks ("zorblax"), mapped
// onto pocketsphinx's phones.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { normalisePhone, toSphinxPhone } from './phones.js';
import { schemeString } from './festival.js';
import { SPHINX_MODEL_ROOT, detectLocalEngines, runTool } from './tools.js';

/** Pronunciation variants of a word, each a list of pocketsphinx phones (upper case). */
export type Pronunciations = Map<string, string[][]>;

let cmudict: Promise<Pronunciations> | null = null;

/** The pocketsphinx CMU dictionary, read once per process. */
export function loadCmuDict(): Promise<Pronunciations> {
  cmudict ??= readFile(join(SPHINX_MODEL_ROOT, 'cmudict-en-us.dict'), 'utf8').then((raw) => {
    const dict: Pronunciations = new Map();
    for (const line of raw.split('\n')) {
      const parts = line.trim().split(/\s+/);
      if (parts.length < 2) continue;
      const word = parts[0].replace(/\(\d+\)$/, '');
      const variants = dict.get(word);
      const phones = parts.slice(1);
      if (variants) variants.push(phones);
      else dict.set(word, [phones]);
    }
    return dict;
  });
  cmudict.catch(() => {
    cmudict = null;
  });
  return cmudict;
}

/** Parses festival's `(lex.lookup ...)` answer: `("w" nil (((z ao r) 1) ((b l ae k s) 1)))`. */
export function parseLexEntry(entry: string): string[] {
  const phones: string[] = [];
  for (const m of entry.matchAll(/\(\(([a-z0-9 ]+)\) \d\)/g)) {
    for (const raw of m[1].split(' ')) {
      const p = normalisePhone(raw);
      if (p && p !== 'sil') phones.push(toSphinxPhone(p));
    }
  }
  return phones;
}

/** festival's pronunciations for words the dictionary lacks (one festival process for them all). */
async function festivalPronunciations(
  words: readonly string[],
  opts: { workDir: string; signal?: AbortSignal },
): Promise<Pronunciations> {
  const found: Pronunciations = new Map();
  if (words.length === 0) return found;
  if (!(await detectLocalEngines()).festival) return found;
  // Letter-to-sound gives nothing for some apostrophe forms ("gleeb's"): try without as well.
  const queries = words.flatMap((w) => (w.includes("'") ? [w, w.replace(/'/g, '')] : [w]));
  const list = queries.map(schemeString).join(' ');
  const script = join(opts.workDir, 'lexicon.scm');
  await writeFile(
    script,
    `(lex.select "cmu")\n(mapcar (lambda (w) (format t "%s\\t%l\\n" w (lex.lookup w nil))) (list ${list}))\n`,
  );
  const out = await runTool('festival', ['--batch', script], { signal: opts.signal, timeoutMs: 60_000 });
  const byQuery = new Map<string, string[]>();
  for (const line of out.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0) byQuery.set(line.slice(0, tab), parseLexEntry(line.slice(tab + 1)));
  }
  for (const w of words) {
    const phones = [w, w.replace(/'/g, '')].map((q) => byQuery.get(q)).find((p) => p && p.length > 0);
    if (phones) found.set(w, [phones]);
  }
  return found;
}

/**
 * Pronunciations for every word (dictionary first, festival for the rest). Throws naming the words
 * that have none.
 */
export async function pronounce(
  words: readonly string[],
  opts: { workDir: string; signal?: AbortSignal },
): Promise<Pronunciations> {
  const dict = await loadCmuDict();
  const out: Pronunciations = new Map();
  const missing: string[] = [];
  for (const w of new Set(words)) {
    const variants = dict.get(w);
    if (variants) out.set(w, variants);
    else missing.push(w);
  }
  const guessed = await festivalPronunciations(missing, opts);
  const unknown = missing.filter((w) => !guessed.has(w));
  if (unknown.length > 0) {
    throw new Error(`alignment: no pronunciation for ${unknown.slice(0, 5).join(', ')}`);
  }
  for (const [w, v] of guessed) out.set(w, v);
  return out;
}
