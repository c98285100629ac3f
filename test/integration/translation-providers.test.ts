// The HTTP translation providers (OpenAI-compatible chat, DeepL) against protocol-level fakes of their
// services: the request each protocol expects, batching, and every failure as a TranslationError and
// then as the client's error (timeouts 504, outages and rate limits 503 with Retry-After, the server's
// own rejected key an outage, malformed or short answers, an empty translation a 422).
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FakeDeepLServer,
  FakeOpenAiChatServer,
  fakeTranslate,
  type FakeTranslationMode,
} from '../helpers/fake-translation-servers.js';
import { OpenAiTranslationProvider } from '../../src/translation/openai.js';
import { DeepLTranslationProvider, deeplBaseUrl } from '../../src/translation/deepl.js';
import { translationAppError } from '../../src/translation/errors.js';
import { TranslationError, type TranslationProvider } from '../../src/translation/types.js';

const KEY = 'sk-provider-secret';
const SEGMENTS = [
  { id: 's1', text: 'Hello world, 42 times!' },
  { id: 's2', text: 'Good   morning, Maria.' },
  { id: 's3', text: 'Hello.' },
];

async function failure(p: TranslationProvider, from: string | null = 'en'): Promise<TranslationError> {
  try {
    await p.translate(SEGMENTS, { from, to: 'es' });
  } catch (err) {
    assert.ok(err instanceof TranslationError, String(err));
    assert.ok(!err.message.includes(KEY), 'the key never appears in an error');
    return err;
  }
  assert.fail('the translation should have failed');
}

// Each failure mode: the TranslationError's reason, then the client's status and code.
const FAILURES: [FakeTranslationMode, string, number, string][] = [
  ['invalid_key', 'key_invalid', 503, 'provider_service_unavailable'],
  ['rate_limited', 'rate_limited', 503, 'provider_service_unavailable'],
  ['server_error', 'unavailable', 503, 'provider_service_unavailable'],
  ['garbage', 'malformed', 503, 'provider_service_unavailable'],
  ['wrong_count', 'malformed', 503, 'provider_service_unavailable'],
  ['empty_text', 'untranslatable', 422, 'dubbing_translation_failed'],
  ['hang', 'timeout', 504, 'provider_service_unavailable'],
];

for (const kind of ['openai', 'deepl'] as const) {
  describe(`${kind} translation provider`, () => {
    let server: FakeOpenAiChatServer | FakeDeepLServer;
    let provider: TranslationProvider;

    before(async () => {
      server = await (kind === 'openai' ? new FakeOpenAiChatServer(KEY) : new FakeDeepLServer(KEY)).start();
      provider =
        kind === 'openai'
          ? new OpenAiTranslationProvider({
              baseUrl: server.url,
              apiKey: KEY,
              model: 'test-model',
              timeoutMs: 500,
              allowPrivate: true,
              batchSize: 2,
            })
          : new DeepLTranslationProvider({
              apiKey: KEY,
              baseUrl: server.url,
              timeoutMs: 500,
              allowPrivate: true,
            });
    });
    after(() => server.close());
    beforeEach(() => {
      server.setMode('ok');
      server.requests.length = 0;
    });

    test('translates every segment in order, same ids, whitespace tidied', async () => {
      const out = await provider.translate(SEGMENTS, { from: 'en', to: 'es' });
      assert.deepEqual(
        out,
        SEGMENTS.map((s) => ({ id: s.id, text: fakeTranslate(s.text.replace(/\s+/g, ' ')) })),
      );
      assert.equal(out[0]!.text, 'hola mundo, 42 times!');
      const first = server.requests[0]!;
      if (kind === 'openai') {
        assert.equal(first.path, '/v1/chat/completions');
        assert.equal(first.headers.authorization, `Bearer ${KEY}`);
        assert.equal(first.json.model, 'test-model');
        assert.match(first.json.messages[0].content, /from English into Spanish/);
        // batchSize 2: two requests for three segments.
        assert.equal(server.requests.length, 2);
        assert.deepEqual(JSON.parse(server.requests[1]!.json.messages[1].content), ['Hello.']);
      } else {
        assert.equal(first.path, '/v2/translate');
        assert.equal(first.headers.authorization, `DeepL-Auth-Key ${KEY}`);
        assert.equal(first.json.target_lang, 'ES');
        assert.equal(first.json.source_lang, 'EN');
        assert.equal(server.requests.length, 1);
        assert.equal(first.json.text.length, 3);
      }
    });

    test('an unknown source is left to the provider', async () => {
      await provider.translate(SEGMENTS.slice(0, 1), { from: null, to: 'es' });
      const req = server.requests[0]!;
      if (kind === 'deepl') assert.equal(req.json.source_lang, undefined);
      else assert.doesNotMatch(req.json.messages[0].content, / from /);
    });

    test('one 429 is retried after Retry-After', async () => {
      server.setMode('rate_limited', 1);
      const out = await provider.translate(SEGMENTS.slice(0, 1), { from: 'en', to: 'es' });
      assert.equal(out[0]!.text, 'hola mundo, 42 times!');
      assert.equal(server.requests.length, 2);
    });

    for (const [mode, reason, status, code] of FAILURES) {
      test(`${mode}: ${reason}, then ${status} ${code}`, async () => {
        server.setMode(mode);
        const err = await failure(provider);
        assert.equal(err.reason, reason);
        const app = translationAppError(err);
        assert.equal(app.status, status);
        assert.equal(app.code, code);
        assert.ok(!app.message.includes(KEY));
        if (status === 503 || status === 504) assert.ok(app.extras.headers?.['Retry-After']);
        if (mode === 'empty_text') assert.equal(err.segmentId, 's1');
      });
    }

    if (kind === 'deepl') {
      test("DeepL's 456 (quota) is the server's outage", async () => {
        server.setMode('quota');
        const err = await failure(provider);
        assert.equal(err.reason, 'quota');
        assert.equal(translationAppError(err).status, 503);
      });
    }
  });
}

test('an unreachable server is an outage', async () => {
  const gone = await new FakeDeepLServer(KEY).start();
  const url = gone.url;
  await gone.close();
  const p = new DeepLTranslationProvider({ apiKey: KEY, baseUrl: url, timeoutMs: 2000, allowPrivate: true });
  const err = await failure(p);
  assert.equal(err.reason, 'unavailable');
  assert.equal(translationAppError(err).status, 503);
});

test('DeepL picks the free or pro API from the key', () => {
  assert.equal(deeplBaseUrl('abc:fx', null), 'https://api-free.deepl.com');
  assert.equal(deeplBaseUrl('abc', null), 'https://api.deepl.com');
  assert.equal(deeplBaseUrl('abc:fx', 'http://x'), 'http://x');
});
