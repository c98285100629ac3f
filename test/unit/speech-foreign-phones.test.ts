// Phones of the other languages: the .pho reader, the repairs that keep MBROLA from dropping sounds,
// the viseme of every phone each language's voice uses, and telling the words of a sentence apart.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assignWords, parsePho, repairPho, visemeOfPhone } from '../../src/speech/foreign-phones.js';
import { ARPABET } from '../../src/speech/phones.js';

/** Every phone symbol espeak-ng 1.51 wrote for the test sentences of each language (and their repairs). */
const INVENTORY: Record<string, string[]> = {
  es: 'L T _ a b d e e/ f g i k l m n o o/ p r rr s t tS u w x jj J B'.split(' '),
  ca: 'S; Z; _ a b d e f g i k l m n o p r rr s t u w'.split(' '),
  eo: '_ a b d e f g i jj k l m n o p r rr s t tS u uI x'.split(' '),
  it: 'E1 O1 _ a a1 b d dZ e f i i/ i1 j k l m n o o1 p r s t tS u u1 v ts dz L J'.split(' '),
  fr: '2 E O R Z _ a a~ b d e f i k l m o o~ p t u v w y 9 H e~ 9~ N S z g j @ n s'.split(' '),
  pt: '6 6~ 6~j~ @ E R S Z _ a b d e f i j k l m n o oo p r s t u w L J z v g'.split(' '),
  'pt-BR': '_ a b d e ee f i im j k l m o om oo p s s2 t um v w y x r rr h z g n'.split(' '),
  hr: '_ a b d e g i j k l m n o p r s t tS ts u v S Z dZ L J x z f'.split(' '),
};

describe('other-language phones', () => {
  it('reads a .pho file: phones and durations, comments and pitch points ignored', () => {
    assert.deepEqual(parsePho('; comment\nm\t65\ni\t30\t 0 94 100 99\n_\t150\n\n'), [
      { phone: 'm', durMs: 65 },
      { phone: 'i', durMs: 30 },
      { phone: '_', durMs: 150 },
    ]);
  });

  it('repairs symbols a database lacks, keeping durations and pitch', () => {
    assert.equal(repairPho('e/\t24\t 0 110\nS;\t80\n_\t1', 'es2'), 'e\t24\t 0 110\ntS\t80\n_\t1');
    assert.equal(repairPho('i/\t30', 'it3'), 'i\t30');
    assert.equal(repairPho('oo\t30', 'pt1'), 'o\t30');
    assert.equal(repairPho('oo\t30', 'br3'), 'oo\t30');
  });

  it('repairs a glide before a pause, past the blank line espeak-ng writes there, or at the end', () => {
    // Italian "stai?" as espeak-ng writes it: the databases have no j-_ pair.
    const stai = 'a1\t84\t 0 113\nj\t115\t100 102\n\n_\t301\nj\t40\na\t80';
    assert.equal(repairPho(stai, 'it3'), 'a1\t84\t 0 113\ni\t115\t100 102\n\n_\t301\nj\t40\na\t80');
    assert.equal(repairPho('a\t80\nj\t60\n; end\n', 'it4'), 'a\t80\ni\t60\n; end\n');
    assert.equal(repairPho('a\t80\nj\t60\n_\t100', 'fr1'), 'a\t80\nj\t60\n_\t100');
  });

  for (const [lang, phones] of Object.entries(INVENTORY)) {
    it(`gives every ${lang} phone a mouth shape the engine knows`, () => {
      for (const p of phones) {
        const v = visemeOfPhone(p);
        assert.ok(v !== null && (v === 'sil' || ARPABET.has(v)), `${lang} ${p} -> ${v}`);
      }
    });
  }

  it('shuts the lips at bilabials, lip on teeth at labiodentals, rounds o u y, opens a, spreads i e', () => {
    for (const p of ['p', 'b', 'm']) assert.equal(visemeOfPhone(p), p);
    for (const p of ['f', 'v']) assert.equal(visemeOfPhone(p), p);
    for (const p of ['o', 'u', 'y', '2', 'o~', 'u1', 'um'])
      assert.ok(['ow', 'uw', 'uh', 'ao'].includes(visemeOfPhone(p)!), p);
    assert.equal(visemeOfPhone('a'), 'aa');
    for (const p of ['i', 'e', 'E', 'e/']) assert.ok(['iy', 'eh'].includes(visemeOfPhone(p)!), p);
    assert.equal(visemeOfPhone('Q!'), null);
  });

  it('tells words apart even where sounds merge across the join', () => {
    const sentence = ['_', 'm', 'i', 'p', 'a', 'D', 'r', 'e', '_', 'b', 'e', 'b', 'e'];
    const words = [
      ['m', 'i'],
      ['p', 'a', 'd', 'r', 'e'],
      ['b', 'e', 'b', 'e'],
    ];
    assert.deepEqual(assignWords(sentence, words), [undefined, 0, 0, 1, 1, 1, 1, 1, undefined, 2, 2, 2, 2]);
  });
});
