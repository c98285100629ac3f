// Helpers for the media integration tests: small inputs cut from the shared fixtures, per-stream
// facts from ffprobe, loudness of time windows and picture differences. Real ffmpeg throughout.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { decodeFrames } from '../../src/media/frames.js';
import { fixture } from '../helpers/paths.js';

const run = promisify(execFile);

export function media(name: string): string {
  return fixture(`media/${name}`);
}

export interface StreamFacts {
  video: {
    codec: string;
    width: number;
    height: number;
    fps: number;
    frames: number;
    duration: number;
    pixFmt: string;
  } | null;
  audio: { codec: string; sampleRate: number; channels: number; duration: number } | null;
  formatName: string;
}

function rate(r: string): number {
  const [n, d] = r.split('/').map(Number);
  return d ? n / d : n;
}

/** Per-stream facts; frames are counted by decoding (-count_frames), not read from the header. */
export async function streams(path: string): Promise<StreamFacts> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-count_frames',
    '-print_format',
    'json',
    '-show_streams',
    '-show_format',
    path,
  ]);
  const json = JSON.parse(stdout) as {
    streams: Record<string, string | number>[];
    format: { format_name: string };
  };
  const v = json.streams.find((s) => s.codec_type === 'video');
  const a = json.streams.find((s) => s.codec_type === 'audio');
  return {
    formatName: json.format.format_name,
    video: v
      ? {
          codec: String(v.codec_name),
          width: Number(v.width),
          height: Number(v.height),
          fps: rate(String(v.avg_frame_rate)),
          frames: Number(v.nb_read_frames),
          duration: Number(v.duration),
          pixFmt: String(v.pix_fmt),
        }
      : null,
    audio: a
      ? {
          codec: String(a.codec_name),
          sampleRate: Number(a.sample_rate),
          channels: Number(a.channels),
          duration: Number(a.duration),
        }
      : null,
  };
}

/** A short, small test clip cut from a fixture (h264 + AAC unless noAudio). */
export async function makeClip(
  source: string,
  out: string,
  o: { seconds: number; size: number; fps?: number; noAudio?: boolean },
): Promise<void> {
  const args = [
    '-t',
    String(o.seconds),
    '-i',
    source,
    '-vf',
    `scale=${o.size}:${o.size}`,
    '-r',
    String(o.fps ?? 25),
  ];
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18', '-pix_fmt', 'yuv420p');
  args.push(...(o.noAudio ? ['-an'] : ['-c:a', 'aac']), out);
  await runFfmpeg(args);
}

export async function makeWav(source: string | null, out: string, seconds: number): Promise<void> {
  const input = source === null ? ['-f', 'lavfi', '-i', 'anullsrc=r=44100:cl=stereo'] : ['-i', source];
  await runFfmpeg([...input, '-t', String(seconds), '-map', '0:a:0', '-c:a', 'pcm_s16le', out]);
}

/** RMS (0..1 of full scale) of each [from, to) window of a file's first audio stream. */
export async function windowRms(path: string, windows: [number, number][], dir: string): Promise<number[]> {
  const raw = join(dir, `rms-${Date.now()}-${Math.random().toString(36).slice(2)}.raw`);
  const sr = 16000;
  await runFfmpeg([
    '-i',
    path,
    '-map',
    '0:a:0',
    '-ac',
    '1',
    '-ar',
    String(sr),
    '-f',
    's16le',
    '-c:a',
    'pcm_s16le',
    raw,
  ]);
  const buf = await readFile(raw);
  const samples = new Int16Array(buf.buffer, buf.byteOffset, Math.floor(buf.length / 2));
  return windows.map(([from, to]) => {
    let sum = 0;
    const a = Math.floor(from * sr);
    const b = Math.min(samples.length, Math.floor(to * sr));
    for (let i = a; i < b; i++) sum += (samples[i] / 32768) ** 2;
    return b > a ? Math.sqrt(sum / (b - a)) : Number.NaN;
  });
}

/** Mean absolute difference of two equally sized frames, 0..255. */
export function frameDiff(a: Buffer, b: Buffer): number {
  if (a.length !== b.length) throw new Error('frames differ in size');
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

export async function collect(frames: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const f of frames) out.push(f);
  return out;
}

export async function fileFrames(path: string, width: number, height: number): Promise<Buffer[]> {
  return collect(decodeFrames({ inputArgs: ['-i', path], width, height }));
}

export interface TestInputs {
  dir: string;
  /** 2.0 s, 160x160, 25 fps, h264 + AAC speech (from face_3). */
  clip: string;
  /** The same picture without an audio stream. */
  muteClip: string;
  /** 3.2 s and 1.2 s of speech, 2.0 s of silence (WAV). */
  longWav: string;
  shortWav: string;
  silentWav: string;
  /** A PNG still (no file extension: found from content). */
  still: string;
}

export async function makeInputs(dir: string): Promise<TestInputs> {
  const i: TestInputs = {
    dir,
    clip: join(dir, 'clip.mp4'),
    muteClip: join(dir, 'mute.mp4'),
    longWav: join(dir, 'long.wav'),
    shortWav: join(dir, 'short.wav'),
    silentWav: join(dir, 'silent.wav'),
    still: join(dir, 'still'),
  };
  await Promise.all([
    makeClip(media('face_3.mp4'), i.clip, { seconds: 2, size: 160 }),
    makeClip(media('face_3.mp4'), i.muteClip, { seconds: 2, size: 160, noAudio: true }),
    makeWav(media('audio_1.wav'), i.longWav, 3.2),
    makeWav(media('audio_1.wav'), i.shortWav, 1.2),
    makeWav(null, i.silentWav, 2),
    runFfmpeg([
      '-ss',
      '1',
      '-i',
      media('face_5.mp4'),
      '-frames:v',
      '1',
      '-vf',
      'scale=121:97',
      '-f',
      'image2',
      '-c:v',
      'png',
      i.still,
    ]),
  ]);
  return i;
}
