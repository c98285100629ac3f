// What ffprobe would say about an MP4/MOV file with h264 video (and AAC sound), read straight from its
// ISO BMFF boxes (ftyp, moov: mvhd, tkhd, mdhd, hdlr, stsd, stts, stsz) without starting a process: an
// ffprobe start costs 0.1-0.25 s on a 2-core machine. Written for the pipeline's own outputs, and used
// by probeMedia for every file (uploads, fetched inputs): on the fixtures' camera and phone clips
// (edit lists, variable rates) it gives ffprobe's answer field by field. Anything it does not expect
// (another container or codec, a rotation matrix, a box it cannot follow, a file of many top-level
// boxes before its moov) is left to ffprobe.
import { open, type FileHandle } from 'node:fs/promises';
import type { AudioStreamInfo, MediaProbe, VideoStreamInfo } from './probe.js';

/** A moov larger than this is not one of ours (ours are a few KiB to a few MiB): ffprobe reads it. */
const MAX_MOOV_BYTES = 64 << 20;
/**
 * Top-level boxes looked at before the moov (a plain file has two or three): an upload made of
 * millions of tiny boxes would otherwise cost a read each.
 */
const MAX_TOP_LEVEL_BOXES = 64;
/** ffprobe's format_name for every ISO BMFF file. */
const ISO_FORMAT_NAME = 'mov,mp4,m4a,3gp,3g2,mj2';

class Unexpected extends Error {}

interface Box {
  readonly type: string;
  /** Where the box's content starts and ends in the buffer (after its header). */
  readonly start: number;
  readonly end: number;
}

function* boxesIn(buf: Buffer, start: number, end: number): Generator<Box> {
  let p = start;
  while (p + 8 <= end) {
    let size = buf.readUInt32BE(p);
    const type = buf.toString('latin1', p + 4, p + 8);
    let header = 8;
    if (size === 1) {
      if (p + 16 > end) throw new Unexpected();
      size = Number(buf.readBigUInt64BE(p + 8));
      header = 16;
    } else if (size === 0) size = end - p;
    if (size < header || p + size > end) throw new Unexpected();
    yield { type, start: p + header, end: p + size };
    p += size;
  }
}

function child(buf: Buffer, parent: Box, type: string): Box | null {
  for (const b of boxesIn(buf, parent.start, parent.end)) if (b.type === type) return b;
  return null;
}

function need(b: Box | null): Box {
  if (!b) throw new Unexpected();
  return b;
}

/** timescale and duration of an mvhd or mdhd (full boxes of the same layout up to the duration). */
function timing(buf: Buffer, b: Box): { timescale: number; duration: number } {
  const v1 = buf[b.start] === 1;
  const timescale = buf.readUInt32BE(b.start + (v1 ? 20 : 12));
  const duration = v1 ? Number(buf.readBigUInt64BE(b.start + 24)) : buf.readUInt32BE(b.start + 16);
  if (!timescale) throw new Unexpected();
  return { timescale, duration };
}

/** tkhd: the display size; a matrix other than identity (a rotation) is left to ffprobe. */
function trackSize(buf: Buffer, tkhd: Box): { width: number; height: number } {
  const m = tkhd.start + (buf[tkhd.start] === 1 ? 52 : 40);
  const identity =
    buf.readInt32BE(m) === 0x10000 &&
    buf.readInt32BE(m + 4) === 0 &&
    buf.readInt32BE(m + 12) === 0 &&
    buf.readInt32BE(m + 16) === 0x10000;
  if (!identity) throw new Unexpected();
  return { width: buf.readUInt32BE(m + 36) >>> 16, height: buf.readUInt32BE(m + 40) >>> 16 };
}

/** The MPEG-4 descriptor length: 1-4 bytes, 7 bits each. */
function descriptorLength(buf: Buffer, p: number, end: number): { length: number; next: number } {
  let length = 0;
  for (let i = 0; i < 4; i++) {
    if (p >= end) throw new Unexpected();
    const byte = buf[p++];
    length = (length << 7) | (byte & 0x7f);
    if (!(byte & 0x80)) return { length, next: p };
  }
  throw new Unexpected();
}

/** esds: the object type of an mp4a entry; AAC (0x40, 0x66-0x68) is the only one expected. */
function isAac(buf: Buffer, esds: Box): boolean {
  let p = esds.start + 4;
  if (buf[p++] !== 0x03) return false;
  p = descriptorLength(buf, p, esds.end).next;
  const flags = buf[p + 2];
  p += 3;
  if (flags & 0x80) p += 2;
  if (flags & 0x40) p += 1 + buf[p];
  if (flags & 0x20) p += 2;
  if (buf[p++] !== 0x04) return false;
  p = descriptorLength(buf, p, esds.end).next;
  const oti = buf[p];
  return oti === 0x40 || oti === 0x66 || oti === 0x67 || oti === 0x68;
}

function rounded(fps: number): number | null {
  return Number.isFinite(fps) && fps > 0 && fps < 1000 ? Math.round(fps * 1000) / 1000 : null;
}

interface Tracks {
  video: VideoStreamInfo | null;
  audio: AudioStreamInfo | null;
}

function readTrack(buf: Buffer, trak: Box, into: Tracks): void {
  const mdia = need(child(buf, trak, 'mdia'));
  const hdlr = need(child(buf, mdia, 'hdlr'));
  const handler = buf.toString('latin1', hdlr.start + 8, hdlr.start + 12);
  if (handler !== 'vide' && handler !== 'soun') return;
  const media = timing(buf, need(child(buf, mdia, 'mdhd')));
  const stbl = need(child(buf, need(child(buf, mdia, 'minf')), 'stbl'));
  const stsd = need(child(buf, stbl, 'stsd'));
  const entry = boxesIn(buf, stsd.start + 8, stsd.end).next().value;
  if (!entry) throw new Unexpected();
  if (handler === 'vide') {
    if (into.video) return; // ffprobe's first video stream
    if (entry.type !== 'avc1' && entry.type !== 'avc3') throw new Unexpected();
    const stsz = need(child(buf, stbl, 'stsz'));
    const frames = buf.readUInt32BE(stsz.start + 8);
    const stts = need(child(buf, stbl, 'stts'));
    const entries = buf.readUInt32BE(stts.start + 4);
    const delta = entries >= 1 ? buf.readUInt32BE(stts.start + 12) : 0;
    const lastCount = entries === 2 ? buf.readUInt32BE(stts.start + 16) : 0;
    // As ffprobe: one sample delta (or one more for the last frame) is a constant rate.
    const fps =
      delta > 0 && (entries === 1 || (entries === 2 && lastCount === 1))
        ? media.timescale / delta
        : (frames * media.timescale) / media.duration;
    into.video = {
      codec: 'h264',
      ...trackSize(buf, need(child(buf, trak, 'tkhd'))),
      fps: rounded(fps),
      frameCount: frames,
      rotation: 0,
    };
    return;
  }
  if (into.audio) return;
  if (entry.type !== 'mp4a') throw new Unexpected();
  // A sound sample entry: 28 bytes, 16 more for a QuickTime version 1 entry, 36 more for version 2.
  const version = buf.readUInt16BE(entry.start + 8);
  const extra = version === 0 ? 0 : version === 1 ? 16 : version === 2 ? 36 : -1;
  if (extra < 0) throw new Unexpected();
  const inner = { type: 'mp4a', start: entry.start + 28 + extra, end: entry.end };
  const esds = child(buf, inner, 'esds') ?? child(buf, need(child(buf, inner, 'wave')), 'esds');
  if (!esds || !isAac(buf, esds)) throw new Unexpected();
  into.audio = {
    codec: 'aac',
    sampleRate: media.timescale,
    channels: buf.readUInt16BE(entry.start + 16),
  };
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  if (bytesRead !== length) throw new Unexpected();
  return buf;
}

/** The top-level ftyp brand and the moov box's bytes; null where the file has no moov. */
async function topLevel(fh: FileHandle, size: number): Promise<{ brand: string; moov: Buffer } | null> {
  let brand = '';
  let p = 0;
  for (let boxes = 0; p + 8 <= size; boxes++) {
    if (boxes === MAX_TOP_LEVEL_BOXES) throw new Unexpected();
    const head = await readAt(fh, p, Math.min(16, size - p));
    let boxSize = head.readUInt32BE(0);
    const type = head.toString('latin1', 4, 8);
    let header = 8;
    if (boxSize === 1) {
      if (head.length < 16) throw new Unexpected();
      boxSize = Number(head.readBigUInt64BE(8));
      header = 16;
    } else if (boxSize === 0) boxSize = size - p;
    if (boxSize < header || p + boxSize > size) throw new Unexpected();
    if (type === 'ftyp') brand = (await readAt(fh, p + header, 4)).toString('latin1');
    if (type === 'moov') {
      if (boxSize > MAX_MOOV_BYTES) throw new Unexpected();
      return { brand, moov: await readAt(fh, p, boxSize) };
    }
    p += boxSize;
  }
  return null;
}

/**
 * The probe of an MP4/MOV file read from its boxes, or null where the file is not what this reader
 * expects (then only ffprobe can say).
 */
export async function readIsoProbe(path: string): Promise<MediaProbe | null> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const top = await topLevel(fh, size);
    if (!top) return null;
    const { moov } = top;
    const root: Box = { type: 'moov', start: 8, end: moov.length };
    if (moov.readUInt32BE(0) === 1) return null;
    const movie = timing(moov, need(child(moov, root, 'mvhd')));
    const tracks: Tracks = { video: null, audio: null };
    for (const b of boxesIn(moov, root.start, root.end)) if (b.type === 'trak') readTrack(moov, b, tracks);
    const durationSeconds = movie.duration / movie.timescale;
    if (!tracks.video || durationSeconds <= 0) return null;
    if (tracks.video.width <= 0 || tracks.video.height <= 0) return null;
    return {
      kind: 'VIDEO',
      formatName: ISO_FORMAT_NAME,
      format: top.brand === 'qt  ' ? 'mov' : 'mp4',
      durationSeconds,
      sizeBytes: size,
      video: tracks.video,
      audio: tracks.audio,
    };
  } catch (err) {
    if (err instanceof Unexpected || err instanceof RangeError) return null;
    throw err;
  } finally {
    await fh.close();
  }
}
