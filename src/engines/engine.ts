// The engine interface (DESIGN.md): decoded frames of the conformed video + the conformed audio in,
// frames out, streaming, so memory stays flat however long the video is.
import type { NormalisedOptions } from '../domain/generation-request.js';
import type { PixelFormat } from '../media/frames.js';
import type { EngineScene } from '../media/scene.js';
import type { TimedPhoneme } from '../speech/types.js';
import type { VisemeResult } from '../speech/viseme-model.js';

/** The request asks the engine to find the speaking face itself (no point or boxes to follow). */
export function wantsSpeakerScan(options: NormalisedOptions): boolean {
  const a = options.activeSpeaker;
  return !!a && a.autoDetect && !a.coordinates && !a.boundingBoxes;
}

export interface TimeSpan {
  readonly startMs: number;
  readonly endMs: number;
}

export interface EngineJob {
  /** Raw frames in `pixelFormat`, in order; the engine yields the same format. */
  readonly frames: AsyncIterable<Buffer>;
  /** rgb24 (default) or what the engine's `pixelFormatFor` chose (yuv420p). */
  readonly pixelFormat?: PixelFormat;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly frameCount: number;
  /** The conformed audio (the new speech, aligned with the frames), a WAV file. */
  readonly audioPath: string;
  /** Spans (seconds) where the new audio drives the mouth; outside them frames pass through. */
  readonly activeSpans: readonly { start: number; end: number }[] | null;
  /**
   * The phonemes of the conformed audio in output time (ms from the first frame), when the driver is
   * text or a synthesized asset: the engine shapes the mouth per sound. Null: loudness only.
   */
  readonly phonemes?: readonly TimedPhoneme[] | null;
  /**
   * Where `phonemes` may be trusted (ms, output time): elsewhere the mouth takes its shapes from the
   * signal (a recording whose words were not all recognized). Null or absent: wherever they are.
   */
  readonly phonemeSpans?: readonly TimeSpan[] | null;
  /**
   * The phoneme times were measured on the audio (forced alignment, some 10-30 ms off), not given by
   * the synthesizer: the engine then holds each lip closure a little longer so it is not missed.
   */
  readonly phonemesAligned?: boolean;
  /**
   * Speech found by voice activity detection (ms, output time): outside it the mouth stays closed,
   * however loud the background. Null or absent: silence is decided by loudness.
   */
  readonly speech?: readonly TimeSpan[] | null;
  /**
   * The learned viseme model's classes over the conformed audio (10 ms rows from the first frame):
   * shapes the stretches `phonemes` do not cover. Null or absent: the signal's features do.
   */
  readonly visemes?: VisemeResult | null;
  readonly options: NormalisedOptions;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
  /** The source itself, for engines that look before they draw (active-speaker detection). */
  readonly scene?: EngineScene;
  /** Fraction (0..1) of a look-ahead pass done, for engines that make one before the first frame. */
  readonly onPrepassProgress?: (fraction: number) => void;
}

/** What the engine saw, stored with the generation (include=quality). */
export interface EngineReport {
  engine: string;
  framesTotal: number;
  framesWithFace: number;
  [key: string]: unknown;
}

export interface EngineRun {
  /** The output frames, same size and count as the input. */
  readonly frames: AsyncIterable<Buffer>;
  /** Available once `frames` is exhausted. */
  report(): EngineReport;
}

export interface LipsyncEngine {
  readonly id: string;
  /** True when the engine leaves every frame unchanged: the pipeline then skips decoding entirely. */
  readonly passthrough: boolean;
  /**
   * The frame format the engine wants for frames of this size (absent: rgb24). yuv420p spares
   * ffmpeg both colour conversions; it needs an even width and height, which the pipeline checks.
   */
  pixelFormatFor?(width: number, height: number, settings: Readonly<Record<string, unknown>>): PixelFormat;
  start(job: EngineJob): EngineRun;
  /**
   * Loads now what the first job would otherwise load (models, threads) and keeps it loaded, so that
   * the first generation after a start, or after a pause, costs what the others do.
   */
  warmUp?(opts: { readonly jobsAtOnce: number }): Promise<void>;
}
