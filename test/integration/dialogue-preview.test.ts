// test-database: none
// Dialogue-edit previews on real speech. Two recordings: a festival (slt-hts) sentence, whose word
// times festival knows exactly, for the precise checks; and the real latentsync_demo2.wav ("food" four
// times), with word times from pocketsphinx, for reuse, voice matching and removal on a real voice.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { alignTranscript } from '../../src/speech/align.js';
import {
  DialogueEditError,
  EditTooLongError,
  buildPreview,
  validateEdits,
  type DialogueEdit,
  type PreviewResult,
  type SourceWord,
} from '../../src/speech/dialogue/index.js';
import { readPcm, writePcm, type Pcm } from '../../src/speech/dialogue/pcm.js';
import { LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import { praatAvailable } from '../../src/speech/praat.js';
import { detectLocalEngines } from '../../src/speech/tools.js';
import { measureVoiceProfile, semitones } from '../../src/speech/voice-profile.js';
import { fixture } from '../helpers/paths.js';
import { recognize } from './dialogue-render-support.js';

const engines = await detectLocalEngines();
const ready =
  engines.festival && engines.pocketsphinx && engines.rhvoice.length > 0 && (await praatAvailable());
const skip = ready ? false : 'festival, RHVoice, pocketsphinx and praat are needed';

const SENTENCE =
  'The red boat passed the blue boat near the old red house. Then we went home for a warm dinner.';
const DEMO2 = fixture('media/latentsync_demo2.wav');
/** "food" in latentsync_demo2.wav (research notes, pocketsphinx), seconds. */
const FOODS: [number, number][] = [
  [4.58, 4.98],
  [5.19, 5.7],
  [9.71, 9.86],
  [14.95, 15.47],
];
const HALF_FADE_MS = 4;

let root = '';
let runs = 0;
const workDir = async () => {
  const d = join(root, `run${runs++}`);
  await mkdir(d);
  return d;
};

const ms2s = (ms: number, rate: number) => Math.round((ms * rate) / 1000);

/** Largest |x[n+1] - x[n]| over [a, b). */
function largestJump(x: Int16Array, a: number, b: number): number {
  let m = 0;
  for (let i = Math.max(1, a); i < Math.min(x.length, b); i++) m = Math.max(m, Math.abs(x[i] - x[i - 1]));
  return m;
}

/** The recording's own largest neighbouring-sample jump inside its words. */
function ownJump(src: Pcm, words: SourceWord[]): number {
  return Math.max(
    ...words.map((w) =>
      largestJump(src.samples, ms2s(w.startMs, src.sampleRate), ms2s(w.endMs, src.sampleRate)),
    ),
  );
}

/**
 * Every preview sample outside the slots (and their crossfades) equals the source's after the shift
 * the slots before it make. Slots are whole ms, cuts are exact samples: the shift of each untouched
 * stretch is found within +-2 ms and must then hold for the whole stretch.
 */
function assertUntouched(src: Pcm, out: Pcm, r: PreviewResult, windowStartMs = 0): void {
  const rate = src.sampleRate;
  const guard = ms2s(HALF_FADE_MS + 2, rate);
  const edges = [{ outEnd: 0, srcEnd: ms2s(windowStartMs, rate) }];
  const stretches: { from: number; to: number; srcFrom: number }[] = [];
  for (const s of r.slots) {
    const outStart = ms2s(s.outputStartMs, rate);
    const last = edges[edges.length - 1];
    stretches.push({ from: last.outEnd, to: outStart, srcFrom: last.srcEnd });
    edges.push({
      outEnd: ms2s(s.outputStartMs + s.outputDurationMs, rate),
      srcEnd: ms2s(s.sourceStartMs + s.sourceDurationMs, rate),
    });
  }
  const last = edges[edges.length - 1];
  stretches.push({ from: last.outEnd, to: out.samples.length, srcFrom: last.srcEnd });
  let checked = 0;
  for (const [k, st] of stretches.entries()) {
    const from = st.from + (k > 0 ? guard : 0);
    const to = st.to - (k < stretches.length - 1 ? guard : 0);
    if (to - from < 10) continue;
    const equalAt = (shift: number) => {
      for (let n = from; n < to; n++)
        if (out.samples[n] !== src.samples[st.srcFrom - st.from + n + shift]) return false;
      return true;
    };
    const tolerance = ms2s(2, rate);
    let found = false;
    for (let d = -tolerance; d <= tolerance && !found; d++) found = equalAt(d);
    assert.ok(found, `stretch ${k} (${from}..${to}) is not the source's samples`);
    checked += to - from;
  }
  assert.ok(
    checked > out.samples.length * 0.7,
    `only ${checked} of ${out.samples.length} samples were checked`,
  );
}

/** Largest jump within 1 ms of every join at a slot's edges. */
function joinJumps(out: Pcm, r: PreviewResult): number[] {
  const rate = out.sampleRate;
  const w = ms2s(HALF_FADE_MS + 1, rate);
  return r.slots.flatMap((s) =>
    [s.outputStartMs, s.outputStartMs + s.outputDurationMs].map((t) =>
      largestJump(out.samples, ms2s(t, rate) - w, ms2s(t, rate) + w),
    ),
  );
}

/** Highest normalised correlation of `piece` against `src` anywhere in [from, to) (samples). */
function bestCorrelation(piece: Int16Array, src: Int16Array, from: number, to: number): number {
  let best = -1;
  const pp = piece.reduce((a, v) => a + v * v, 0);
  for (let o = Math.max(0, from); o + piece.length <= Math.min(src.length, to); o++) {
    let xy = 0;
    let yy = 0;
    for (let i = 0; i < piece.length; i++) {
      xy += piece[i] * src[o + i];
      yy += src[o + i] * src[o + i];
    }
    if (yy > 0) best = Math.max(best, xy / Math.sqrt(pp * yy));
  }
  return best;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('dialogue-edit preview', { skip }, () => {
  let recording = ''; // the festival sentence
  let recWords: SourceWord[] = [];
  let rec: Pcm;
  let demoWords: SourceWord[] = [];
  let demo: Pcm;
  const recId = (text: string, nth = 0) => recWords.filter((w) => w.text.toLowerCase() === text)[nth].id;
  const demoId = (text: string) => demoWords.find((w) => w.text === text)!.id;
  const timed = async (
    f: () => Promise<PreviewResult>,
    label: string,
    t: { diagnostic: (s: string) => void },
  ) => {
    const t0 = performance.now();
    const r = await f();
    t.diagnostic(
      `${label}: built in ${Math.round(performance.now() - t0)} ms for ${r.previewDurationMs} ms of preview`,
    );
    return r;
  };

  before(async () => {
    root = await makeTempDir('dialogue-preview');
    const dir = await workDir();
    const res = await new LocalSynthesisProvider().synthesize({
      text: SENTENCE,
      providerVoiceId: 'slt-hts',
      settings: {},
      workDir: dir,
    });
    recording = res.audioPath;
    recWords = res.timeline.words.map((w, i) => ({ id: `w${i}`, ...w }));
    rec = await readPcm(recording, { workDir: dir });
    demoWords = await recognize(DEMO2);
    demo = await readPcm(DEMO2, { workDir: dir });
  });
  after(() => removeTempDir(root));

  const preview = async (sourceWav: string, words: SourceWord[], edits: DialogueEdit[], extra = {}) =>
    buildPreview({ sourceWav, words, edits, voice: null, workDir: await workDir(), ...extra });

  it('reuses a word said elsewhere: its samples are the other occurrence, the rest is the source', async (t) => {
    const blue = recId('blue');
    const r = await timed(
      () => preview(recording, recWords, [{ kind: 'change', wordId: blue, replacement: 'Red,' }]),
      'reuse (festival)',
      t,
    );
    assert.deepEqual(r.reused, [{ slot: 0, words: ['Red'] }]);
    assert.equal(r.partial, null);
    const out = await readPcm(r.previewWav, { workDir: root });
    assert.equal(out.sampleRate, rec.sampleRate);
    assertUntouched(rec, out, r);
    // The slot's middle (clear of the fades) is found in the source inside one of the two other "red"s.
    const s = r.slots[0];
    const rate = rec.sampleRate;
    const piece = out.samples.subarray(
      ms2s(s.outputStartMs + 10, rate),
      ms2s(s.outputStartMs + s.outputDurationMs - 10, rate),
    );
    const corr = [0, 1].map((k) => {
      const w = recWords.find((x) => x.id === recId('red', k))!;
      return bestCorrelation(piece, rec.samples, ms2s(w.startMs - 30, rate), ms2s(w.endMs + 30, rate));
    });
    t.diagnostic(`correlation with the two other "red": ${corr.map((c) => c.toFixed(4)).join(', ')}`);
    assert.ok(Math.max(...corr) > 0.999, `best correlation ${Math.max(...corr)}`);
    const newWord = r.resultWords.find((w) => w.id === `${blue}_e0`)!;
    assert.equal(newWord.text, 'Red');
    assert.ok(
      newWord.startMs >= s.outputStartMs && newWord.endMs <= s.outputStartMs + s.outputDurationMs + 1,
    );
    for (const j of joinJumps(out, r)) assert.ok(j <= ownJump(rec, recWords), `join jump ${j}`);
  });

  it('reuses "food" from the speaker\'s own recording (latentsync_demo2)', async (t) => {
    const countries = demoId('countries');
    const r = await timed(
      () => preview(DEMO2, demoWords, [{ kind: 'change', wordId: countries, replacement: 'food' }]),
      'reuse (demo2)',
      t,
    );
    assert.deepEqual(r.reused, [{ slot: 0, words: ['food'] }]);
    const out = await readPcm(r.previewWav, { workDir: root });
    assertUntouched(demo, out, r);
    const s = r.slots[0];
    const rate = demo.sampleRate;
    const piece = out.samples.subarray(
      ms2s(s.outputStartMs + 10, rate),
      ms2s(s.outputStartMs + s.outputDurationMs - 10, rate),
    );
    const corr = FOODS.map(([a, b]) =>
      bestCorrelation(piece, demo.samples, ms2s(a * 1000 - 100, rate), ms2s(b * 1000 + 100, rate)),
    );
    t.diagnostic(`correlation with the four "food": ${corr.map((c) => c.toFixed(4)).join(', ')}`);
    assert.ok(Math.max(...corr) > 0.999, `best correlation ${Math.max(...corr)}`);
    const jumps = joinJumps(out, r);
    t.diagnostic(
      `join jumps ${jumps.join(', ')}; recording's own largest in speech ${ownJump(demo, demoWords)}`,
    );
    for (const j of jumps) assert.ok(j <= ownJump(demo, demoWords));
  });

  it('synthesizes a new word in a voice matched to the speaker (pitch within 2 semitones)', async (t) => {
    const internet = demoId('internet');
    const r = await timed(
      () => preview(DEMO2, demoWords, [{ kind: 'change', wordId: internet, replacement: 'fresh tomatoes' }]),
      'synthesis (demo2)',
      t,
    );
    assert.deepEqual(r.reused, []);
    assert.ok(r.voiceProfile, 'a profile was measured from the source');
    const out = await readPcm(r.previewWav, { workDir: root });
    assertUntouched(demo, out, r);
    const s = r.slots[0];
    const rate = demo.sampleRate;
    const dir = await workDir();
    await writePcm(join(dir, 'span.wav'), {
      samples: out.samples.subarray(
        ms2s(s.outputStartMs, rate),
        ms2s(s.outputStartMs + s.outputDurationMs, rate),
      ),
      sampleRate: rate,
    });
    const [span, speaker] = await Promise.all([
      measureVoiceProfile(join(dir, 'span.wav'), { workDir: dir }),
      measureVoiceProfile(DEMO2, { workDir: dir }),
    ]);
    const st = semitones(speaker.profile.pitchMedianHz, span.profile.pitchMedianHz);
    t.diagnostic(
      `speaker ${speaker.profile.pitchMedianHz} Hz, synthesized span ${span.profile.pitchMedianHz} Hz (${st.toFixed(2)} st, base ${r.voiceProfile.baseVoice})`,
    );
    assert.ok(span.voicedSeconds > 0.2);
    assert.ok(Math.abs(st) <= 2, `${st} semitones from the speaker`);
    const jumps = joinJumps(out, r);
    t.diagnostic(
      `join jumps ${jumps.join(', ')}; recording's own largest in speech ${ownJump(demo, demoWords)}`,
    );
    for (const j of jumps) assert.ok(j <= ownJump(demo, demoWords));
    const news = r.resultWords.filter((w) => w.id.startsWith(`${internet}_e`));
    assert.deepEqual(
      news.map((w) => w.text),
      ['fresh', 'tomatoes'],
    );
  });

  it('new words are found at their slots by forced alignment of the expected text', async (t) => {
    const edits: DialogueEdit[] = [
      { kind: 'change', wordId: recId('blue'), replacement: 'green' },
      { kind: 'change', wordId: recId('dinner'), replacement: 'pizza' },
    ];
    const r = await timed(() => preview(recording, recWords, edits), 'two synthesized changes (festival)', t);
    assert.deepEqual(r.reused, []);
    assert.equal(r.partial, null, 'a clean recording has no background to miss');
    const aligned = await alignTranscript(r.previewWav, r.resultWords.map((w) => w.text).join(' '), {
      workDir: await workDir(),
    });
    assert.equal(aligned.words.length, r.resultWords.length);
    const errors = r.resultWords.flatMap((w, i) =>
      w.id.includes('_e') ? [Math.abs(aligned.words[i].startMs - w.startMs)] : [],
    );
    const all = r.resultWords.map((w, i) => Math.abs(aligned.words[i].startMs - w.startMs));
    t.diagnostic(`new-word start errors ${errors.join(', ')} ms; all words median ${median(all)} ms`);
    assert.equal(errors.length, 2);
    assert.ok(median(errors) < 60, `median start error ${median(errors)} ms`);
    const out = await readPcm(r.previewWav, { workDir: root });
    assertUntouched(rec, out, r);
    for (const j of joinJumps(out, r)) assert.ok(j <= ownJump(rec, recWords), `join jump ${j}`);
  });

  it('a removal closes the gap keeping a breath-length pause', async (t) => {
    const i = demoWords.findIndex((w) => w.text === 'friendship');
    const ids = [demoWords[i].id, demoWords[i + 1].id];
    const r = await timed(
      () => preview(DEMO2, demoWords, [{ kind: 'remove', wordIds: ids }]),
      'removal (demo2)',
      t,
    );
    const s = r.slots[0];
    assert.equal(s.kind, 'remove');
    const srcMs = Math.round((demo.samples.length * 1000) / demo.sampleRate);
    assert.ok(Math.abs(r.previewDurationMs - (srcMs - (s.sourceDurationMs - s.outputDurationMs))) <= 1);
    // The slot runs from the end of the word before to the start of the word after.
    const silence =
      demoWords[i + 2].startMs - demoWords[i - 1].endMs - (demoWords[i + 1].endMs - demoWords[i].startMs);
    t.diagnostic(
      `removed ${s.sourceDurationMs} ms, kept a ${s.outputDurationMs} ms pause of ${silence} ms silence`,
    );
    assert.ok(Math.abs(s.sourceStartMs - demoWords[i - 1].endMs) <= 1);
    assert.ok(s.outputDurationMs <= Math.min(250, silence + 1));
    assert.ok(s.outputDurationMs >= Math.min(150, silence) - 1);
    assert.ok(!r.resultWords.some((w) => ids.includes(w.id)));
    const out = await readPcm(r.previewWav, { workDir: root });
    assertUntouched(demo, out, r);
    const jump = largestJump(
      out.samples,
      ms2s(s.outputStartMs, demo.sampleRate),
      ms2s(s.outputStartMs + s.outputDurationMs, demo.sampleRate),
    );
    assert.ok(jump <= ownJump(demo, demoWords), `jump ${jump} in the closed gap`);
    // The word after the gap moved by exactly the removed time.
    const next = r.resultWords.find((w) => w.id === demoWords[i + 2].id)!;
    assert.ok(
      Math.abs(next.startMs - (demoWords[i + 2].startMs - (s.sourceDurationMs - s.outputDurationMs))) <= 2,
    );
  });

  it('works inside a window only', async () => {
    const boat = recWords.find((w) => w.text === 'boat')!;
    const house = recWords.find((w) => w.text === 'house')!;
    const r = await preview(recording, recWords, [{ kind: 'remove', wordIds: [recId('old')] }], {
      windowStartMs: boat.startMs,
      windowEndMs: house.endMs,
    });
    assert.equal(r.resultWords[0].id, boat.id);
    assert.equal(r.resultWords[0].startMs, 0);
    assert.equal(r.resultWords.at(-1)!.id, house.id);
    const s = r.slots[0];
    assert.ok(
      Math.abs(
        r.previewDurationMs - (house.endMs - boat.startMs - (s.sourceDurationMs - s.outputDurationMs)),
      ) <= 1,
    );
    const out = await readPcm(r.previewWav, { workDir: root });
    assertUntouched(rec, out, r, boat.startMs);
    await assert.rejects(
      preview(recording, recWords, [{ kind: 'remove', wordIds: [recId('dinner')] }], {
        windowEndMs: house.endMs,
      }),
      (e: unknown) => e instanceof DialogueEditError && e.reason === 'word_outside_window',
    );
  });

  it('speaks a pronunciation when one is given (never reused)', async () => {
    const blue = recId('blue');
    const r = await preview(recording, recWords, [
      { kind: 'change', wordId: blue, replacement: 'red', pronunciation: 'read' },
    ]);
    assert.deepEqual(r.reused, []);
    const w = r.resultWords.find((x) => x.id === `${blue}_e0`);
    assert.equal(w?.text, 'red');
    const s = r.slots[0];
    assert.ok(
      w.startMs >= s.outputStartMs && w.endMs <= s.outputStartMs + s.outputDurationMs,
      'word in its slot',
    );
  });

  it('reports synthesized slots that lack the background under the source (partial)', async () => {
    const dir = await workDir();
    const noisy = join(dir, 'noisy.wav');
    // Pink noise at about -42 dBFS under the whole recording: a room or music bed.
    await runFfmpeg(
      [
        '-i', recording, '-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=0.05:r=${rec.sampleRate}`,
        '-filter_complex', 'amix=inputs=2:duration=first:normalize=0', '-ac', '1', '-c:a', 'pcm_s16le', noisy,
      ], // prettier-ignore
      { timeoutMs: 60_000 },
    );
    const edits: DialogueEdit[] = [
      { kind: 'change', wordId: recId('blue'), replacement: 'red' },
      { kind: 'change', wordId: recId('dinner'), replacement: 'pizza' },
    ];
    const r = await preview(noisy, recWords, edits);
    assert.deepEqual(r.reused, [{ slot: 0, words: ['red'] }]);
    // The reused word brings its own background; the synthesized one does not.
    assert.deepEqual(r.partial, { failedSlots: [1], reason: 'background_bed_missing' });
  });

  it('refuses an edited span that becomes implausibly long (EDIT_TOO_LONG)', async () => {
    const the = recId('the');
    const long =
      'an extraordinarily long and winding replacement that nobody could possibly have meant to say here';
    await assert.rejects(
      preview(recording, recWords, [{ kind: 'change', wordId: the, replacement: long }]),
      (e: unknown) => {
        assert.ok(e instanceof EditTooLongError);
        assert.equal(e.code, 'EDIT_TOO_LONG');
        assert.equal(e.spanText, long);
        assert.deepEqual(e.wordIds, [the]);
        assert.ok(e.outputDurationMs > 3 * e.sourceDurationMs + 2000);
        return true;
      },
    );
  });
});

describe('validateEdits', () => {
  const words: SourceWord[] = ['a', 'b', 'c', 'd'].map((text, i) => ({
    id: `w${i}`,
    text,
    startMs: i * 100,
    endMs: i * 100 + 80,
  }));
  const opts = { sourceDurationMs: 1000 };
  const refuses = (
    w: SourceWord[],
    edits: unknown[],
    reason: string,
    field: string,
    o: { sourceDurationMs: number; maxEdits?: number } = opts,
  ) =>
    assert.throws(
      () => validateEdits(w, edits as DialogueEdit[], o),
      (e: unknown) => e instanceof DialogueEditError && e.reason === reason && e.field === field,
      `${reason} at ${field}`,
    );

  it('accepts edits and resolves them in source order', () => {
    const r = validateEdits(
      words,
      [
        { kind: 'change', wordId: 'w3', replacement: 'x' },
        { kind: 'remove', wordIds: ['w0', 'w1'] },
      ],
      opts,
    );
    assert.deepEqual(
      r.map((e) => [e.index, e.first, e.last]),
      [
        [1, 0, 1],
        [0, 3, 3],
      ],
    );
  });

  it('refuses each kind of bad edit with its reason and field', () => {
    refuses(words, [], 'no_edits', 'edits');
    refuses(words, [{ kind: 'change', wordId: 'w9', replacement: 'x' }], 'unknown_word', 'edits[0].wordId');
    refuses(words, [{ kind: 'remove', wordIds: ['w1', 'w1'] }], 'duplicate_word_id', 'edits[0].wordIds[1]');
    refuses(
      words,
      [{ kind: 'remove', wordIds: ['w0', 'w2'] }],
      'removal_not_contiguous',
      'edits[0].wordIds[1]',
    );
    refuses(
      words,
      [{ kind: 'remove', wordIds: ['w1', 'w0'] }],
      'removal_not_contiguous',
      'edits[0].wordIds[1]',
    );
    refuses(words, [{ kind: 'remove', wordIds: [] }], 'removal_empty', 'edits[0].wordIds');
    refuses(
      words,
      [{ kind: 'change', wordId: 'w0', replacement: '  ?! ' }],
      'replacement_blank',
      'edits[0].replacement',
    );
    refuses(
      words,
      [{ kind: 'change', wordId: 'w0', replacement: 'x', pronunciation: ' ' }],
      'replacement_blank',
      'edits[0].pronunciation',
    );
    refuses(
      words,
      [
        { kind: 'remove', wordIds: ['w1', 'w2'] },
        { kind: 'change', wordId: 'w2', replacement: 'x' },
      ],
      'word_edited_twice',
      'edits[1].wordId',
    );
    refuses(words, [{ kind: 'remove', wordIds: ['w0'], startMs: 0 }], 'bad_edit', 'edits[0].startMs');
    refuses(words, [{ kind: 'swap', wordId: 'w0' }], 'bad_edit', 'edits[0].kind');
    const many = words.map((w) => ({ kind: 'remove', wordIds: [w.id] }));
    refuses(words, many, 'too_many_edits', 'edits', { sourceDurationMs: 1000, maxEdits: 3 });
  });

  it('refuses word ids and timings that cannot be spliced', () => {
    const edit = [{ kind: 'remove', wordIds: ['w0'] }];
    const dup = words.map((w, i) => (i === 2 ? { ...w, id: 'w1' } : w));
    refuses(dup, edit, 'duplicate_word_id', 'transcript.words[2].id');
    refuses(words, edit, 'word_timing_invalid', 'transcript.words[3].endMs', { sourceDurationMs: 350 });
    const negative = words.map((w, i) => (i === 0 ? { ...w, startMs: -5 } : w));
    refuses(negative, edit, 'word_timing_invalid', 'transcript.words[0].startMs');
    const backwards = words.map((w, i) => (i === 1 ? { ...w, endMs: w.startMs } : w));
    refuses(backwards, edit, 'word_timing_invalid', 'transcript.words[1].endMs');
    const overlapping = words.map((w, i) => (i === 2 ? { ...w, startMs: 150 } : w));
    refuses(overlapping, edit, 'word_timing_invalid', 'transcript.words[2].startMs');
  });
});
