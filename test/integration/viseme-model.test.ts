// test-database: none
// The learned audio -> viseme model (cherry-lip-sync's ONNX classifier) on real speech: the features
// against a plain DFT reference and the filterbank the original ships, the classes against the
// original tool's own expected output for its test clip, chunking and resampling leaving the result
// unchanged, and, on a festival (slt-hts) sentence with its native phoneme times, the classes per sound:
// rest in the pauses, lips shut on p/b/m far more than on open vowels, "oo"/"oh"/"w" narrower than "ee".
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { concatSamples } from '../../src/media/mono.js';
import { readWavInfo, readWavMono } from '../../src/media/wav.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import type { TimedPhoneme } from '../../src/speech/types.js';
import {
  loadVisemeModel,
  resample,
  VISEME_CLASSES,
  VISEME_CLOSED_CLASS,
  VISEME_REST_CLASS,
  visemeFeatures,
  visemeMelFilterbank,
  visemeTrack,
  type VisemeModel,
  type VisemeResult,
} from '../../src/speech/viseme-model.js';
import { fixture } from '../helpers/paths.js';

const MODEL = fixture('models/cherry-visemes.onnx');
const HELLO = fixture('media/hello.wav');
const TEXT = 'Bob bought a map. Pam ate pie by the blue boat. We see two cool moons.';
const FPS = 25;

/** A 16 kHz mono WAV's samples. */
async function readMono(path: string): Promise<Float32Array> {
  const parts: Float32Array[] = [];
  for await (const block of readWavMono(path)) parts.push(block);
  return concatSamples(parts);
}

function argmax(r: VisemeResult, row: number): number {
  let best = 0;
  for (let c = 1; c < r.classes.length; c++) {
    if (r.probabilities[row * 12 + c] > r.probabilities[row * 12 + best]) best = c;
  }
  return best;
}

/** cherry-lip-sync's command line: sample rows at `fps` and print each change (its own tests' format). */
function cherryTsv(r: VisemeResult, samples: number, fps: number): string {
  const rows = Math.floor((samples - 400) / 160) + 1 - 3; // rows with their own prediction
  const lines: string[] = [];
  let prev = -1;
  for (let f = 0; f < Math.round(rows * 0.01 * fps); f++) {
    const t = f / fps;
    const v = argmax(r, Math.round(t / 0.01));
    if (v !== prev) lines.push(`${t.toFixed(3)}\t${r.classes[v]}`);
    prev = v;
  }
  return `${lines.join('\n')}\n`;
}

/** The video frame that shows each sound's middle. */
function middles(phonemes: readonly TimedPhoneme[], which: readonly string[], frames: number): number[] {
  return phonemes
    .filter((p) => which.includes(p.phone) && p.endMs > p.startMs)
    .map((p) => Math.floor(((p.startMs + p.endMs) / 2 / 1000) * FPS))
    .filter((f) => f < frames);
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

describe('viseme model (cherry-lip-sync)', { timeout: 300_000 }, () => {
  let dir: string;
  let model: VisemeModel;
  let hello: Float32Array;

  before(async () => {
    dir = await makeTempDir('viseme-model-test');
    model = await loadVisemeModel(MODEL);
    hello = await readMono(HELLO);
  });
  after(async () => {
    if (dir) await removeTempDir(dir);
  });

  it('builds the features the model was trained on', () => {
    // The filterbank cherry-lip-sync ships (model/melbank.bin): peak bins and the first slope.
    const fb = visemeMelFilterbank();
    const peaks = Array.from({ length: 13 }, (_, m) => {
      let best = 0;
      for (let b = 0; b < 201; b++) if (fb[b * 13 + m] > fb[best * 13 + m]) best = b;
      return best;
    });
    assert.deepEqual(peaks, [3, 8, 13, 18, 26, 34, 44, 56, 71, 88, 109, 134, 164]);
    assert.ok(Math.abs(fb[1 * 13] - 0.28974575) < 1e-5);
    assert.ok(Math.abs(fb[5 * 13 + 1] - 0.37481) < 1e-5);

    // Log-mel of a few frames against a plain DFT; slopes against the stated smoothing.
    const f = visemeFeatures(hello);
    assert.equal(f.length / 26, Math.floor((hello.length - 400) / 160) + 1);
    for (const t of [0, 100, 130, 200]) {
      const mel = new Float64Array(13);
      for (let k = 0; k <= 200; k++) {
        let re = 0;
        let im = 0;
        for (let i = 0; i < 400; i++) {
          const x = hello[t * 160 + i] * Math.sin((Math.PI * i) / 400) ** 2;
          re += x * Math.cos((2 * Math.PI * k * i) / 400);
          im -= x * Math.sin((2 * Math.PI * k * i) / 400);
        }
        for (let m = 0; m < 13; m++) mel[m] += (re * re + im * im) * fb[k * 13 + m];
      }
      for (let m = 0; m < 13; m++) {
        const want = 10 * Math.log10(Math.max(mel[m], 1e-10));
        assert.ok(Math.abs(f[t * 26 + m] - want) < 1e-3, `frame ${t} band ${m}: ${f[t * 26 + m]} vs ${want}`);
      }
    }
    const d = (t: number, m: number): number =>
      0.5 * (f[(t + 1) * 26 + m] + f[t * 26 + m] - f[(t - 1) * 26 + m] - f[(t - 2) * 26 + m]);
    assert.ok(Math.abs(f[120 * 26 + 13 + 4] - d(120, 4)) < 1e-4);
    assert.ok(
      Math.abs(f[0 * 26 + 13] - 0.5 * (f[0] + f[26])) < 1e-4,
      'slopes take the bands as 0 before the clip',
    );
  });

  it("reproduces cherry-lip-sync's own output for its test clip", async () => {
    const r = await model.run(hello, 16000);
    assert.equal(r.frameMs, 10);
    assert.equal(r.frames, Math.ceil(hello.length / 160));
    assert.deepEqual(r.classes, ['D', 'B', 'I', 'G', 'H', 'A', 'X', 'E', 'K', 'J', 'C', 'F']);
    for (let row = 0; row < r.frames; row += 37) {
      let s = 0;
      for (let c = 0; c < 12; c++) s += r.probabilities[row * 12 + c];
      assert.ok(Math.abs(s - 1) < 1e-4);
    }
    // The expected outputs of cherry-lip-sync's command-line tests (src/cmdline.rs) for testing/hello.wav.
    assert.equal(
      cherryTsv(r, hello.length, 30),
      '0.000\tX\n0.833\tE\n1.167\tA\n1.267\tB\n1.300\tJ\n1.400\tC\n1.433\tK\n1.567\tF\n1.633\tA\n1.800\tX\n',
    );
    assert.equal(
      cherryTsv(r, hello.length, 5),
      '0.000\tX\n1.000\tE\n1.200\tA\n1.400\tC\n1.600\tF\n1.800\tX\n',
    );
    assert.equal(
      cherryTsv(r, hello.length, 50),
      '0.000\tX\n0.840\tE\n1.140\tA\n1.260\tB\n1.280\tJ\n1.400\tC\n1.420\tK\n1.540\tF\n1.620\tA\n1.800\tX\n',
    );
  });

  it('gives the same classes in chunks and from other sample rates', async () => {
    const whole = await model.run(hello, 16000);
    const chunked = await model.run(hello, 16000, undefined, { chunkFrames: 60, warmupFrames: 100 });
    let maxDiff = 0;
    for (let i = 0; i < whole.probabilities.length; i++)
      maxDiff = Math.max(maxDiff, Math.abs(whole.probabilities[i] - chunked.probabilities[i]));
    // Without warm-up, each chunk restarts the recurrent state from zero: visibly different.
    const cold = await model.run(hello, 16000, undefined, { chunkFrames: 60, warmupFrames: 0 });
    let coldDiff = 0;
    for (let i = 0; i < whole.probabilities.length; i++)
      coldDiff = Math.max(coldDiff, Math.abs(whole.probabilities[i] - cold.probabilities[i]));
    const hi = join(dir, 'hello-48k.wav');
    await runFfmpeg(['-i', HELLO, '-ar', '48000', '-ac', '1', '-c:a', 'pcm_s16le', hi]);
    const at48 = await model.run(await readMono(hi), 48000);
    const ours44 = await model.run(resample(hello, 16000, 44100), 44100);
    const differ = (r: VisemeResult): number => {
      let n = 0;
      for (let i = 0; i < Math.min(r.frames, whole.frames); i++) if (argmax(r, i) !== argmax(whole, i)) n++;
      return n;
    };
    console.log(
      `chunks of 0.6 s: max probability change ${maxDiff.toExponential(2)} with 1 s warm-up, ` +
        `${coldDiff.toFixed(3)} without; from 48 kHz (ffmpeg) ${differ(at48)} and from 44.1 kHz ` +
        `${differ(ours44)} of ${whole.frames} rows change class`,
    );
    assert.ok(maxDiff < 1e-3);
    assert.ok(coldDiff > maxDiff);
    assert.equal(at48.frames, whole.frames);
    assert.ok(differ(at48) <= 3);
    assert.ok(differ(ours44) <= 3);
  });

  it('loads once per path and says why a model cannot be loaded', async () => {
    assert.equal(await loadVisemeModel(MODEL), model);
    await assert.rejects(loadVisemeModel(join(dir, 'missing.onnx')), /viseme model not found/);
    const bad = join(dir, 'corrupt.onnx');
    await writeFile(bad, 'this is not an onnx graph');
    await assert.rejects(loadVisemeModel(bad), /could not be loaded/);
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(model.run(hello, 16000, ac.signal), { name: 'AbortError' });
  });

  it('follows the sounds of a festival sentence', async () => {
    const synth = await new LocalSynthesisProvider().synthesize({
      text: TEXT,
      providerVoiceId: 'slt-hts',
      settings: {},
      workDir: dir,
    });
    const phonemes = synth.timeline.phonemes;
    // As a caller would hand it over: 16 kHz mono from ffmpeg.
    const wav16 = join(dir, 'speech-16k.wav');
    await runFfmpeg(['-i', synth.audioPath, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', wav16]);
    const samples = await readMono(wav16);
    // Speed: the median of three runs (reported, never asserted).
    const times: number[] = [];
    let r = await model.run(samples, 16000);
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      r = await model.run(samples, 16000);
      times.push(performance.now() - started);
    }
    const ms = times.sort((a, b) => a - b)[1];
    const nativeRate = (await readWavInfo(synth.audioPath)).sampleRate;
    const native = await model.run(await readMono(synth.audioPath), nativeRate);
    let nativeDiffer = 0;
    for (let i = 0; i < Math.min(r.frames, native.frames); i++)
      if (argmax(r, i) !== argmax(native, i)) nativeDiffer++;

    // Pauses: the 10 ms rows inside `sil`.
    let silRows = 0;
    let silRest = 0;
    for (const p of phonemes.filter((x) => x.phone === 'sil')) {
      for (let row = Math.ceil(p.startMs / 10); row * 10 < p.endMs && row < r.frames; row++) {
        silRows++;
        const c = argmax(r, row);
        if (c === VISEME_REST_CLASS || c === VISEME_CLOSED_CLASS) silRest++;
      }
    }

    const frames = Math.ceil((synth.durationMs / 1000) * FPS) + 5;
    const track = visemeTrack(r, FPS, frames);
    assert.equal(track.open.length, frames);
    assert.equal(track.confidence[frames - 1], 0, 'no audio past the end');
    for (let i = 0; i < frames; i++) {
      assert.ok(track.open[i] >= 0 && track.open[i] <= 1);
      assert.ok(track.width[i] >= -1 && track.width[i] <= 1);
      assert.ok(track.closed[i] >= 0 && track.closed[i] <= 1);
    }
    const bilabial = middles(phonemes, ['p', 'b', 'm'], frames);
    const openVowel = middles(phonemes, ['aa', 'ae', 'ah', 'aw', 'ay'], frames);
    const rounded = middles(phonemes, ['uw', 'ow', 'w'], frames);
    const spread = middles(phonemes, ['iy', 'ih', 'ey'], frames);
    const shutShare = (fs: number[]): number => mean(fs.map((f) => (track.closed[f] > 0.5 ? 1 : 0)));
    const at = (a: Float32Array, fs: number[]): number => mean(fs.map((f) => a[f]));
    const m = {
      silRest: silRest / silRows,
      bilabialShut: shutShare(bilabial),
      openShut: shutShare(openVowel),
      bilabialClosed: at(track.closed, bilabial),
      openClosed: at(track.closed, openVowel),
      bilabialOpen: at(track.open, bilabial),
      openOpen: at(track.open, openVowel),
      roundedWidth: at(track.width, rounded),
      spreadWidth: at(track.width, spread),
      roundedRound: at(track.round, rounded),
      spreadRound: at(track.round, spread),
      confidence: at(track.confidence, [...Array(Math.floor((synth.durationMs / 1000) * FPS)).keys()]),
    };
    const seconds = samples.length / 16000;
    console.log(
      `festival sentence (${seconds.toFixed(2)} s, ${r.frames} rows, ${(ms / seconds).toFixed(1)} ms per second of audio; ` +
        `from the ${nativeRate} Hz original ${nativeDiffer} rows change class):\n` +
        `  pauses: ${(100 * m.silRest).toFixed(0)} % of ${silRows} rows rest/shut\n` +
        `  lips shut (closed > 0.5) at p/b/m ${(100 * m.bilabialShut).toFixed(0)} % of ${bilabial.length}, ` +
        `at open vowels ${(100 * m.openShut).toFixed(0)} % of ${openVowel.length}; ` +
        `mean P(shut) ${m.bilabialClosed.toFixed(2)} vs ${m.openClosed.toFixed(2)}\n` +
        `  open: open vowels ${m.openOpen.toFixed(2)}, p/b/m ${m.bilabialOpen.toFixed(2)}\n` +
        `  width: rounded ${m.roundedWidth.toFixed(2)} (${rounded.length}) vs spread ${m.spreadWidth.toFixed(2)} (${spread.length}); ` +
        `round ${m.roundedRound.toFixed(2)} vs ${m.spreadRound.toFixed(2)}; mean confidence ${m.confidence.toFixed(2)}`,
    );
    // Classes per group of sounds: the 10 ms rows of the middle half of each sound.
    const groups: [string, string[]][] = [
      ['pause', ['sil']],
      ['p b m', ['p', 'b', 'm']],
      ['open vowels', ['aa', 'ae', 'ah', 'aw', 'ay']],
      ['rounded', ['uw', 'ow', 'w']],
      ['spread', ['iy', 'ih', 'ey']],
      ['t d k n l s z', ['t', 'd', 'k', 'n', 'l', 's', 'z']],
    ];
    for (const [name, phones] of groups) {
      const counts = new Map<string, number>();
      let total = 0;
      for (const p of phonemes.filter((x) => phones.includes(x.phone))) {
        const q = (p.endMs - p.startMs) / 4;
        for (let row = Math.ceil((p.startMs + q) / 10); row * 10 < p.endMs - q && row < r.frames; row++) {
          const label = VISEME_CLASSES[argmax(r, row)].label;
          counts.set(label, (counts.get(label) ?? 0) + 1);
          total++;
        }
      }
      const list = [...counts]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${((100 * n) / total).toFixed(0)}%`)
        .join(', ');
      console.log(`  ${name} (${total} rows): ${list}`);
    }

    assert.equal(nativeDiffer, 0);
    assert.ok(m.silRest >= 0.9, 'pauses are at rest');
    assert.ok(m.bilabialShut >= 0.55 && m.openShut <= 0.15, 'lips shut on p/b/m, not on open vowels');
    assert.ok(m.bilabialClosed >= m.openClosed + 0.3);
    assert.ok(m.openOpen >= 0.55 && m.bilabialOpen <= 0.2, 'open vowels open the jaw');
    assert.ok(m.roundedWidth <= m.spreadWidth - 0.5, '"oo" narrower than "ee"');
    assert.ok(m.roundedRound >= m.spreadRound + 0.2, '"oo" rounder than "ee"');
    assert.ok(m.confidence >= 0.55);
  });
});
