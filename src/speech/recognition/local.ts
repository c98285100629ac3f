// Offline recognition with pocketsphinx_continuous and the en-us model (Debian pocketsphinx-en-us).
// Its accuracy is modest (about 35 % word error on real read speech, worse on casual talk; see
// docs/transcription.md), so its output is a draft for the user to correct; the times it gives are
// refined by forced alignment afterwards (refine.ts). The input is converted to 16 kHz mono first:
// the model's own rate, and a header pocketsphinx reads without being told the format.
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { probeMedia } from '../../media/probe.js';
import { SPHINX_MODEL_ROOT, SpeechToolError, runTool } from '../tools.js';
import { SpeechProviderError } from '../types.js';
import type { RecognitionProvider, RecognitionResult, RecognizedWord, TranscribeOptions } from './types.js';

/** Markers and fillers the decoder emits that are not words of the speech. */
const NOT_WORDS = /^(<s>|<\/s>|<sil>|\[[a-z_]+\]|\+\+?[a-z_]+\+?\+?)$/i;

/**
 * Parses `-time yes` output: per utterance a hypothesis line, then `word start end posterior` lines
 * with times in seconds from the start of the file. Alternate pronunciations carry "(2)".
 */
export function parseSphinxTimes(stdout: string): RecognizedWord[] {
  const words: RecognizedWord[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const f = line.trim().split(/\s+/);
    if (f.length !== 4) continue;
    const [token, s, e, p] = f;
    const start = Number(s);
    const end = Number(e);
    const posterior = Number(p);
    // A hypothesis line of exactly four words has no numeric columns: skipped here.
    if (![start, end, posterior].every(Number.isFinite) || !/^\d+(\.\d+)?$/.test(s)) continue;
    if (NOT_WORDS.test(token)) continue;
    const text = token.replace(/\(\d+\)$/, '');
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    words.push({
      text,
      startMs: Math.round(start * 1000),
      // The decoder's end is the start of its last frame: one 10 ms frame more covers the word.
      endMs: Math.round(end * 1000) + 10,
      confidence: Math.min(1, Math.max(0, posterior)),
    });
  }
  return words;
}

/**
 * Search settings appended to the model flags. Until 2026-12-07 none (pocketsphinx's defaults:
 * -maxhmmpf 30000 -maxwpf -1 -fwdflat yes). Capping the active HMMs and word exits per frame and
 * skipping the second (flat-lexicon) pass cost 0.62 of the CPU time on synthetic speech and
 * 0.45-0.61 on the real fixtures, with no loss of words or of p/b/m found; narrower beams and -ds 2
 * lost words (bench/results/2026-12-07-recognition.md). Exported so the bench measures these.
 */
export const DECODER_FLAGS: readonly string[] = ['-maxhmmpf', '3000', '-maxwpf', '10', '-fwdflat', 'no'];

/** pocketsphinx_continuous arguments for a 16 kHz mono WAV, with the given search settings. */
export function decoderArgs(x16k: string, flags: readonly string[] = DECODER_FLAGS): string[] {
  return [
    ['-infile', x16k],
    ['-hmm', join(SPHINX_MODEL_ROOT, 'en-us')],
    ['-lm', join(SPHINX_MODEL_ROOT, 'en-us.lm.bin')],
    ['-dict', join(SPHINX_MODEL_ROOT, 'cmudict-en-us.dict')],
    ['-time', 'yes'],
    ['-logfn', '/dev/null'],
    flags,
  ].flat();
}

export interface LocalRecognitionOptions {
  /** Kill the decoder after this many ms per second of audio, plus a minute (default 3000). */
  timeoutMsPerSecond?: number;
}

export class LocalRecognitionProvider implements RecognitionProvider {
  readonly name = 'local' as const;

  constructor(private readonly opts: LocalRecognitionOptions = {}) {}

  async transcribe(wavPath: string, opts: TranscribeOptions): Promise<RecognitionResult> {
    opts.signal?.throwIfAborted();
    if (opts.language && !/^en(-|_|$)/i.test(opts.language)) {
      throw new SpeechProviderError('rejected', 'local', `no local model for language ${opts.language}`);
    }
    // A folder of its own: calls may share a workDir.
    const x16k = join(await mkdtemp(join(opts.workDir, 'recognize-')), 'x16k.wav');
    try {
      await runFfmpeg(['-i', wavPath, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', x16k], {
        signal: opts.signal,
        timeoutMs: 300_000,
      });
    } catch (err) {
      opts.signal?.throwIfAborted();
      throw new SpeechProviderError(
        'rejected',
        'local',
        `the audio could not be read: ${(err as Error).message}`,
      );
    }
    const seconds = (await probeMedia(x16k)).durationSeconds ?? 0;
    const args = decoderArgs(x16k);
    let stdout: string;
    try {
      stdout = await runTool('pocketsphinx_continuous', args, {
        signal: opts.signal,
        // Measured RTF 0.15-0.5 on one core (0.25-0.75 before DECODER_FLAGS); three times real time leaves room on a busy machine.
        timeoutMs: 60_000 + seconds * (this.opts.timeoutMsPerSecond ?? 3000),
      });
    } catch (err) {
      opts.signal?.throwIfAborted();
      const reason = err instanceof SpeechToolError && err.reason === 'timeout' ? 'timeout' : 'unavailable';
      throw new SpeechProviderError(reason, 'local', (err as Error).message, { cause: err });
    }
    return { words: parseSphinxTimes(stdout), language: 'en' };
  }
}
