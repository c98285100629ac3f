// Applies a dubbing time-stretch (domain/dub-timing.ts) with rubberband's R3 engine, which keeps the
// pitch; formants are kept too (-F) so a sped-up voice does not turn thin. The output is asked for by
// length (-D), so it matches the plan to the sample rubberband rounds to.
import { copyFile } from 'node:fs/promises';
import { readWavInfo } from './local-wav.js';
import { runTool } from './tools.js';

export interface StretchOptions {
  signal?: AbortSignal;
}

/** Writes `input` stretched by `stretch` (output length / input length) to `output`; returns its length, ms. */
export async function stretchWav(
  input: string,
  output: string,
  stretch: number,
  opts: StretchOptions = {},
): Promise<number> {
  if (!(stretch > 0) || !Number.isFinite(stretch)) throw new RangeError(`not a stretch factor: ${stretch}`);
  const info = await readWavInfo(input);
  if (stretch === 1) {
    await copyFile(input, output);
    return info.durationMs;
  }
  const samples = info.dataBytes / ((info.bitsPerSample / 8) * info.channels);
  const seconds = (samples * stretch) / info.sampleRate;
  await runTool('rubberband', ['-q', '-3', '-F', '-D', seconds.toFixed(6), input, output], {
    signal: opts.signal,
    timeoutMs: 60_000 + Math.round(seconds * 2000),
  });
  return (await readWavInfo(output)).durationMs;
}
