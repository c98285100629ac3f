// One segment's audio of a dub (GET /v2/generations/{id}/dub/segments/{segmentId}/audio) and the
// submit-time refusals of a re-dub (dubParams.basedOn) on a real database: dubs written straight to
// the store with their kept segment audio, read through the API; what only re-dubs read (storage
// keys) never shows in the transcript.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  completedGenerationRecord,
  createOrgWithKey,
  createTestServices,
  generationRecord,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import type { DubRecord } from '../../src/domain/dub.js';
import type { GenerationRecord } from '../../src/store/generations.js';

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
const dubAsked = {
  resolvedInput: {
    request: {
      dub: { targetLang: 'es', sourceLang: null, provider: 'local', voiceId: null, transcript: null },
    },
  },
};

describe(`dub segment audio and re-dub refusals (${DB})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;
  const ids: Record<string, string> = {};
  const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(40, 7)]);

  async function put(name: string, g: GenerationRecord): Promise<void> {
    await t.services.store.generations.insert(g);
    ids[name] = g.id;
  }

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services);
    other = await createOrgWithKey(t.services);
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
  });
  after(() => t?.cleanup());

  const get = (url: string, who: TestOrg | null = org) =>
    t.app.inject({ method: 'GET', url, headers: who ? who.owner.headers : {} });
  const redub = (basedOn: string, segments: unknown[] = [{ id: 's1', translatedText: 'Buenas.' }]) =>
    t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      payload: { model: 'lipsync-2', dubParams: { basedOn, segments } },
    });

  function assertError(
    res: { statusCode: number; body: string },
    status: number,
    code: string,
    field?: string,
  ) {
    assert.equal(res.statusCode, status, res.body);
    const b = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(b.errorCode, code, res.body);
    if (field !== undefined) assert.equal(b.field, field, res.body);
  }

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
      await redub(ids.dubbed, [{ id: 's2', translatedText: 'x' }]),
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
});
