// GET /v2/dubbing/languages on this server (the installed Apertium pairs, DeepL configured, no
// OpenAI-compatible chat server), and the pair check every dub passes: 422
// dubbing_language_unsupported naming what the provider supports, in the spec's error body.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { FakeDeepLServer } from '../helpers/fake-translation-servers.js';
import { AppError } from '../../src/domain/errors.js';
import { appErrorBody } from '../../src/http/error-body.js';

const DEEPL_KEY = 'deepl-test-key:fx';

describe('dubbing languages', () => {
  let t: TestServices;
  let org: TestOrg;
  let deepl: FakeDeepLServer;

  before(async () => {
    deepl = await new FakeDeepLServer(DEEPL_KEY).start();
    t = await createTestServices({
      env: {
        LIPSYNC_DEEPL_API_KEY: DEEPL_KEY,
        LIPSYNC_DEEPL_URL: deepl.url,
        LIPSYNC_ALLOW_PRIVATE_URLS: 'true',
      },
    });
    org = await createOrgWithKey(t.services);
  });
  after(async () => {
    await t.cleanup();
    await deepl.close();
  });

  test('lists source and target languages per provider with quality notes', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/v2/dubbing/languages',
      headers: org.owner.headers,
    });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    const byName = Object.fromEntries(body.providers.map((p: any) => [p.provider, p]));
    assert.deepEqual(Object.keys(byName).sort(), ['deepl', 'local', 'openai']);
    const local = byName.local;
    assert.equal(local.available, true);
    const targetsFromEnglish = local.pairs.filter((r: any) => r.from === 'en').map((r: any) => r.to);
    for (const code of ['es', 'ca', 'gl', 'eo', 'sr', 'hr', 'bs', 'pt', 'it', 'fr'])
      assert.ok(targetsFromEnglish.includes(code), `en>${code}`);
    const es = local.pairs.find((r: any) => r.from === 'en' && r.to === 'es');
    assert.equal(es.quality, 'direct');
    const pt = local.pairs.find((r: any) => r.from === 'en' && r.to === 'pt');
    assert.equal(pt.quality, 'pivot');
    assert.equal(pt.via, 'es');
    assert.match(pt.note, /lower quality/);
    assert.ok(local.targets.some((l: any) => l.code === 'ca' && l.name === 'Catalan'));
    assert.equal(byName.deepl.available, true);
    assert.ok(byName.deepl.targets.some((l: any) => l.code === 'pt-br'));
    assert.equal(byName.deepl.pairs, undefined);
    assert.equal(byName.openai.available, false);
  });

  test('needs an API key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/dubbing/languages' });
    assert.equal(res.statusCode, 401);
  });

  test('an unsupported pair is a 422 that lists what the provider supports', () => {
    const check = (provider: 'local' | 'openai' | 'deepl', from: string | null, to: string): any => {
      try {
        t.services.translation.checkPair(provider, from, to);
      } catch (err) {
        assert.ok(err instanceof AppError);
        return appErrorBody(err);
      }
      assert.fail(`${provider} ${from}>${to} should be refused`);
    };
    const ja = check('local', 'auto', 'ja');
    assert.equal(ja.statusCode, 422);
    assert.equal(ja.errorCode, 'dubbing_language_unsupported');
    assert.equal(ja.field, 'dubParams.targetLang');
    assert.match(ja.message, /into: .*\bca\b.*\bes\b/);
    assert.ok(ja.supported.targets.includes('es'));
    assert.ok(ja.supported.pairs.includes('en>ca'));
    // German is no local source; a pivot target with no way there from Galician.
    assert.equal(check('local', 'de', 'es').field, 'dubParams.sourceLang');
    assert.match(check('local', 'gl', 'ca').message, /from gl it translates into: en/);
    assert.equal(check('openai', 'en', 'es').field, 'dubParams.provider');
    assert.equal(check('deepl', 'en', 'en').field, 'dubParams.targetLang');
  });

  test('a supported pair passes and translates through the service', async () => {
    const local = t.services.translation.checkPair('local', 'auto', 'ES');
    assert.deepEqual([local.from, local.to, local.route?.quality], ['en', 'es', 'direct']);
    const out = await t.services.translation.translate(local, [{ id: '1', text: 'Good morning, Maria.' }]);
    assert.equal(out[0]!.text, 'Buenos días, Maria.');
    const remote = t.services.translation.checkPair('deepl', null, 'pt-BR');
    assert.deepEqual([remote.from, remote.to], [null, 'pt-br']);
    const viaDeepl = await t.services.translation.translate(remote, [{ id: '1', text: 'Hello world' }]);
    assert.equal(viaDeepl[0]!.text, 'hola mundo');
    assert.equal(deepl.requests.at(-1)!.json.target_lang, 'PT-BR');
    deepl.setMode('server_error');
    await assert.rejects(
      t.services.translation.translate(remote, [{ id: '1', text: 'Hello' }]),
      (err) => err instanceof AppError && err.status === 503 && err.code === 'provider_service_unavailable',
    );
  });
});
