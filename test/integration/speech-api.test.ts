// Text-to-speech and voices through the API with the real local provider (festival, RHVoice,
// pocketsphinx, Praat): voices, POST /v2/tts (a TTS asset with its timeline), asynchronous TTS jobs
// (rollout flag, idempotency, the `tts` job kind), local voice clones (pitch moves to the sample's),
// every voice error code, text inputs of POST /v2/generate, and a SVOX Pico voice (listed when
// pico2wave is installed) speaking Spanish with aligned phone times.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm, uploadAssetFile } from '../helpers/multipart.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { measureVoiceProfile, semitones } from '../../src/speech/voice-profile.js';
import { detectLocalEngines } from '../../src/speech/tools.js';

const SCRIPT = 'Bob bought a map by the big blue boat.';

describe(`speech API (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;
  let scratch: string;

  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services, { flags: ['tts_async'] });
    other = await createOrgWithKey(t.services, { plan: 'free' });
    scratch = await mkdtemp(join(tmpdir(), 'speech-api-'));
  });
  after(async () => {
    await t.cleanup();
    await rm(scratch, { recursive: true, force: true });
  });

  const call = (
    who: TestOrg,
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ) =>
    t.app.inject({
      method: method as 'GET',
      url,
      headers: { ...who.owner.headers, ...headers },
      payload: payload as object,
    });

  const uploadAsset = (who: TestOrg, path: string): Promise<{ id: string; url: string }> =>
    uploadAssetFile(t.app, who.owner.headers, path);

  /** The bytes behind one of our signed URLs, written to a file. */
  async function saveSigned(url: string, name: string): Promise<string> {
    const u = new URL(url);
    const res = await t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
    assert.equal(res.statusCode, 200);
    const path = join(scratch, name);
    await writeFile(path, res.rawPayload);
    return path;
  }

  function assertError(res: { statusCode: number; json(): any; body: string }, status: number, code: string) {
    assert.equal(res.statusCode, status, res.body);
    const b = res.json();
    assert.equal(b.statusCode, status);
    assert.equal(b.errorCode, code);
    assert.ok(b.message && b.suggestion);
    assert.doesNotMatch(res.body, /\/tmp\/|praat|festival|pocketsphinx|stderr/i);
    return b;
  }

  test('GET /v2/voices lists the installed local voices; filter and get by id', async () => {
    const all = await call(org, 'GET', '/v2/voices');
    assert.equal(all.statusCode, 200, all.body);
    const ids = all.json().map((v: any) => v.id);
    assert.ok(ids.includes('slt-hts'));
    const slt = all.json().find((v: any) => v.id === 'slt-hts');
    assert.equal(slt.provider, 'local');
    assert.equal(slt.type, 'builtin');
    const local = await call(org, 'GET', '/v2/voices?provider=local');
    assert.ok(local.json().every((v: any) => v.provider === 'local'));
    const one = await call(org, 'GET', '/v2/voices/slt-hts');
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().name, slt.name);
    assertError(await call(org, 'GET', '/v2/voices/no-such-voice'), 404, 'voice_not_found');
    assert.equal((await call(org, 'GET', '/v2/voices?provider=nope')).statusCode, 400);
  });

  test('POST /v2/tts: a TTS asset with its word and phoneme timeline, usable as an audio input', async () => {
    const res = await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: 'slt-hts', provider: 'local' });
    assert.equal(res.statusCode, 200, res.body);
    const b = res.json();
    assert.match(b.id, /^[0-9a-f-]{36}$/);
    assert.ok(b.duration > 1 && b.duration < 6, `duration ${b.duration}`);
    const asset = (await call(org, 'GET', `/v2/assets/${b.id}`)).json();
    assert.equal(asset.inputType, 'TTS');
    assert.equal(asset.type, 'AUDIO');
    const tl = await call(org, 'GET', `/v2/assets/${b.id}/timeline`);
    assert.equal(tl.statusCode, 200);
    const timeline = tl.json();
    assert.deepEqual(
      timeline.words.map((w: any) => w.text.toLowerCase()),
      ['bob', 'bought', 'a', 'map', 'by', 'the', 'big', 'blue', 'boat'],
    );
    assert.ok(timeline.phonemes.some((p: any) => p.phone === 'b'));
    const last = timeline.words[timeline.words.length - 1];
    assert.ok(last.endMs <= b.duration * 1000 + 50);
    // The URL is ours: the file behind it is the speech.
    const wav = await saveSigned(b.url, 'tts.wav');
    const m = await measureVoiceProfile(wav, { workDir: scratch });
    assert.ok(m.voicedSeconds > 0.5);
    // Uploads have no timeline.
    const up = await uploadAsset(org, fixture('media/hello.wav'));
    assertError(await call(org, 'GET', `/v2/assets/${up.id}/timeline`), 404, 'asset_not_found');
  });

  test('a Pico voice is listed when installed and speaks Spanish with words and phone times', async (t) => {
    const engines = await detectLocalEngines();
    if (!engines.pico || !engines.espeak?.mbrolaDbs.includes('es1'))
      return t.skip('pico2wave or the MBROLA es1 voice is not installed');
    const voices = (await call(org, 'GET', '/v2/voices?provider=local')).json();
    const pico = voices.find((v: any) => v.id === 'pico-es');
    assert.ok(pico, 'pico-es is listed');
    assert.equal(pico.labels.engine, 'pico');
    assert.equal(pico.labels.language, 'es');
    const res = await call(org, 'POST', '/v2/tts', {
      script: 'Mi padre bebe mucho.',
      voiceId: 'pico-es',
      provider: 'local',
    });
    assert.equal(res.statusCode, 200, res.body);
    const timeline = (await call(org, 'GET', `/v2/assets/${res.json().id}/timeline`)).json();
    assert.deepEqual(
      timeline.words.map((w: any) => w.text),
      ['Mi', 'padre', 'bebe', 'mucho'],
    );
    assert.deepEqual(
      timeline.phonemes.filter((p: any) => ['p', 'b', 'm'].includes(p.phone)).map((p: any) => p.phone),
      ['m', 'p', 'b', 'b', 'm'],
    );
    assert.ok(Math.abs(timeline.phonemes.at(-1).endMs - res.json().duration * 1000) <= 40);
  });

  test('TTS request errors: script length, voice, provider, settings', async () => {
    const tooLong = 'a'.repeat(5001);
    assertError(
      await call(org, 'POST', '/v2/tts', { script: tooLong, voiceId: 'slt-hts' }),
      400,
      'invalid_request',
    );
    // Within 5,000 typed characters, but spoken one digit at a time it would last over 20 minutes.
    const digits = assertError(
      await call(org, 'POST', '/v2/tts', { script: '9'.repeat(5000), voiceId: 'slt-hts' }),
      400,
      'invalid_request',
    );
    assert.equal(digits.field, 'script');
    assert.match(digits.message, /spelled out/);
    assertError(
      await call(org, 'POST', '/v2/tts', { script: '   ', voiceId: 'slt-hts' }),
      400,
      'invalid_request',
    );
    const nf = assertError(
      await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: 'nobody', provider: 'local' }),
      422,
      'voice_not_found',
    );
    assert.equal(nf.field, 'voiceId');
    assertError(
      await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: 'alloy', provider: 'openai' }),
      400,
      'invalid_request',
    );
    assert.equal(
      (await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: 'slt-hts', stability: 2 })).statusCode,
      400,
    );
    assertError(
      await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' }),
      422,
      'voice_not_found',
    );
  });

  test('an operator-blocked voice is refused, and listed with its restriction', async () => {
    await t.services.voices.block('rhvoice-bdl', 'test');
    try {
      const b = assertError(
        await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: 'rhvoice-bdl' }),
        422,
        'voice_blocked',
      );
      assert.equal(b.field, 'voiceId');
      const listed = (await call(org, 'GET', '/v2/voices?provider=local')).json();
      const bdl = listed.find((v: any) => v.id === 'rhvoice-bdl');
      if (bdl) assert.equal(bdl.restriction.code, 'voice_blocked');
    } finally {
      await t.services.voices.unblock('rhvoice-bdl');
    }
  });

  test('asynchronous TTS: rollout flag, 202 + Location, job runs to SUCCESS, idempotent replay, conflict', async () => {
    assertError(
      await call(other, 'POST', '/v2/tts/jobs', { script: SCRIPT, voiceId: 'slt-hts' }),
      503,
      'tts_async_unavailable',
    );
    const body = { script: SCRIPT, voiceId: 'slt-hts', provider: 'local' };
    const first = await call(org, 'POST', '/v2/tts/jobs', body, { 'idempotency-key': 'tts-key-1' });
    assert.equal(first.statusCode, 202, first.body);
    const job = first.json();
    assert.equal(job.status, 'PENDING');
    assert.equal(job.url, null);
    assert.equal(first.headers.location, `/v2/tts/jobs/${job.id}`);
    assert.equal(first.headers['retry-after'], '3');
    const replay = await call(org, 'POST', '/v2/tts/jobs', body, { 'idempotency-key': 'tts-key-1' });
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotency-replayed'], 'true');
    assert.equal(replay.json().id, job.id);
    assertError(
      await call(
        org,
        'POST',
        '/v2/tts/jobs',
        { ...body, script: 'Something else.' },
        { 'idempotency-key': 'tts-key-1' },
      ),
      409,
      'IDEMPOTENCY_KEY_CONFLICT',
    );
    assertError(await call(other, 'GET', `/v2/tts/jobs/${job.id}`), 404, 'tts_job_not_found');

    const bg: Background = startBackground(t.services, { kinds: ['tts'] });
    try {
      let view: any;
      for (;;) {
        const res = await call(org, 'GET', `/v2/tts/jobs/${job.id}`);
        view = res.json();
        if (view.status === 'SUCCESS' || view.status === 'FAILED') {
          assert.equal(res.headers['retry-after'], undefined);
          break;
        }
        assert.equal(res.headers['retry-after'], '3');
        await t.services.bus.waitForChange(job.id, 500);
      }
      assert.equal(view.status, 'SUCCESS', JSON.stringify(view));
      assert.ok(view.duration > 1);
      assert.ok(view.startedAt && view.finishedAt);
      assert.equal(view.error, null);
      const tl = (await call(org, 'GET', `/v2/assets/${view.assetId}/timeline`)).json();
      assert.equal(tl.words[0].text.toLowerCase(), 'bob');
      const wav = await saveSigned(view.url, 'job.wav');
      assert.ok((await measureVoiceProfile(wav, { workDir: scratch })).voicedSeconds > 0.5);
      // A replay after the job ran answers its current state.
      const later = await call(org, 'POST', '/v2/tts/jobs', body, { 'idempotency-key': 'tts-key-1' });
      assert.equal(later.json().status, 'SUCCESS');
    } finally {
      await bg.stop();
    }
  });

  test('local clone: the synthesized pitch moves to within 1 semitone of the sample speaker', async () => {
    const sample = await uploadAsset(org, fixture('media/latentsync_demo1.wav'));
    const res = await call(org, 'POST', '/v2/voices', { name: 'Demo speaker', assetId: sample.id });
    assert.equal(res.statusCode, 201, res.body);
    const voice = res.json();
    assert.equal(voice.type, 'cloned');
    assert.equal(voice.provider, 'local');
    assert.ok(voice.baseVoice);
    const listed = (await call(org, 'GET', '/v2/voices')).json();
    assert.ok(listed.some((v: any) => v.id === voice.id));
    assert.equal((await call(org, 'GET', `/v2/voices/${voice.id}`)).json().name, 'Demo speaker');

    const tts = await call(org, 'POST', '/v2/tts', {
      script: 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.',
      voiceId: voice.id,
    });
    assert.equal(tts.statusCode, 200, tts.body);
    const wav = await saveSigned(tts.json().url, 'clone.wav');
    const got = await measureVoiceProfile(wav, { workDir: scratch });
    const target = await measureVoiceProfile(fixture('media/latentsync_demo1.wav'), { workDir: scratch });
    const d = semitones(target.profile.pitchMedianHz, got.profile.pitchMedianHz);
    assert.ok(
      Math.abs(d) <= 1,
      `pitch ${got.profile.pitchMedianHz} Hz vs sample ${target.profile.pitchMedianHz} Hz`,
    );

    // Same name (any case) -> 409; another organization cannot use or see it.
    assertError(
      await call(org, 'POST', '/v2/voices', { name: 'demo SPEAKER', assetId: sample.id }),
      409,
      'voice_name_conflict',
    );
    assertError(
      await call(other, 'POST', '/v2/tts', { script: SCRIPT, voiceId: voice.id }),
      400,
      'voice_access_denied',
    );
    assertError(await call(other, 'GET', `/v2/voices/${voice.id}`), 400, 'voice_access_denied');
    assertError(await call(other, 'DELETE', `/v2/voices/${voice.id}`), 400, 'voice_access_denied');

    const del = await call(org, 'DELETE', `/v2/voices/${voice.id}`);
    assert.equal(del.statusCode, 200);
    assert.equal(del.json(), true);
    assertError(await call(org, 'GET', `/v2/voices/${voice.id}`), 404, 'voice_not_found');
    assertError(
      await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: voice.id }),
      422,
      'voice_not_found',
    );
    assertError(await call(org, 'DELETE', '/v2/voices/slt-hts'), 422, 'voice_not_deletable');
  });

  test('clone sample errors: foreign URL, bad signature, too short, image, both or neither, slots', async () => {
    assertError(
      await call(org, 'POST', '/v2/voices', { name: 'x1', url: 'https://example.com/voice.wav' }),
      422,
      'voice_sample_upload_required',
    );
    const up = await uploadAsset(org, fixture('media/hello.wav'));
    const forged = up.url.replace(/sig=[0-9a-f]+/, `sig=${'0'.repeat(64)}`);
    assertError(
      await call(org, 'POST', '/v2/voices', { name: 'x2', url: forged }),
      422,
      'voice_sample_not_accessible',
    );
    assertError(
      await call(org, 'POST', '/v2/voices', { name: 'x3', assetId: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' }),
      422,
      'voice_sample_not_accessible',
    );
    // hello.wav holds under a second of voiced speech: the refusal says how much, and what is needed.
    const short = assertError(
      await call(org, 'POST', '/v2/voices', { name: 'x4', url: up.url }),
      400,
      'voice_sample_too_short',
    );
    assert.match(short.message, /holds 0\.\d s of voiced speech in 2\.8 s; a clone needs at least 2 s/);
    assert.match(short.suggestion, /at least 2 s of voiced speech/);
    assert.equal((await call(org, 'POST', '/v2/voices', { name: 'x5' })).statusCode, 400);
    assert.equal(
      (await call(org, 'POST', '/v2/voices', { name: 'x6', url: up.url, assetId: up.id })).statusCode,
      400,
    );
    assertError(
      await call(org, 'POST', '/v2/voices', { name: 'x7', assetId: up.id, provider: 'openai' }),
      400,
      'invalid_request',
    );
    // The free plan keeps one clone.
    const s1 = await uploadAsset(other, fixture('media/radio_speech.wav'));
    const c1 = await call(other, 'POST', '/v2/voices', { name: 'first', assetId: s1.id });
    assert.equal(c1.statusCode, 201, c1.body);
    assertError(
      await call(other, 'POST', '/v2/voices', { name: 'second', assetId: s1.id }),
      403,
      'voice_clone_limit_reached',
    );
    // A video sample works (its soundtrack is used), down to 2 s of voiced speech: face_1.mp4 is a 6.1 s
    // clip with 2.2 s voiced.
    await call(other, 'DELETE', `/v2/voices/${c1.json().id}`);
    const v = await uploadAsset(other, fixture('media/face_1.mp4'));
    const c2 = await call(other, 'POST', '/v2/voices', { name: 'from video', assetId: v.id });
    assert.equal(c2.statusCode, 201, c2.body);
  });

  test('verification: with LIPSYNC_VOICE_CLONE_VERIFICATION a clone waits for `voice verify`', async () => {
    const strict = await createTestServices({
      shareDatabaseWith: t,
      env: { LIPSYNC_VOICE_CLONE_VERIFICATION: '1' },
    });
    try {
      const sample = await uploadAsset(org, fixture('media/radio_speech.wav'));
      const res = await strict.app.inject({
        method: 'POST',
        url: '/v2/voices',
        headers: org.owner.headers,
        payload: { name: 'Needs consent', assetId: sample.id },
      });
      assert.equal(res.statusCode, 201, res.body);
      const voice = res.json();
      assert.equal(voice.restriction.code, 'voice_verification_required');
      const refused = await strict.app.inject({
        method: 'POST',
        url: '/v2/tts',
        headers: org.owner.headers,
        payload: { script: SCRIPT, voiceId: voice.id },
      });
      assertError(refused, 422, 'voice_verification_required');
      assert.equal(await strict.services.voices.verify(voice.id), true);
      const ok = await strict.app.inject({
        method: 'POST',
        url: '/v2/tts',
        headers: org.owner.headers,
        payload: { script: SCRIPT, voiceId: voice.id },
      });
      assert.equal(ok.statusCode, 200, ok.body);
      await call(org, 'DELETE', `/v2/voices/${voice.id}`);
    } finally {
      await strict.cleanup();
    }
  });

  test('text input of POST /v2/generate: synthesized at submit, stored as a TTS asset with its timeline', async () => {
    const res = await call(org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [
        { type: 'video', url: 'http://unused.invalid/x.mp4' },
        { type: 'text', provider: { name: 'local', voiceId: 'slt-hts', script: SCRIPT } },
      ],
    });
    // The video URL is not reachable: refused, and the synthesized speech is not left behind.
    assert.equal(res.statusCode, 422, res.body);
    const video = await uploadAsset(org, fixture('media/face_1.mp4'));
    const before = (await call(org, 'GET', '/v2/assets?limit=100')).json().totalCount;
    const ok = await call(org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video.id },
        { type: 'text', provider: { name: 'local', voiceId: 'slt-hts', script: SCRIPT, stability: 0.5 } },
      ],
    });
    assert.equal(ok.statusCode, 201, ok.body);
    const g = ok.json();
    const textItem = g.input.find((i: any) => i.type === 'text');
    assert.equal(textItem.provider.voiceId, 'slt-hts');
    assert.match(textItem.assetId, /^[0-9a-f-]{36}$/);
    assert.equal((await call(org, 'GET', '/v2/assets?limit=100')).json().totalCount, before + 1);
    const stored = await t.services.store.generations.findAny(g.id);
    const audio = (stored?.resolvedInput as any).audio;
    assert.equal(audio.timeline.words[0].text.toLowerCase(), 'bob');
    await t.services.generations.cancel(g.id);

    // Multipart: a video file and the text input as a JSON field go the same way.
    const form = await encodeForm([
      { name: 'model', value: 'lipsync-2' },
      {
        name: 'input',
        value: JSON.stringify([
          { type: 'text', provider: { name: 'local', voiceId: 'slt-hts', script: SCRIPT } },
        ]),
      },
      { name: 'video', file: fixture('media/face_1.mp4') },
    ]);
    const multi = await t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: { ...org.owner.headers, ...form.headers },
      payload: form.payload,
    });
    assert.equal(multi.statusCode, 201, multi.body);
    assert.ok(multi.json().input.some((i: any) => i.type === 'text' && i.assetId));
    await t.services.generations.cancel(multi.json().id);

    const bad = await call(org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video.id },
        { type: 'text', provider: { name: 'local', voiceId: 'nobody', script: SCRIPT } },
      ],
    });
    const e = assertError(bad, 422, 'voice_not_found');
    assert.equal(e.field, 'input[1].provider.voiceId');
    const both = await call(org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video.id },
        { type: 'audio', assetId: video.id },
        { type: 'text', provider: { name: 'local', voiceId: 'slt-hts', script: SCRIPT } },
      ],
    });
    assert.equal(both.statusCode, 400);
  });
});
