// Shared output settings: what every video the service delivers looks like (h264 yuv420p + AAC in
// mp4 or mov, fast start), and the lossless intermediate used between passes.

export type OutputFormat = 'mp4' | 'mov';

export interface H264Settings {
  /** x264 preset; veryfast keeps a 2-core machine near real time for 720p. */
  preset: 'ultrafast' | 'superfast' | 'veryfast' | 'faster' | 'fast' | 'medium';
  /** Constant rate factor; 18-23 is visually transparent to good. */
  crf: number;
}

export const DEFAULT_H264: H264Settings = { preset: 'veryfast', crf: 20 };

export const AUDIO_SAMPLE_RATE = 48_000;
export const AUDIO_CHANNEL_LAYOUT = 'stereo';

export function h264Args(s: H264Settings = DEFAULT_H264): string[] {
  return ['-c:v', 'libx264', '-preset', s.preset, '-crf', String(s.crf), '-pix_fmt', 'yuv420p'];
}

/** Lossless, fast-to-write h264 for intermediates that are decoded again (bounce pieces). */
export function losslessIntermediateArgs(): string[] {
  return ['-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-pix_fmt', 'yuv420p'];
}

export function aacArgs(): string[] {
  return ['-c:a', 'aac', '-b:a', '128k', '-ar', String(AUDIO_SAMPLE_RATE)];
}

export function containerArgs(format: OutputFormat): string[] {
  return ['-movflags', '+faststart', '-f', format];
}
