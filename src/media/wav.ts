// A streaming WAV reader: PCM 8/16/24/32-bit integer or 32/64-bit float, any channel count, RIFF or
// RF64 (what ffmpeg writes with `-rf64 auto`). Yields mono float samples in blocks, reading the file
// piece by piece, so memory does not grow with the audio's length.
import { open } from 'node:fs/promises';
import os from 'node:os';

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  float: boolean;
  dataOffset: number;
  dataBytes: number;
  /** Sample frames (one sample per channel each). */
  frames: number;
}

const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_EXTENSIBLE = 0xfffe;

export async function readWavInfo(path: string): Promise<WavInfo> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const head = Buffer.alloc(12);
    await fh.read(head, 0, 12, 0);
    const riff = head.toString('ascii', 0, 4);
    if ((riff !== 'RIFF' && riff !== 'RF64') || head.toString('ascii', 8, 12) !== 'WAVE')
      throw new Error(`${path} is not a WAV file`);
    let pos = 12;
    let fmt: { format: number; channels: number; rate: number; bits: number } | null = null;
    let ds64Data: number | null = null;
    const hdr = Buffer.alloc(8);
    while (pos + 8 <= size) {
      await fh.read(hdr, 0, 8, pos);
      const id = hdr.toString('ascii', 0, 4);
      let len = hdr.readUInt32LE(4);
      const body = pos + 8;
      if (id === 'ds64') {
        const b = Buffer.alloc(Math.min(len, 28));
        await fh.read(b, 0, b.length, body);
        ds64Data = Number(b.readBigUInt64LE(8));
      } else if (id === 'fmt ') {
        const b = Buffer.alloc(Math.min(len, 40));
        await fh.read(b, 0, b.length, body);
        let format = b.readUInt16LE(0);
        if (format === FORMAT_EXTENSIBLE && b.length >= 26) format = b.readUInt16LE(24);
        fmt = { format, channels: b.readUInt16LE(2), rate: b.readUInt32LE(4), bits: b.readUInt16LE(14) };
      } else if (id === 'data') {
        if (!fmt) throw new Error(`${path}: data chunk before fmt chunk`);
        if (fmt.format !== FORMAT_PCM && fmt.format !== FORMAT_FLOAT)
          throw new Error(`${path}: unsupported WAV format ${fmt.format}`);
        if (len === 0xffffffff && ds64Data !== null) len = ds64Data;
        if (len === 0 || len === 0xffffffff || body + len > size) len = size - body;
        const blockAlign = (fmt.bits / 8) * fmt.channels;
        return {
          sampleRate: fmt.rate,
          channels: fmt.channels,
          bitsPerSample: fmt.bits,
          float: fmt.format === FORMAT_FLOAT,
          dataOffset: body,
          dataBytes: len - (len % blockAlign),
          frames: Math.floor(len / blockAlign),
        };
      }
      pos = body + len + (len % 2);
    }
    throw new Error(`${path}: no data chunk`);
  } finally {
    await fh.close();
  }
}

/** Samples this reader decodes: PCM of 8, 16, 24 or 32 bits, or float of 32 or 64, with sound in it. */
export function isPlainWav(info: WavInfo): boolean {
  const sizes = info.float ? [32, 64] : [8, 16, 24, 32];
  return sizes.includes(info.bitsPerSample) && info.channels >= 1 && info.sampleRate >= 1 && info.frames >= 1;
}

function sampleReader(info: WavInfo): (b: Buffer, off: number) => number {
  const bits = info.bitsPerSample;
  if (info.float) return bits === 64 ? (b, o) => b.readDoubleLE(o) : (b, o) => b.readFloatLE(o);
  if (bits === 8) return (b, o) => (b[o] - 128) / 128;
  if (bits === 16) return (b, o) => b.readInt16LE(o) / 32768;
  if (bits === 24) return (b, o) => b.readIntLE(o, 3) / 8388608;
  if (bits === 32) return (b, o) => b.readInt32LE(o) / 2147483648;
  throw new Error(`unsupported WAV sample size ${bits}`);
}

/** Reads the data chunk in blocks of at most `blockFrames` frames; `decode` turns each into output. */
async function* readWavBlocks<T>(
  path: string,
  info: WavInfo | undefined,
  blockFrames: number,
  decode: (wav: WavInfo, buf: Buffer, int16: Int16Array | null, frames: number) => T,
): AsyncGenerator<T> {
  const wav = info ?? (await readWavInfo(path));
  const frameBytes = (wav.bitsPerSample / 8) * wav.channels;
  const buf = Buffer.alloc(blockFrames * frameBytes);
  // 16-bit PCM read through a typed view (little-endian samples; every platform Node runs on is).
  const int16 =
    !wav.float && wav.bitsPerSample === 16 && buf.byteOffset % 2 === 0 && os.endianness() === 'LE'
      ? new Int16Array(buf.buffer, buf.byteOffset, buf.length / 2)
      : null;
  const fh = await open(path, 'r');
  try {
    let done = 0;
    while (done < wav.frames) {
      const want = Math.min(blockFrames, wav.frames - done);
      const { bytesRead } = await fh.read(buf, 0, want * frameBytes, wav.dataOffset + done * frameBytes);
      const got = Math.floor(bytesRead / frameBytes);
      if (got === 0) break;
      done += got;
      yield decode(wav, buf, int16, got);
    }
  } finally {
    await fh.close();
  }
}

/** Mono (channel average) float samples, in blocks of at most `blockFrames`. */
export function readWavMono(path: string, info?: WavInfo, blockFrames = 65536): AsyncGenerator<Float32Array> {
  return readWavBlocks(path, info, blockFrames, (wav, buf, int16, got) => {
    const out = new Float32Array(got);
    const ch = wav.channels;
    if (int16) {
      // The common case without a call per sample (the same arithmetic, so the same samples).
      for (let i = 0, k = 0; i < got; i++) {
        let s = 0;
        for (let c = 0; c < ch; c++, k++) s += int16[k] / 32768;
        out[i] = s / ch;
      }
    } else {
      const read = sampleReader(wav);
      const bytesPer = wav.bitsPerSample / 8;
      for (let i = 0; i < got; i++) {
        let s = 0;
        const base = i * bytesPer * ch;
        for (let c = 0; c < ch; c++) s += read(buf, base + c * bytesPer);
        out[i] = s / ch;
      }
    }
    return out;
  });
}
