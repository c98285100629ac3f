// The languages catalogue: direct pairs, pivots through Spanish, and the pair check's answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkDubbingPair,
  dubbingLanguages,
  localRoutes,
  LOCAL_DIRECT_PAIRS,
} from '../../../src/domain/dubbing-languages.js';
import { AppError } from '../../../src/domain/errors.js';
import { chrF } from '../../../bench/translation-chrf.js';

test('pivots through Spanish only where no direct pair exists, and never back to the source', () => {
  const routes = localRoutes(LOCAL_DIRECT_PAIRS);
  const key = (r: { from: string; to: string }): string => `${r.from}>${r.to}`;
  assert.equal(new Set(routes.map(key)).size, routes.length, 'one route per pair');
  assert.equal(routes.find((r) => key(r) === 'en>es')?.quality, 'direct');
  for (const to of ['pt', 'pt-br', 'it', 'fr']) {
    const r = routes.find((x) => key(x) === `en>${to}`);
    assert.deepEqual([r?.quality, r?.via], ['pivot', 'es'], `en>${to}`);
  }
  assert.ok(routes.some((r) => key(r) === 'pt>en' && r.via === 'es'));
  assert.ok(!routes.some((r) => r.from === r.to));
  // Without the Spanish pairs there are no pivots.
  const noSpanish = localRoutes(LOCAL_DIRECT_PAIRS.filter((p) => p.from !== 'es' && p.to !== 'es'));
  assert.ok(noSpanish.every((r) => r.quality === 'direct'));
});

test('nothing installed: the local provider is unavailable and refuses every pair', () => {
  const cat = dubbingLanguages({ localPairs: [], openai: true, deepl: false });
  assert.equal(cat.providers.find((p) => p.provider === 'local')?.available, false);
  assert.throws(
    () => checkDubbingPair(cat, 'local', 'en', 'es'),
    (err) => err instanceof AppError && err.code === 'dubbing_language_unsupported' && err.status === 422,
  );
  const remote = checkDubbingPair(cat, 'openai', 'auto', 'ja');
  assert.deepEqual([remote.from, remote.to, remote.route], [null, 'ja', null]);
});

test('chrF: 100 for the reference itself, 0 with no character in common, in between otherwise', () => {
  assert.equal(chrF(['Hola mundo.'], ['Hola mundo.']), 100);
  assert.equal(chrF(['xyz'], ['abc']), 0);
  const partial = chrF(['Hola amigo.'], ['Hola mundo.']);
  assert.ok(partial > 0 && partial < 100);
  // Whitespace does not count.
  assert.equal(chrF(['Hola   mundo.'], ['Hola mundo.']), 100);
});
