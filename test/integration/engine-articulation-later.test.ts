// test-database: none
// The articulation handed to the CPU engine as a promise (EngineJob.articulation), as the pipeline
// does while voice activity still runs: the engine starts (reads the audio, its first frames) and
// waits for it before it plans the mouth, so the output is the same frames as with the articulation
// given up front, and the report says the same. A rejected promise fails the run with its error.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import type { Articulation } from '../../src/speech/articulation.js';
import { driveEngine, recordingWithLead, type DriveSpec } from '../helpers/engine-drive.js';
import { fixture } from '../helpers/paths.js';

const run = promisify(execFile);

/** The md5 of a video's decoded frames. */
async function framesMd5(path: string): Promise<string> {
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', path, '-map', '0:v:0', '-f', 'md5', '-']);
  return stdout.trim();
}

describe('CPU engine: articulation that arrives after the start', { timeout: 300_000 }, () => {
  let dir: string;
  let spec: DriveSpec;

  before(async () => {
    dir = await makeTempDir('articulation-later');
    const rec = await recordingWithLead('Bob bought a map.', 400, dir);
    const articulation: Articulation = {
      phonemes: rec.truth.phonemes,
      trusted: [{ startMs: 0, endMs: rec.durationMs }],
      spans: [{ startMs: 0, endMs: rec.durationMs, source: 'text', confidence: 1 }],
      speech: [{ startMs: 400, endMs: rec.durationMs }],
      primary: 'text',
      timings: { vadMs: 0, recognitionMs: 0, alignmentMs: 0 },
      notes: [],
    };
    spec = {
      video: fixture('media/face_3.mp4'),
      width: 296,
      height: 296,
      fps: 25,
      seconds: 2,
      audio: rec.path,
      dir,
      name: 'up-front',
      articulation,
    };
  });

  after(async () => {
    await removeTempDir(dir);
  });

  it('draws the same frames and reports the same as with the articulation up front', async () => {
    const upFront = await driveEngine(spec);
    const later = await driveEngine({
      ...spec,
      name: 'later',
      // Settles only after the engine has started reading.
      deliver: (value) => new Promise((resolve) => setTimeout(() => resolve(value), 300)),
    });
    assert.equal(upFront.report.mouthDriver, 'phonemes');
    assert.equal(upFront.report.silenceFrom, 'voice-activity');
    assert.deepEqual(later.report, upFront.report);
    assert.equal(await framesMd5(later.out), await framesMd5(upFront.out));
  });

  it('fails the run with the error of a rejected articulation', async () => {
    const failure = new Error('voice activity failed');
    await assert.rejects(
      driveEngine({
        ...spec,
        name: 'rejected',
        deliver: () => new Promise((_, reject) => setTimeout(() => reject(failure), 100)),
      }),
      (err) => err === failure,
    );
  });
});
