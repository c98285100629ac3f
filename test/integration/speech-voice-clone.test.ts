// test-database: none
// Local voice cloning on real tools: Praat measures fixture speakers, RHVoice/festival synthesize a
// base voice, convertVoice moves it towards the speaker, and Praat re-measures the result.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { PraatError, praatAvailable, runPraat } from '../../src/speech/praat.js';
import type { VoiceProfile } from '../../src/speech/types.js';
import { convertVoice } from '../../src/speech/voice-convert.js';
import {
  LOCAL_BASE_VOICES,
  MIN_VOICED_SECONDS,
  extractSample,
  ltasDistanceDb,
  measureVoiceProfile,
  nearestBaseVoice,
  semitones,
  type VoiceMeasurement,
} from '../../src/speech/voice-profile.js';
import { fixture } from '../helpers/paths.js';

const hasPraat = await praatAvailable();
const skip = hasPraat ? false : 'praat is not installed';

const TEXT =
  'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. ' +
  "It's easy to tell the depth of a well. These days a chicken leg is a rare dish. " +
  'Rice is often served in round bowls.';

function run(cmd: string, args: string[], stdin?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exit ${code}: ${err}`))));
    child.stdin.end(stdin ?? '');
  });
}

/** Format, channels, rate and bits of a WAV's fmt chunk, and its data size. */
async function wavFormat(
  file: string,
): Promise<{ format: number; channels: number; rate: number; bits: number }> {
  const buf = await readFile(file);
  let off = 12;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    if (id === 'fmt ') {
      return {
        format: buf.readUInt16LE(off + 8),
        channels: buf.readUInt16LE(off + 10),
        rate: buf.readUInt32LE(off + 12),
        bits: buf.readUInt16LE(off + 22),
      };
    }
    off += 8 + size + (size % 2);
  }
  throw new Error(`no fmt chunk in ${file}`);
}

const spreadSt = (m: VoiceMeasurement) => semitones(m.profile.pitchQ10Hz, m.profile.pitchQ90Hz);

describe('local voice cloning (Praat)', { skip }, () => {
  let dir = '';
  let bdl = ''; // RHVoice bdl, ~118 Hz
  let slt = ''; // festival slt-hts, ~174 Hz
  let demo1: VoiceProfile; // latentsync_demo1.wav, ~208 Hz
  let face1: VoiceProfile; // face_1.mp4's audio, ~94 Hz
  const measure = (f: string) => measureVoiceProfile(f, { workDir: dir });

  before(async () => {
    dir = await makeTempDir('voice-clone');
    bdl = join(dir, 'bdl.wav');
    slt = join(dir, 'slt.wav');
    await run('RHVoice-test', ['-p', 'bdl', '-o', bdl], TEXT);
    await writeFile(join(dir, 'text.txt'), TEXT);
    await run('text2wave', ['-eval', '(voice_cmu_us_slt_arctic_hts)', join(dir, 'text.txt'), '-o', slt]);
    demo1 = { ...(await measure(fixture('media/latentsync_demo1.wav'))).profile, baseVoice: 'rhvoice-clb' };
    await extractSample(fixture('media/face_1.mp4'), join(dir, 'face1.wav'));
    face1 = { ...(await measure(join(dir, 'face1.wav'))).profile, baseVoice: 'rhvoice-bdl' };
  });
  after(() => removeTempDir(dir));

  it('measures a fixture speaker close to the research figures', async () => {
    const m = await measure(fixture('media/latentsync_demo1.wav'));
    // speech-options.md (c): 208.5 Hz (180-292), F1-F3 555/1850/2917.
    assert.ok(Math.abs(m.profile.pitchMedianHz / 208.5 - 1) < 0.05, `median ${m.profile.pitchMedianHz}`);
    assert.ok(Math.abs(m.profile.pitchQ10Hz / 180 - 1) < 0.08, `q10 ${m.profile.pitchQ10Hz}`);
    assert.ok(Math.abs(m.profile.pitchQ90Hz / 292 - 1) < 0.08, `q90 ${m.profile.pitchQ90Hz}`);
    [555, 1850, 2917].forEach((f, i) =>
      assert.ok(Math.abs(m.profile.formantsHz[i] / f - 1) < 0.1, `F${i + 1} ${m.profile.formantsHz[i]}`),
    );
    assert.equal(m.profile.ltasDb.length, m.profile.ltasBandsHz.length);
    assert.ok(m.profile.ltasDb.every(Number.isFinite));
    assert.ok(m.voicedSeconds > 3 && m.voicedSeconds < m.durationSeconds, `voiced ${m.voicedSeconds}`);
  });

  it('2 s of voiced speech measures close to a long sample: pitch, base voice, spectrum', async () => {
    // Six fixture speakers, each cut to its first 3.5 s (2.1-2.5 s voiced), against the whole file.
    const files = [
      'radio_speech',
      'speech_short',
      'latentsync_demo1',
      'audio_1',
      'latentsync_demo2',
      'audio_2',
    ];
    for (const f of files) {
      const whole = join(dir, `${f}-whole.wav`);
      const cut = join(dir, `${f}-cut.wav`);
      await extractSample(fixture(`media/${f}.wav`), whole);
      await extractSample(fixture(`media/${f}.wav`), cut, { maxSeconds: 3.5 });
      const [w, c] = [await measure(whole), await measure(cut)];
      assert.ok(c.voicedSeconds >= MIN_VOICED_SECONDS && c.voicedSeconds < 2.6, `${f}: ${c.voicedSeconds} s`);
      const st = semitones(w.profile.pitchMedianHz, c.profile.pitchMedianHz);
      assert.ok(Math.abs(st) < 1.5, `${f}: pitch median ${st.toFixed(2)} st from the whole sample's`);
      const base = (m: VoiceMeasurement) => nearestBaseVoice(m.profile, LOCAL_BASE_VOICES);
      assert.equal(base(c), base(w), `${f}: nearest base voice`);
      const d = ltasDistanceDb(c.profile.ltasDb, w.profile.ltasDb);
      assert.ok(d < 2.5, `${f}: LTAS d ${d.toFixed(2)} dB`);
    }
  });

  it('takes a video sample through extractSample (mono 16 kHz WAV)', async () => {
    const fmt = await wavFormat(join(dir, 'face1.wav'));
    assert.deepEqual(fmt, { format: 1, channels: 1, rate: 16000, bits: 16 });
    // speech-options.md (c): face_1 94.5 Hz (84-111).
    assert.ok(Math.abs(face1.pitchMedianHz / 94.5 - 1) < 0.05, `median ${face1.pitchMedianHz}`);
    const cut = join(dir, 'face1-3s.wav');
    await extractSample(fixture('media/face_1.mp4'), cut, { maxSeconds: 3 });
    const m = await measure(cut);
    assert.ok(Math.abs(m.durationSeconds - 3) < 0.05, `duration ${m.durationSeconds}`);
  });

  for (const [name, src, target, base] of [
    ['bdl -> latentsync_demo1 (upward)', () => bdl, () => demo1, 118],
    ['slt-hts -> face_1 (downward)', () => slt, () => face1, 174],
  ] as const) {
    it(`moves ${name} to within 1 semitone, closer in LTAS, same duration`, async () => {
      const out = join(dir, `conv-${base}.wav`);
      const before = await measure(src());
      await convertVoice(src(), out, { profile: target(), similarity: 1, rangeFactor: 1, workDir: dir });
      const after = await measure(out);
      const stBefore = semitones(before.profile.pitchMedianHz, target().pitchMedianHz);
      const stAfter = semitones(after.profile.pitchMedianHz, target().pitchMedianHz);
      assert.ok(Math.abs(stBefore) > 5, `source already close: ${stBefore} st`);
      assert.ok(Math.abs(stAfter) < 1, `after: ${stAfter.toFixed(2)} st (before ${stBefore.toFixed(2)})`);
      const dBefore = ltasDistanceDb(before.profile.ltasDb, target().ltasDb);
      const dAfter = ltasDistanceDb(after.profile.ltasDb, target().ltasDb);
      assert.ok(dAfter < 0.7 * dBefore, `LTAS d ${dBefore.toFixed(2)} -> ${dAfter.toFixed(2)} dB`);
      assert.ok(Math.abs(after.durationSeconds - before.durationSeconds) < 0.02);
      assert.equal(after.samples, before.samples);
      const fmt = await wavFormat(out);
      assert.deepEqual(fmt, { format: 1, channels: 1, rate: before.sampleRate, bits: 16 });
      console.log(
        `# ${name}: ${stBefore.toFixed(2)} -> ${stAfter.toFixed(2)} st; LTAS d ${dBefore.toFixed(2)} -> ${dAfter.toFixed(2)} dB`,
      );
    });
  }

  it('similarity 0 keeps the pitch; 0.5 lands about half-way in semitones', async () => {
    const before = await measure(bdl);
    const full = semitones(before.profile.pitchMedianHz, demo1.pitchMedianHz);
    const moved = async (similarity: number) => {
      const out = join(dir, `sim-${similarity}.wav`);
      await convertVoice(bdl, out, { profile: demo1, similarity, rangeFactor: 1, workDir: dir });
      return semitones(before.profile.pitchMedianHz, (await measure(out)).profile.pitchMedianHz);
    };
    const none = await moved(0);
    const half = await moved(0.5);
    assert.ok(Math.abs(none) < 0.3, `similarity 0 moved ${none.toFixed(2)} st`);
    assert.ok(
      Math.abs(half - full / 2) < 1,
      `similarity 0.5 moved ${half.toFixed(2)} of ${full.toFixed(2)} st`,
    );
    console.log(`# similarity 0 / 0.5 / 1: ${none.toFixed(2)} / ${half.toFixed(2)} / ${full.toFixed(2)} st`);
  });

  it('rangeFactor widens or narrows the pitch spread around the own median (no profile)', async () => {
    const conv = async (rangeFactor: number) => {
      const out = join(dir, `range-${rangeFactor}.wav`);
      await convertVoice(bdl, out, { profile: null, similarity: 1, rangeFactor, workDir: dir });
      return measure(out);
    };
    const before = await measure(bdl);
    const wide = await conv(1.5);
    const narrow = await conv(0.5);
    assert.ok(spreadSt(wide) > 1.5 * spreadSt(narrow), `spread ${spreadSt(narrow)} vs ${spreadSt(wide)} st`);
    assert.ok(spreadSt(wide) > spreadSt(before) && spreadSt(narrow) < spreadSt(before));
    const st = (m: VoiceMeasurement) => spreadSt(m).toFixed(2);
    console.log(`# q10-q90 spread: 0.5 ${st(narrow)}, 1 ${st(before)}, 1.5 ${st(wide)} st`);
    for (const m of [wide, narrow]) {
      assert.ok(Math.abs(semitones(before.profile.pitchMedianHz, m.profile.pitchMedianHz)) < 1);
      assert.equal(m.samples, before.samples);
    }
  });

  it('no profile and rangeFactor 1 copies the samples', async () => {
    const out = join(dir, 'copy.wav');
    await convertVoice(bdl, out, { profile: null, similarity: 1, rangeFactor: 1, workDir: dir });
    const pcm = async (f: string) => {
      const raw = join(dir, 'pcm.raw');
      await runFfmpeg(['-i', f, '-f', 's16le', raw]);
      return readFile(raw);
    };
    assert.ok((await pcm(bdl)).equals(await pcm(out)));
  });

  it('a silent or too-short sample gives voicedSeconds 0 and converts without a crash', async () => {
    const silent = join(dir, 'silent.wav');
    await runFfmpeg([
      '-f',
      'lavfi',
      '-i',
      'anullsrc=r=16000:cl=mono',
      '-t',
      '2',
      '-c:a',
      'pcm_s16le',
      silent,
    ]);
    const short = join(dir, 'short.wav');
    await runFfmpeg(['-i', fixture('media/latentsync_demo1.wav'), '-t', '0.05', '-ac', '1', short]);
    for (const f of [silent, short]) {
      const m = await measure(f);
      assert.equal(m.voicedSeconds, 0, f);
      assert.equal(m.profile.pitchMedianHz, 0);
    }
    const out = join(dir, 'silent-out.wav');
    await convertVoice(silent, out, { profile: demo1, similarity: 1, rangeFactor: 1.3, workDir: dir });
    assert.equal((await measure(out)).samples, 32000);
  });

  it('picks the base voice of nearest pitch', () => {
    assert.equal(nearestBaseVoice(demo1, LOCAL_BASE_VOICES), 'rhvoice-clb');
    assert.equal(nearestBaseVoice(face1, LOCAL_BASE_VOICES), 'rhvoice-bdl');
  });

  it('runPraat rejects on abort and on a failing script, keeping stderr out of the message', async () => {
    await assert.rejects(
      runPraat('writeInfoLine: 1', [], { workDir: dir, signal: AbortSignal.abort() }),
      (e: unknown) => e instanceof PraatError && e.reason === 'aborted',
    );
    const missing = join(dir, 'missing-secret-name.wav');
    await assert.rejects(
      runPraat('form F\n  sentence P\nendform\nRead from file: p$\n', [missing], { workDir: dir }),
      (e: unknown) =>
        e instanceof PraatError &&
        e.reason === 'failed' &&
        !e.message.includes('missing-secret-name') &&
        (e.detail ?? '').includes('missing-secret-name'),
    );
    // A running script is killed on abort.
    await assert.rejects(
      runPraat('for i to 1e10\nendfor\n', [], { workDir: dir, signal: AbortSignal.timeout(300) }),
      (e: unknown) => e instanceof PraatError && e.reason === 'aborted',
    );
  });
});
