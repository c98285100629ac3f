// The test helpers' plain failures when ffmpeg or a fixture is missing, instead of an ENOENT from deep
// inside a media call.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MissingTestDependency, requireFfmpeg, requireFixture } from '../helpers/paths.js';

describe('missing test dependencies', () => {
  it('a PATH without ffmpeg fails with how to install it', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'no-ffmpeg-'));
    try {
      assert.throws(
        () => requireFfmpeg(empty),
        (e: unknown) =>
          e instanceof MissingTestDependency &&
          e.message === 'ffmpeg is not installed (not on PATH): run scripts/install-system-packages.sh',
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('ffprobe is required beside ffmpeg, and both executable on PATH pass', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'ffmpeg-only-'));
    try {
      await writeFile(join(bin, 'ffmpeg'), '#!/bin/sh\n');
      await chmod(join(bin, 'ffmpeg'), 0o755);
      assert.throws(() => requireFfmpeg(bin), /^MissingTestDependency: ffprobe is not installed/);
      await writeFile(join(bin, 'ffprobe'), '#!/bin/sh\n');
      // Present but not executable is not installed.
      assert.throws(() => requireFfmpeg(bin), /ffprobe is not installed/);
      await chmod(join(bin, 'ffprobe'), 0o755);
      assert.doesNotThrow(() => requireFfmpeg(`/nonexistent:${bin}`));
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('a missing fixtures folder or file names it and LIPSYNC_FIXTURES_DIR', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fixtures-'));
    try {
      assert.throws(
        () => requireFixture('media/face_1.mp4', join(dir, 'absent')),
        (e: unknown) =>
          e instanceof MissingTestDependency &&
          e.message.startsWith(
            `the fixtures folder ${join(dir, 'absent')} does not exist: set LIPSYNC_FIXTURES_DIR`,
          ),
      );
      assert.throws(
        () => requireFixture('media/face_1.mp4', dir),
        (e: unknown) =>
          e instanceof MissingTestDependency &&
          e.message.startsWith(`fixture media/face_1.mp4 not found in ${dir}: set LIPSYNC_FIXTURES_DIR`),
      );
      await writeFile(join(dir, 'present.wav'), '');
      assert.equal(requireFixture('present.wav', dir), join(dir, 'present.wav'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
