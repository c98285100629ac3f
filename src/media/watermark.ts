// Watermarked derivative of an output ("lipsync preview" in the bottom-right corner) for plans that
// need one. Same size, frame timing and audio (copied); only the picture is re-encoded. Uses drawtext
// with a TrueType font when one is installed (Debian: fonts-dejavu-core), else a drawbox mark.
import { access } from 'node:fs/promises';
import { aacArgs, containerArgs, DEFAULT_H264, h264Args, type OutputFormat } from './encoding.js';
import { escapeFilterValue, runFfmpeg } from './ffmpeg.js';
import { probeMedia, type MediaProbe } from './probe.js';

export const WATERMARK_TEXT = 'lipsync preview';

/** Fonts tried in order (Debian/Ubuntu, Fedora, Alpine paths). */
export const FONT_CANDIDATES: readonly string[] = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/dejavu-sans-fonts/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf',
  '/usr/share/fonts/liberation-sans/LiberationSans-Bold.ttf',
  '/usr/share/fonts/truetype/freefont/FreeSansBold.ttf',
  '/usr/share/fonts/noto/NotoSans-Bold.ttf',
];

export async function findWatermarkFont(
  candidates: readonly string[] = FONT_CANDIDATES,
): Promise<string | null> {
  for (const path of candidates) {
    try {
      await access(path);
      return path;
    } catch {
      // try the next one
    }
  }
  return null;
}

export interface WatermarkOptions {
  format: OutputFormat;
  probe?: MediaProbe;
  /** A TrueType font file; null forces the drawbox mark; undefined finds one. */
  fontFile?: string | null;
  text?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  onProgress?: (fraction: number) => void;
}

export interface WatermarkGeometry {
  margin: number;
  fontSize: number;
  boxWidth: number;
  boxHeight: number;
}

/** Mark size from the picture size: readable on a phone preview, small enough not to cover a face. */
export function watermarkGeometry(width: number, height: number): WatermarkGeometry {
  const short = Math.min(width, height);
  const fontSize = Math.max(12, Math.round(short / 18));
  const margin = Math.max(4, Math.round(short / 40));
  return {
    margin,
    fontSize,
    boxWidth: Math.min(width - 2 * margin, Math.round(fontSize * 8.5)),
    boxHeight: Math.min(height - 2 * margin, Math.round(fontSize * 1.8)),
  };
}

export function watermarkFilter(
  width: number,
  height: number,
  fontFile: string | null,
  text: string,
): string {
  const g = watermarkGeometry(width, height);
  if (fontFile) {
    return [
      `drawtext=fontfile=${escapeFilterValue(fontFile)}`,
      `text=${escapeFilterValue(text)}`,
      `fontsize=${g.fontSize}`,
      'fontcolor=white@0.85',
      'box=1',
      'boxcolor=black@0.45',
      `boxborderw=${Math.round(g.fontSize / 3)}`,
      `x=w-tw-${g.margin + Math.round(g.fontSize / 3)}`,
      `y=h-th-${g.margin + Math.round(g.fontSize / 3)}`,
    ].join(':');
  }
  const x = width - g.boxWidth - g.margin;
  const y = height - g.boxHeight - g.margin;
  const stripe = Math.max(2, Math.round(g.boxHeight / 6));
  return [
    `drawbox=x=${x}:y=${y}:w=${g.boxWidth}:h=${g.boxHeight}:color=black@0.45:t=fill`,
    `drawbox=x=${x}:y=${y}:w=${g.boxWidth}:h=${g.boxHeight}:color=white@0.85:t=${Math.max(2, stripe / 2)}`,
    `drawbox=x=${x + stripe * 2}:y=${y + Math.round((g.boxHeight - stripe) / 2)}:w=${g.boxWidth - stripe * 4}:h=${stripe}:color=white@0.85:t=fill`,
  ].join(',');
}

/** Writes the watermarked copy of inputPath to outputPath; returns how the mark was drawn. */
export async function watermarkVideo(
  inputPath: string,
  outputPath: string,
  opts: WatermarkOptions,
): Promise<{ method: 'drawtext' | 'drawbox' }> {
  const probe = opts.probe ?? (await probeMedia(inputPath));
  if (!probe.video || probe.kind !== 'VIDEO') throw new Error('watermark: the input is not a video');
  const font = opts.fontFile === undefined ? await findWatermarkFont() : opts.fontFile;
  const filter = watermarkFilter(probe.video.width, probe.video.height, font, opts.text ?? WATERMARK_TEXT);
  const args = [
    '-i',
    inputPath,
    '-map',
    '0:v:0',
    '-map',
    '0:a:0?',
    '-vf',
    filter,
    '-fps_mode',
    'passthrough',
  ];
  args.push(...h264Args(DEFAULT_H264));
  // AAC input (our outputs) is copied untouched; anything else is encoded once.
  args.push(...(probe.audio?.codec === 'aac' ? ['-c:a', 'copy'] : aacArgs()));
  args.push('-map_metadata', '0', ...containerArgs(opts.format), outputPath);
  const duration = probe.durationSeconds ?? 0;
  await runFfmpeg(args, {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    onProgress: (s) => (duration > 0 ? opts.onProgress?.(Math.min(1, s / duration)) : undefined),
  });
  return { method: font ? 'drawtext' : 'drawbox' };
}
