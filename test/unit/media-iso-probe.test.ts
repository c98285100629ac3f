// The ISO BMFF reader (src/media/iso-probe.ts) against ffprobe itself: on files written with the
// service's own encoding settings (mp4 and mov, fast start or not, several rates, with and without
// sound) and on every fixture video (camera and phone clips with edit lists and variable rates), which
// probeMedia reads without ffprobe where the reader can; and its refusals: whatever it does not expect
// (a rotation, another codec, not ISO BMFF, a file of many top-level boxes) is left to ffprobe.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fixture } from '../helpers/paths.js';
import { readIsoProbe } from '../../src/media/iso-probe.js';
import { ffprobeMedia, ffprobeStartCount, probeMedia } from '../../src/media/probe.js';
import { aacArgs, containerArgs, h264Args } from '../../src/media/encoding.js';

const run = promisify(execFile);
const ffmpeg = (args: string[]) => run('ffmpeg', ['-v', 'error', '-y', ...args]);

/** ffprobe's own answer, whatever probeMedia would have read. */
async function ffprobeOf(path: string) {
  return ffprobeMedia(path, (await stat(path)).size);
}

describe('ISO BMFF probe', { timeout: 120_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-iso-probe-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The face clip cut to `seconds`, at `fps`, encoded as the service encodes its outputs. */
  async function encode(
    name: string,
    o: { format: 'mp4' | 'mov'; fps: string; audio: boolean; faststart?: boolean; seconds?: number },
  ): Promise<string> {
    const out = join(dir, name);
    const container = o.faststart === false ? ['-f', o.format] : containerArgs(o.format);
    await ffmpeg([
      '-i',
      fixture('media/face_1.mp4'),
      '-i',
      fixture('media/audio_1.wav'),
      '-map',
      '0:v:0',
      ...(o.audio ? ['-map', '1:a:0', ...aacArgs()] : []),
      '-t',
      String(o.seconds ?? 1.3),
      '-vf',
      `scale=160:120,fps=${o.fps}`,
      ...h264Args({ preset: 'ultrafast', crf: 30 }),
      ...container,
      out,
    ]);
    return out;
  }

  const cases = [
    { name: 'a.mp4', format: 'mp4', fps: '25', audio: true },
    { name: 'b.mov', format: 'mov', fps: '30', audio: true },
    { name: 'c.mp4', format: 'mp4', fps: '30000/1001', audio: true, seconds: 2.05 },
    { name: 'd.mp4', format: 'mp4', fps: '24', audio: false },
    { name: 'e.mp4', format: 'mp4', fps: '25', audio: true, faststart: false },
  ] as const;

  for (const c of cases) {
    test(`${c.name} (${c.format}, ${c.fps} fps, ${c.audio ? 'with' : 'no'} sound${'faststart' in c ? ', moov last' : ''}): what ffprobe says`, async () => {
      const path = await encode(c.name, c);
      const read = await readIsoProbe(path);
      assert.ok(read, 'read from the boxes');
      assert.deepEqual(read, await ffprobeOf(path));
    });
  }

  test('left to ffprobe: a rotation, another video codec, a file that is not ISO BMFF', async () => {
    const plain = await encode('plain.mp4', { format: 'mp4', fps: '25', audio: true });
    const rotated = join(dir, 'rotated.mp4');
    await ffmpeg(['-i', plain, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', rotated]);
    const mpeg4 = join(dir, 'mpeg4.mp4');
    await ffmpeg(['-i', plain, '-c:v', 'mpeg4', '-c:a', 'copy', mpeg4]);
    // (WAV files are read from their header instead: test/integration/media-wav-probe.test.ts.)
    assert.equal(await readIsoProbe(fixture('media/hello.wav')), null);
    for (const path of [rotated, mpeg4]) {
      assert.equal(await readIsoProbe(path), null, path);
      const before = ffprobeStartCount();
      assert.deepEqual(await probeMedia(path), await ffprobeOf(path), path);
      assert.equal(ffprobeStartCount() - before, 2, 'probeMedia asked ffprobe');
    }
    const before = ffprobeStartCount();
    await probeMedia(plain);
    assert.equal(ffprobeStartCount() - before, 0, 'our own output needs no ffprobe');
  });

  test('every fixture video: probeMedia says what ffprobe says, without ffprobe for h264 in MP4', async () => {
    const videos = ['face_1', 'face_2', 'face_3', 'face_4', 'face_5', 'wda_speaker_a', 'latentsync_demo1'];
    const read: string[] = [];
    for (const name of videos) {
      const path = fixture(`media/${name}.mp4`);
      const before = ffprobeStartCount();
      const probe = await probeMedia(path);
      if (ffprobeStartCount() === before) read.push(name);
      assert.deepEqual(probe, await ffprobeOf(path), name);
    }
    // wda_speaker_a is MPEG-4 Part 2 and latentsync_demo1 HEVC: those two are ffprobe's.
    assert.deepEqual(read, ['face_1', 'face_2', 'face_3', 'face_4', 'face_5']);
  });

  test('a file of many top-level boxes, or a cut moov, is left to ffprobe', async () => {
    const plain = await encode('whole.mp4', { format: 'mp4', fps: '25', audio: true });
    const whole = await readFile(plain);
    const ftypEnd = whole.readUInt32BE(0);
    const free = Buffer.from([0, 0, 0, 8, 0x66, 0x72, 0x65, 0x65]); // an empty 'free' box
    const padded = join(dir, 'many-boxes.mp4');
    // A valid moov after 100 boxes: readable, but not looked for that far.
    const withBoxes = (n: number) =>
      Buffer.concat([
        whole.subarray(0, ftypEnd),
        ...Array.from({ length: n }, () => free),
        whole.subarray(ftypEnd),
      ]);
    await writeFile(padded, withBoxes(10));
    assert.ok(await readIsoProbe(padded), 'a few boxes before the moov are fine');
    await writeFile(padded, withBoxes(100));
    assert.equal(await readIsoProbe(padded), null);
    const cut = join(dir, 'cut-moov.mp4');
    const moovAt = whole.indexOf('moov', 0, 'latin1') - 4;
    await writeFile(cut, whole.subarray(0, moovAt + 200));
    assert.equal(await readIsoProbe(cut), null);
  });
});
