// test-database: none
// The articulation timeline of recordings with the real tools (Silero VAD, pocketsphinx recognition
// and forced alignment): speech synthesized by the local provider, then treated as a plain recording,
// so festival's own phone times are the truth to compare with. With the transcript the phones are
// aligned (source "alignment"); without it the words are recognized and only the confident ones drive
// the mouth; in 10 dB of background music the same holds and the leading pause stays a pause; a
// transcript that does not match the audio falls back with a note instead of failing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { alignTranscript } from '../../src/speech/align.js';
import { MIN_CONFIDENCE, articulate, type ArticulationDeps } from '../../src/speech/articulation.js';
import { LocalRecognitionProvider } from '../../src/speech/recognition/local.js';
import type { SpeechTimeline } from '../../src/speech/types.js';
import { detectSpeech } from '../../src/speech/vad.js';
import { mixAtSnr, musicNoise, writeWav16 } from '../helpers/noise.js';
import { recordingWithLead } from '../helpers/engine-drive.js';

const TEXT = 'Bob bought a map. Pam ate pie by the blue boat. We see two cool moons.';
/** Silence before the speech, ms. */
const LEAD_MS = 700;

const tools: ArticulationDeps = {
  detectSpeech: async (path, signal) => (await detectSpeech(path, { signal })).segments,
  recognizer: new LocalRecognitionProvider(),
  align: alignTranscript,
};

function median(xs: number[]): number {
  const v = [...xs].sort((a, b) => a - b);
  return v[v.length >> 1];
}

describe('articulation of recordings', { timeout: 300_000 }, () => {
  let dir: string;
  let clean: string;
  let noisy: string;
  let durationMs: number;
  let truth: SpeechTimeline;

  before(async () => {
    dir = await makeTempDir('articulation-test');
    const rec = await recordingWithLead(TEXT, LEAD_MS, dir);
    truth = rec.truth;
    durationMs = rec.durationMs;
    clean = rec.path;
    noisy = join(dir, 'noisy.wav');
    await writeWav16(noisy, mixAtSnr(rec.samples, musicNoise(rec.samples.length, 16000, 3), 10));
  });
  after(async () => {
    if (dir) await removeTempDir(dir);
  });

  it('aligns a known transcript: every word placed near its true time, p/b/m phones included', async () => {
    const a = await articulate({ audioPath: clean, durationMs, transcript: TEXT, workDir: dir }, tools);
    assert.equal(a.primary, 'alignment');
    assert.ok(a.speech && a.speech.length >= 1);
    assert.ok(a.speech[0].startMs >= LEAD_MS - 150, `speech starts at ${a.speech[0].startMs} ms`);
    const words = a.phonemes.filter((p) => p.word !== undefined);
    const starts = truth.words.map((w, i) => {
      const first = words.find((p) => p.word === i);
      assert.ok(first, `word ${i} (${w.text}) has phones`);
      return Math.abs(first.startMs - w.startMs);
    });
    assert.ok(median(starts) <= 50, `median word-start error ${median(starts)} ms`);
    const bilabials = a.phonemes.filter((p) => ['p', 'b', 'm'].includes(p.phone)).length;
    assert.equal(bilabials, truth.phonemes.filter((p) => ['p', 'b', 'm'].includes(p.phone)).length);
    assert.ok(a.spans.every((s) => s.source === 'alignment' || s.source === 'acoustic'));
    assert.ok(a.timings.alignmentMs > 0 && a.timings.recognitionMs === 0);
  });

  it('recognizes the words of a recording without transcript; unsure words fall back to acoustic shapes', async () => {
    const a = await articulate({ audioPath: clean, durationMs, workDir: dir }, tools);
    assert.ok(a.timings.recognitionMs > 0);
    const sources = new Set(a.spans.map((s) => s.source));
    assert.ok(
      [...sources].every((s) => s === 'recognition' || s === 'acoustic'),
      [...sources].join(),
    );
    for (const s of a.spans) {
      if (s.source === 'recognition') assert.ok(s.confidence >= MIN_CONFIDENCE, JSON.stringify(s));
    }
    // Phones only inside trusted spans.
    for (const p of a.phonemes.filter((x) => x.phone !== 'sil')) {
      assert.ok(
        a.trusted.some((t) => p.startMs >= t.startMs - 1 && p.endMs <= t.endMs + 1),
        `phone ${p.phone} at ${p.startMs} outside the trusted spans`,
      );
    }
  });

  it('in 10 dB of music: the pause before the speech is no speech, and the transcript still aligns', async () => {
    const a = await articulate({ audioPath: noisy, durationMs, transcript: TEXT, workDir: dir }, tools);
    assert.ok(a.speech && a.speech.length >= 1);
    assert.ok(a.speech[0].startMs >= LEAD_MS - 150, `speech found from ${a.speech[0].startMs} ms`);
    assert.equal(a.primary, 'alignment');
    const starts = truth.words.map((w, i) => {
      const first = a.phonemes.find((p) => p.word === i);
      return first ? Math.abs(first.startMs - w.startMs) : Infinity;
    });
    assert.ok(median(starts) <= 60, `median word-start error ${median(starts)} ms in noise`);
  });

  it('a transcript that does not match the audio falls back, with a note, instead of failing', async () => {
    const wrong =
      'Seventeen yellow giraffes quietly juggle xylophones under the northern lights tonight again.';
    const a = await articulate(
      { audioPath: clean, durationMs, transcript: wrong, workDir: dir },
      { ...tools, recognizer: null },
    );
    assert.notEqual(a.primary, 'alignment');
    assert.ok(a.notes.length >= 1, 'a note says why the transcript was not used');
    // Recognition is off here (as by default): a note says so too.
    assert.ok(
      a.notes.some((n) => /recognition is off/.test(n)),
      a.notes.join(' | '),
    );
    assert.ok(a.spans.every((s) => s.source === 'acoustic'));
    // Notes reach clients: no file paths or tool output in them.
    assert.ok(
      a.notes.every((n) => !n.includes('/')),
      a.notes.join(' | '),
    );
  });

  it('without voice activity detection it still works, and says so (the cause goes to the log only)', async () => {
    const problems: string[] = [];
    const a = await articulate(
      {
        audioPath: clean,
        durationMs,
        transcript: TEXT,
        workDir: dir,
        onProblem: (step, err) => problems.push(`${step}: ${(err as Error).message}`),
      },
      {
        ...tools,
        detectSpeech: () => Promise.reject(new Error('model missing at /opt/models/silero.onnx')),
      },
    );
    assert.equal(a.speech, null);
    assert.equal(a.primary, 'alignment');
    assert.match(a.notes.join(' '), /voice activity detection was unavailable/);
    assert.doesNotMatch(a.notes.join(' '), /silero|\/opt/);
    assert.deepEqual(problems, ['voice activity detection: model missing at /opt/models/silero.onnx']);
  });
});
