// End to end with the real server process and real ffmpeg: every sync_mode with audio longer and
// shorter than the video, segments, mov output, speedup, fps/resolution, and sync-3 with an image.
// Each output is downloaded through its signed URL and checked with ffprobe against the duration table
// of docs/generations.md (cut_off: the shorter; silence: the video; loop, bounce, remap: the audio).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeployment, startServer, type TestDeployment, type TestServer } from '../helpers/index.js';
import {
  AUDIO_LONG_SECONDS,
  AUDIO_SHORT_SECONDS,
  VIDEO_SECONDS,
  makeTestMedia,
  probeFile,
  type TestMedia,
  LIFECYCLE_ENGINE_ENV,
} from '../integration/generations-support.js';
import {
  cliOrg,
  createGeneration,
  downloadOutput,
  uploadOverHttp,
  waitDone,
  type E2eOrg,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const TOLERANCE = 0.12; // seconds: one AAC frame plus a video frame

function expectedSeconds(mode: string, audio: number, video: number): number {
  if (mode === 'cut_off') return Math.min(audio, video);
  if (mode === 'silence') return video;
  return audio;
}

describe(`generation media end to end (${DB})`, { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let m: TestMedia;
  let out: string;
  let org: E2eOrg;
  let ids: { video: string; long: string; short: string; image: string };

  before(async () => {
    [dep, m, out] = await Promise.all([
      createDeployment({
        env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_WORKER_CONCURRENCY: '2', LOG_LEVEL: 'warn' },
      }),
      makeTestMedia(),
      mkdtemp(join(tmpdir(), 'lipsync-gen-out-')),
    ]);
    server = await startServer({ env: { ...dep.env } });
    org = await cliOrg({ ...dep.env }, ['--plan', 'enterprise', '--concurrency', '50']);
    ids = {
      video: await uploadOverHttp(server, org, m.video),
      long: await uploadOverHttp(server, org, m.audioLong),
      short: await uploadOverHttp(server, org, m.audioShort),
      image: await uploadOverHttp(server, org, m.image),
    };
  });
  after(async () => {
    await server?.stop();
    await dep?.cleanup();
    await m?.cleanup();
    if (out) await rm(out, { recursive: true, force: true });
  });

  const inputs = (audio: string, refId?: string) => [
    { type: 'video', assetId: ids.video },
    { type: 'audio', assetId: audio, ...(refId ? { refId } : {}) },
  ];

  test('every sync_mode, with audio longer and shorter than the video', async () => {
    const cases: { mode: string; audio: 'long' | 'short'; id?: string }[] = [];
    for (const mode of ['bounce', 'loop', 'cut_off', 'silence', 'remap']) {
      for (const audio of ['long', 'short'] as const) cases.push({ mode, audio });
    }
    for (const c of cases) {
      c.id = await createGeneration(server, org, {
        model: 'lipsync-2',
        input: inputs(ids[c.audio]),
        options: { sync_mode: c.mode },
      });
    }
    for (const c of cases) {
      const g = await waitDone(server, org, c.id!);
      const label = `${c.mode}/${c.audio}`;
      assert.equal(g.status, 'COMPLETED', `${label}: ${JSON.stringify(g)}`);
      const audioSeconds = c.audio === 'long' ? AUDIO_LONG_SECONDS : AUDIO_SHORT_SECONDS;
      const expected = expectedSeconds(c.mode, audioSeconds, VIDEO_SECONDS);
      const file = await downloadOutput(server, org, c.id!, out, `${c.mode}-${c.audio}.mp4`);
      const p = await probeFile(file.path);
      assert.match(p.formatName, /mp4/, label);
      assert.ok(
        Math.abs(p.duration - expected) <= TOLERANCE,
        `${label}: ${p.duration} s, expected ${expected}`,
      );
      assert.ok(
        Math.abs(g.outputDuration - expected) <= TOLERANCE,
        `${label}: outputDuration ${g.outputDuration}`,
      );
      assert.ok(p.video, `${label}: no video stream`);
      assert.equal(p.video.width, 256, label);
      assert.equal(p.video.height, 256, label);
      assert.ok(Math.abs(p.video.fps - 25) < 0.01, `${label}: ${p.video.fps} fps`);
      assert.ok(p.audio, `${label}: no audio stream`);
      assert.ok(Math.abs(p.audio.duration - expected) <= TOLERANCE, `${label}: audio ${p.audio.duration} s`);
    }
  });

  test('segments: only the segment gets the new audio; the output keeps the video length', async () => {
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: inputs(ids.long, 'voice'),
      segments: [{ startTime: 0.4, endTime: 1.4, audioInput: { refId: 'voice', startTime: 0.5 } }],
    });
    const g = await waitDone(server, org, id);
    assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
    assert.equal(g.segments.length, 1);
    const p = await probeFile((await downloadOutput(server, org, id, out, 'segments.mp4')).path);
    assert.ok(Math.abs(p.duration - VIDEO_SECONDS) <= TOLERANCE, String(p.duration));
    assert.ok(p.audio && p.video);
    // segments_secs on the video input, the other accepted shape
    const id2 = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: ids.video, segments_secs: [[0, 1]] },
        { type: 'audio', assetId: ids.short },
      ],
    });
    const g2 = await waitDone(server, org, id2);
    assert.equal(g2.status, 'COMPLETED', JSON.stringify(g2));
    const p2 = await probeFile((await downloadOutput(server, org, id2, out, 'segments-secs.mp4')).path);
    assert.ok(Math.abs(p2.duration - VIDEO_SECONDS) <= TOLERANCE, String(p2.duration));
  });

  test('output_format mov: a QuickTime file named .mov', async () => {
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: inputs(ids.short),
      options: { output_format: 'mov' },
      outputFileName: 'take-3.mp4',
    });
    const g = await waitDone(server, org, id);
    assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
    assert.equal(g.options.output_format, 'mov');
    const file = await downloadOutput(server, org, id, out);
    // The download's own header (the local store's route, or the bucket on S3), not the URL's shape.
    assert.match(String(file.contentDisposition), /^attachment; filename="take-3\.mov"/);
    assert.match(String(file.contentType), /quicktime/);
    const p = await probeFile(file.path);
    assert.match(p.formatName, /mov/);
    assert.ok(Math.abs(p.duration - AUDIO_SHORT_SECONDS) <= TOLERANCE, String(p.duration));
    assert.ok(p.audio && p.video);
  });

  test('speedup 2 halves the picture; fps and output_resolution are honoured', async () => {
    const fast = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: inputs(ids.short),
      options: { speedup: 2 },
    });
    const sized = await createGeneration(server, org, {
      model: 'lipsync-2-pro',
      input: inputs(ids.short),
      options: { fps: 30, output_resolution: [320, 240] },
    });
    for (const [id, w, h, fps] of [
      [fast, 128, 128, 25],
      [sized, 320, 240, 30],
    ] as const) {
      const g = await waitDone(server, org, id);
      assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
      const p = await probeFile((await downloadOutput(server, org, id, out, `${w}.mp4`)).path);
      assert.equal(p.video?.width, w);
      assert.equal(p.video?.height, h);
      assert.ok(Math.abs((p.video?.fps ?? 0) - fps) < 0.01, String(p.video?.fps));
      assert.ok(Math.abs(p.duration - AUDIO_SHORT_SECONDS) <= TOLERANCE, String(p.duration));
      assert.ok(p.audio);
    }
  });

  test('sync-3 animates a still image for the length of the audio', async () => {
    const id = await createGeneration(server, org, {
      model: 'sync-3',
      input: [
        { type: 'image', assetId: ids.image },
        { type: 'audio', assetId: ids.long },
      ],
    });
    const g = await waitDone(server, org, id);
    assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
    const p = await probeFile((await downloadOutput(server, org, id, out, 'still.mp4')).path);
    assert.ok(Math.abs(p.duration - AUDIO_LONG_SECONDS) <= TOLERANCE, String(p.duration));
    assert.equal(p.video?.width, 256);
    assert.equal(p.video?.height, 256);
    assert.ok(p.audio);
  });
});
