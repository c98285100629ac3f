// Synthesis with festival and the cmu_us_slt_arctic_hts voice. festival knows exactly what it said and
// when, so the word and phone times come from the utterance itself (Word relation, and each word's
// segments through SylStructure; pauses from the Segment relation), written out by a Scheme script.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { normalisePhone, tidyPhonemes } from './phones.js';
import { runTool } from './tools.js';
import type { SpeechTimeline, TimedPhoneme, TimedWord } from './types.js';
import type { TimedPiece } from './local-wav.js';

export const FESTIVAL_VOICE = 'cmu_us_slt_arctic_hts';

/** A string as a Scheme string literal: only `\` and `"` are special inside one. */
export function schemeString(s: string): string {
  // Control characters cannot carry speech and would only confuse the reader.
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return `"${clean.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

// Per chunk: synthesize, save the wave, and write one line per word (W), per phone of a word (P, with
// the word's index) and per pause (S). Token names keep the written case ("Hello" for word "hello").
const DUMP = `
(define (lipsync-dump utt wavfile timefile)
  (utt.save.wave utt wavfile 'riff)
  (let ((fd (fopen timefile "w")) (wi 0))
    (mapcar
      (lambda (w)
        (format fd "W\\t%d\\t%s\\t%f\\t%f\\t%s\\n" wi (item.name w)
          (item.feat w "word_start") (item.feat w "word_end") (item.feat w "R:Token.parent.name"))
        (mapcar
          (lambda (syl)
            (mapcar
              (lambda (seg)
                (format fd "P\\t%d\\t%s\\t%f\\t%f\\n" wi (item.name seg)
                  (item.feat seg "segment_start") (item.feat seg "end")))
              (item.daughters syl)))
          (item.daughters (item.relation w 'SylStructure)))
        (set! wi (+ wi 1)))
      (utt.relation.items utt 'Word))
    (mapcar
      (lambda (s)
        (if (string-equal (item.name s) "pau")
          (format fd "S\\t%s\\t%f\\t%f\\n" (item.name s) (item.feat s "segment_start") (item.feat s "end"))))
      (utt.relation.items utt 'Segment))
    (fclose fd)))
`;

export interface FestivalOptions {
  workDir: string;
  /** Speaking rate, 0.5..2 (1 = the voice's own). */
  speed: number;
  signal?: AbortSignal;
}

/** Parses one chunk's dump into a timeline (seconds to integer milliseconds). */
export function parseFestivalTimes(dump: string): SpeechTimeline {
  const words: TimedWord[] = [];
  const phonemes: TimedPhoneme[] = [];
  // festival's word index -> ours: a clitic it splits off ("man's" -> man + 's) joins its word again.
  const index = new Map<number, number>();
  let lastToken = '';
  const ms = (s: string): number => Math.round(Number(s) * 1000);
  for (const line of dump.split('\n')) {
    const f = line.split('\t');
    if (f[0] === 'W' && f.length >= 5) {
      const token = f[5] ?? '';
      const prev = words.at(-1);
      if (prev && f[2].startsWith("'") && token === lastToken) {
        prev.text = token;
        prev.endMs = Math.max(prev.endMs, ms(f[4]));
        index.set(Number(f[1]), words.length - 1);
        continue;
      }
      lastToken = token;
      // The written token when it is this very word (keeps "Hello"); else the spoken word ("twelve").
      const bare = (x: string): string => x.toLowerCase().replace(/'/g, '');
      const text = bare(token) === bare(f[2]) ? token : f[2];
      index.set(Number(f[1]), words.length);
      words.push({ text, startMs: ms(f[3]), endMs: ms(f[4]) });
    } else if (f[0] === 'P' && f.length >= 5) {
      const phone = normalisePhone(f[2]);
      const word = index.get(Number(f[1]));
      if (phone && word !== undefined) phonemes.push({ phone, startMs: ms(f[3]), endMs: ms(f[4]), word });
    } else if (f[0] === 'S' && f.length >= 4) {
      phonemes.push({ phone: 'sil', startMs: ms(f[2]), endMs: ms(f[3]) });
    }
  }
  phonemes.sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs);
  return { words, phonemes: tidyPhonemes(phonemes) };
}

/**
 * Renders each chunk of text with one festival process; returns a WAV and its timeline per chunk
 * (times relative to that chunk's audio). Chunks must contain something speakable.
 */
export async function synthesizeFestival(
  chunks: readonly string[],
  opts: FestivalOptions,
): Promise<TimedPiece[]> {
  // Rate through hts_engine's own `-r` (speed factor): Duration_Stretch does not reach HTS voices in
  // festival 2.5 (measured: no change); `-r` scales the durations, and the segment times with them.
  const lines = [
    `(voice_${FESTIVAL_VOICE})`,
    DUMP,
    `(set! hts_engine_params (append hts_engine_params (list (list "-r" ${opts.speed.toFixed(4)}))))`,
  ];
  const files = chunks.map((_, i) => ({
    wav: join(opts.workDir, `festival-${i}.wav`),
    times: join(opts.workDir, `festival-${i}.txt`),
  }));
  chunks.forEach((text, i) => {
    lines.push(
      `(lipsync-dump (SynthText ${schemeString(text)}) ${schemeString(files[i].wav)} ${schemeString(files[i].times)})`,
    );
  });
  const script = join(opts.workDir, 'festival-script.scm');
  await writeFile(script, `${lines.join('\n')}\n`);
  const chars = chunks.reduce((n, c) => n + c.length, 0);
  await runTool('festival', ['--batch', script], {
    cwd: opts.workDir,
    signal: opts.signal,
    timeoutMs: 30_000 + chars * 100,
  });
  const pieces: TimedPiece[] = [];
  for (const f of files) {
    const timeline = parseFestivalTimes(await readFile(f.times, 'utf8'));
    if (timeline.words.length === 0) throw new Error('festival produced no words');
    pieces.push({ wavPath: f.wav, timeline });
  }
  return pieces;
}
