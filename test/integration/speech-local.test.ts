// test-database: none
// The local synthesis provider and the forced aligner on the real engines (festival, RHVoice,
// pocketsphinx): audio and timelines must agree with each other and with the text. A test skips only
// when its engine is not installed.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { alignTranscript } from '../../src/speech/align.js';
import { LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import { readWavInfo } from '../../src/speech/local-wav.js';
import { BILABIALS } from '../../src/speech/phones.js';
import { praatAvailable } from '../../src/speech/praat.js';
import { transcriptWords } from '../../src/speech/text.js';
import { detectLocalEngines, type LocalEngines } from '../../src/speech/tools.js';
import { SpeechProviderError, type SynthesisResult, type SpeechTimeline } from '../../src/speech/types.js';

const HARVARD =
  'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. ' +
  'It is easy to tell the depth of a well. These days a chicken leg is a rare dish.';

/** About 660 characters: more than one engine call and alignment. */
const LONG = `${HARVARD} Rice is often served in round bowls. The juice of lemons makes fine punch. The box was thrown beside the parked truck. The hogs were fed chopped corn and garbage. Four hours of steady work faced us. A large size in stockings is hard to sell. The boy was there when the sun rose. A pot of tea helps to pass the evening. Smoky fires lack flame and heat. The soft cushion broke the man's fall. The salt breeze came across from the sea.`;

let root: string;
let engines: LocalEngines;
let n = 0;
const provider = new LocalSynthesisProvider();

async function synth(text: string, voice: string, speed?: number): Promise<SynthesisResult> {
  const workDir = join(root, `s${n++}`);
  await mkdir(workDir);
  return provider.synthesize({ text, providerVoiceId: voice, settings: speed ? { speed } : {}, workDir });
}

function needFestival(t: TestContext): boolean {
  if (!engines.festival) t.skip('festival with cmu_us_slt_arctic_hts is not installed');
  return engines.festival;
}

function needRhvoice(t: TestContext): boolean {
  const ok = engines.rhvoice.includes('clb') && engines.pocketsphinx && engines.ffmpeg;
  if (!ok) t.skip('RHVoice (clb), pocketsphinx_batch or ffmpeg is not installed');
  return ok;
}

/** Start of the first 10 ms frame whose RMS passes 10 % of the loudest frame's. */
async function energyOnsetMs(wavPath: string): Promise<number> {
  const info = await readWavInfo(wavPath);
  const buf = await readFile(wavPath);
  const hop = Math.round(info.sampleRate / 100);
  const rms: number[] = [];
  for (let s = 0; (s + hop) * 2 <= info.dataBytes; s += hop) {
    let sum = 0;
    for (let k = 0; k < hop; k++) sum += buf.readInt16LE(info.dataOffset + (s + k) * 2) ** 2;
    rms.push(Math.sqrt(sum / hop));
  }
  const threshold = 0.1 * Math.max(...rms);
  return rms.findIndex((r) => r > threshold) * 10;
}

/** The checks every timeline must pass: words in the text's order, phones inside their words. */
function assertWellFormed(tl: SpeechTimeline, text: string, durationMs: number): void {
  assert.deepEqual(
    tl.words.map((w) => w.text.toLowerCase()),
    transcriptWords(text).map((w) => w.text.toLowerCase()),
  );
  for (let i = 1; i < tl.words.length; i++) assert.ok(tl.words[i].startMs >= tl.words[i - 1].startMs);
  for (const p of tl.phonemes) {
    assert.ok(p.startMs >= 0 && p.endMs <= durationMs && p.startMs < p.endMs, JSON.stringify(p));
    if (p.word === undefined) {
      assert.equal(p.phone, 'sil');
      continue;
    }
    const w = tl.words[p.word];
    assert.ok(p.startMs >= w.startMs && p.endMs <= w.endMs, `${p.phone} outside ${w.text}`);
  }
  for (const [i, w] of tl.words.entries()) {
    assert.ok(
      tl.phonemes.some((p) => p.word === i),
      `no phonemes for ${w.text}`,
    );
  }
}

before(async () => {
  root = await makeTempDir('speech-local');
  engines = await detectLocalEngines();
});
after(() => removeTempDir(root));

describe('local provider: festival slt-hts', () => {
  it('gives a mono 16-bit WAV whose native timeline matches the text and the audio', async (t) => {
    if (!needFestival(t)) return;
    const r = await synth(HARVARD, 'slt-hts');
    const info = await readWavInfo(r.audioPath);
    assert.equal(info.channels, 1);
    assert.equal(info.bitsPerSample, 16);
    assert.equal(info.sampleRate, r.sampleRate);
    assert.ok(Math.abs(info.durationMs - r.durationMs) <= 1);
    const end = Math.max(...r.timeline.phonemes.map((p) => p.endMs));
    assert.ok(Math.abs(end - r.durationMs) < 50, `timeline ends at ${end}, audio at ${r.durationMs}`);
    assertWellFormed(r.timeline, HARVARD, r.durationMs);
    for (const [i, w] of r.timeline.words.entries()) {
      if (!/[pbm]/i.test(w.text)) continue;
      const phones = r.timeline.phonemes.filter((p) => p.word === i).map((p) => p.phone);
      assert.ok(
        phones.some((p) => BILABIALS.has(p)),
        `${w.text}: ${phones.join(' ')}`,
      );
    }
  });

  it('speaks faster at speed 1.5', async (t) => {
    if (!needFestival(t)) return;
    const [normal, fast] = [await synth(HARVARD, 'slt-hts', 1), await synth(HARVARD, 'slt-hts', 1.5)];
    assert.ok(fast.durationMs < normal.durationMs * 0.8, `${fast.durationMs} vs ${normal.durationMs}`);
  });

  it('speaks quotes, backslashes and parentheses as text, never as Scheme', async (t) => {
    if (!needFestival(t)) return;
    const marker = join(root, 'injected');
    const text = `He said "stop" (twice) \\ then")) (system "touch ${marker}") ("done`;
    const r = await synth(text, 'slt-hts');
    assert.equal(existsSync(marker), false);
    // festival spells the unknown path letter by letter: check the plain words, in order.
    const said = r.timeline.words.map((w) => w.text.toLowerCase());
    let at = -1;
    for (const w of ['he', 'said', 'stop', 'twice', 'then', 'system', 'touch', 'done']) {
      at = said.indexOf(w, at + 1);
      assert.ok(at >= 0, `"${w}" not spoken in order: ${said.join(' ')}`);
    }
    assert.ok(!said.includes('backslash'));
  });

  it('renders a long text (several sentences, ~600 characters) as one timeline', async (t) => {
    if (!needFestival(t)) return;
    const text = LONG;
    assert.ok(text.length > 550);
    const r = await synth(text, 'slt-hts');
    assertWellFormed(r.timeline, text, r.durationMs);
    const end = Math.max(...r.timeline.phonemes.map((p) => p.endMs));
    assert.ok(Math.abs(end - r.durationMs) < 50);
    // Several engine calls were joined: later chunks' times were shifted, not restarted at zero.
    assert.ok(r.timeline.words.at(-1)!.startMs > r.durationMs * 0.9);
  });
});

describe('local provider: RHVoice with forced alignment', () => {
  it('aligns every word, in order, starting where the energy rises', async (t) => {
    if (!needRhvoice(t)) return;
    const r = await synth(HARVARD, 'rhvoice-clb');
    assert.equal(r.sampleRate, 24000);
    assertWellFormed(r.timeline, HARVARD, r.durationMs);
    const onset = await energyOnsetMs(r.audioPath);
    const first = r.timeline.words[0].startMs;
    assert.ok(Math.abs(first - onset) <= 60, `first word at ${first} ms, energy rises at ${onset} ms`);
  });

  it('aligns a word no dictionary has (zorblax) through festival letter-to-sound', async (t) => {
    if (!needRhvoice(t) || !needFestival(t)) return;
    const text = 'The zorblax ate my sandwich.';
    const r = await synth(text, 'rhvoice-bdl');
    assertWellFormed(r.timeline, text, r.durationMs);
    const i = r.timeline.words.findIndex((w) => w.text === 'zorblax');
    const phones = r.timeline.phonemes.filter((p) => p.word === i).map((p) => p.phone);
    assert.equal(phones[0], 'z');
    assert.ok(phones.includes('b'));
  });

  it('aligns a long text chunk by chunk into one timeline', async (t) => {
    if (!needRhvoice(t)) return;
    const r = await synth(LONG, 'rhvoice-bdl');
    assertWellFormed(r.timeline, LONG, r.durationMs);
    assert.ok(r.timeline.words.at(-1)!.startMs > r.durationMs * 0.9);
  });

  it('speaks faster at speed 1.5', async (t) => {
    if (!needRhvoice(t)) return;
    const [normal, fast] = [await synth(HARVARD, 'rhvoice-clb', 1), await synth(HARVARD, 'rhvoice-clb', 1.5)];
    assert.ok(fast.durationMs < normal.durationMs * 0.8, `${fast.durationMs} vs ${normal.durationMs}`);
  });
});

describe('forced alignment', () => {
  it("matches festival's own word times on its rendering (median start error < 50 ms)", async (t) => {
    if (!needFestival(t) || !needRhvoice(t)) return;
    const r = await synth(HARVARD, 'slt-hts');
    const aligned = await alignTranscript(r.audioPath, HARVARD, { workDir: root });
    assert.equal(aligned.words.length, r.timeline.words.length);
    const errors = r.timeline.words
      .map((w, i) => Math.abs(w.startMs - aligned.words[i].startMs))
      .sort((a, b) => a - b);
    const median = errors[Math.floor(errors.length / 2)];
    assert.ok(median < 50, `median word-start error ${median} ms`);
  });

  it('throws a clear error when the text cannot fit the audio', async (t) => {
    if (!needRhvoice(t)) return;
    const wav = join(root, 'short.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', 'anoisesrc=d=0.5:a=0.1', '-ac', '1', '-ar', '16000', wav]);
    await assert.rejects(alignTranscript(wav, HARVARD, { workDir: root }), /alignment/);
  });
});

describe('local provider: stability', () => {
  it('changes the audio through convertVoice and keeps the timeline', async (t) => {
    if (!needFestival(t)) return;
    if (!(await praatAvailable())) return t.skip('praat is not installed');
    const plain = await synth(HARVARD, 'slt-hts');
    const workDir = join(root, `s${n++}`);
    await mkdir(workDir);
    const steady = await provider.synthesize({
      text: HARVARD,
      providerVoiceId: 'slt-hts',
      settings: { stability: 1 },
      workDir,
    });
    assert.deepEqual(steady.timeline, plain.timeline);
    assert.ok(Math.abs(steady.durationMs - plain.durationMs) <= 20);
    const [a, b] = await Promise.all([readFile(plain.audioPath), readFile(steady.audioPath)]);
    assert.notDeepEqual(a.subarray(1000, 5000), b.subarray(1000, 5000));
  });
});

describe('local provider: voices', () => {
  it('lists only installed voices, with labels', async () => {
    const voices = await provider.listVoices({});
    const ids = voices.map((v) => v.providerVoiceId);
    assert.equal(ids.includes('slt-hts'), engines.festival);
    assert.equal(ids.includes('rhvoice-clb'), engines.rhvoice.includes('clb') && engines.pocketsphinx);
    for (const v of voices) assert.ok(v.labels?.gender && v.labels.accent && v.labels.engine);
  });

  it('rejects an unknown voice with voice_not_found', async () => {
    await assert.rejects(synth('Hello.', 'evgeniy-eng'), (err) => {
      assert.ok(err instanceof SpeechProviderError);
      assert.equal(err.reason, 'voice_not_found');
      assert.equal(err.provider, 'local');
      return true;
    });
  });
});
