// The dub's soundtrack: the source's own audio kept as the background, lowered ("ducked") where the
// source person speaks, with the dubbed sentences summed in at their places. The source is streamed
// (ffmpeg decodes it to raw 48 kHz s16le on a pipe, mixed here block by block and written straight
// into the WAV, whose header is patched at the end), so memory does not grow with the video's length;
// a clip is resampled and held only while the mix passes over it.
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg, startFfmpeg } from './ffmpeg.js';
import { probeMedia } from './probe.js';
import { makeTempDir, removeTempDir } from './tempdir.js';
import { readWavMono } from './wav.js';
import { concatSamples } from './mono.js';

export interface PlacedClip {
  /** A mono 16-bit PCM WAV at any rate, placed at startMs of the output. */
  path: string;
  startMs: number;
}

export interface DubMixInput {
  /** The original media file (video or audio); its first audio track is the background. */
  sourcePath: string;
  /** Where the source person speaks: the original is lowered there. */
  speechSpans: readonly { startMs: number; endMs: number }[];
  /** The dubbed sentences (they may overlap; overlapping clips are summed). */
  clips: readonly PlacedClip[];
  /** Written: 16-bit PCM WAV, 48 kHz, the source's channel count (1 or 2; more -> 2; none -> 1). */
  outPath: string;
  /** The output lasts max(source length, this, last clip end). */
  minDurationMs?: number;
  /**
   * How far the original is lowered inside speech spans. -24 dB by default: the original voice is
   * then about 24 dB under the dub (which is mixed at its own level, near the original's), where it
   * stops competing with the new words yet is not cut to silence, so the room tone and music go
   * on beneath the dub instead of dropping out.
   */
  duckDb?: number;
}

export interface DubMixResult {
  durationMs: number;
  sampleRate: number;
  channels: number;
}

export const DUB_SAMPLE_RATE = 48_000;
export const DEFAULT_DUCK_DB = -24;
/** Speech spans are widened by this much each side: the ramp down ends before the first word. */
export const DUCK_PAD_MS = 80;
/** Raised-cosine ramp into and out of a duck (inside the padding). */
export const DUCK_RAMP_MS = 50;
/** Padded spans closer than this are joined: the background does not bob up between sentences. */
export const DUCK_MERGE_GAP_MS = 250;
/** Raised-cosine fade at each clip's start and end, so a clip starting mid-wave does not click. */
export const CLIP_FADE_MS = 5;
/**
 * The soft clip's knee (about -0.9 dBFS): samples under it pass unchanged, samples over it are bent
 * with tanh toward full scale (same slope at the knee; only a sum far over full scale gets there). A memoryless soft clip, not
 * a look-ahead limiter: it only touches peaks where the dub sums over a loud, undipped background.
 */
export const SOFT_CLIP_KNEE = 0.9;

/** Where the soft clip tends to: the largest 16-bit sample, so a negative peak is never flatter. */
const SOFT_CLIP_CEILING = 32767 / 32768;
const BLOCK_FRAMES = 4800;
const FFMPEG_TIMEOUT_MS = 600_000;

interface Span {
  a: number;
  b: number;
}

/** The padded spans in output frames, sorted, with near neighbours joined. */
export function duckSpans(spans: DubMixInput['speechSpans'], rate = DUB_SAMPLE_RATE): Span[] {
  const pad = DUCK_PAD_MS;
  const sorted = spans
    .filter((s) => Number.isFinite(s.startMs) && Number.isFinite(s.endMs) && s.endMs > s.startMs)
    .map((s) => ({ a: s.startMs - pad, b: s.endMs + pad }))
    .sort((x, y) => x.a - y.a);
  const merged: Span[] = [];
  for (const s of sorted) {
    const last = merged.at(-1);
    if (last && s.a - last.b < DUCK_MERGE_GAP_MS) last.b = Math.max(last.b, s.b);
    else merged.push({ ...s });
  }
  const toFrames = (ms: number): number => Math.round((ms * rate) / 1000);
  return merged.map((s) => ({ a: toFrames(s.a), b: toFrames(s.b) }));
}

function raisedCosine(x: number): number {
  return x <= 0 ? 0 : x >= 1 ? 1 : 0.5 - 0.5 * Math.cos(Math.PI * x);
}

/** Fills gain[0..n) for frames f0.. from the spans; `from` is where to start looking (returned advanced). */
function fillGain(
  gain: Float32Array,
  n: number,
  f0: number,
  spans: Span[],
  from: number,
  duck: number,
): number {
  let i = from;
  while (i < spans.length && spans[i].b <= f0) i++;
  gain.fill(1, 0, n);
  const ramp = Math.round((DUCK_RAMP_MS * DUB_SAMPLE_RATE) / 1000);
  for (let j = i; j < spans.length && spans[j].a < f0 + n; j++) {
    const { a, b } = spans[j];
    const lo = Math.max(a, f0);
    const hi = Math.min(b, f0 + n);
    for (let f = lo; f < hi; f++) {
      // Depth 0..1: the ramp in from a and the ramp out to b, whichever is lower (short spans).
      const depth = Math.min(raisedCosine((f - a) / ramp), raisedCosine((b - f) / ramp));
      gain[f - f0] = 1 - (1 - duck) * depth;
    }
  }
  return i;
}

function softClip(x: number): number {
  const m = Math.abs(x);
  if (m <= SOFT_CLIP_KNEE) return x;
  const room = SOFT_CLIP_CEILING - SOFT_CLIP_KNEE;
  const y = SOFT_CLIP_KNEE + room * Math.tanh((m - SOFT_CLIP_KNEE) / room);
  return x < 0 ? -y : y;
}

function applyFades(samples: Float32Array, rate = DUB_SAMPLE_RATE): void {
  const n = Math.min(Math.round((CLIP_FADE_MS * rate) / 1000), Math.floor(samples.length / 2));
  for (let i = 0; i < n; i++) {
    const g = raisedCosine((i + 0.5) / n);
    samples[i] *= g;
    samples[samples.length - 1 - i] *= g;
  }
}

interface LoadedClip {
  start: number;
  samples: Float32Array;
}

// A RIFF header with a 28-byte JUNK chunk kept for an RF64 ds64 chunk, which it becomes if the data
// passes 4 GiB (about 6 hours of 48 kHz stereo), as ffmpeg's `-rf64 auto` does.
const HEADER_BYTES = 12 + 36 + 24 + 8;

function wavHeader(channels: number, dataBytes: number): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  const rf64 = dataBytes + HEADER_BYTES - 8 > 0xffffffff;
  h.write(rf64 ? 'RF64' : 'RIFF', 0, 'ascii');
  h.writeUInt32LE(rf64 ? 0xffffffff : HEADER_BYTES - 8 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write(rf64 ? 'ds64' : 'JUNK', 12, 'ascii');
  h.writeUInt32LE(28, 16);
  if (rf64) {
    h.writeBigUInt64LE(BigInt(HEADER_BYTES - 8 + dataBytes), 20);
    h.writeBigUInt64LE(BigInt(dataBytes), 28);
    h.writeBigUInt64LE(BigInt(dataBytes / (2 * channels)), 36);
  }
  h.write('fmt ', 48, 'ascii');
  h.writeUInt32LE(16, 52);
  h.writeUInt16LE(1, 56);
  h.writeUInt16LE(channels, 58);
  h.writeUInt32LE(DUB_SAMPLE_RATE, 60);
  h.writeUInt32LE(DUB_SAMPLE_RATE * 2 * channels, 64);
  h.writeUInt16LE(2 * channels, 68);
  h.writeUInt16LE(16, 70);
  h.write('data', 72, 'ascii');
  h.writeUInt32LE(rf64 ? 0xffffffff : dataBytes, 76);
  return h;
}

/** Raw s16le frames from ffmpeg's stdout, re-cut into whole frames (or nothing for no audio). */
async function* sourceFrames(
  path: string,
  channels: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<Int16Array> {
  const args = ['-i', path, '-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', String(channels)];
  args.push('-ar', String(DUB_SAMPLE_RATE), '-f', 's16le', '-c:a', 'pcm_s16le', 'pipe:1');
  const proc = startFfmpeg(args, { signal, timeoutMs: FFMPEG_TIMEOUT_MS, stdin: 'ignore', stdout: 'pipe' });
  // Seen below once the pipe has ended; without this an early failure would be an unhandled rejection.
  proc.done.catch(() => undefined);
  const frameBytes = 2 * channels;
  let rest: Buffer = Buffer.alloc(0);
  let finished = false;
  try {
    for await (const chunk of proc.child.stdout!) {
      const buf: Buffer = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
      const whole = buf.length - (buf.length % frameBytes);
      rest = Buffer.from(buf.subarray(whole));
      if (whole === 0) continue;
      // Copied into its own array: the pipe's chunks need not be 2-byte aligned (samples are
      // little-endian, as on every platform Node runs on).
      const samples = new Int16Array(whole / 2);
      Buffer.from(samples.buffer).set(buf.subarray(0, whole));
      yield samples;
    }
    await proc.done;
    finished = true;
  } finally {
    if (!finished) {
      proc.kill('aborted');
      await proc.done.catch(() => undefined);
    }
  }
}

/**
 * Mixes the dub (see the file comment). The source's length is that of its decoded audio (of the file
 * when it has no audio track); the caller passes a longer video's length as minDurationMs. Rejects
 * with MediaProcessError when ffmpeg fails or is aborted (MediaProbeError when the source cannot be
 * read at all); a partial output is removed.
 */
export async function mixDub(
  input: DubMixInput,
  opts: { workDir: string; signal?: AbortSignal },
): Promise<DubMixResult> {
  const { signal } = opts;
  signal?.throwIfAborted();
  // A caller's bug, not the user's: a clip at no time would have the mix wait for it forever.
  if (input.clips.some((c) => !Number.isFinite(c.startMs)))
    throw new Error('mixDub: a clip without a finite startMs');
  const probe = await probeMedia(input.sourcePath);
  const srcChannels = probe.audio?.channels ?? 0;
  const channels = srcChannels === 1 || srcChannels === 0 ? 1 : 2;
  const rate = DUB_SAMPLE_RATE;
  const duck = 10 ** ((input.duckDb ?? DEFAULT_DUCK_DB) / 20);
  const spans = duckSpans(input.speechSpans);
  const clips = [...input.clips].sort((x, y) => x.startMs - y.startMs);
  const toFrames = (ms: number): number => Math.round((ms * rate) / 1000);
  // Without an audio track the source still sets the length (a video's duration).
  const probedFrames = probe.audio ? 0 : toFrames((probe.durationSeconds ?? 0) * 1000);
  const minFrames = Math.max(probedFrames, toFrames(Math.max(0, input.minDurationMs ?? 0)));

  const dir = await makeTempDir('dub-mix', opts.workDir);
  let out: FileHandle | null = null;
  let ok = false;
  try {
    let clipNo = 0;
    const loadClip = async (clip: PlacedClip): Promise<LoadedClip> => {
      const wav = join(dir, `clip-${clipNo++}.wav`);
      await runFfmpeg(
        ['-i', clip.path, '-map', '0:a:0', '-ac', '1', '-ar', String(rate), '-c:a', 'pcm_f32le', wav],
        { signal, timeoutMs: FFMPEG_TIMEOUT_MS },
      );
      const parts: Float32Array[] = [];
      for await (const block of readWavMono(wav)) parts.push(block);
      await rm(wav, { force: true });
      const samples = concatSamples(parts);
      applyFades(samples);
      return { start: toFrames(clip.startMs), samples };
    };

    out = await open(input.outPath, 'w');
    await out.write(wavHeader(channels, 0), 0, HEADER_BYTES, 0);
    let written = 0; // frames
    let nextClip = 0;
    let live: LoadedClip[] = [];
    let lastClipEnd = 0;
    let spanAt = 0;
    const gain = new Float32Array(BLOCK_FRAMES);
    const mix = new Float32Array(BLOCK_FRAMES);
    const pcm = new Int16Array(BLOCK_FRAMES * channels);
    const pcmBytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);

    // Mixes frames [written, written + n) of the source (null: silence) into the file.
    const writeBlock = async (src: Int16Array | null, srcOffset: number, n: number): Promise<void> => {
      signal?.throwIfAborted();
      const f0 = written;
      while (nextClip < clips.length && toFrames(clips[nextClip].startMs) < f0 + n) {
        const c = await loadClip(clips[nextClip++]);
        lastClipEnd = Math.max(lastClipEnd, c.start + c.samples.length);
        live.push(c);
      }
      live = live.filter((c) => c.start + c.samples.length > f0);
      mix.fill(0, 0, n);
      for (const c of live) {
        const lo = Math.max(c.start, f0);
        const hi = Math.min(c.start + c.samples.length, f0 + n);
        for (let f = lo; f < hi; f++) mix[f - f0] += c.samples[f - c.start];
      }
      if (src) spanAt = fillGain(gain, n, f0, spans, spanAt, duck);
      for (let i = 0, k = 0; i < n; i++) {
        for (let ch = 0; ch < channels; ch++, k++) {
          const bg = src ? (src[srcOffset + k] / 32768) * gain[i] : 0;
          const y = softClip(bg + mix[i]);
          pcm[k] = Math.max(-32768, Math.min(32767, Math.round(y * 32768)));
        }
      }
      await out!.write(pcmBytes, 0, n * channels * 2, HEADER_BYTES + f0 * channels * 2);
      written += n;
    };

    if (probe.audio) {
      for await (const frames of sourceFrames(input.sourcePath, channels, signal)) {
        const count = frames.length / channels;
        for (let at = 0; at < count; at += BLOCK_FRAMES) {
          await writeBlock(frames, at * channels, Math.min(BLOCK_FRAMES, count - at));
        }
      }
    }
    // Past the source: silence under whatever clips remain, up to the longest of the three lengths.
    for (;;) {
      const remainingClipEnd = nextClip < clips.length ? Number.POSITIVE_INFINITY : lastClipEnd;
      const target = Math.max(minFrames, remainingClipEnd);
      if (written >= target) break;
      const n = Number.isFinite(target) ? Math.min(BLOCK_FRAMES, target - written) : BLOCK_FRAMES;
      await writeBlock(null, 0, n);
    }

    await out.write(wavHeader(channels, written * channels * 2), 0, HEADER_BYTES, 0);
    await out.close();
    out = null;
    ok = true;
    return { durationMs: Math.round((written * 1000) / rate), sampleRate: rate, channels };
  } finally {
    await out?.close().catch(() => undefined);
    if (!ok) await rm(input.outPath, { force: true });
    await removeTempDir(dir);
  }
}
