// A dub spoken by the voice the client chose (dubParams.voiceId, docs/dubbing.md "Choosing the
// voice"): a real `lipsync serve` whose ElevenLabs and openai-compatible providers are the
// protocol-level fakes (they answer with real speech), Apertium for the translation and the cpu
// engine. Two people speak English in the source; the chosen voice speaks for both. Provider failures
// during the dub end the generation with the text-to-speech codes: outages retried, the client's
// problems not. Local voices: one of the target language is used as chosen, a local clone's profile
// goes onto one, an English built-in voice is refused.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { fixture } from '../helpers/paths.js';
import type { TestServer } from '../helpers/index.js';
import {
  FakeElevenLabsServer,
  FakeOpenAiServer,
  type FakeMode,
  type FakeSpeechServer,
} from '../helpers/fake-speech-servers.js';
import { ORG_KEY, SERVER_KEY } from '../helpers/speech-results.js';
import { api, uploadOverHttp, waitDone, type E2eOrg } from './generations-support.js';
import { englishSpeech, startDubServer, type DubServer } from './dubbing-support.js';

const run = promisify(execFile);
const ELEVEN_KEY = 'xi-server-4d1e0f3a7b2c9d51';
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const FIRST = 'Good morning to all of you.';
const SECOND = 'Thank you very much indeed.';
const SECRETS = [SERVER_KEY, ELEVEN_KEY, ORG_KEY];

const synthesisRequests = (fake: FakeSpeechServer) =>
  fake.requests.filter((r) => r.method === 'POST' && /\/v1\/(audio\/speech|text-to-speech\/)/.test(r.path));

describe('dubbing with a chosen voice', { timeout: 900_000 }, () => {
  let s: DubServer;
  let server: TestServer;
  let org: E2eOrg;
  let eleven: FakeElevenLabsServer;
  let openai: FakeOpenAiServer;
  /** The two-person English source video (an asset of `org`). */
  let video: string;

  before(async () => {
    [eleven, openai] = await Promise.all([
      new FakeElevenLabsServer({ keys: [ELEVEN_KEY] }).start(),
      new FakeOpenAiServer({ keys: [SERVER_KEY, ORG_KEY] }).start(),
    ]);
    s = await startDubServer('dub-voice', {
      // Two attempts: an outage is retried once, a client's problem is not.
      LIPSYNC_JOB_MAX_ATTEMPTS: '2',
      LIPSYNC_TTS_TIMEOUT_SECONDS: '8',
      LIPSYNC_ELEVENLABS_ENABLED: 'true',
      LIPSYNC_ELEVENLABS_URL: eleven.url,
      LIPSYNC_ELEVENLABS_API_KEY: ELEVEN_KEY,
      // English-only: a Spanish dub must take the multilingual model instead.
      LIPSYNC_ELEVENLABS_MODEL: 'eleven_flash_v2',
      LIPSYNC_OPENAI_TTS_URL: openai.url,
      LIPSYNC_OPENAI_TTS_API_KEY: SERVER_KEY,
    });
    ({ server, org } = s);
    const { dir } = s;
    const a = await englishSpeech(server, org, dir, 'first', FIRST, 300);
    const b = await englishSpeech(server, org, dir, 'second', SECOND, 4200, true);
    const src = join(dir, 'two.mp4');
    await run('ffmpeg', [
      ...['-v', 'error', '-y', '-stream_loop', '2', '-i', fixture('media/face_3.mp4'), '-i', a, '-i', b],
      ...[
        '-filter_complex',
        '[1:a]apad[a1];[2:a]apad[a2];[a1][a2]amix=inputs=2:duration=longest:normalize=0[a]',
      ],
      ...['-map', '0:v', '-map', '[a]', '-t', '8', '-vf', 'scale=320:320,fps=25'],
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-c:a', 'aac', src],
    ]);
    video = await uploadOverHttp(server, org, src);
  });
  after(async () => {
    await s?.stop();
    await Promise.all([eleven?.close(), openai?.close()]);
  });

  const dub = (voiceId: string) =>
    api(server, org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video }],
      dubParams: { targetLang: 'es', sourceLang: 'en', voiceId, transcript: `${FIRST} ${SECOND}` },
    });

  async function completed(id: string): Promise<any> {
    await s.completed(id, 400_000);
    const t = await api(server, org, 'GET', `/v2/generations/${id}/transcript`);
    assert.equal(t.status, 200, t.text);
    assert.equal(new Set(t.json.segments.map((x: any) => x.speaker)).size, 2, t.text);
    return t.json;
  }

  test('an ElevenLabs voice speaks for both people, through the multilingual model', async () => {
    eleven.reset();
    const r = await dub(RACHEL);
    assert.equal(r.status, 201, r.text);
    const t = await completed(r.json.id);
    assert.equal(t.voices.length, 2);
    for (const v of t.voices)
      assert.deepEqual(
        { provider: v.provider, voiceId: v.voiceId, name: v.name, matched: v.matched },
        { provider: 'elevenlabs', voiceId: RACHEL, name: 'Rachel', matched: false },
      );
    const calls = synthesisRequests(eleven);
    assert.equal(calls.length, t.segments.length);
    for (const [i, c] of calls.entries()) {
      assert.ok(c.path.startsWith(`/v1/text-to-speech/${RACHEL}/with-timestamps`), c.path);
      assert.equal(c.headers['xi-api-key'], ELEVEN_KEY);
      const body = JSON.parse(c.body.toString('utf8'));
      assert.equal(body.model_id, 'eleven_multilingual_v2');
      assert.equal(body.language_code, undefined, 'multilingual_v2 takes no language_code');
      assert.equal(body.text, t.segments[i].translatedText);
    }
    // The provider's character times became the dub's words, inside the spans where it is heard.
    assert.ok(t.timeline.words.length >= 4, JSON.stringify(t.timeline.words));
    const first = t.segments[0];
    const inFirst = t.timeline.words.filter((w: any) => w.startMs < first.dubEndMs);
    assert.ok(inFirst.length >= 2);
    for (const w of inFirst) assert.ok(w.startMs >= first.dubStartMs - 1 && w.endMs <= first.dubEndMs + 1);
  });

  test("an openai voice with the organization's own key", async () => {
    const put = await api(server, org, 'PUT', '/v2/organizations/provider-keys/openai', { apiKey: ORG_KEY });
    assert.equal(put.status, 200, put.text);
    openai.reset();
    try {
      const r = await dub('nova');
      assert.equal(r.status, 201, r.text);
      const t = await completed(r.json.id);
      assert.deepEqual(
        t.voices.map((v: any) => [v.provider, v.voiceId]),
        [
          ['openai', 'nova'],
          ['openai', 'nova'],
        ],
      );
      const calls = synthesisRequests(openai);
      assert.equal(calls.length, t.segments.length);
      for (const [i, c] of calls.entries()) {
        assert.equal(c.headers.authorization, `Bearer ${ORG_KEY}`);
        const body = JSON.parse(c.body.toString('utf8'));
        assert.equal(body.voice, 'nova');
        assert.equal(body.input, t.segments[i].translatedText);
      }
      assert.ok(t.timeline.phonemes.length > 0 || t.timeline.words.length === 0);

      // The organization's own key rejected: its to fix, so no retry.
      openai.reset();
      const bad = await dub('nova');
      assert.equal(bad.status, 201, bad.text);
      openai.setMode('invalid_key');
      const done = await waitDone(server, org, bad.json.id, 400_000);
      assert.equal(done.status, 'FAILED', JSON.stringify(done));
      assert.equal(done.errorCode, 'provider_api_key_invalid');
      assert.equal(synthesisRequests(openai).length, 1);
      for (const k of SECRETS) assert.ok(!JSON.stringify(done).includes(k));
    } finally {
      openai.reset();
      await api(server, org, 'DELETE', '/v2/organizations/provider-keys/openai');
    }
  });

  // ElevenLabs failing during the dub (the server's key): outages are retried, then the code says so.
  const FAILURES: [FakeMode, string, number][] = [
    ['hang', 'provider_service_unavailable', 2],
    ['invalid_key', 'provider_service_unavailable', 2],
    ['rate_limited', 'provider_service_unavailable', 2],
    ['server_error', 'provider_service_unavailable', 2],
    ['quota', 'provider_quota_exceeded', 1],
  ];
  for (const [mode, code, attempts] of FAILURES) {
    test(`ElevenLabs ${mode} during the dub -> ${code}`, async () => {
      eleven.reset();
      const r = await dub(RACHEL);
      assert.equal(r.status, 201, r.text);
      // The submit found the voice (a listing); from here every request misbehaves.
      eleven.setMode(mode);
      try {
        const done = await waitDone(server, org, r.json.id, 400_000);
        assert.equal(done.status, 'FAILED', JSON.stringify(done));
        assert.equal(done.errorCode, code, JSON.stringify(done));
        // One synthesis per attempt: the first sentence fails each.
        assert.equal(synthesisRequests(eleven).length, attempts);
        const text = JSON.stringify(done);
        for (const k of SECRETS) assert.ok(!text.includes(k), `a key in ${text}`);
        assert.doesNotMatch(text, /quota of 10000|Too many concurrent|Internal server error|Invalid API key/);
      } finally {
        eleven.reset();
      }
    });
  }

  test('a local voice of the target language speaks for both; an English one is refused', async () => {
    const r = await dub('espeak-es1');
    assert.equal(r.status, 201, r.text);
    const t = await completed(r.json.id);
    assert.deepEqual(
      t.voices.map((v: any) => [v.provider, v.voiceId]),
      [
        ['local', 'espeak-es1'],
        ['local', 'espeak-es1'],
      ],
    );

    // A local clone (its base voice English): its profile on a Spanish voice, for both people.
    const clone = await api(server, org, 'POST', '/v2/voices', {
      name: 'Presenter',
      provider: 'local',
      assetId: video,
    });
    assert.equal(clone.status, 201, clone.text);
    const c = await dub(clone.json.id);
    assert.equal(c.status, 201, c.text);
    const ct = await completed(c.json.id);
    assert.deepEqual(
      ct.voices.map((v: any) => [v.provider, v.voiceId, v.name, v.matched]),
      [
        ['local', clone.json.id, 'Presenter', true],
        ['local', clone.json.id, 'Presenter', true],
      ],
    );

    const english = await dub('slt-hts');
    assert.equal(english.status, 422, english.text);
    assert.equal(english.json.errorCode, 'dubbing_voice_unavailable');
    assert.equal(english.json.field, 'dubParams.voiceId');
    assert.match(english.json.message, /slt-hts does not speak es.*espeak-es2/);

    const unknown = await dub('no-such-voice');
    assert.equal(unknown.status, 422, unknown.text);
    assert.equal(unknown.json.errorCode, 'voice_not_found');
    assert.equal(unknown.json.field, 'dubParams.voiceId');
  });
});
