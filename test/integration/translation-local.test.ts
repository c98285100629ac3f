// Offline translation with the real Apertium pairs Debian ships (scripts/install-system-packages.sh):
// English into Spanish and Catalan, names, numbers and punctuation kept, unknown words unmarked,
// pivots through Spanish, and text that is not the source language refused with a typed error.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApertiumTranslationProvider, installedApertiumPairs } from '../../src/translation/apertium.js';
import { TranslationError } from '../../src/translation/types.js';

describe('local translation (Apertium)', () => {
  let provider: ApertiumTranslationProvider;

  before(async () => {
    const pairs = await installedApertiumPairs();
    assert.ok(pairs.length >= 10, 'the Apertium pairs are installed (scripts/install-system-packages.sh)');
    provider = new ApertiumTranslationProvider({ pairs });
  });

  const SEGMENTS = [
    { id: 'a', text: 'Hello, my name is Maria Gonzalez and I have 3 dogs.' },
    { id: 'b', text: 'The meeting starts at   10:30 on Friday!' },
    { id: 'c', text: '' },
    { id: 'd', text: 'Do you like flurbish?' },
  ];

  test('English into Spanish: ids and order kept, names, numbers and punctuation kept', async () => {
    const out = await provider.translate(SEGMENTS, { from: 'en', to: 'es' });
    assert.deepEqual(
      out.map((s) => s.id),
      ['a', 'b', 'c', 'd'],
    );
    assert.match(out[0]!.text, /^Hola, mi nombre es Maria Gonzalez y tengo 3 perros\.$/);
    assert.match(out[1]!.text, /10:30/);
    assert.match(out[1]!.text, /viernes!$/);
    assert.equal(out[2]!.text, '');
    // An unknown word stays as written, without Apertium's `*` mark.
    assert.match(out[3]!.text, /\bflurbish\?$/);
    assert.doesNotMatch(out.map((s) => s.text).join(' '), /[*#@]/);
  });

  test('English into Catalan', async () => {
    const out = await provider.translate(SEGMENTS.slice(0, 2), { from: 'en', to: 'ca' });
    assert.equal(out[0]!.text, 'Hola, el meu nom és Maria Gonzalez i tinc 3 gossos.');
    assert.match(out[1]!.text, /10:30 .*divendres!$/);
  });

  test('English into Portuguese goes through Spanish', async () => {
    assert.equal(provider.route('en', 'pt')?.via, 'es');
    const out = await provider.translate(SEGMENTS.slice(0, 1), { from: 'en', to: 'pt' });
    assert.match(out[0]!.text, /Maria Gonzalez/);
    assert.match(out[0]!.text, /3 cães\.$/);
  });

  test('a sentence that is not in the source language fails with the segment named', async () => {
    await assert.rejects(
      provider.translate(
        [
          { id: 'ok', text: 'Good morning.' },
          { id: 'de', text: 'Der Hund läuft schnell nach Hause' },
        ],
        {
          from: 'en',
          to: 'es',
        },
      ),
      (err) => err instanceof TranslationError && err.reason === 'untranslatable' && err.segmentId === 'de',
    );
  });

  test('a pair without a route is refused', async () => {
    await assert.rejects(
      provider.translate(SEGMENTS, { from: 'en', to: 'ja' }),
      (err) => err instanceof TranslationError && err.reason === 'unsupported',
    );
  });

  test('an aborted translation stops', async () => {
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(
      provider.translate(SEGMENTS, { from: 'en', to: 'es', signal: ac.signal }),
      (err) => err instanceof TranslationError && err.reason === 'aborted',
    );
  });
});
