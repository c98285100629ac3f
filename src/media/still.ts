// A still of a video: its first frame as a JPEG (a preview generation's picture of the chosen moment).
import { runFfmpeg, type FfmpegRunOptions } from './ffmpeg.js';

export async function firstFrameJpeg(videoPath: string, outputPath: string, opts: FfmpegRunOptions = {}) {
  // -q:v 3: a clear picture at about a tenth of a PNG's size; full-range colours for viewers.
  await runFfmpeg(
    [
      '-i',
      videoPath,
      '-map',
      '0:v:0',
      '-frames:v',
      '1',
      '-q:v',
      '3',
      '-pix_fmt',
      'yuvj420p',
      '-f',
      'image2',
      outputPath,
    ],
    opts,
  );
}
