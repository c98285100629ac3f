// The output's soundtrack written in this process when the new audio is a plain WAV (PCM or float,
// one or two channels) and fills the output on its own (no segments): the same result as the ffmpeg
// pass of conform-graph.ts (resampled to 48 kHz, stereo, padded with silence or cut to an exact
// sample count, 16-bit), without an ffmpeg process. Starting one costs about 0.1 s of CPU on its own
// (its dynamic linker resolves symbols across some 200 libraries), more than this whole pass for a
// clip of a minute (docs/benchmarks.md, "Fewer processes per job"). Anything else goes through ffmpeg.
import { open } from 'node:fs/promises';
import os from 'node:os';
import { isPlainWav, readWavChannels, readWavInfo, type WavInfo } from './wav.js';
import { AUDIO_SAMPLE_RATE } from './encoding.js';
import { MediaProcessError } from './ffmpeg.js';
import { canResample, Resampler, type ResamplerShape } from './resample.js';

/** For listening, not only analysis: ffmpeg's default pass band (97% of Nyquist), a longer filter. */
const FOR_LISTENING: ResamplerShape = { zeroCrossings: 16, cutoff: 0.97 };
/** ffmpeg's default mix of one channel into two (each side at -3 dB). */
const MONO_TO_STEREO = Math.SQRT1_2;
const CHANNELS = 2;
const BYTES_PER_FRAME = 2 * CHANNELS;
/** A plain RIFF header counts the file's bytes in 32 bits; longer soundtracks go through ffmpeg (RF64). */
const MAX_DATA_BYTES = 0xffffffff - 36;

/** The WAV file this process can make the soundtrack from, or null when ffmpeg must. */
export async function soundtrackSource(path: string, totalSamples: number): Promise<WavInfo | null> {
  if (totalSamples * BYTES_PER_FRAME > MAX_DATA_BYTES) return null;
  const info = await readWavInfo(path).catch(() => null);
  if (!info || !isPlainWav(info) || info.channels > CHANNELS) return null;
  const rateOk = info.sampleRate === AUDIO_SAMPLE_RATE || canResample(info.sampleRate, AUDIO_SAMPLE_RATE);
  return rateOk ? info : null;
}

/** ffmpeg's float to 16-bit conversion: scaled, rounded to nearest, clipped. */
function toInt16(x: number): number {
  const v = Math.round(x * 32768);
  return v > 32767 ? 32767 : v < -32768 ? -32768 : v;
}

/** The samples' bytes in WAV order (little-endian), without a copy on little-endian machines. */
function littleEndian(pcm: Int16Array): Buffer {
  const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  if (os.endianness() === 'BE') bytes.swap16();
  return bytes;
}

function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(CHANNELS, 22);
  h.writeUInt32LE(AUDIO_SAMPLE_RATE, 24);
  h.writeUInt32LE(AUDIO_SAMPLE_RATE * BYTES_PER_FRAME, 28);
  h.writeUInt16LE(BYTES_PER_FRAME, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/**
 * Writes `out`: the WAV at `path` (checked by soundtrackSource) at 48 kHz stereo 16-bit, exactly
 * `totalSamples` frames long (silence after its end). `onProgress` gets the fraction written.
 */
export async function writeSoundtrack(
  path: string,
  info: WavInfo,
  totalSamples: number,
  out: string,
  opts: { signal?: AbortSignal; onProgress?: (fraction: number) => void } = {},
): Promise<void> {
  const resamplers =
    info.sampleRate === AUDIO_SAMPLE_RATE
      ? null
      : Array.from(
          { length: info.channels },
          () => new Resampler(info.sampleRate, AUDIO_SAMPLE_RATE, FOR_LISTENING),
        );
  const fh = await open(out, 'w', 0o600);
  try {
    await fh.write(wavHeader(totalSamples * BYTES_PER_FRAME), 0, 44, 0);
    let written = 0;
    const put = async (channels: readonly Float32Array[]) => {
      const frames = Math.min(channels[0]!.length, totalSamples - written);
      if (frames <= 0) return;
      const pcm = new Int16Array(frames * CHANNELS);
      const left = channels[0]!;
      const right = channels[1];
      if (right) {
        for (let i = 0, o = 0; i < frames; i++, o += CHANNELS) {
          pcm[o] = toInt16(left[i]!);
          pcm[o + 1] = toInt16(right[i]!);
        }
      } else {
        for (let i = 0, o = 0; i < frames; i++, o += CHANNELS)
          pcm[o] = pcm[o + 1] = toInt16(left[i]! * MONO_TO_STEREO);
      }
      await fh.write(littleEndian(pcm), 0, pcm.byteLength, 44 + written * BYTES_PER_FRAME);
      written += frames;
      opts.onProgress?.(written / totalSamples);
    };
    for await (const block of readWavChannels(path, info)) {
      // Aborted as the ffmpeg pass would be (callers tell an abort from a failure by this error).
      if (opts.signal?.aborted) throw new MediaProcessError('aborted', 'making the soundtrack was aborted');
      await put(resamplers ? block.map((c, i) => resamplers[i]!.push(c)) : block);
      if (written >= totalSamples) break;
    }
    if (resamplers && written < totalSamples) await put(resamplers.map((r) => r.finish()));
    if (written < totalSamples) {
      // Silence to the exact length (a zero-filled extension of the file).
      await fh.truncate(44 + totalSamples * BYTES_PER_FRAME);
      opts.onProgress?.(1);
    }
  } finally {
    await fh.close();
  }
}
