// Synthesis with RHVoice (`RHVoice-test`), voices clb, bdl, slt and alan only (the English voices under
// LGPL; evgeniy-eng and lyubov are CC-BY-NC-ND and never used). RHVoice gives no timings, so each
// chunk's words and phones come from forced alignment of the very text it was given.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { alignTranscript } from './align.js';
import type { TimedPiece } from './local-wav.js';
import { RHVOICE_VOICES, runTool, type RhvoiceVoice } from './tools.js';

export interface RhvoiceOptions {
  voice: RhvoiceVoice;
  workDir: string;
  /** Speaking rate, 0.5..2 (1 = the voice's own). */
  speed: number;
  signal?: AbortSignal;
}

/** RHVoice-test's `-r`: percent of the voice's own rate (measured: 50 = half speed, 200 = double). */
export function rhvoiceRate(speed: number): number {
  return Math.round(Math.min(2, Math.max(0.5, speed)) * 100);
}

/** Renders and aligns each chunk; returns a WAV (24 kHz mono 16-bit) and its timeline per chunk. */
export async function synthesizeRhvoice(
  chunks: readonly string[],
  opts: RhvoiceOptions,
): Promise<TimedPiece[]> {
  if (!RHVOICE_VOICES.includes(opts.voice)) throw new Error(`not an allowed RHVoice voice: ${opts.voice}`);
  const pieces: TimedPiece[] = [];
  for (const [i, text] of chunks.entries()) {
    const dir = join(opts.workDir, `rhvoice-${i}`);
    await mkdir(dir, { recursive: true });
    const input = join(dir, 'text.txt');
    const wavPath = join(dir, 'speech.wav');
    // The text goes in a file, never on the command line.
    await writeFile(input, `${text}\n`);
    await runTool(
      'RHVoice-test',
      ['-p', opts.voice, '-r', String(rhvoiceRate(opts.speed)), '-i', input, '-o', wavPath],
      { signal: opts.signal, timeoutMs: 30_000 + text.length * 100 },
    );
    const timeline = await alignTranscript(wavPath, text, { workDir: dir, signal: opts.signal });
    pieces.push({ wavPath, timeline });
  }
  return pieces;
}
