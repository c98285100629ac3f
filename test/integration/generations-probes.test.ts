// How many probes and ffprobe processes a generation takes (issue 15): each input is probed once (an
// uploaded asset at upload, never again; a TTS job's audio in that job; a URL at submit), the job
// reuses what admission probed and reads its own output's facts from the file's boxes. A stored blob
// that changed, and a URL, are still probed. WAV files are read from their header and h264 MP4 files
// from their boxes, so these generations start no ffprobe at all. Counted with the process's probe
// and ffprobe start counters around real submits and in-process jobs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { ffprobeStartCount, mediaProbeCount, probeMedia } from '../../src/media/probe.js';
import { renderEditedVideo } from '../../src/pipeline/dialogue-render.js';
import {
  AUDIO_LONG_SECONDS,
  AUDIO_SHORT_SECONDS,
  LIFECYCLE_ENGINE_ENV,
  VIDEO_SECONDS,
  makeTestMedia,
  postGenerate,
  postGenerateForm,
  startMediaServer,
  uploadAsset,
  waitTerminal,
  type MediaServer,
  type TestMedia,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`ffprobe starts per generation (${DB})`, { timeout: 240_000 }, () => {
  let t: TestServices;
  let bg: Background;
  let m: TestMedia;
  let srv: MediaServer;
  let org: TestOrg;

  before(async () => {
    [t, m, srv] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          LIPSYNC_ALLOW_PRIVATE_URLS: '1',
        },
      }),
      makeTestMedia(),
      startMediaServer(),
    ]);
    org = await createOrgWithKey(t.services, { plan: 'enterprise', flags: ['tts_async'] });
    bg = startBackground(t.services);
  });
  after(async () => {
    await bg?.stop();
    await t?.cleanup();
    await srv?.close();
    await m?.cleanup();
  });

  /**
   * Probes while fn runs: all of them, and those that started ffprobe (a plain WAV file is read from
   * its header, an h264 MP4 from its boxes, without ffprobe).
   */
  async function probesDuring<T>(
    fn: () => Promise<T>,
  ): Promise<{ value: T; probes: number; ffprobes: number }> {
    const before = mediaProbeCount();
    const ffprobesBefore = ffprobeStartCount();
    const value = await fn();
    return { value, probes: mediaProbeCount() - before, ffprobes: ffprobeStartCount() - ffprobesBefore };
  }

  /** Submits, waits for COMPLETED; the generation as GET shows it. */
  async function generate(body: unknown): Promise<Record<string, any>> {
    const res = await postGenerate(t.app, org.owner.headers, body);
    assert.equal(res.statusCode, 201, res.body);
    const g = await waitTerminal(t.app, org.owner.headers, res.json().id as string);
    assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
    return g;
  }

  test('uploaded assets: one probe per input at upload, none at submit or in the job', async () => {
    const uploads = await probesDuring(async () => ({
      video: await uploadAsset(t.app, org.owner.headers, m.video),
      audio: await uploadAsset(t.app, org.owner.headers, m.audioShort),
    }));
    assert.equal(uploads.probes, 2, 'one probe per uploaded file');
    assert.equal(uploads.ffprobes, 0, 'the video from its boxes, the WAV from its header');
    const run = await probesDuring(() =>
      generate({
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: uploads.value.video },
          { type: 'audio', assetId: uploads.value.audio },
        ],
        options: { sync_mode: 'cut_off' },
      }),
    );
    assert.equal(run.probes, 1, 'the submit and the job reuse the upload probes; only the output is read');
    assert.equal(run.ffprobes, 0, 'the output from its boxes');
    // The facts still come from the files: the output lasts as long as the shorter input.
    const expected = Math.min(VIDEO_SECONDS, AUDIO_SHORT_SECONDS);
    assert.ok(Math.abs(run.value.outputDuration - expected) < 0.1, String(run.value.outputDuration));
  });

  test('multipart: each file is probed once, from the form to COMPLETED', async () => {
    const run = await probesDuring(async () => {
      const res = await postGenerateForm(t.app, org.owner.headers, [
        { name: 'model', value: 'lipsync-2' },
        { name: 'options', value: JSON.stringify({ sync_mode: 'cut_off' }) },
        { name: 'video', file: m.video, filename: 'face.mp4', type: 'video/mp4' },
        { name: 'audio', file: m.audioShort, filename: 'voice.wav', type: 'audio/wav' },
      ]);
      assert.equal(res.statusCode, 201, res.body);
      return waitTerminal(t.app, org.owner.headers, res.json().id as string);
    });
    assert.equal(run.value.status, 'COMPLETED', JSON.stringify(run.value));
    assert.equal(run.probes, 3, 'each file of the form once, and the output');
    assert.equal(run.ffprobes, 0);
  });

  test('a URL input is fetched and probed at submit; the asset beside it is not probed again', async () => {
    const video = await uploadAsset(t.app, org.owner.headers, m.video);
    const url = srv.route('/probes/voice.wav', { file: m.audioLong });
    const run = await probesDuring(() =>
      generate({
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', url },
        ],
        options: { sync_mode: 'loop' },
      }),
    );
    assert.equal(run.probes, 2, 'the URL input, once, and the output');
    assert.equal(run.ffprobes, 0, 'a WAV file, read from its header');
    assert.ok(
      Math.abs(run.value.outputDuration - AUDIO_LONG_SECONDS) < 0.1,
      String(run.value.outputDuration),
    );
  });

  test('an asset whose stored file changed is probed again, and its real length is used', async () => {
    const video = await uploadAsset(t.app, org.owner.headers, m.video);
    const audio = await uploadAsset(t.app, org.owner.headers, m.audioShort);
    const record = await t.services.store.assets.find(org.organization.id, audio);
    assert.ok(record?.probe, 'the upload stored its probe');
    // The blob under the asset's key replaced by another file (3.0 s instead of 1.5 s).
    await t.services.blobs.putFile(record.storageKey, m.audioLong, { contentType: 'audio/wav' });
    const run = await probesDuring(() =>
      generate({
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: audio },
        ],
        options: { sync_mode: 'loop' },
      }),
    );
    assert.equal(run.probes, 2, 'the changed file, once, and the output');
    // Admission itself read the new file (the plan's limits are checked on it), not the stored probe.
    const g = await t.services.store.generations.findAny(run.value.id as string);
    const admitted = (g?.resolvedInput as { audio?: { probe?: { durationSeconds?: number } } }).audio;
    assert.ok(Math.abs((admitted?.probe?.durationSeconds ?? 0) - AUDIO_LONG_SECONDS) < 0.1);
    assert.ok(
      Math.abs(run.value.outputDuration - AUDIO_LONG_SECONDS) < 0.1,
      String(run.value.outputDuration),
    );
  });

  test('a TTS job keeps its probe: a generation from its asset starts no ffprobe', async () => {
    const tts = await probesDuring(async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v2/tts/jobs',
        headers: { ...org.owner.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({
          script: 'Bob bought a map by the big blue boat.',
          voiceId: 'slt-hts',
          provider: 'local',
        }),
      });
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().id as string;
      for (;;) {
        const view = (
          await t.app.inject({ method: 'GET', url: `/v2/tts/jobs/${id}`, headers: org.owner.headers })
        ).json();
        if (view.status === 'SUCCESS' || view.status === 'FAILED') return view;
        await t.services.bus.waitForChange(id, 500);
      }
    });
    assert.equal(tts.value.status, 'SUCCESS', JSON.stringify(tts.value));
    assert.equal(tts.probes, 1, 'the TTS job probes the audio it synthesized, once');
    const assetId = tts.value.assetId as string;
    const record = await t.services.store.assets.find(org.organization.id, assetId);
    assert.equal(record?.inputType, 'TTS');
    assert.equal(record?.probe?.kind, 'AUDIO', 'the TTS asset stored its probe');
    assert.equal(record?.probe?.sizeBytes, record?.size);
    const video = await uploadAsset(t.app, org.owner.headers, m.video);
    const run = await probesDuring(() =>
      generate({
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId },
        ],
        options: { sync_mode: 'cut_off' },
      }),
    );
    assert.equal(run.probes, 1, 'the submit and the job reuse the TTS job probe and the upload probe');
    const expected = Math.min(VIDEO_SECONDS, record?.probe?.durationSeconds ?? 0);
    assert.ok(Math.abs(run.value.outputDuration - expected) < 0.1, String(run.value.outputDuration));
  });

  test('a dialogue render reads the video it retimed: one ffprobe (FFV1 in Matroska is left to it)', async () => {
    const source = { path: m.video, probe: await probeMedia(m.video) };
    const render = await probesDuring(() =>
      renderEditedVideo(
        source,
        {
          id: 'probe-count',
          previewKey: 'unused',
          previewDurationMs: 2400,
          sourceKey: 'unused',
          slots: [
            {
              kind: 'change',
              outputStartMs: 800,
              outputDurationMs: 800,
              sourceStartMs: 800,
              sourceDurationMs: 400,
            },
          ],
        },
        m.dir,
        { motionAware: false },
      ),
    );
    // probeMedia reads ISO BMFF (h264/AAC) itself; this lossless intermediate still goes to ffprobe.
    assert.equal(render.probes, 1);
    assert.equal(render.ffprobes, 1);
    const { probe } = render.value;
    assert.equal(probe.video?.codec, 'ffv1');
    assert.ok(Math.abs((probe.durationSeconds ?? 0) - 2.4) < 0.1, String(probe.durationSeconds));
  });
});
