// Stage 1b: phone times for the clips whose synthesizer gives none (RHVoice), from the project's own
// forced aligner (pocketsphinx, src/speech/align.ts) on the very text each clip was given.
//   node --import tsx training/align.ts training/data [--per-voice N]
// Reads <data>/clips/*/<n>.todo-align, writes <n>.json ({text, phones: [[start s, end s, class]]}).
// --per-voice aligns only the first N clips of each voice (pocketsphinx is the slow part); the
// others are left out of the data.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { alignTranscript } from '../src/speech/align.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';

// training/labels.py ARPABET, the same 12 classes in the model's output order.
const CLASS: Record<string, number> = {};
const GROUPS: [number, string][] = [
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
];
for (const [c, phones] of GROUPS) for (const p of phones.split(' ')) CLASS[p] = c;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'per-voice': { type: 'string', default: '1000000' } },
});
const root = positionals[0] ?? 'training/data';
const perVoice = Number(values['per-voice']);
const work = await makeTempDir('training-align');
let done = 0;
let failed = 0;
for (const voice of await readdir(join(root, 'clips'))) {
  const dir = join(root, 'clips', voice);
  const todo = (await readdir(dir))
    .filter((x) => x.endsWith('.todo-align'))
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
  for (const [k, f] of todo.entries()) {
    const n = f.replace(/\.todo-align$/, '');
    if (k >= perVoice) {
      await rm(join(dir, f));
      continue;
    }
    const meta = JSON.parse(await readFile(join(dir, f), 'utf8')) as { text: string };
    try {
      const tl = await alignTranscript(join(dir, `${n}.wav`), meta.text, { workDir: work });
      const phones: [number, number, number][] = [];
      let at = 0;
      for (const p of tl.phonemes) {
        // Gaps between aligned phones are pauses.
        if (p.startMs > at) phones.push([at / 1000, p.startMs / 1000, 6]);
        phones.push([p.startMs / 1000, p.endMs / 1000, CLASS[p.phone] ?? 6]);
        at = p.endMs;
      }
      await writeFile(join(dir, `${n}.json`), JSON.stringify({ ...meta, phones, aligned: true }));
      done++;
    } catch (err) {
      // A clip the aligner cannot place is left out of the data, not guessed.
      console.error(`${voice}/${n}: ${(err as Error).message}`);
      failed++;
    }
    await rm(join(dir, f));
  }
}
await removeTempDir(work);
console.log(`aligned ${done}, failed ${failed}`);
