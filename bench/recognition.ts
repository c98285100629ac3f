// Settings of the local recognizer (pocketsphinx_continuous, src/speech/recognition/local.ts) on
// speech with known words: pocketsphinx's defaults (the flags until 2026-12-07), the service's
// flags, narrower beams and search limits, frame downsampling, and phone-loop decoding (`-allphone` with the en-us phonetic LM). Per setting:
//
//   RTF        decode seconds / audio seconds (wall, and CPU = user + sys of the decoder process),
//              medians over runs; settings alternate file by file, the order rotating run by run
//   vs defaults  the paired ratio of CPU time to pocketsphinx's defaults (the service's flags until
//              2026-12-07) in the same run, median over runs
//   WER        word error rate of the hypothesis against the known words (word decoding only)
//   p/b/m      of the p, b, m phones of the truth (forced alignment of the known words, align.ts),
//              the share a decoded p/b/m starts within ±60 ms of (one decoded phone per truth phone);
//              for word decoding the decoded phones are the recognized words force-aligned as the
//              service does (refine.ts), all words / only words with posterior >= 0.5 (what
//              articulation uses); for allphone its own phone output
//   false/s    decoded p/b/m that match no truth p/b/m, per second of audio
//
// The speech: English sentences rich in lip sounds, synthesized by the local voices (festival HTS and
// RHVoice), a few sentences per voice joined into one file. The fixture recordings are not used: their
// words have not been written down by anyone who heard them.
//
//   node --import tsx bench/recognition.ts [--quick] [--runs=N] [--sentences=N]
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { alignTranscript } from '../src/speech/align.js';
import { LocalSynthesisProvider } from '../src/speech/local-provider.js';
import { BILABIALS, normalisePhone } from '../src/speech/phones.js';
import { DECODER_FLAGS, decoderArgs, parseSphinxTimes } from '../src/speech/recognition/local.js';
import { alignRecognizedWords } from '../src/speech/recognition/refine.js';
import type { RecognizedWord } from '../src/speech/recognition/types.js';
import { transcriptWords } from '../src/speech/text.js';
import { SPHINX_MODEL_ROOT, detectLocalEngines } from '../src/speech/tools.js';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';
import { intOption, parseArgs } from './lib/args.js';
import { machineLine, median, num, printTable } from './lib/stats.js';

const exec = promisify(execFile);
const args = parseArgs();
const RUNS = intOption(args, 'runs', args.quick ? 1 : 3);
const PER_VOICE = intOption(args, 'sentences', args.quick ? 2 : 3);
const VOICES = args.quick
  ? ['slt-hts', 'rhvoice-bdl']
  : ['slt-hts', 'rhvoice-clb', 'rhvoice-bdl', 'rhvoice-slt', 'rhvoice-alan'];
const TOLERANCE_MS = 60;

// Harvard-style sentences with many p, b, m (lists 1-4 and a few of our own).
const SENTENCES = [
  'The birch canoe slid on the smooth planks.',
  'The box was thrown beside the parked truck.',
  'A rod is used to catch pink salmon.',
  'The boy put a bright map on the bench before the big meeting.',
  'Bring me the brown lamp from the empty room.',
  'Pack the camp stove and a bag of plums.',
  'My mother baked bread by the open window.',
  'The puppy jumped up and bumped the lamp.',
  'Please move the maple table to the back porch.',
  'Mix the pale paint with a bit of amber.',
  'Both brothers played ball in the dim gym.',
  'A tame bird may pick crumbs from your palm.',
  'The members met by the pump to plan the trip.',
  'Rub the copper pot with a damp cloth.',
  'Bob made a map of the bumpy path home.',
  'Put the big box by the bottom step.',
  'Ample meals were brought to the camp by boat.',
  'The tempo of the music became more upbeat.',
  'Maybe the problem is the broken pipe.',
  'Pam combed the puppy before breakfast.',
];

interface Setting {
  name: string;
  /** Phone-loop decoding (its output is phones, not words). */
  allphone: boolean;
  flags: string[];
}

// pocketsphinx 5prealpha defaults: -beam 1e-48 -pbeam 1e-48 -wbeam 7e-29 -maxhmmpf 30000 -maxwpf -1
// -ds 1 -fwdflat yes -bestpath yes.
const SETTINGS: Setting[] = [
  // The baseline of the paired ratios: the service's flags until 2026-12-07.
  { name: 'pocketsphinx defaults', allphone: false, flags: [] },
  ...(DECODER_FLAGS.length
    ? [{ name: `service (${DECODER_FLAGS.join(' ')})`, allphone: false, flags: [...DECODER_FLAGS] }]
    : []),
  {
    name: 'beams 1e-40/1e-40/1e-25',
    allphone: false,
    flags: ['-beam', '1e-40', '-pbeam', '1e-40', '-wbeam', '1e-25'],
  },
  {
    name: 'beams 1e-30/1e-30/1e-20',
    allphone: false,
    flags: ['-beam', '1e-30', '-pbeam', '1e-30', '-wbeam', '1e-20'],
  },
  { name: 'maxhmmpf 3000 maxwpf 10', allphone: false, flags: ['-maxhmmpf', '3000', '-maxwpf', '10'] },
  { name: 'ds 2', allphone: false, flags: ['-ds', '2'] },
  { name: 'fwdflat no', allphone: false, flags: ['-fwdflat', 'no'] },
  {
    name: 'maxhmmpf 3000 maxwpf 10 fwdflat no',
    allphone: false,
    flags: ['-maxhmmpf', '3000', '-maxwpf', '10', '-fwdflat', 'no'],
  },
  // Context-independent phones: with triphones (the default) the phone loop ran at RTF ~6 here.
  {
    name: 'allphone ci, beams 1e-20, lw 2',
    allphone: true,
    flags: ['-allphone_ci', 'yes', '-beam', '1e-20', '-pbeam', '1e-20', '-lw', '2.0'],
  },
  { name: 'allphone ci', allphone: true, flags: ['-allphone_ci', 'yes'] },
];

function allphoneArgs(x16k: string, flags: readonly string[]): string[] {
  return [
    ['-infile', x16k],
    ['-hmm', join(SPHINX_MODEL_ROOT, 'en-us')],
    ['-allphone', join(SPHINX_MODEL_ROOT, 'en-us-phone.lm.bin')],
    ['-time', 'yes'],
    ['-logfn', '/dev/null'],
    flags,
  ].flat();
}

/** One decoder run under /usr/bin/time: stdout, wall and CPU seconds. */
async function decode(
  s: Setting,
  x16k: string,
  timesFile: string,
): Promise<{ stdout: string; wall: number; cpu: number }> {
  const argv = s.allphone ? allphoneArgs(x16k, s.flags) : decoderArgs(x16k, s.flags);
  const t0 = performance.now();
  const { stdout } = await exec(
    '/usr/bin/time',
    ['-f', '%U %S', '-o', timesFile, 'pocketsphinx_continuous', ...argv],
    { maxBuffer: 64 << 20 },
  );
  const wall = (performance.now() - t0) / 1000;
  const [u, sys] = (await readFile(timesFile, 'utf8')).trim().split(/\s+/).slice(-2).map(Number);
  return { stdout, wall, cpu: u + sys };
}

interface Phone {
  phone: string;
  startMs: number;
}

/** Phone-loop output: `PHONE start end posterior` lines (seconds). */
function parseAllphone(stdout: string): Phone[] {
  const out: Phone[] = [];
  for (const line of stdout.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length !== 4 || !/^\d+(\.\d+)?$/.test(f[1])) continue;
    const phone = normalisePhone(f[0]);
    if (phone) out.push({ phone, startMs: Math.round(Number(f[1]) * 1000) });
  }
  return out;
}

/** Hits (truth p/b/m with a decoded p/b/m starting within tolerance, one each) and false ones. */
function lipScore(
  truth: readonly Phone[],
  decoded: readonly Phone[],
): { hits: number; total: number; falses: number } {
  const t = truth.filter((p) => BILABIALS.has(p.phone));
  const d = decoded.filter((p) => BILABIALS.has(p.phone));
  const used = new Set<number>();
  let hits = 0;
  for (const p of t) {
    let best = -1;
    for (let i = 0; i < d.length; i++) {
      if (used.has(i) || Math.abs(d[i].startMs - p.startMs) > TOLERANCE_MS) continue;
      if (best < 0 || Math.abs(d[i].startMs - p.startMs) < Math.abs(d[best].startMs - p.startMs)) best = i;
    }
    if (best >= 0) {
      used.add(best);
      hits++;
    }
  }
  return { hits, total: t.length, falses: d.length - used.size };
}

/** Word-level edit distance. */
function editDistance(a: readonly string[], b: readonly string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

const keys = (text: string): string[] => transcriptWords(text).map((w) => w.key);

interface Clip {
  voice: string;
  text: string;
  x16k: string;
  seconds: number;
  truth: Phone[];
}

interface Accuracy {
  errors: number;
  words: number;
  all: { hits: number; total: number; falses: number };
  confident: { hits: number; total: number; falses: number };
}

const root = await makeTempDir('bench-recognition');
process.on('SIGINT', () => void removeTempDir(root).then(() => process.exit(130)));
process.on('SIGTERM', () => void removeTempDir(root).then(() => process.exit(143)));

try {
  const engines = await detectLocalEngines();
  if (!engines.pocketsphinx || !engines.ffmpeg) {
    console.log('# recognition: skipped (pocketsphinx or ffmpeg missing)');
    process.exit(0);
  }
  const provider = new LocalSynthesisProvider();
  const available = new Set((await provider.listVoices({})).map((v) => v.providerVoiceId));
  const clips: Clip[] = [];
  for (const [n, voice] of VOICES.filter((v) => available.has(v)).entries()) {
    const dir = join(root, `v${n}`);
    await mkdir(dir);
    const text = Array.from(
      { length: PER_VOICE },
      (_, k) => SENTENCES[(n * PER_VOICE + k) % SENTENCES.length],
    ).join(' ');
    const res = await provider.synthesize({ text, providerVoiceId: voice, settings: {}, workDir: dir });
    const x16k = join(dir, 'x16k.wav');
    await runFfmpeg(['-i', res.audioPath, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', x16k], {
      timeoutMs: 60_000,
    });
    const truth = await alignTranscript(x16k, text, { workDir: dir });
    clips.push({ voice, text, x16k, seconds: res.durationMs / 1000, truth: truth.phonemes });
  }
  const audioSeconds = clips.reduce((a, c) => a + c.seconds, 0);
  const truthLips = clips.reduce((a, c) => a + c.truth.filter((p) => BILABIALS.has(p.phone)).length, 0);
  console.log(
    `# local recognition settings: ${clips.length} voices (${clips.map((c) => c.voice).join(', ')}),`,
  );
  console.log(
    `# ${num(audioSeconds, 1)} s of speech, ${truthLips} p/b/m in the truth; ${RUNS} run(s); ${machineLine()}`,
  );

  // Timing: every run decodes every clip with every setting, the settings' order rotating.
  const wall = SETTINGS.map(() => [] as number[]);
  const cpu = SETTINGS.map(() => [] as number[]);
  const outputs = SETTINGS.map(() => clips.map(() => ''));
  for (let r = 0; r < RUNS; r++) {
    const runWall = SETTINGS.map(() => 0);
    const runCpu = SETTINGS.map(() => 0);
    for (const [c, clip] of clips.entries()) {
      for (let k = 0; k < SETTINGS.length; k++) {
        const i = (k + r + c) % SETTINGS.length;
        const out = await decode(SETTINGS[i], clip.x16k, join(root, 'time.txt'));
        runWall[i] += out.wall;
        runCpu[i] += out.cpu;
        outputs[i][c] = out.stdout;
      }
    }
    SETTINGS.forEach((_, i) => {
      wall[i].push(runWall[i] / audioSeconds);
      cpu[i].push(runCpu[i] / audioSeconds);
    });
    console.log(`# run ${r + 1}/${RUNS} done`);
  }

  // Accuracy: the decoder is deterministic, so the last run's output stands for all.
  const acc: Accuracy[] = [];
  for (const [i, s] of SETTINGS.entries()) {
    const a: Accuracy = {
      errors: 0,
      words: 0,
      all: { hits: 0, total: 0, falses: 0 },
      confident: { hits: 0, total: 0, falses: 0 },
    };
    for (const [c, clip] of clips.entries()) {
      const add = (into: Accuracy['all'], decoded: Phone[]): void => {
        const sc = lipScore(clip.truth, decoded);
        into.hits += sc.hits;
        into.total += sc.total;
        into.falses += sc.falses;
      };
      if (s.allphone) {
        const phones = parseAllphone(outputs[i][c]);
        add(a.all, phones);
        add(a.confident, phones);
        continue;
      }
      const words = parseSphinxTimes(outputs[i][c]);
      const truthKeys = keys(clip.text);
      a.errors += editDistance(truthKeys, keys(words.map((w) => w.text).join(' ')));
      a.words += truthKeys.length;
      const dir = join(root, `a${i}-${c}`);
      await mkdir(dir);
      const aligned = await alignRecognizedWords(clip.x16k, words, { workDir: dir });
      add(a.all, aligned.phonemes);
      const confident = new Set(
        aligned.words.flatMap((w: RecognizedWord, k) => ((w.confidence ?? 0) >= 0.5 ? [k] : [])),
      );
      add(
        a.confident,
        aligned.phonemes.filter((p) => p.word !== undefined && confident.has(p.word)),
      );
    }
    acc.push(a);
  }

  const base = cpu[0];
  const rows = [
    [
      'setting',
      'RTF wall',
      'RTF cpu',
      'cpu vs defaults (per run)',
      'WER',
      'p/b/m found (all / post>=0.5)',
      'false p/b/m per s',
    ],
  ];
  for (const [i, s] of SETTINGS.entries()) {
    const a = acc[i];
    const ratios = cpu[i].map((v, r) => v / base[r]);
    const pct = (x: { hits: number; total: number }): string =>
      `${((100 * x.hits) / Math.max(1, x.total)).toFixed(0)} %`;
    rows.push([
      s.name,
      num(median(wall[i]), 3),
      num(median(cpu[i]), 3),
      i === 0 ? 'baseline' : `${num(median(ratios), 2)} (${ratios.map((x) => num(x, 2)).join(', ')})`,
      s.allphone ? '-' : `${((100 * a.errors) / a.words).toFixed(1)} %`,
      s.allphone ? pct(a.all) : `${pct(a.all)} / ${pct(a.confident)}`,
      s.allphone
        ? num(a.all.falses / audioSeconds, 2)
        : `${num(a.all.falses / audioSeconds, 2)} / ${num(a.confident.falses / audioSeconds, 2)}`,
    ]);
  }
  console.log();
  printTable(rows);
  console.log(`\n(p/b/m within ±${TOLERANCE_MS} ms of the truth's start; ${truthLips} truth p/b/m)`);
} finally {
  await removeTempDir(root);
}
