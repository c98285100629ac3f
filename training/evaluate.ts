// Stage 4: scores on voices the model never heard, through the service's own code: each model runs
// via src/speech/viseme-model.ts exactly as in a generation; "alignment" is the project's forced
// aligner given the known text (clean clips only, the first --align-per-voice of each voice).
//   node --import tsx training/evaluate.ts training/data [models...] [--align-per-voice 5] [--json out]
// Per 10 ms row t (the sound at t * 10 + 5 ms): frame accuracy; p/b/m recall (argmax shut where the
// truth is p/b/m) and precision; the expected opening at p/b/m over that at open vowels ("aa", "ah");
// the expected width at rounded vowels (ow, uw, w) minus that at spread ones (iy, ih, ey); the
// expected opening in pauses.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readMono } from '../src/media/mono.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';
import { alignTranscript } from '../src/speech/align.js';
import { VISEME_CLASSES, loadVisemeModel } from '../src/speech/viseme-model.js';

interface Clip {
  wav: string;
  voice: string;
  condition: string;
  text: string;
  phones: [number, number, number][];
}
const AH = 0;
const EE = 2;
const M = 5;
const REST = 6;
const OH = 7;
const WOO = 11;
const ARPA: Record<string, number> = {};
for (const [c, ps] of [
  [0, 'aa ay aw'],
  [10, 'ae ah eh hh'],
  [2, 'iy ih ey y'],
  [7, 'ao ow oy'],
  [11, 'uw uh w'],
  [8, 'er r'],
  [5, 'p b m'],
  [3, 'f v'],
  [4, 'l'],
  [9, 's z sh zh ch jh'],
  [1, 't d k g n ng th dh'],
  [6, 'sil'],
] as [number, string][])
  for (const p of ps.split(' ')) ARPA[p] = c;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'align-per-voice': { type: 'string', default: '5' }, json: { type: 'string' } },
});
const root = positionals[0] ?? 'training/data';
const models = positionals.slice(1);
const index = JSON.parse(await readFile(join(root, 'heldout', 'index.json'), 'utf8')) as Clip[];

class Score {
  n = 0;
  hit = 0;
  mTrue = 0;
  mHit = 0;
  mPred = 0;
  openM = 0;
  openAh = 0;
  nAh = 0;
  wRound = 0;
  nRound = 0;
  wSpread = 0;
  nSpread = 0;
  openRest = 0;
  nRest = 0;
  add(truth: number, p: ArrayLike<number>): void {
    let best = 0;
    let open = 0;
    let width = 0;
    for (let c = 0; c < 12; c++) {
      if (p[c] > p[best]) best = c;
      open += p[c] * VISEME_CLASSES[c].shape.open;
      width += p[c] * VISEME_CLASSES[c].shape.width;
    }
    this.n++;
    if (best === truth) this.hit++;
    if (best === M) this.mPred++;
    if (truth === M) {
      this.mTrue++;
      this.openM += open;
      if (best === M) this.mHit++;
    }
    if (truth === AH) {
      this.nAh++;
      this.openAh += open;
    }
    if (truth === OH || truth === WOO) {
      this.nRound++;
      this.wRound += width;
    }
    if (truth === EE) {
      this.nSpread++;
      this.wSpread += width;
    }
    if (truth === REST) {
      this.nRest++;
      this.openRest += open;
    }
  }
  summary() {
    const r = (x: number) => Math.round(x * 1000) / 1000;
    return {
      frames: this.n,
      accuracy: r(this.hit / this.n),
      pbmRecall: r(this.mHit / this.mTrue),
      pbmPrecision: r(this.mHit / Math.max(1, this.mPred)),
      pbmOpenRatio: r(this.openM / this.mTrue / (this.openAh / this.nAh)),
      roundedMinusSpreadWidth: r(this.wRound / this.nRound - this.wSpread / this.nSpread),
      pauseOpening: r(this.openRest / this.nRest),
    };
  }
}

const truthAt = (phones: [number, number, number][], t: number): number => {
  for (const [s, e, c] of phones) if (t >= s && t < e) return c;
  return REST;
};

const scores = new Map<string, Score>();
const score = (key: string): Score => {
  let s = scores.get(key);
  if (!s) scores.set(key, (s = new Score()));
  return s;
};

for (const path of models) {
  const model = await loadVisemeModel(path);
  const name = path
    .split('/')
    .pop()!
    .replace(/\.onnx$/, '');
  for (const clip of index) {
    const samples = await readMono(join(root, 'heldout', clip.wav), 16000);
    const r = await model.run(samples, 16000);
    for (let t = 0; t < r.frames; t++) {
      const truth = truthAt(clip.phones, (t * 10 + 5) / 1000);
      const p = r.probabilities.subarray(t * 12, t * 12 + 12);
      score(`${name}\t${clip.condition}`).add(truth, p);
      score(`${name}\tall`).add(truth, p);
    }
  }
}

const perVoice = Number(values['align-per-voice']);
if (perVoice > 0) {
  const work = await makeTempDir('training-eval');
  const seen = new Map<string, number>();
  let alignFailures = 0;
  for (const clip of index.filter((c) => c.condition === 'clean')) {
    const k = seen.get(clip.voice) ?? 0;
    if (k >= perVoice) continue;
    seen.set(clip.voice, k + 1);
    const samples = await readMono(join(root, 'heldout', clip.wav), 16000);
    let tl;
    try {
      tl = await alignTranscript(join(root, 'heldout', clip.wav), clip.text, { workDir: work });
    } catch (err) {
      // Reported, not scored: the service falls back to the other sources when alignment fails.
      console.error(`alignment failed on ${clip.wav}: ${(err as Error).message}`);
      alignFailures++;
      continue;
    }
    const rows = Math.ceil(samples.length / 160);
    for (let t = 0; t < rows; t++) {
      const ms = t * 10 + 5;
      const ph = tl.phonemes.find((p) => ms >= p.startMs && ms < p.endMs);
      const p = new Float32Array(12);
      p[ph ? (ARPA[ph.phone] ?? REST) : REST] = 1;
      score(`alignment\tclean (${perVoice}/voice)`).add(truthAt(clip.phones, ms / 1000), p);
    }
  }
  await removeTempDir(work);
  console.log(`alignment: ${alignFailures} of ${[...seen.values()].reduce((a, b) => a + b, 0)} clips failed`);
}

const table = [...scores].map(([k, s]) => {
  const [source, condition] = k.split('\t');
  return { source, condition, ...s.summary() };
});
for (const row of table) console.log(JSON.stringify(row));
if (values.json) await writeFile(values.json, JSON.stringify(table, null, 2));
