// A dub's translation through the remote providers, as users configure them: a real `lipsync serve`
// whose OpenAI-compatible and DeepL providers point at protocol-level fakes on this machine. The
// translation lands in the transcript; outages end the generation with the documented codes after
// the job's retries; a sentence that comes back empty is the client's dubbing_translation_failed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  FakeDeepLServer,
  FakeOpenAiChatServer,
  fakeTranslate,
  type FakeTranslationMode,
} from '../helpers/fake-translation-servers.js';
import { api, createGeneration, waitDone } from './generations-support.js';
import { HELLO, helloAsset, startDubServer, type DubServer } from './dubbing-support.js';

const KEY = 'translation-key';

describe('dubbing with remote translation providers', { timeout: 600_000 }, () => {
  let s: DubServer;
  let video: string;
  let openai: FakeOpenAiChatServer;
  let deepl: FakeDeepLServer;

  before(async () => {
    openai = await new FakeOpenAiChatServer(KEY).start();
    deepl = await new FakeDeepLServer(KEY).start();
    s = await startDubServer('dub-translation', {
      LIPSYNC_JOB_MAX_ATTEMPTS: '2',
      LIPSYNC_TRANSLATION_TIMEOUT_SECONDS: '2',
      LIPSYNC_OPENAI_TRANSLATION_URL: `${openai.url}/v1`,
      LIPSYNC_OPENAI_TRANSLATION_API_KEY: KEY,
      LIPSYNC_OPENAI_TRANSLATION_MODEL: 'fake-model',
      LIPSYNC_DEEPL_API_KEY: KEY,
      LIPSYNC_DEEPL_URL: deepl.url,
    });
    video = await helloAsset(s);
  });
  after(async () => {
    await s?.stop();
    await openai?.close();
    await deepl?.close();
  });

  async function dub(provider: 'openai' | 'deepl'): Promise<{ id: string; g: any }> {
    const id = await createGeneration(s.server, s.org, {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video }],
      dubParams: { targetLang: 'es', sourceLang: 'en', provider, transcript: HELLO },
    });
    return { id, g: await waitDone(s.server, s.org, id, 300_000) };
  }

  for (const provider of ['openai', 'deepl'] as const) {
    test(`${provider}: the provider's translation is what is spoken and shown`, async () => {
      const fake = provider === 'openai' ? openai : deepl;
      fake.setMode('ok');
      const before = fake.requests.length;
      const { id, g } = await dub(provider);
      assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
      assert.ok(fake.requests.length > before, 'the provider was asked');
      const t = (await api(s.server, s.org, 'GET', `/v2/generations/${id}/transcript`)).json;
      assert.equal(t.provider, provider);
      assert.deepEqual(
        t.segments.map((x: any) => x.translatedText),
        ['Hello world.', 'Good morning.'].map(fakeTranslate),
      );
    });
  }

  const outages: [FakeTranslationMode, string][] = [
    ['hang', 'provider_service_unavailable'],
    ['invalid_key', 'provider_service_unavailable'],
    ['rate_limited', 'provider_service_unavailable'],
    ['server_error', 'provider_service_unavailable'],
    ['garbage', 'provider_service_unavailable'],
  ];
  for (const [mode, code] of outages) {
    test(`openai ${mode}: the generation fails with ${code} after its retries, with nothing of the provider shown`, async () => {
      openai.setMode(mode);
      const before = openai.requests.length;
      const { g } = await dub('openai');
      openai.setMode('ok');
      assert.equal(g.status, 'FAILED', JSON.stringify(g));
      assert.equal(g.errorCode, code);
      // Two attempts (a rate limit is also retried once inside each).
      assert.ok(openai.requests.length - before >= 2, `${openai.requests.length - before} requests`);
      assert.doesNotMatch(JSON.stringify(g), new RegExp(`${KEY}|127\\.0\\.0\\.1|fake-model`));
    });
  }

  test('a sentence translated to nothing fails the dub at once with dubbing_translation_failed', async () => {
    deepl.setMode('empty_text');
    const before = deepl.requests.length;
    const { g } = await dub('deepl');
    deepl.setMode('ok');
    assert.equal(g.status, 'FAILED', JSON.stringify(g));
    assert.equal(g.errorCode, 'dubbing_translation_failed');
    assert.equal(deepl.requests.length - before, 1, 'not retried: it would fail the same way');
  });
});
