// test-database: none
// Recognition providers (local pocketsphinx, an OpenAI-compatible server through a protocol-level
// fake), refinement of their word times by forced alignment, the public transcript shape and the
// speaker estimate. Truth comes from festival, whose native word times are exact (research notes).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { probeMedia } from '../../src/media/probe.js';
import { LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import { LocalRecognitionProvider, parseSphinxTimes } from '../../src/speech/recognition/local.js';
import { OpenAiRecognitionProvider } from '../../src/speech/recognition/openai.js';
import { chunkWords, refineWordTimes } from '../../src/speech/recognition/refine.js';
import { applySpeakers, buildTranscript, estimateSpeakers } from '../../src/speech/recognition/transcript.js';
import type { RecognizedWord } from '../../src/speech/recognition/types.js';
import type { SynthesisResult, TimedWord } from '../../src/speech/types.js';
import { FakeTranscriptionServer } from '../helpers/fake-transcription-server.js';
import { failsWith, ORG_KEY, SERVER_KEY } from '../helpers/speech-results.js';
import { matchWords, median } from '../helpers/word-match.js';

const run = promisify(execFile);
const FIXTURES = '/work/shared/fixtures/media';
const TEXT =
  'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. ' +
  'It is easy to tell the depth of a well. These days a chicken leg is a rare dish. ' +
  'Rice is often served in round bowls. The juice of lemons makes fine punch.';

let workDir: string;
let speech: SynthesisResult;
before(async () => {
  workDir = await makeTempDir('speech-recognition-');
  speech = await new LocalSynthesisProvider().synthesize({
    text: TEXT,
    providerVoiceId: 'slt-hts',
    settings: {},
    workDir,
  });
});
after(() => removeTempDir(workDir));

/** Start errors (ms) of the recognized words that match the truth, and how many matched. */
function startErrors(truth: readonly TimedWord[], words: readonly RecognizedWord[]) {
  const pairs = matchWords(
    truth.map((w) => w.text),
    words.map((w) => w.text),
  );
  return { pairs, errors: pairs.map((p) => Math.abs(words[p.hyp].startMs - truth[p.truth].startMs)) };
}

describe('local recognition (pocketsphinx)', () => {
  it('parses word times and skips markers, fillers and alternates', () => {
    const out =
      'the cat(2)\n<s> 0.090 0.140 0.99\nthe 0.150 0.260 0.994\n[NOISE] 0.27 0.4 0.5\ncat(2) 0.41 0.70 1.0001\n</s> 0.71 0.8 1\n';
    assert.deepEqual(parseSphinxTimes(out), [
      { text: 'the', startMs: 150, endMs: 270, confidence: 0.994 },
      { text: 'cat', startMs: 410, endMs: 710, confidence: 1 },
    ]);
  });

  it('recognizes clean synthesized speech as a usable draft and refinement keeps times within 50 ms', async (t) => {
    const rec = await new LocalRecognitionProvider().transcribe(speech.audioPath, { workDir });
    assert.equal(rec.language, 'en');
    const truth = speech.timeline.words;
    const raw = startErrors(truth, rec.words);
    const accuracy = raw.pairs.length / truth.length;
    const refined = await refineWordTimes(speech.audioPath, rec.words, { workDir });
    const ref = startErrors(truth, refined);
    t.diagnostic(
      `words ${truth.length}, right ${raw.pairs.length} (${(accuracy * 100).toFixed(0)} %), ` +
        `median start error raw ${median(raw.errors)} ms, refined ${median(ref.errors)} ms`,
    );
    assert.ok(accuracy >= 0.6, `word accuracy ${accuracy}`);
    assert.ok(median(ref.errors) < 50, `median refined start error ${median(ref.errors)} ms`);
    assert.ok(
      refined.every((w) => Number.isInteger(w.startMs) && Number.isInteger(w.endMs) && w.endMs >= w.startMs),
    );
  });

  it('refuses a language it has no model for', async () => {
    await assert.rejects(
      new LocalRecognitionProvider().transcribe(speech.audioPath, { workDir, language: 'fr' }),
      failsWith('rejected'),
    );
  });
});

describe('openai-compatible recognition', () => {
  let fake: FakeTranscriptionServer;
  const truthWords = () =>
    speech.timeline.words.map((w) => ({ word: w.text, start: w.startMs / 1000, end: w.endMs / 1000 }));
  const make = (over: Partial<ConstructorParameters<typeof OpenAiRecognitionProvider>[0]> = {}) =>
    new OpenAiRecognitionProvider({ baseUrl: fake.url, apiKey: SERVER_KEY, allowPrivate: true, ...over });

  before(async () => {
    fake = await new FakeTranscriptionServer({ keys: [SERVER_KEY] }).start();
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.reset();
    fake.forms.length = 0;
    fake.answerWith(truthWords(), { roughMs: 200 });
  });

  it('sends the audio as the protocol asks and refinement fixes rough times', async (t) => {
    const rec = await make().transcribe(speech.audioPath, { workDir });
    const [req] = fake.requests;
    assert.equal(req.headers.authorization, `Bearer ${SERVER_KEY}`);
    const form = fake.forms[0];
    assert.equal(form.fields.model, 'whisper-1');
    assert.equal(form.fields.response_format, 'verbose_json');
    assert.equal(form.fields['timestamp_granularities[]'], 'word');
    assert.equal(form.file?.type, 'audio/wav');
    assert.equal(form.file?.bytes.subarray(0, 4).toString(), 'RIFF');
    assert.equal(rec.language, 'en');
    const truth = speech.timeline.words;
    assert.deepEqual(
      rec.words.map((w) => w.text),
      truth.map((w) => w.text),
    );
    const raw = startErrors(truth, rec.words);
    const refined = await refineWordTimes(speech.audioPath, rec.words, { workDir });
    const ref = startErrors(truth, refined);
    t.diagnostic(`median start error: server ${median(raw.errors)} ms, refined ${median(ref.errors)} ms`);
    assert.ok(median(raw.errors) >= 50, 'the fake answers rough times');
    assert.ok(median(ref.errors) < 50, `median refined start error ${median(ref.errors)} ms`);
    assert.ok(refined.filter((w) => w.aligned).length >= truth.length * 0.9);
  });

  it('reads words from segments, sends the language hint and works without a key', async () => {
    const open = await new FakeTranscriptionServer().start();
    after(() => open.close());
    open.answerWith(truthWords(), { layout: 'segments', language: 'en' });
    const rec = await make({
      baseUrl: open.url,
      apiKey: null,
      model: 'Systran/faster-whisper-small',
    }).transcribe(speech.audioPath, {
      workDir,
      language: 'en',
    });
    assert.equal(rec.words.length, speech.timeline.words.length);
    assert.equal(open.requests[0].headers.authorization, undefined);
    assert.equal(open.forms[0].fields.model, 'Systran/faster-whisper-small');
    assert.equal(open.forms[0].fields.language, 'en');
  });

  it('maps a server that never answers onto timeout', async () => {
    fake.setMode('hang');
    await assert.rejects(
      make({ timeoutMs: 1000 }).transcribe(speech.audioPath, { workDir }),
      failsWith('timeout'),
    );
  });

  for (const [mode, reason] of [
    ['invalid_key', 'key_invalid'],
    ['quota', 'quota'],
    ['rate_limited', 'unavailable'],
    ['server_error', 'unavailable'],
    ['overloaded', 'unavailable'],
    ['garbage', 'unavailable'],
    ['bad_request', 'rejected'],
  ] as const) {
    it(`maps ${mode} onto ${reason} without leaking the key`, async () => {
      fake.setMode(mode);
      await assert.rejects(make().transcribe(speech.audioPath, { workDir }), failsWith(reason));
    });
  }

  it('treats a wrong key as key_invalid', async () => {
    await assert.rejects(
      make({ apiKey: ORG_KEY }).transcribe(speech.audioPath, { workDir }),
      failsWith('key_invalid'),
    );
  });
});

describe('refinement in chunks', () => {
  it('cuts chunks at pauses and keeps the recognizer time where alignment fails', async () => {
    const w = (text: string, startMs: number, endMs: number) => ({ text, startMs, endMs });
    const words = [w('a', 0, 100), w('b', 150, 300), w('c', 700, 900), w('d', 950, 1000), w('e', 1400, 1500)];
    assert.deepEqual(chunkWords(words, { chunkMs: 0 }), [
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    // A real alignment of short chunks, with the aligner failing on the second one.
    const truth = speech.timeline.words;
    let calls = 0;
    const refined = await refineWordTimes(speech.audioPath, truth, {
      workDir,
      gapMs: 100,
      chunkMs: 1500,
      align: async (wav, text, opts) => {
        if (++calls === 2) throw new Error('alignment: the audio does not match the text');
        const { alignTranscript } = await import('../../src/speech/align.js');
        return alignTranscript(wav, text, opts);
      },
    });
    assert.ok(calls >= 3, `${calls} chunks`);
    const kept = refined.filter((r) => !r.aligned);
    assert.ok(kept.length > 0 && kept.length < truth.length / 2);
    for (const [i, r] of refined.entries()) {
      if (!r.aligned) assert.equal(r.startMs, truth[i].startMs);
      else
        assert.ok(
          Math.abs(r.startMs - truth[i].startMs) < 100,
          `${r.text} ${r.startMs} vs ${truth[i].startMs}`,
        );
    }
  });
});

describe('transcript', () => {
  it('numbers words across segments, splits at pauses and sentence ends, adds the window offset', () => {
    const w = (text: string, startMs: number, endMs: number) => ({ text, startMs, endMs });
    const t = buildTranscript(
      [w('Hello', 0, 300), w('there.', 320, 600), w('So', 700, 800), w('then', 1600, 1800)],
      {
        offsetMs: 5000,
      },
    );
    assert.deepEqual(
      t.segments.map((s) => [
        s.id,
        s.words.map((x) => `${x.id}:${x.text}@${x.startMs}-${x.endMs}`).join(' '),
      ]),
      [
        ['s1', 'w1:Hello@5000-5300 w2:there.@5320-5600'],
        ['s2', 'w3:So@5700-5800'],
        ['s3', 'w4:then@6600-6800'],
      ],
    );
    assert.ok(t.segments.every((s) => s.words.every((x) => x.speakerId === null)));
  });
});

describe('speaker estimate', () => {
  /** A transcript of the file from local recognition with refined times, and its speaker estimate. */
  async function estimate(path: string) {
    const wav = join(workDir, `spk-${Math.random().toString(36).slice(2)}.wav`);
    await run('ffmpeg', ['-loglevel', 'error', '-y', '-i', path, '-vn', '-ac', '1', '-ar', '16000', wav]);
    const rec = await new LocalRecognitionProvider().transcribe(wav, { workDir });
    const words = await refineWordTimes(wav, rec.words, { workDir });
    const transcript = buildTranscript(words);
    const est = await estimateSpeakers(wav, transcript.segments, { workDir });
    return { wav, transcript: applySpeakers(transcript, est), est };
  }

  for (const file of ['latentsync_demo2.wav', 'radio_speech.wav']) {
    it(`finds one speaker in ${file}`, async () => {
      const { transcript, est } = await estimate(join(FIXTURES, file));
      assert.equal(est.speakerCount, 1);
      assert.ok(transcript.segments.every((s) => s.words.every((w) => w.speakerId === 'speaker_1')));
    });
  }

  it('finds two speakers in a man followed by a woman, and who says which word', async () => {
    const both = join(workDir, 'two-speakers.wav');
    const mono = 'aresample=16000,aformat=channel_layouts=mono';
    await run('ffmpeg', [
      '-loglevel', 'error', '-y', '-i', join(FIXTURES, 'face_1.mp4'), '-i', join(FIXTURES, 'latentsync_demo1.wav'),
      '-filter_complex', `[0:a]${mono}[a];[1:a]${mono}[b];[a][b]concat=n=2:v=0:a=1`, both,
    ]); // prettier-ignore
    const firstMs = ((await probeMedia(join(FIXTURES, 'face_1.mp4'))).durationSeconds ?? 0) * 1000;
    const { transcript, est } = await estimate(both);
    assert.equal(est.speakerCount, 2);
    const words = transcript.segments.flatMap((s) => s.words);
    const side = (w: (typeof words)[number]) =>
      w.endMs <= firstMs ? 'first' : w.startMs >= firstMs ? 'second' : null;
    const byFirst = words.filter((w) => side(w) === 'first' && w.speakerId === 'speaker_1').length;
    const bySecond = words.filter((w) => side(w) === 'second' && w.speakerId === 'speaker_2').length;
    const sided = words.filter((w) => side(w) !== null).length;
    assert.ok(
      (byFirst + bySecond) / sided >= 0.8,
      `${byFirst + bySecond} of ${sided} words on the right speaker`,
    );
  });
});
