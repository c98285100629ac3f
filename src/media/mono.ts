// Any audio or video file's first audio stream as mono float samples, for the analyses that need the
// whole signal at once (the viseme model; tests and measurement scripts).
import { join } from 'node:path';
import { readWavMono } from '../engines/cpu/wav.js';
import { runFfmpeg } from './ffmpeg.js';
import { withTempDir } from './tempdir.js';

/** Concatenates sample blocks. */
export function concatSamples(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The first audio stream as mono float samples at `sampleRate` (ffmpeg). */
export async function readMono(
  path: string,
  sampleRate = 16000,
  opts: { signal?: AbortSignal } = {},
): Promise<Float32Array> {
  return withTempDir(
    'read-mono',
    async (dir) => {
      const wav = join(dir, 'mono.wav');
      await runFfmpeg(
        ['-i', path, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(sampleRate), '-c:a', 'pcm_f32le', wav],
        { signal: opts.signal, timeoutMs: 600_000 },
      );
      const blocks: Float32Array[] = [];
      for await (const block of readWavMono(wav)) blocks.push(block);
      return concatSamples(blocks);
    },
    { signal: opts.signal },
  );
}
