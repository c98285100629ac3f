// Driving the CPU engine as the pipeline does (conformed audio, decoder -> engine -> encoder) on a
// fixture clip, and the recordings the articulation tests and measurements use: a sentence from the
// local synthesizer with a pause in front, whose festival phone times are the truth.
import { join } from 'node:path';
import { normaliseOptions } from '../../src/domain/generation-request.js';
import { CpuEngine } from '../../src/engines/cpu/index.js';
import type { EngineJob, EngineReport } from '../../src/engines/engine.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { decodeFrames, encodeFrames } from '../../src/media/frames.js';
import { concatSamples, readMono } from '../../src/media/mono.js';
import type { Articulation } from '../../src/speech/articulation.js';
import { LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import type { SpeechTimeline } from '../../src/speech/types.js';
import type { VisemeResult } from '../../src/speech/viseme-model.js';
import { writeWav16 } from './noise.js';

export interface DriveSpec {
  video: string;
  width: number;
  height: number;
  fps: number;
  seconds: number;
  /** Any audio file: conformed to 48 kHz stereo and padded to `seconds`, as the pipeline does. */
  audio: string;
  /** Where the conformed audio and the output go. */
  dir: string;
  name: string;
  /** An ffmpeg filter for the decoder (e.g. `fps=30` for a variable-rate clip). */
  videoFilter?: string;
  articulation?: Articulation | null;
  visemes?: VisemeResult | null;
  /** Engine settings (e.g. `{ interpolateLandmarks: false }`). */
  settings?: Readonly<Record<string, unknown>>;
}

/** Runs the engine over the clip; the output video (with the conformed audio) and the engine's report. */
export async function driveEngine(spec: DriveSpec): Promise<{ out: string; report: EngineReport }> {
  const conformed = join(spec.dir, `${spec.name}-conformed.wav`);
  await runFfmpeg([
    '-i',
    spec.audio,
    '-af',
    'apad',
    '-t',
    String(spec.seconds),
    '-ac',
    '2',
    '-ar',
    '48000',
    conformed,
  ]);
  const frames = Math.floor(spec.seconds * spec.fps);
  const a = spec.articulation ?? null;
  const job: EngineJob = {
    frames: decodeFrames({
      inputArgs: ['-i', spec.video],
      videoFilter: spec.videoFilter,
      width: spec.width,
      height: spec.height,
      maxFrames: frames,
    }),
    width: spec.width,
    height: spec.height,
    fps: spec.fps,
    frameCount: frames,
    audioPath: conformed,
    activeSpans: null,
    phonemes: a?.phonemes ?? null,
    phonemeSpans: a?.trusted ?? null,
    phonemesAligned: !!a && a.primary !== 'text',
    speech: a?.speech ?? null,
    visemes: spec.visemes ?? null,
    options: normaliseOptions({}, 'lipsync-2'),
    settings: spec.settings ?? {},
    signal: new AbortController().signal,
  };
  const run = new CpuEngine().start(job);
  const out = join(spec.dir, `${spec.name}.mp4`);
  await encodeFrames(run.frames, {
    width: spec.width,
    height: spec.height,
    fps: String(spec.fps),
    outputPath: out,
    format: 'mp4',
    audioPath: conformed,
    durationSeconds: spec.seconds,
  });
  return { out, report: run.report() };
}

export interface LeadRecording {
  /** 16 kHz mono WAV: `leadMs` of silence, then the sentence. */
  path: string;
  samples: Float32Array;
  /** The synthesizer's words and phones, shifted by the lead: the truth. */
  truth: SpeechTimeline;
  durationMs: number;
}

/**
 * A sentence spoken by a local voice (default `slt-hts`, festival's own phone times; RHVoice voices
 * bring forced-aligned times) after `leadMs` of silence, written into `dir`.
 */
export async function recordingWithLead(
  text: string,
  leadMs: number,
  dir: string,
  voice = 'slt-hts',
): Promise<LeadRecording> {
  const synth = await new LocalSynthesisProvider().synthesize({
    text,
    providerVoiceId: voice,
    settings: {},
    workDir: dir,
  });
  const shift = <T extends { startMs: number; endMs: number }>(x: T): T => ({
    ...x,
    startMs: x.startMs + leadMs,
    endMs: x.endMs + leadMs,
  });
  const samples = concatSamples([new Float32Array((leadMs * 16000) / 1000), await readMono(synth.audioPath)]);
  const path = join(dir, 'recording.wav');
  await writeWav16(path, samples);
  return {
    path,
    samples,
    truth: {
      words: synth.timeline.words.map(shift),
      phonemes: [{ phone: 'sil', startMs: 0, endMs: leadMs }, ...synth.timeline.phonemes.map(shift)],
    },
    durationMs: Math.round(samples.length / 16),
  };
}
