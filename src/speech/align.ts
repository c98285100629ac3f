// Forced alignment of a known text to audio with pocketsphinx_batch and a JSGF grammar. This
// pocketsphinx has no phone segmentation output, so every phone of every word is its own grammar
// token (`w3v0p2` = word 3, pronunciation variant 0, phone 2) with a one-phone dictionary entry: one
// decoding pass then gives phone times, and word times are their first and last phones. Flags as
// measured in the research notes: `-remove_silence no` (otherwise every time shifts) and wide beams
// (otherwise noisy audio fails to match the grammar); pocketsphinx_batch, not _continuous, which
// splits at pauses.
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../media/ffmpeg.js';
import { pronounce } from './lexicon.js';
import { normalisePhone, tidyPhonemes } from './phones.js';
import { transcriptWords, type TranscriptWord } from './text.js';
import { SPHINX_MODEL_ROOT, SpeechToolError, runTool } from './tools.js';
import type { AlignTranscript, SpeechTimeline, TimedPhoneme, TimedWord } from './types.js';

/**
 * The text does not fit the audio (the decoder found no path through every word): the text's fault,
 * not the tools', so a caller that was given the text can say so instead of retrying.
 */
export class AlignmentMismatchError extends Error {
  override readonly name = 'AlignmentMismatchError';
}

/** pocketsphinx's frame step. */
const FRAME_MS = 10;

interface Token {
  word: number;
  variant: number;
  phone: number;
}

/** The grammar and dictionary for a word sequence. */
export function buildGrammar(
  words: readonly TranscriptWord[],
  prons: Map<string, string[][]>,
): { jsgf: string; dict: string } {
  const dict: string[] = [];
  const items = words.map((w, i) => {
    const variants = prons.get(w.key)!.map((phones, v) =>
      phones
        .map((ph, p) => {
          dict.push(`w${i}v${v}p${p} ${ph}`);
          return `w${i}v${v}p${p}`;
        })
        .join(' '),
    );
    return variants.length === 1 ? variants[0] : `( ${variants.join(' | ')} )`;
  });
  // Explicit optional pauses: with one-phone tokens the decoder's own filler insertion rarely fires,
  // and without them leading silence is swallowed by the first phone.
  dict.push('sil SIL');
  // One item per line keeps the lines short for the JSGF reader.
  return {
    jsgf: `#JSGF V1.0;\ngrammar align;\npublic <utt> = [ sil ]\n${items.join('\n[ sil ]\n')}\n[ sil ];\n`,
    dict: `${dict.join('\n')}\n`,
  };
}

/** Parses pocketsphinx `-hypseg` output: `uttid S s T s A s L s  sf ascr lscr word ...  endframe`. */
export function parseHypseg(line: string): {
  segments: { startFrame: number; token: string }[];
  endFrame: number;
} {
  const f = line.trim().split(/\s+/);
  const segments: { startFrame: number; token: string }[] = [];
  let i = 9;
  for (; i + 3 < f.length; i += 4) {
    // (NULL) marks the grammar's null transitions (start, skipped optional pauses): not audio.
    if (f[i + 3] !== '(NULL)') segments.push({ startFrame: Math.max(0, Number(f[i])), token: f[i + 3] });
  }
  return { segments, endFrame: Number(f[i]) };
}

function parseToken(token: string): Token | null {
  const m = /^w(\d+)v(\d+)p(\d+)$/.exec(token);
  return m ? { word: Number(m[1]), variant: Number(m[2]), phone: Number(m[3]) } : null;
}

/** Turns the decoded segments into a timeline; throws when they do not spell the whole text. */
export function timelineFromSegments(
  segments: readonly { startFrame: number; token: string }[],
  endFrame: number,
  words: readonly TranscriptWord[],
  prons: Map<string, string[][]>,
): SpeechTimeline {
  const phonemes: TimedPhoneme[] = [];
  const timed: (TimedWord | undefined)[] = words.map(() => undefined);
  let expectWord = 0;
  let expectPhone = 0;
  let variant = 0;
  segments.forEach((seg, k) => {
    const startMs = seg.startFrame * FRAME_MS;
    const endMs = (segments[k + 1]?.startFrame ?? endFrame) * FRAME_MS;
    const t = parseToken(seg.token);
    if (!t) {
      phonemes.push({ phone: 'sil', startMs, endMs });
      return;
    }
    if (t.word !== expectWord || t.phone !== expectPhone || (t.phone > 0 && t.variant !== variant)) {
      throw new AlignmentMismatchError(`alignment: decoded phones out of order at word ${t.word}`);
    }
    variant = t.variant;
    const phones = prons.get(words[t.word].key)![variant];
    const phone = normalisePhone(phones[t.phone]) ?? 'sil';
    phonemes.push({ phone, startMs, endMs, word: t.word });
    if (t.phone === 0) timed[t.word] = { text: words[t.word].text, startMs, endMs };
    else timed[t.word]!.endMs = endMs;
    expectPhone = t.phone + 1;
    if (expectPhone === phones.length) {
      expectWord += 1;
      expectPhone = 0;
    }
  });
  if (expectWord !== words.length) {
    throw new AlignmentMismatchError(`alignment: only ${expectWord} of ${words.length} words were aligned`);
  }
  return { words: timed as TimedWord[], phonemes: tidyPhonemes(phonemes) };
}

/** Word and phone times of `text` as spoken in the WAV (any format ffmpeg reads). */
export const alignTranscript: AlignTranscript = async (wavPath, text, opts) => {
  const words = transcriptWords(text);
  if (words.length === 0) throw new Error('alignment: the text has no words');
  const dir = await mkdtemp(join(opts.workDir, 'align-'));
  const prons = await pronounce(
    words.map((w) => w.key),
    { workDir: dir, signal: opts.signal },
  );
  const { jsgf, dict } = buildGrammar(words, prons);
  await Promise.all([writeFile(join(dir, 'g.jsgf'), jsgf), writeFile(join(dir, 'words.dict'), dict)]);
  await writeFile(join(dir, 'utt.ctl'), 'utt\n');
  // Raw 16 kHz mono samples: no WAV header whose size pocketsphinx would have to be told.
  await runFfmpeg(
    [
      '-i',
      wavPath,
      '-vn',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-f',
      's16le',
      '-c:a',
      'pcm_s16le',
      join(dir, 'utt.raw'),
    ],
    {
      signal: opts.signal,
      timeoutMs: 120_000,
    },
  );
  const model = SPHINX_MODEL_ROOT;
  const args = [
    ['-hmm', join(model, 'en-us')],
    ['-dict', join(dir, 'words.dict')],
    ['-jsgf', join(dir, 'g.jsgf')],
    ['-ctl', join(dir, 'utt.ctl')],
    ['-cepdir', dir],
    ['-cepext', '.raw'],
    ['-adcin', 'yes'],
    ['-adchdr', '0'],
    ['-samprate', '16000'],
    ['-remove_silence', 'no'],
    ['-beam', '1e-80'],
    ['-pbeam', '1e-80'],
    ['-wbeam', '1e-60'],
    ['-hypseg', join(dir, 'out.seg')],
    ['-logfn', join(dir, 'sphinx.log')],
  ].flat();
  const audioSeconds = (await stat(join(dir, 'utt.raw'))).size / 32000;
  try {
    await runTool('pocketsphinx_batch', args, {
      signal: opts.signal,
      timeoutMs: 60_000 + audioSeconds * 5000,
    });
  } catch (err) {
    if (err instanceof SpeechToolError && err.reason === 'failed') {
      throw new Error(`alignment: pocketsphinx failed (${await logErrors(dir)})`);
    }
    throw err;
  }
  const hyp = (await readFile(join(dir, 'out.seg'), 'utf8').catch(() => '')).trim();
  if (hyp === '')
    throw new AlignmentMismatchError(
      `alignment: the audio does not match the text (${await logErrors(dir)})`,
    );
  const { segments, endFrame } = parseHypseg(hyp.split('\n')[0]);
  return timelineFromSegments(segments, endFrame, words, prons);
};

/** The decoder's own error lines (for the log; they name words of the text, not secrets). */
async function logErrors(dir: string): Promise<string> {
  const log = await readFile(join(dir, 'sphinx.log'), 'utf8').catch(() => '');
  const lines = log.split('\n').filter((l) => /^(ERROR|FATAL)/.test(l));
  return lines.slice(-2).join('; ') || 'no decoder output';
}
