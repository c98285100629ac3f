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

/**
 * The first audio stream of any file as mono float blocks at `sampleRate`, handed to `use` while a
 * decoded copy exists (memory does not grow with the length unless `use` keeps the blocks).
 */
export async function withMonoBlocks<T>(
  path: string,
  sampleRate: number,
  opts: { signal?: AbortSignal },
  use: (blocks: AsyncIterable<Float32Array>) => Promise<T>,
): Promise<T> {
  return withTempDir(
    'read-mono',
    async (dir) => {
      const wav = join(dir, 'mono.wav');
      await runFfmpeg(
        ['-i', path, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(sampleRate), '-c:a', 'pcm_f32le', wav],
        { signal: opts.signal, timeoutMs: 600_000 },
      );
      return use(readWavMono(wav));
    },
    { signal: opts.signal },
  );
}

/** The first audio stream as mono float samples at `sampleRate` (ffmpeg), all at once. */
export async function readMono(
  path: string,
  sampleRate = 16000,
  opts: { signal?: AbortSignal } = {},
): Promise<Float32Array> {
  return withMonoBlocks(path, sampleRate, opts, async (blocks) => {
    const all: Float32Array[] = [];
    for await (const block of blocks) all.push(block);
    return concatSamples(all);
  });
}
