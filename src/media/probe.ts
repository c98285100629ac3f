// What a media file really is, found from its content, never from its name: a plain WAV from its
// header, an h264 MP4/MOV from its boxes (iso-probe.ts), anything else by ffprobe.
import { stat } from 'node:fs/promises';
import { isPlainWav, readWavInfo, type WavInfo } from './wav.js';
import { spawnChild } from '../processes/spawn.js';
import { readIsoProbe } from './iso-probe.js';

export type MediaKind = 'VIDEO' | 'AUDIO' | 'IMAGE';

export interface VideoStreamInfo {
  codec: string;
  width: number;
  height: number;
  fps: number | null;
  frameCount: number | null;
  rotation: number;
}

export interface AudioStreamInfo {
  codec: string;
  sampleRate: number;
  channels: number;
}

export interface MediaProbe {
  kind: MediaKind;
  /** ffprobe's format name, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "wav", "png_pipe". */
  formatName: string;
  /** A short, user-facing format: mp4, mov, webm, mkv, wav, mp3, png, jpeg, ... */
  format: string;
  durationSeconds: number | null;
  sizeBytes: number;
  video: VideoStreamInfo | null;
  audio: AudioStreamInfo | null;
}

/**
 * The file is not media the server can read. `message` is written for users (it may reach a client)
 * and never holds a path, a tool's name or its output; `detail` (ffprobe's last stderr line) is for
 * the server log only.
 */
export class MediaProbeError extends Error {
  readonly detail: string | undefined;
  constructor(message: string, detail?: string) {
    super(message);
    this.name = 'MediaProbeError';
    this.detail = detail;
  }
}

/** ffprobe itself could not run: the server's fault, not the file's. */
export class ProbeToolError extends MediaProbeError {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeToolError';
  }
}

const IMAGE_CODECS = new Set(['png', 'mjpeg', 'jpeg', 'webp', 'gif', 'bmp', 'tiff', 'jpegls', 'jpeg2000']);

function parseRate(r: string | undefined): number | null {
  if (!r || r === '0/0') return null;
  const [n, d] = r.split('/').map(Number);
  if (!d || !Number.isFinite(n) || !Number.isFinite(d) || d === 0) return null;
  const v = n / d;
  return v > 0 && v < 1000 ? Math.round(v * 1000) / 1000 : null;
}

function shortFormat(formatName: string, videoCodec: string | null, majorBrand: string | undefined): string {
  if (formatName.startsWith('mov,mp4')) {
    const brand = (majorBrand ?? '').trim();
    return brand === 'qt' ? 'mov' : 'mp4';
  }
  if (formatName === 'matroska,webm')
    return videoCodec === 'vp8' || videoCodec === 'vp9' || videoCodec === 'av1' ? 'webm' : 'mkv';
  if (formatName.endsWith('_pipe')) {
    const f = formatName.replace(/_pipe$/, '');
    return f === 'jpeg' ? 'jpeg' : f;
  }
  if (formatName === 'image2') return videoCodec === 'mjpeg' ? 'jpeg' : (videoCodec ?? 'image');
  return formatName.split(',')[0];
}

let ffprobeStarts = 0;
let probes = 0;

/**
 * How many ffprobe processes this process has started. Each costs 0.1-0.25 s of process start-up on a
 * 2-core machine, so the submit path counts them (tests assert one per input).
 */
export function ffprobeStartCount(): number {
  return ffprobeStarts;
}

/** How many files this process has probed, with ffprobe or without (the submit path counts them). */
export function mediaProbeCount(): number {
  return probes;
}

/** ffprobe's codec name of a plain WAV file's samples (isPlainWav). */
function wavCodec(info: WavInfo): string {
  if (info.float) return `pcm_f${info.bitsPerSample}le`;
  return info.bitsPerSample === 8 ? 'pcm_u8' : `pcm_s${info.bitsPerSample}le`;
}

/**
 * What ffprobe would say of a plain WAV file (PCM or float samples), read from its header: the
 * common audio upload needs no ffprobe start (0.1-0.25 s, bench/results/2026-history.md). null for anything
 * else, which ffprobe then reads.
 */
async function probeWav(path: string, sizeBytes: number): Promise<MediaProbe | null> {
  const info = await readWavInfo(path).catch(() => null);
  if (!info || !isPlainWav(info)) return null;
  return {
    kind: 'AUDIO',
    formatName: 'wav',
    format: 'wav',
    durationSeconds: info.frames / info.sampleRate,
    sizeBytes,
    video: null,
    audio: { codec: wavCodec(info), sampleRate: info.sampleRate, channels: info.channels },
  };
}

export async function probeMedia(path: string, opts: { timeoutMs?: number } = {}): Promise<MediaProbe> {
  const st = await stat(path);
  if (st.size === 0) throw new MediaProbeError('the file is empty');
  probes++;
  return (await probeWav(path, st.size)) ?? (await readIsoProbe(path)) ?? ffprobeMedia(path, st.size, opts);
}

/** What ffprobe says of the file (probeMedia without the WAV shortcut). */
export async function ffprobeMedia(
  path: string,
  sizeBytes: number,
  opts: { timeoutMs?: number } = {},
): Promise<MediaProbe> {
  ffprobeStarts++;
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path];
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawnChild('ffprobe', args, { stdout: 'pipe', stderr: 'pipe' });
    const chunks: Buffer[] = [];
    let err = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    p.stdout?.on('data', (c: Buffer) => chunks.push(c));
    p.stderr?.on('data', (c: Buffer) => {
      if (err.length < 4000) err += c.toString();
    });
    p.on('error', (e) => {
      clearTimeout(timer);
      reject(new ProbeToolError(`ffprobe could not start: ${e.message}`));
    });
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(chunks).toString('utf8'));
      else
        reject(
          new MediaProbeError(
            'its content is not in a media format the server reads',
            err.trim().split('\n').pop() || `ffprobe exit ${code}`,
          ),
        );
    });
  });

  let json: { format?: Record<string, any>; streams?: Record<string, any>[] };
  try {
    json = JSON.parse(out);
  } catch {
    throw new MediaProbeError('its content could not be read', 'ffprobe returned output that is not JSON');
  }
  const fmt = json.format ?? {};
  const streams = json.streams ?? [];
  const v = streams.find((s) => s.codec_type === 'video' && !(s.disposition?.attached_pic === 1));
  const a = streams.find((s) => s.codec_type === 'audio');
  const formatName: string = String(fmt.format_name ?? '');
  if (!v && !a) throw new MediaProbeError('the file has no audio or video stream');

  const dur = Number(fmt.duration ?? v?.duration ?? a?.duration);
  const durationSeconds = Number.isFinite(dur) && dur > 0 ? dur : null;
  const videoCodec: string | null = v ? String(v.codec_name) : null;
  const isImage =
    !!v &&
    !a &&
    (formatName.endsWith('_pipe') ||
      formatName === 'image2' ||
      (IMAGE_CODECS.has(videoCodec ?? '') && (durationSeconds === null || Number(v.nb_frames ?? 1) <= 1)));

  let rotation = 0;
  for (const sd of (v?.side_data_list ?? []) as { rotation?: number }[]) {
    if (typeof sd.rotation === 'number') rotation = sd.rotation;
  }
  if (v?.tags?.rotate) rotation = Number(v.tags.rotate) || 0;

  const video: VideoStreamInfo | null = v
    ? {
        codec: String(v.codec_name),
        width: Number(v.width) || 0,
        height: Number(v.height) || 0,
        fps: isImage ? null : (parseRate(v.avg_frame_rate) ?? parseRate(v.r_frame_rate)),
        frameCount:
          v.nb_frames !== undefined && Number.isFinite(Number(v.nb_frames)) ? Number(v.nb_frames) : null,
        rotation,
      }
    : null;
  const audio: AudioStreamInfo | null = a
    ? {
        codec: String(a.codec_name),
        sampleRate: Number(a.sample_rate) || 0,
        channels: Number(a.channels) || 0,
      }
    : null;
  if (video && (video.width <= 0 || video.height <= 0))
    throw new MediaProbeError('the video stream has no picture size');

  return {
    kind: isImage ? 'IMAGE' : video ? 'VIDEO' : 'AUDIO',
    formatName,
    format: shortFormat(formatName, videoCodec, fmt.tags?.major_brand),
    durationSeconds: isImage ? null : durationSeconds,
    sizeBytes,
    video,
    audio,
  };
}
