// The output reader (src/media/iso-probe.ts) against ffprobe itself on files written with the service's
// own encoding settings (mp4 and mov, fast start or not, several rates, with and without sound), and
// its refusals: whatever it does not expect (a rotation, another codec, not ISO BMFF) is left to ffprobe.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fixture } from '../helpers/paths.js';
import { probeOwnOutput, readIsoProbe } from '../../src/media/iso-probe.js';
import { ffprobeStartCount, mediaProbeCount, probeMedia } from '../../src/media/probe.js';
import { aacArgs, containerArgs, h264Args } from '../../src/media/encoding.js';

const run = promisify(execFile);
const ffmpeg = (args: string[]) => run('ffmpeg', ['-v', 'error', '-y', ...args]);

describe('ISO BMFF output probe', { timeout: 120_000 }, () => {
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
      assert.deepEqual(read, await probeMedia(path));
    });
  }

  test('left to ffprobe: a rotation, another video codec, a file that is not ISO BMFF', async () => {
    const plain = await encode('plain.mp4', { format: 'mp4', fps: '25', audio: true });
    const rotated = join(dir, 'rotated.mp4');
    await ffmpeg(['-i', plain, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', rotated]);
    const mpeg4 = join(dir, 'mpeg4.mp4');
    await ffmpeg(['-i', plain, '-c:v', 'mpeg4', '-c:a', 'copy', mpeg4]);
    for (const path of [rotated, mpeg4, fixture('media/hello.wav')]) {
      assert.equal(await readIsoProbe(path), null, path);
      const before = mediaProbeCount();
      assert.deepEqual(await probeOwnOutput(path), await probeMedia(path), path);
      assert.equal(
        mediaProbeCount() - before,
        2,
        'probeOwnOutput asked probeMedia (ffprobe but for the WAV)',
      );
    }
    const before = ffprobeStartCount();
    await probeOwnOutput(plain);
    assert.equal(ffprobeStartCount() - before, 0, 'our own output needs no ffprobe');
  });
});
