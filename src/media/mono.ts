// Any audio or video file's first audio stream as mono float samples at a given rate, for voice
// activity and the analyses that need the whole signal at once (the viseme model; tests and
// measurement scripts).
import { join } from 'node:path';
import { isPlainWav, readWavInfo, readWavMono, type WavInfo } from './wav.js';
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

/** A PCM or float WAV file already at `sampleRate`, which this process reads itself; else null. */
async function plainWavAt(path: string, sampleRate: number): Promise<WavInfo | null> {
  const info = await readWavInfo(path).catch(() => null);
  return info && isPlainWav(info) && info.sampleRate === sampleRate ? info : null;
}

/** A WAV file's samples mixed to mono, block by block. */
async function* wavBlocks(
  path: string,
  info: WavInfo,
  signal: AbortSignal | undefined,
): AsyncGenerator<Float32Array> {
  for await (const block of readWavMono(path, info)) {
    signal?.throwIfAborted();
    if (block.length > 0) yield block;
  }
}

/**
 * The first audio stream of any file as mono float blocks at `sampleRate`, handed to `use` while a
 * decoded copy exists (memory does not grow with the length unless `use` keeps the blocks). A PCM or
 * float WAV file already at that rate is read here; ffmpeg decodes, mixes and resamples anything else.
 */
export async function withMonoBlocks<T>(
  path: string,
  sampleRate: number,
  opts: { signal?: AbortSignal },
  use: (blocks: AsyncIterable<Float32Array>) => Promise<T>,
): Promise<T> {
  const wav = await plainWavAt(path, sampleRate);
  if (wav) return use(wavBlocks(path, wav, opts.signal));
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
