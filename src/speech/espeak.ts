// Synthesis in other languages: espeak-ng turns the text into phones with durations and pitch (its
// `--pho` output for an MBROLA voice), and mbrola renders exactly that file. The phone times are
// therefore the synthesizer's own (no alignment), and the WAV is as long as their sum (mbrola
// rounds each phone to the database's frames; the times are rescaled to the exact sample count).
// espeak-ng's own formant voices give no phone times from the command line, so they are not offered.
import { mkdir, mkdtemp, readdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assignWords, parsePho, repairPho, visemeOfPhone, type PhoPhone } from './foreign-phones.js';
import type { TimedPiece } from './local-wav.js';
import { readWavInfo } from './local-wav.js';
import { tidyPhonemes } from './phones.js';
import { MBROLA_ROOT, runTool } from './tools.js';
import type { SpeechTimeline, TimedPhoneme, TimedWord } from './types.js';

/** A target-language voice: espeak-ng's rules for `lang`, rendered by an MBROLA database. */
export interface EspeakVoice {
  /** espeak-ng voice: a stock `mb-*` one, or one of ours (`lipsync/*`, written by espeakDataDir). */
  espeak: string;
  /** MBROLA database under /usr/share/mbrola. */
  db: string;
  /** Language codes the voice is offered for. */
  languages: readonly string[];
}

/**
 * Our own espeak-ng voices: a language's rules read by a database of a neighbouring language, for
 * languages with no MBROLA voice in Debian (Catalan, Esperanto, Galician: espeak-ng has no Galician
 * rules, Spanish rules read its spelling closely).
 */
const OWN_VOICES: Record<string, string> = {
  'ca-es2': 'language ca\nname lipsync-catalan\ngender male\nmbrola es2 es_phtrans\n',
  'eo-es2': 'language eo\nname lipsync-esperanto\ngender male\nmbrola es2 es_phtrans\n',
  'gl-es2': 'language es\nname lipsync-galician\ngender male\nmbrola es2 es_phtrans\n',
};

let dataDir: Promise<string> | null = null;

/** Where espeak-ng keeps its data (`espeak-ng --version` says). */
async function systemDataDir(): Promise<string> {
  const out = await runTool('espeak-ng', ['--version'], { timeoutMs: 10_000 });
  const m = /Data at:\s*(\S+)/.exec(out);
  if (!m) throw new Error('espeak-ng did not say where its data is');
  return m[1];
}

/**
 * A private espeak-ng data folder (given with `--path`): links to the system's data plus our own voice
 * files, so that nothing is written into the system's folder. Made once per process.
 */
export function espeakDataDir(): Promise<string> {
  dataDir ??= (async () => {
    const sys = await systemDataDir();
    const root = await mkdtemp(join(tmpdir(), 'lipsync-espeak-'));
    const data = join(root, 'espeak-ng-data');
    await mkdir(join(data, 'voices', 'lipsync'), { recursive: true });
    for (const e of await readdir(sys)) if (e !== 'voices') await symlink(join(sys, e), join(data, e));
    for (const e of await readdir(join(sys, 'voices')))
      await symlink(join(sys, 'voices', e), join(data, 'voices', e));
    for (const [name, body] of Object.entries(OWN_VOICES))
      await writeFile(join(data, 'voices', 'lipsync', name), body);
    return root;
  })();
  dataDir.catch(() => (dataDir = null));
  return dataDir;
}

export interface EspeakOptions {
  voice: EspeakVoice;
  workDir: string;
  /** Speaking rate, 0.5..2 (1 = espeak-ng's 175 words per minute). */
  speed: number;
  signal?: AbortSignal;
}

/** The words of a chunk as written (letters or digits), for the timeline. */
export function chunkWords(text: string): string[] {
  return text
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}0-9]+|[^\p{L}0-9]+$/gu, ''))
    .filter((w) => /[\p{L}0-9]/u.test(w));
}

/** Text as espeak-ng may read it: no control characters, no SSML-looking brackets. */
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f<>[\]]/g, ' ');
}

async function pho(text: string, opts: EspeakOptions, file: string, dir: string): Promise<string> {
  const input = join(dir, `${file}.txt`);
  await writeFile(input, `${clean(text)}\n`);
  const rate = Math.round(175 * Math.min(2, Math.max(0.5, opts.speed)));
  return runTool(
    'espeak-ng',
    [
      '--path',
      await espeakDataDir(),
      '-v',
      opts.voice.espeak,
      '-s',
      String(rate),
      '-q',
      '--pho',
      '-f',
      input,
    ],
    { signal: opts.signal, timeoutMs: 30_000 + text.length * 50 },
  );
}

/** A chunk as espeak-ng would say it: its phones with durations, and which word each phone is in. */
export interface EspeakPlan {
  /** The `--pho` file, repaired for the voice's database. */
  phoText: string;
  phones: PhoPhone[];
  words: string[];
  /** The word of each phone; null when the words could not be told apart (then shared by length). */
  wordOf: (number | undefined)[] | null;
}

/** espeak-ng's phones for a chunk, and the words they belong to. */
export async function planEspeak(text: string, opts: EspeakOptions, dir: string): Promise<EspeakPlan> {
  const phoText = repairPho(await pho(text, opts, 'text', dir), opts.voice.db);
  const phones = parsePho(phoText);
  // Each word said alone, one clause per word (clauses are parted by `_`), to tell words apart.
  const words = chunkWords(text);
  const alone = parsePho(
    repairPho(await pho(words.map((w) => `${w}.`).join('\n'), opts, 'words', dir), opts.voice.db),
  );
  const groups: string[][] = [[]];
  for (const p of alone) {
    if (p.phone === '_') {
      if (groups.at(-1)!.length > 0) groups.push([]);
    } else groups.at(-1)!.push(p.phone);
  }
  if (groups.at(-1)!.length === 0) groups.pop();
  const wordOf =
    groups.length === words.length
      ? assignWords(
          phones.map((p) => p.phone),
          groups,
        )
      : null;
  return { phoText, phones, words, wordOf };
}

/** Renders a .pho file with the voice's MBROLA database into `wavPath`. */
export async function renderMbrola(
  phoText: string,
  opts: EspeakOptions,
  dir: string,
  wavPath: string,
): Promise<void> {
  const phoPath = join(dir, 'speech.pho');
  await writeFile(phoPath, phoText);
  // -e: a diphone the database lacks becomes a short silence instead of a failed render.
  await runTool('mbrola', ['-e', join(MBROLA_ROOT, opts.voice.db, opts.voice.db), phoPath, wavPath], {
    signal: opts.signal,
    timeoutMs: 30_000 + phoText.length * 10,
  });
}

/**
 * Renders each chunk; returns a WAV (mono 16-bit at the database's rate: 16 or 22.05 kHz) and its
 * words and phones per chunk.
 */
export async function synthesizeEspeak(
  chunks: readonly string[],
  opts: EspeakOptions,
): Promise<TimedPiece[]> {
  const pieces: TimedPiece[] = [];
  for (const [i, text] of chunks.entries()) {
    const dir = join(opts.workDir, `espeak-${i}`);
    await mkdir(dir, { recursive: true });
    const plan = await planEspeak(text, opts, dir);
    const wavPath = join(dir, 'speech.wav');
    await renderMbrola(plan.phoText, opts, dir, wavPath);
    const info = await readWavInfo(wavPath);
    pieces.push({ wavPath, timeline: planTimeline(plan, phoneBoundaries(plan.phones, info.durationMs)) });
  }
  return pieces;
}

/** The phones' boundaries (phones + 1 of them, ms) by their durations, rescaled to `durationMs`. */
export function phoneBoundaries(phones: readonly PhoPhone[], durationMs: number): number[] {
  const totalMs = phones.reduce((s, p) => s + p.durMs, 0);
  const scale = totalMs > 0 ? durationMs / totalMs : 1;
  const out = [0];
  let t = 0;
  for (const p of phones) {
    t += p.durMs;
    out.push(t * scale);
  }
  return out;
}

/** The timeline of a plan whose phone k spans boundariesMs[k]..boundariesMs[k + 1]. */
export function planTimeline(plan: EspeakPlan, boundariesMs: readonly number[]): SpeechTimeline {
  const { phones, words, wordOf } = plan;
  const phonemes: TimedPhoneme[] = [];
  const spans = new Map<number, { startMs: number; endMs: number }>();
  for (const [k, p] of phones.entries()) {
    const startMs = Math.round(boundariesMs[k]);
    const endMs = Math.round(boundariesMs[k + 1]);
    const phone = visemeOfPhone(p.phone) ?? 'ah';
    // Without per-word phones, a chunk's speech is shared among its words by length of writing.
    const w = phone === 'sil' ? undefined : (wordOf?.[k] ?? undefined);
    phonemes.push(w === undefined ? { phone, startMs, endMs } : { phone, startMs, endMs, word: w });
    if (w !== undefined) {
      const s = spans.get(w);
      spans.set(w, { startMs: s ? s.startMs : startMs, endMs });
    }
  }
  const timeline = { words: [] as TimedWord[], phonemes: tidyPhonemes(phonemes) };
  if (wordOf) {
    // Words with no phone of their own (rare) are dropped from the timeline; indices are renumbered.
    const renumber = new Map<number, number>();
    words.forEach((w, k) => {
      const s = spans.get(k);
      if (s) {
        renumber.set(k, timeline.words.length);
        timeline.words.push({ text: w, ...s });
      }
    });
    for (const p of timeline.phonemes) if (p.word !== undefined) p.word = renumber.get(p.word);
  } else {
    timeline.words.push(...proportionalWords(words, timeline.phonemes));
  }
  return timeline;
}

/** Words spread over the speech (first to last phone) by their written length: a fallback only. */
function proportionalWords(words: readonly string[], phonemes: readonly TimedPhoneme[]): TimedWord[] {
  const speech = phonemes.filter((p) => p.phone !== 'sil');
  if (speech.length === 0 || words.length === 0) return [];
  const start = speech[0].startMs;
  const end = speech.at(-1)!.endMs;
  const total = words.reduce((s, w) => s + w.length, 0);
  let acc = 0;
  return words.map((w) => {
    const a = start + Math.round(((end - start) * acc) / total);
    acc += w.length;
    return { text: w, startMs: a, endMs: start + Math.round(((end - start) * acc) / total) };
  });
}
