// Translation quality of the offline pairs: chrF of Apertium's output (the local provider, as the
// service runs it) against the reference translations in test/fixtures/translation-reference.json,
// written for this project. chrF (Popović 2015): character n-grams of orders 1 to 6, whitespace left
// out, n-gram counts summed over the corpus, precision and recall averaged over the orders, F with
// beta 2 (recall weighs twice as much), on a 0-100 scale.
//
//   node --import tsx bench/translation-chrf.ts
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApertiumTranslationProvider, installedApertiumPairs } from '../src/translation/apertium.js';

const ORDER = 6;
const BETA = 2;

function ngrams(text: string, n: number): Map<string, number> {
  const chars = [...text.replace(/\s+/g, '')];
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= chars.length; i++) {
    const g = chars.slice(i, i + n).join('');
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  return counts;
}

/** Corpus chrF of hypotheses against one reference each, 0-100. */
export function chrF(hypotheses: readonly string[], references: readonly string[]): number {
  let precision = 0;
  let recall = 0;
  for (let n = 1; n <= ORDER; n++) {
    let match = 0;
    let hypTotal = 0;
    let refTotal = 0;
    hypotheses.forEach((hyp, i) => {
      const h = ngrams(hyp, n);
      const r = ngrams(references[i]!, n);
      for (const [g, c] of h) match += Math.min(c, r.get(g) ?? 0);
      for (const c of h.values()) hypTotal += c;
      for (const c of r.values()) refTotal += c;
    });
    precision += hypTotal > 0 ? match / hypTotal : 0;
    recall += refTotal > 0 ? match / refTotal : 0;
  }
  precision /= ORDER;
  recall /= ORDER;
  if (precision + recall === 0) return 0;
  const b2 = BETA * BETA;
  return (100 * (1 + b2) * precision * recall) / (b2 * precision + recall);
}

interface Reference {
  sentences: Record<'en' | 'es' | 'ca', string>[];
}

async function main(): Promise<void> {
  const root = join(fileURLToPath(import.meta.url), '..', '..');
  const ref = JSON.parse(
    readFileSync(join(root, 'test', 'fixtures', 'translation-reference.json'), 'utf8'),
  ) as Reference;
  const provider = new ApertiumTranslationProvider({ pairs: await installedApertiumPairs() });
  const segments = ref.sentences.map((s, i) => ({ id: String(i), text: s.en }));
  // The source itself as a floor: what chrF gives text that was not translated at all.
  for (const to of ['es', 'ca'] as const) {
    const refs = ref.sentences.map((s) => s[to]);
    const out = await provider.translate(segments, { from: 'en', to });
    const score = chrF(
      out.map((s) => s.text),
      refs,
    );
    const floor = chrF(
      segments.map((s) => s.text),
      refs,
    );
    console.log(`en>${to}: chrF ${score.toFixed(1)} (untranslated English: ${floor.toFixed(1)})`);
    for (const s of out) console.log(`  ${s.text}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
