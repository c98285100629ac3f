// The conform plan: from input durations and generation options to what the output will be (length,
// frame rate, size) and how each input is fitted to it. Pure: no I/O, no ffmpeg. conform.ts turns a
// plan into filter graphs.

export type SyncMode = 'bounce' | 'loop' | 'cut_off' | 'silence' | 'remap';
export const SYNC_MODES: readonly SyncMode[] = ['bounce', 'loop', 'cut_off', 'silence', 'remap'];

export interface ConformSegment {
  /** Seconds into the video. */
  startTime: number;
  endTime: number;
  /** Window of the new audio for this segment; default from 0 for the segment's length. */
  audioStart?: number;
  audioEnd?: number;
}

export type VisualInput =
  | {
      kind: 'video';
      durationSeconds: number;
      fps: number | null;
      width: number;
      height: number;
      rotation?: number;
      hasAudio: boolean;
    }
  | { kind: 'image'; width: number; height: number };

export interface ConformPlanInput {
  visual: VisualInput;
  audioDurationSeconds: number;
  syncMode?: SyncMode;
  fps?: number | null;
  outputResolution?: readonly [number, number] | null;
  speedup?: 1 | 2 | 3 | 4;
  segments?: readonly ConformSegment[] | null;
}

/** How the picture fills the output: play from 0 and cut, repeat, ping-pong, retime, or hold. */
export type VideoStrategy = 'trim' | 'loop' | 'bounce' | 'stretch' | 'still';
/** How the new audio fills the output: cut, padded with silence, as is, or only inside segments. */
export type AudioStrategy = 'cut' | 'pad' | 'exact' | 'segments';

export interface PlannedSegment {
  startTime: number;
  endTime: number;
  audioStart: number;
  audioEnd: number;
  /** Silence after the audio window when the window is shorter than the segment. */
  padSeconds: number;
}

export interface ConformPlan {
  syncMode: SyncMode;
  durationSeconds: number;
  frameCount: number;
  fps: number;
  /** The frame rate as ffmpeg reads it: "25", "30000/1001". */
  fpsText: string;
  width: number;
  height: number;
  /** letterbox: an explicit output_resolution of another aspect ratio is fitted and padded. */
  fit: 'stretch' | 'letterbox';
  video: { strategy: VideoStrategy; sourceSeconds: number; stretchFactor: number };
  audio: { strategy: AudioStrategy; usedSeconds: number; padSeconds: number };
  /** Empty: the new audio covers the whole output. */
  segments: PlannedSegment[];
  /** What plays outside the segments. */
  outsideSegments: 'original_audio' | 'silence' | null;
}

/** The inputs and options cannot be combined; `field` names the request field at fault. */
export class ConformPlanError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConformPlanError';
  }
}

const STANDARD_RATES: readonly [number, string][] = [
  [24000 / 1001, '24000/1001'],
  [24, '24'],
  [25, '25'],
  [30000 / 1001, '30000/1001'],
  [30, '30'],
  [48, '48'],
  [50, '50'],
  [60000 / 1001, '60000/1001'],
  [60, '60'],
];
export const DEFAULT_FPS = 25;
export const MAX_SOURCE_FPS = 60;

/** The output frame rate: the requested one, else the source's snapped to a standard rate. */
export function chooseFps(requested: number | null | undefined, source: number | null): [number, string] {
  if (requested !== null && requested !== undefined) {
    if (!Number.isFinite(requested) || requested < 1 || requested > 120) {
      throw new ConformPlanError('options.fps', 'fps must be from 1 to 120');
    }
    return rateText(requested);
  }
  if (source === null || !Number.isFinite(source) || source <= 0) return [DEFAULT_FPS, String(DEFAULT_FPS)];
  for (const [rate, text] of STANDARD_RATES) {
    if (Math.abs(source - rate) / rate < 0.002) return [rate, text];
  }
  const rounded = Math.min(MAX_SOURCE_FPS, Math.max(1, Math.round(source)));
  return [rounded, String(rounded)];
}

function rateText(fps: number): [number, string] {
  for (const [rate, text] of STANDARD_RATES) if (Math.abs(fps - rate) < 1e-3) return [rate, text];
  if (Number.isInteger(fps)) return [fps, String(fps)];
  const milli = Math.round(fps * 1000);
  return [milli / 1000, `${milli}/1000`];
}

function even(n: number): number {
  return Math.max(2, Math.floor(n / 2) * 2);
}

/** Output size: requested or the (rotated) source size, divided by speedup, made even. */
export function chooseSize(
  visual: VisualInput,
  outputResolution: readonly [number, number] | null | undefined,
  speedup: number,
): { width: number; height: number; fit: 'stretch' | 'letterbox' } {
  if (![1, 2, 3, 4].includes(speedup)) throw new ConformPlanError('options.speedup', 'speedup must be 1-4');
  const quarterTurn = visual.kind === 'video' && Math.abs(visual.rotation ?? 0) % 180 === 90;
  const srcW = quarterTurn ? visual.height : visual.width;
  const srcH = quarterTurn ? visual.width : visual.height;
  if (outputResolution) {
    const [w, h] = outputResolution;
    if (!Number.isInteger(w) || !Number.isInteger(h) || w < 16 || h < 16 || w > 7680 || h > 7680) {
      throw new ConformPlanError('options.output_resolution', 'output_resolution must be integers 16-7680');
    }
    const sameAspect = Math.abs(w / h - srcW / srcH) < 0.01;
    return { width: even(w / speedup), height: even(h / speedup), fit: sameAspect ? 'stretch' : 'letterbox' };
  }
  return { width: even(srcW / speedup), height: even(srcH / speedup), fit: 'stretch' };
}

function outputDuration(mode: SyncMode, audio: number, video: number): number {
  if (mode === 'cut_off') return Math.min(audio, video);
  if (mode === 'silence') return video;
  return audio; // bounce, loop, remap
}

function positive(v: number, field: string): number {
  if (!Number.isFinite(v) || v <= 0)
    throw new ConformPlanError(field, `${field} must be a positive duration`);
  return v;
}

export function planConform(input: ConformPlanInput): ConformPlan {
  const mode = input.syncMode ?? 'cut_off';
  if (!SYNC_MODES.includes(mode))
    throw new ConformPlanError('options.sync_mode', `unknown sync_mode ${mode}`);
  const audioSeconds = positive(input.audioDurationSeconds, 'audio duration');
  const { visual } = input;
  const size = chooseSize(visual, input.outputResolution, input.speedup ?? 1);
  const [fps, fpsText] = chooseFps(input.fps, visual.kind === 'video' ? visual.fps : null);
  const frame = 1 / fps;
  const hasSegments = (input.segments?.length ?? 0) > 0;

  let duration: number;
  let video: ConformPlan['video'];
  let segments: PlannedSegment[] = [];
  if (visual.kind === 'image') {
    if (hasSegments) throw new ConformPlanError('segments', 'segments need a video input, not an image');
    duration = audioSeconds;
    video = { strategy: 'still', sourceSeconds: 0, stretchFactor: 1 };
  } else {
    const videoSeconds = positive(visual.durationSeconds, 'video duration');
    if (hasSegments) {
      duration = videoSeconds;
      segments = planSegments(input.segments ?? [], videoSeconds, audioSeconds, frame);
      video = { strategy: 'trim', sourceSeconds: videoSeconds, stretchFactor: 1 };
    } else {
      duration = outputDuration(mode, audioSeconds, videoSeconds);
      const audioLonger = audioSeconds - videoSeconds > frame / 2;
      const differ = Math.abs(audioSeconds - videoSeconds) > frame / 2;
      let strategy: VideoStrategy = 'trim';
      if (mode === 'loop' && audioLonger) strategy = 'loop';
      if (mode === 'bounce' && audioLonger) strategy = 'bounce';
      if (mode === 'remap' && differ) strategy = 'stretch';
      video = {
        strategy,
        sourceSeconds: Math.min(videoSeconds, duration),
        stretchFactor: strategy === 'stretch' ? duration / videoSeconds : 1,
      };
      if (strategy === 'stretch') video.sourceSeconds = videoSeconds;
    }
  }

  const frameCount = Math.max(1, Math.round(duration * fps));
  let audio: ConformPlan['audio'];
  if (hasSegments) {
    audio = { strategy: 'segments', usedSeconds: 0, padSeconds: 0 };
    for (const s of segments) {
      audio.usedSeconds += s.audioEnd - s.audioStart;
      audio.padSeconds += s.padSeconds;
    }
  } else {
    const diff = audioSeconds - duration;
    const strategy: AudioStrategy = diff > frame / 2 ? 'cut' : diff < -frame / 2 ? 'pad' : 'exact';
    audio = { strategy, usedSeconds: Math.min(audioSeconds, duration), padSeconds: Math.max(0, -diff) };
  }
  return {
    syncMode: mode,
    durationSeconds: duration,
    frameCount,
    fps,
    fpsText,
    ...size,
    video,
    audio,
    segments,
    outsideSegments: !hasSegments
      ? null
      : visual.kind === 'video' && visual.hasAudio
        ? 'original_audio'
        : 'silence',
  };
}

/**
 * Validates and normalises segments: numbers finite, 0 <= start < end <= video (a frame of slack is
 * clamped), at least one frame long, no overlaps (touching is fine), audio windows inside the audio.
 * The result is sorted by start time.
 */
export function planSegments(
  raw: readonly ConformSegment[],
  videoSeconds: number,
  audioSeconds: number,
  frameSeconds: number,
): PlannedSegment[] {
  if (raw.length > 100) throw new ConformPlanError('segments', 'at most 100 segments');
  const slack = Math.max(frameSeconds, 0.05);
  const planned = raw.map((s, i): PlannedSegment & { index: number } => {
    const f = `segments[${i}]`;
    for (const key of ['startTime', 'endTime', 'audioStart', 'audioEnd'] as const) {
      const v = s[key];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) {
        throw new ConformPlanError(`${f}.${key}`, `${key} must be a finite number`);
      }
    }
    if (s.startTime < 0) throw new ConformPlanError(`${f}.startTime`, 'startTime must be >= 0');
    if (s.endTime <= s.startTime) throw new ConformPlanError(f, `segment ${i} needs startTime < endTime`);
    if (s.startTime >= videoSeconds || s.endTime > videoSeconds + slack) {
      throw new ConformPlanError(f, `segment ${i} ends after the video (${videoSeconds.toFixed(3)} s)`);
    }
    const endTime = Math.min(s.endTime, videoSeconds);
    const length = endTime - s.startTime;
    if (length < frameSeconds - 1e-9) throw new ConformPlanError(f, `segment ${i} is shorter than one frame`);
    const audioStart = s.audioStart ?? 0;
    if (audioStart < 0 || audioStart >= audioSeconds) {
      throw new ConformPlanError(`${f}.audioStart`, `segment ${i} audio starts outside the audio`);
    }
    let audioEnd: number;
    if (s.audioEnd !== undefined) {
      if (s.audioEnd <= audioStart) {
        throw new ConformPlanError(`${f}.audioEnd`, `segment ${i} needs audio start < audio end`);
      }
      if (s.audioEnd > audioSeconds + slack) {
        throw new ConformPlanError(`${f}.audioEnd`, `segment ${i} audio ends after the audio`);
      }
      audioEnd = Math.min(s.audioEnd, audioSeconds, audioStart + length);
    } else {
      audioEnd = Math.min(audioSeconds, audioStart + length);
    }
    const padSeconds = Math.max(0, length - (audioEnd - audioStart));
    return { index: i, startTime: s.startTime, endTime, audioStart, audioEnd, padSeconds };
  });
  planned.sort((a, b) => a.startTime - b.startTime);
  for (let i = 1; i < planned.length; i++) {
    if (planned[i].startTime < planned[i - 1].endTime - 1e-9) {
      throw new ConformPlanError(
        'segments',
        `segments ${planned[i - 1].index} and ${planned[i].index} overlap`,
      );
    }
  }
  return planned.map(({ index: _index, ...s }) => s);
}

/**
 * The time (seconds) in the source video that conformed frame `frame` shows, or null when it shows
 * no moment of the source (a still image, a held last frame). Follows the picture's strategy: trim
 * and stretch run forward, loop wraps, bounce runs forward and back without doubling the turns.
 */
export function sourceTimeAt(plan: ConformPlan, frame: number): number | null {
  const t = frame / plan.fps;
  const { strategy, sourceSeconds, stretchFactor } = plan.video;
  switch (strategy) {
    case 'still':
      return null;
    case 'trim':
      return t < sourceSeconds ? t : null;
    case 'stretch':
      return t / stretchFactor;
    case 'loop':
      return sourceSeconds > 0 ? t % sourceSeconds : null;
    case 'bounce': {
      const forward = Math.max(1, Math.round(sourceSeconds * plan.fps));
      if (forward < 2) return 0;
      const period = 2 * forward - 2;
      const k = frame % period;
      return (k < forward ? k : period - k) / plan.fps;
    }
  }
}
