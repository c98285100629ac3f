// GET /v2/generations/{id}/transcript and /subtitles on a real database: a COMPLETED dub written
// straight to the store (the dubbing job is not needed to read one), its JSON and both subtitle
// formats in both languages with their headers, and every refusal in the spec's error body.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { completedGenerationRecord, generationRecord, type TestOrg } from '../helpers/index.js';
import type { DubRecord } from '../../src/domain/dub.js';
import { assertError, dubAsked, dubStore, type DubStore } from './dub-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

const DUB: DubRecord = {
  sourceLang: 'en',
  targetLang: 'es',
  provider: 'local',
  route: { via: null, quality: 'direct' },
  transcriptSource: 'recognized',
  voices: [
    { speaker: 'speaker_1', provider: 'local', voiceId: 'es-a', name: 'Ana', matched: true },
    { speaker: 'speaker_2', provider: 'local', voiceId: 'es-b', name: 'Beto', matched: true },
  ],
  segments: [
    {
      id: 's1',
      startMs: 500,
      endMs: 2000,
      speaker: 'speaker_1',
      sourceText: 'Hello there, how are you today?',
      translatedText: 'Hola, ¿cómo estás hoy?',
      dubStartMs: 500,
      // Runs into the next segment: the target cue ends where the next begins.
      dubEndMs: 2600,
      stretch: 1,
      fits: false,
      confidence: 0.91,
    },
    {
      id: 's2',
      startMs: 2400,
      endMs: 4000,
      speaker: 'speaker_2',
      sourceText: 'Fine.',
      translatedText: 'Bien, gracias por preguntar, estoy muy contento de verte aquí hoy.',
      dubStartMs: 2400,
      dubEndMs: 4100,
      stretch: 0.95,
      fits: true,
      confidence: null,
    },
  ],
};

describe(`dub transcript and subtitles (${DB})`, () => {
  let d: DubStore;
  let org: TestOrg;
  let other: TestOrg;
  let ids: Record<string, string>;
  let get: DubStore['get'];

  before(async () => {
    d = await dubStore();
    ({ org, other, ids, get } = d);
    const oid = org.organization.id;
    const put = d.put;
    await put('dubbed', { ...completedGenerationRecord(oid), ...dubAsked, dub: DUB });
    await put('plain', completedGenerationRecord(oid));
    await put('plainPending', generationRecord(oid, { status: 'PENDING', error: null, errorCode: null }));
    await put(
      'pending',
      generationRecord(oid, { ...dubAsked, status: 'PENDING', error: null, errorCode: null }),
    );
    await put('processing', generationRecord(oid, { ...dubAsked, status: 'PROCESSING', progress: 40 }));
    await put('failed', generationRecord(oid, { ...dubAsked, errorCode: 'dubbing_translation_failed' }));
    await put('canceled', generationRecord(oid, { ...dubAsked, status: 'CANCELED' }));
    await put('deleted', {
      ...completedGenerationRecord(oid),
      ...dubAsked,
      dub: DUB,
      deletedAt: new Date().toISOString(),
    });
    await put('ofOther', { ...completedGenerationRecord(other.organization.id), ...dubAsked, dub: DUB });
  });
  after(() => d?.t.cleanup());

  test('the transcript is the stored dub with its generation id', async () => {
    const res = await get(`/v2/generations/${ids.dubbed}/transcript`);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json(), { generationId: ids.dubbed, ...DUB });
  });

  test('target-language SubRip by default: cues never overlap, long lines wrap', async () => {
    const res = await get(`/v2/generations/${ids.dubbed}/subtitles`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/x-subrip; charset=utf-8');
    assert.equal(res.headers['content-disposition'], `attachment; filename="${ids.dubbed}.es.srt"`);
    assert.equal(
      res.body,
      '1\n00:00:00,500 --> 00:00:02,400\nHola, ¿cómo estás hoy?\n\n' +
        '2\n00:00:02,400 --> 00:00:04,100\nBien, gracias por preguntar, estoy muy\ncontento de verte aquí hoy.\n',
    );
  });

  test('WebVTT and the source language on request', async () => {
    const vtt = await get(`/v2/generations/${ids.dubbed}/subtitles?format=vtt&lang=target`);
    assert.equal(vtt.statusCode, 200, vtt.body);
    assert.equal(vtt.headers['content-type'], 'text/vtt; charset=utf-8');
    assert.equal(vtt.headers['content-disposition'], `attachment; filename="${ids.dubbed}.es.vtt"`);
    assert.equal(
      vtt.body,
      'WEBVTT\n\n00:00:00.500 --> 00:00:02.400\nHola, ¿cómo estás hoy?\n\n' +
        '00:00:02.400 --> 00:00:04.100\nBien, gracias por preguntar, estoy muy\ncontento de verte aquí hoy.\n',
    );

    const src = await get(`/v2/generations/${ids.dubbed}/subtitles?lang=source`);
    assert.equal(src.statusCode, 200, src.body);
    assert.equal(src.headers['content-disposition'], `attachment; filename="${ids.dubbed}.en.srt"`);
    assert.equal(
      src.body,
      '1\n00:00:00,500 --> 00:00:02,000\nHello there, how are you today?\n\n' +
        '2\n00:00:02,400 --> 00:00:04,000\nFine.\n',
    );

    const srcVtt = await get(`/v2/generations/${ids.dubbed}/subtitles?lang=source&format=vtt`);
    assert.equal(srcVtt.headers['content-type'], 'text/vtt; charset=utf-8');
    assert.match(srcVtt.body, /^WEBVTT\n\n00:00:00\.500 --> 00:00:02\.000\nHello there/);
  });

  test('unknown, malformed, deleted and other organizations’ generations are 404 generation_not_found', async () => {
    for (const path of ['transcript', 'subtitles']) {
      for (const id of [randomUUID(), 'not-a-uuid', ids.deleted])
        assertError(await get(`/v2/generations/${id}/${path}`), 404, 'generation_not_found');
      assertError(await get(`/v2/generations/${ids.ofOther}/${path}`), 404, 'generation_not_found');
      // Its own organization reads it.
      assert.equal((await get(`/v2/generations/${ids.ofOther}/${path}`, other)).statusCode, 200);
    }
  });

  test('a dub still pending or processing is 409 generation_not_ready', async () => {
    for (const path of ['transcript', 'subtitles?format=vtt'])
      for (const name of ['pending', 'processing'])
        assertError(await get(`/v2/generations/${ids[name]}/${path}`), 409, 'generation_not_ready');
  });

  test('a generation that is not a dub is 404 generation_not_dubbed, in any state', async () => {
    for (const path of ['transcript', 'subtitles'])
      for (const name of ['plain', 'plainPending'])
        assertError(await get(`/v2/generations/${ids[name]}/${path}`), 404, 'generation_not_dubbed', 'id');
  });

  test('a failed or canceled dub is 422 generation_not_downloadable, as its output download is', async () => {
    for (const name of ['failed', 'canceled']) {
      for (const path of ['transcript', 'subtitles'])
        assertError(await get(`/v2/generations/${ids[name]}/${path}`), 422, 'generation_not_downloadable');
      assertError(await get(`/v2/generations/${ids[name]}/download`), 422, 'generation_not_downloadable');
    }
  });

  test('bad query values are 400 invalid_request naming the parameter', async () => {
    const base = `/v2/generations/${ids.dubbed}/subtitles`;
    assertError(await get(`${base}?format=ass`), 400, 'invalid_request', 'format');
    assertError(await get(`${base}?lang=es`), 400, 'invalid_request', 'lang');
    assertError(await get(`${base}?format=`), 400, 'invalid_request', 'format');
  });

  test('both need an API key', async () => {
    for (const path of ['transcript', 'subtitles'])
      assertError(await get(`/v2/generations/${ids.dubbed}/${path}`, null), 401, 'unauthorized');
  });
});
