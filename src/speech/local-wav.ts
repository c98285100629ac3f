// Just enough RIFF/WAV handling for the local provider: reading the format of a 16-bit PCM file and
// joining per-chunk renderings into one file with their timelines shifted by the exact sample offsets.
import { open, readFile, writeFile } from 'node:fs/promises';
import type { SpeechTimeline } from './types.js';

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Byte offset and length of the `data` chunk. */
  dataOffset: number;
  dataBytes: number;
  durationMs: number;
}

/** Parses a PCM WAV header (walking the chunks, so LIST/fact chunks before `data` are fine). */
export async function readWavInfo(path: string): Promise<WavInfo> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const head = Buffer.alloc(Math.min(size, 4096));
    await fh.read(head, 0, head.length, 0);
    if (head.toString('ascii', 0, 4) !== 'RIFF' || head.toString('ascii', 8, 12) !== 'WAVE') {
      throw new Error(`${path} is not a WAV file`);
    }
    let pos = 12;
    let fmt: { channels: number; sampleRate: number; bits: number; format: number } | null = null;
    while (pos + 8 <= head.length) {
      const id = head.toString('ascii', pos, pos + 4);
      const len = head.readUInt32LE(pos + 4);
      if (id === 'fmt ') {
        fmt = {
          format: head.readUInt16LE(pos + 8),
          channels: head.readUInt16LE(pos + 10),
          sampleRate: head.readUInt32LE(pos + 12),
          bits: head.readUInt16LE(pos + 22),
        };
      } else if (id === 'data') {
        if (!fmt || fmt.format !== 1) throw new Error(`${path} is not PCM`);
        // Some writers leave the data length at 0 or 0xffffffff when streaming: trust the file size.
        const dataOffset = pos + 8;
        const dataBytes = len === 0 || dataOffset + len > size ? size - dataOffset : len;
        const frameBytes = (fmt.bits / 8) * fmt.channels;
        return {
          sampleRate: fmt.sampleRate,
          channels: fmt.channels,
          bitsPerSample: fmt.bits,
          dataOffset,
          dataBytes,
          durationMs: Math.round(((dataBytes / frameBytes) * 1000) / fmt.sampleRate),
        };
      }
      pos += 8 + len + (len % 2);
    }
    throw new Error(`${path} has no data chunk`);
  } finally {
    await fh.close();
  }
}

function header(sampleRate: number, dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

export interface TimedPiece {
  wavPath: string;
  timeline: SpeechTimeline;
}

/**
 * Writes the pieces (mono 16-bit PCM, one sample rate) one after another into `outPath` and returns
 * the joined timeline: each piece's times shifted by the duration of the audio before it, and its
 * phonemes' word indices by the number of words before it.
 */
export async function joinPieces(
  pieces: readonly TimedPiece[],
  outPath: string,
): Promise<{ timeline: SpeechTimeline; sampleRate: number; durationMs: number }> {
  const datas: Buffer[] = [];
  const timeline: SpeechTimeline = { words: [], phonemes: [] };
  let sampleRate = 0;
  let samples = 0;
  for (const piece of pieces) {
    const info = await readWavInfo(piece.wavPath);
    if (info.channels !== 1 || info.bitsPerSample !== 16)
      throw new Error(`${piece.wavPath} is not mono 16-bit`);
    if (sampleRate && info.sampleRate !== sampleRate) throw new Error('pieces differ in sample rate');
    sampleRate = info.sampleRate;
    const buf = await readFile(piece.wavPath);
    const data = buf.subarray(info.dataOffset, info.dataOffset + info.dataBytes - (info.dataBytes % 2));
    const offsetMs = Math.round((samples * 1000) / sampleRate);
    // An engine's last segment may end a little past its audio; no time may leave its piece.
    const dur = Math.round((data.length / 2 / sampleRate) * 1000);
    const at = (ms: number): number => Math.min(Math.max(ms, 0), dur) + offsetMs;
    const wordBase = timeline.words.length;
    for (const w of piece.timeline.words) {
      timeline.words.push({ text: w.text, startMs: at(w.startMs), endMs: at(w.endMs) });
    }
    for (const p of piece.timeline.phonemes) {
      const shifted = { phone: p.phone, startMs: at(p.startMs), endMs: at(p.endMs) };
      timeline.phonemes.push(p.word === undefined ? shifted : { ...shifted, word: p.word + wordBase });
    }
    datas.push(data);
    samples += data.length / 2;
  }
  if (!sampleRate) throw new Error('nothing to join');
  const bytes = samples * 2;
  await writeFile(outPath, Buffer.concat([header(sampleRate, bytes), ...datas]));
  return { timeline, sampleRate, durationMs: Math.round((samples * 1000) / sampleRate) };
}
