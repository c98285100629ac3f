// One segment's audio of a dub (GET /v2/generations/{id}/dub/segments/{segmentId}/audio) and the
// submit-time refusals of a re-dub (dubParams.basedOn) on a real database: dubs written straight to
// the store with their kept segment audio, read through the API; what only re-dubs read (storage
// keys) never shows in the transcript. A re-dub's corrections are bounded by the earlier video, it
// is accepted as multipart like JSON, and its earlier dub cannot be deleted while it runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import {
  completedGenerationRecord,
  generationRecord,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { postGenerateForm } from './generations-support.js';
import { assertError, dubAsked, dubStore, type DubStore } from './dub-support.js';
import { probeMedia } from '../../src/media/probe.js';
import type { DubRecord } from '../../src/domain/dub.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

const SEGMENT = {
  id: 's1',
  startMs: 500,
  endMs: 2000,
  speaker: 'speaker_1',
  sourceText: 'Hello there.',
  translatedText: 'Hola.',
  dubStartMs: 500,
  dubEndMs: 1400,
  stretch: 1,
  fits: true,
  confidence: null,
};
const PUBLIC: DubRecord = {
  sourceLang: 'en',
  targetLang: 'es',
  provider: 'local',
  route: { via: null, quality: 'direct' },
  transcriptSource: 'given',
  voices: [{ speaker: 'speaker_1', provider: 'local', voiceId: 'es-a', name: 'Ana', matched: false }],
  segments: [SEGMENT],
  timeline: { words: [{ text: 'Hola', startMs: 500, endMs: 1400 }], phonemes: [] },
};

describe(`dub segment audio and re-dub refusals (${DB})`, () => {
  let d: DubStore;
  let t: TestServices;
  let org: TestOrg;
  let ids: Record<string, string>;
  let get: DubStore['get'];
  const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(40, 7)]);
  let dir = '';

  before(async () => {
    d = await dubStore();
    ({ t, org, ids, get } = d);
    const { put, other } = d;
    dir = await mkdtemp(join(tmpdir(), 'lipsync-redub-'));
    const oid = org.organization.id;
    const key = `jobs/${randomUUID()}/${randomUUID()}/dub-s1.wav`;
    await t.services.blobs.put(key, Readable.from([wav]), { contentType: 'audio/wav' });
    const kept: DubRecord = {
      ...PUBLIC,
      kept: {
        clips: [{ id: 's1', key, words: [0, 1], phonemes: [0, 0] }],
        speakers: [{ speaker: 'speaker_1', providerVoiceId: 'es-a', profile: null }],
      },
    };
    await put('dubbed', { ...completedGenerationRecord(oid), ...dubAsked, dub: kept });
    await put('older', { ...completedGenerationRecord(oid), ...dubAsked, dub: PUBLIC });
    await put('plain', completedGenerationRecord(oid));
    await put(
      'pending',
      generationRecord(oid, { ...dubAsked, status: 'PENDING', error: null, errorCode: null }),
    );
    await put('failed', generationRecord(oid, { ...dubAsked, errorCode: 'dubbing_translation_failed' }));
    await put('ofOther', { ...completedGenerationRecord(other.organization.id), ...dubAsked, dub: kept });
    // A dub of a 3 s video, stored as a fetched input is: what a re-dub reuses and is bounded by.
    const mp4 = join(dir, 'three.mp4');
    await promisify(execFile)('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=25'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=220', '-t', '3', '-pix_fmt', 'yuv420p', mp4],
    ]);
    const videoKey = `inputs/${oid}/${randomUUID()}.mp4`;
    await t.services.blobs.putFile(videoKey, mp4, { contentType: 'video/mp4' });
    const video = {
      blobKey: videoKey,
      source: 'url',
      url: 'https://example.com/three.mp4',
      probe: await probeMedia(mp4),
    };
    await put('withVideo', {
      ...completedGenerationRecord(oid),
      resolvedInput: { ...dubAsked.resolvedInput, video, audio: video },
      dub: kept,
    });
  });
  after(async () => {
    await t?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const redub = (basedOn: string, segments: unknown[] = [{ id: 's1', translatedText: 'Buenas.' }]) =>
    t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      payload: { model: 'lipsync-2', dubParams: { basedOn, segments } },
    });

  test('a signed URL of the stored segment audio; the transcript shows no storage keys', async () => {
    const res = await get(`/v2/generations/${ids.dubbed}/dub/segments/s1/audio`);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    const url = new URL(res.body);
    const file = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    assert.equal(file.statusCode, 200);
    assert.deepEqual(file.rawPayload, wav);
    assert.match(String(file.headers['content-disposition']), new RegExp(`${ids.dubbed}\\.s1\\.wav`));
    const transcript = await get(`/v2/generations/${ids.dubbed}/transcript`);
    assert.deepEqual(transcript.json(), { generationId: ids.dubbed, ...PUBLIC });
  });

  test('segment audio refusals', async () => {
    const path = (name: string, s = 's1') => `/v2/generations/${ids[name] ?? name}/dub/segments/${s}/audio`;
    assertError(await get(path('dubbed', 's9')), 404, 'generation_output_unavailable', 'segmentId');
    assertError(await get(path('older')), 404, 'generation_output_unavailable', 'segmentId');
    assertError(await get(path('plain')), 404, 'generation_not_dubbed');
    assertError(await get(path('pending')), 409, 'generation_not_ready');
    assertError(await get(path('failed')), 422, 'generation_not_downloadable');
    assertError(await get(path('ofOther')), 404, 'generation_not_found');
    assertError(await get(path(randomUUID())), 404, 'generation_not_found');
    assertError(await get(path('dubbed'), null), 401, 'unauthorized');
  });

  test('a re-dub is refused at submit unless its earlier dub is a completed dub of the organization with kept audio', async () => {
    const f = 'dubParams.basedOn';
    assertError(await redub(randomUUID()), 404, 'generation_not_found', f);
    assertError(await redub('not-a-uuid'), 404, 'generation_not_found', f);
    assertError(await redub(ids.ofOther), 404, 'generation_not_found', f);
    assertError(await redub(ids.plain), 422, 'generation_not_dubbed', f);
    assertError(await redub(ids.pending), 409, 'generation_not_ready', f);
    assertError(await redub(ids.failed), 422, 'generation_not_downloadable', f);
    assertError(await redub(ids.older), 422, 'generation_output_unavailable', f);
    assertError(
      await redub(ids.withVideo, [{ id: 's2', translatedText: 'x' }]),
      400,
      'invalid_request',
      'dubParams.segments[0].id',
    );
    assert.equal(
      await t.services.store.generations.countActive(org.organization.id),
      1,
      'nothing was queued',
    );
  });

  test('a corrected span must end within the earlier video, a corrected text fit its room (quote too)', async () => {
    const at = (i: number, k: string) => `dubParams.segments[${i}].${k}`;
    const long = [{ id: 's1', startMs: 500, endMs: 86_400_000 }];
    assertError(await redub(ids.withVideo, long), 400, 'invalid_request', at(0, 'endMs'));
    const late = [{ id: 's1', startMs: 86_399_000, endMs: 86_400_000 }];
    assertError(await redub(ids.withVideo, late), 400, 'invalid_request', at(0, 'startMs'));
    // s1 has 500-3000 ms (to the video's end): 30 characters a second plus 20, 95.
    const wordy = [{ id: 's1', translatedText: 'a'.repeat(96) }];
    assertError(await redub(ids.withVideo, wordy), 400, 'invalid_request', at(0, 'translatedText'));
    const quote = (segments: unknown[]) =>
      t.app.inject({
        method: 'POST',
        url: '/v2/analyze/cost',
        headers: { ...org.owner.headers, 'content-type': 'application/json' },
        payload: { model: 'lipsync-2', dubParams: { basedOn: ids.withVideo, segments } },
      });
    assertError(await quote(long), 400, 'invalid_request', at(0, 'endMs'));
    // Priced at the earlier video's length.
    const q = await quote([{ id: 's1', translatedText: 'a'.repeat(95), startMs: 500, endMs: 3000 }]);
    assert.equal(q.statusCode, 200, q.body);
    assert.ok(Math.abs(q.json()[0].duration - 3) < 0.1, q.body);
  });

  test('a re-dub sent as multipart works as JSON; its earlier dub is not deleted while it runs', async () => {
    const res = await postGenerateForm(t.app, org.owner.headers, [
      { name: 'model', value: 'lipsync-2' },
      {
        name: 'dubParams',
        value: JSON.stringify({
          basedOn: ids.withVideo,
          segments: [{ id: 's1', translatedText: 'Buenas.' }],
        }),
      },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    const g = await t.services.store.generations.find(res.json().id, org.organization.id);
    const asked = g?.resolvedInput.request as { dub?: { basedOn?: { generationId: string } } };
    assert.equal(asked.dub?.basedOn?.generationId, ids.withVideo);
    assert.equal((g?.resolvedInput.video as { probe: { durationSeconds: number } }).probe.durationSeconds, 3);

    const del = (id: string) =>
      t.app.inject({ method: 'DELETE', url: `/v2/generations/${id}`, headers: org.owner.headers });
    assertError(await del(ids.withVideo), 409, 'generation_not_deletable_while_processing', 'id');
    assert.ok(await t.services.store.generations.find(ids.withVideo, org.organization.id), 'still there');
    // Another dub of the organization is not held by it.
    assert.equal((await del(ids.older)).statusCode, 200);
    const cancel = await t.app.inject({
      method: 'POST',
      url: `/v2/generations/${res.json().id}/cancel`,
      headers: org.owner.headers,
    });
    assert.equal(cancel.statusCode, 200, cancel.body);
    assert.equal((await del(ids.withVideo)).statusCode, 200);
  });
});
