// test-database: none
// The HTTP synthesis providers (openai, elevenlabs) against protocol-level fakes of their APIs that
// answer with real festival speech: the audio we keep, the timelines, the requests as sent (keys,
// bodies), every failure mapped onto its SpeechProviderError reason, and the outgoing policy.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, beforeEach, describe, it } from 'node:test';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { alignTranscript } from '../../src/speech/align.js';
import { ElevenLabsSpeechProvider } from '../../src/speech/elevenlabs-provider.js';
import { OPENAI_DEFAULT_VOICES, OpenAiSpeechProvider } from '../../src/speech/openai-provider.js';
import { FakeElevenLabsServer, FakeOpenAiServer } from '../helpers/fake-speech-servers.js';
import {
  assertGoodResult,
  failsWith,
  MODES,
  ORG_KEY,
  SCRIPT,
  SERVER_KEY,
} from '../helpers/speech-results.js';

describe('openai-compatible speech provider', () => {
  let fake: FakeOpenAiServer;
  let workDir: string;
  let provider: OpenAiSpeechProvider;
  const make = (over: Partial<ConstructorParameters<typeof OpenAiSpeechProvider>[0]> = {}) =>
    new OpenAiSpeechProvider({
      baseUrl: fake.url,
      apiKey: SERVER_KEY,
      allowPrivate: true,
      align: alignTranscript,
      ...over,
    });
  const synth = (p: OpenAiSpeechProvider, extra: { apiKey?: string; voice?: string } = {}) =>
    p.synthesize({
      text: SCRIPT,
      providerVoiceId: extra.voice ?? 'nova',
      settings: { speed: 1.1, stability: 0.2 },
      apiKey: extra.apiKey,
      workDir,
    });

  before(async () => {
    fake = await new FakeOpenAiServer({ keys: [SERVER_KEY, ORG_KEY] }).start();
    workDir = await makeTempDir('speech-openai-');
    provider = make();
  });
  after(async () => {
    await fake.close();
    await removeTempDir(workDir);
  });
  beforeEach(() => fake.reset());

  it('synthesizes a mono WAV whose timeline has the words of the script', async () => {
    const r = await synth(provider);
    await assertGoodResult(r, SCRIPT);
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req.path, '/v1/audio/speech');
    assert.equal(req.headers.authorization, `Bearer ${SERVER_KEY}`);
    // stability has no place in the protocol: it is not sent.
    const body = JSON.parse(req.body.toString('utf8')) as Record<string, unknown>;
    assert.deepEqual(body, {
      model: 'tts-1',
      input: SCRIPT,
      voice: 'nova',
      response_format: 'wav',
      speed: 1.1,
    });
  });

  it("sends the organization's own key instead of the server's", async () => {
    await synth(provider, { apiKey: ORG_KEY });
    assert.equal(fake.requests[0].headers.authorization, `Bearer ${ORG_KEY}`);
  });

  it('reads servers that answer headerless 24 kHz PCM', async () => {
    const pcm = await new FakeOpenAiServer({ format: 'pcm' }).start();
    try {
      const r = await make({ baseUrl: pcm.url, apiKey: null }).synthesize({
        text: SCRIPT,
        providerVoiceId: 'alloy',
        settings: {},
        workDir,
      });
      assert.equal(r.sampleRate, 24_000);
      await assertGoodResult(r, SCRIPT);
      assert.equal(pcm.requests[0].headers.authorization, undefined, 'no key configured, none sent');
    } finally {
      await pcm.close();
    }
  });

  for (const [mode, reason] of MODES) {
    it(`maps '${mode}' to ${reason}`, async () => {
      fake.setMode(mode);
      await assert.rejects(synth(provider), failsWith(reason));
    });
  }

  it('maps a hanging server to timeout, a wrong key to key_invalid, an unknown voice to voice_not_found', async () => {
    fake.setMode('hang', 1);
    await assert.rejects(synth(make({ timeoutMs: 300 })), failsWith('timeout'));
    // The fake quotes the wrong key in its answer; the error must not.
    await assert.rejects(
      synth(provider, { apiKey: 'sk-wrong-0000111122223333' }),
      failsWith('key_invalid', 'sk-wrong-0000111122223333'),
    );
    await assert.rejects(synth(provider, { voice: 'shimmer' }), failsWith('voice_not_found'));
  });

  it('refuses a private address unless private addresses are allowed', async () => {
    await assert.rejects(synth(make({ allowPrivate: false })), failsWith('unavailable'));
    await assert.rejects(make({ allowPrivate: false }).listVoices({}), failsWith('unavailable'));
    assert.equal(fake.requests.length, 0);
  });

  it('is unavailable when nothing listens', async () => {
    const gone = await new FakeOpenAiServer().start();
    await gone.close();
    await assert.rejects(synth(make({ baseUrl: gone.url })), failsWith('unavailable'));
  });

  it("lists the server's voices, or the configured ones when it cannot list them", async () => {
    assert.deepEqual(
      (await provider.listVoices({})).map((v) => v.providerVoiceId),
      [...OPENAI_DEFAULT_VOICES],
    );
    assert.equal(fake.requests[0].path, '/v1/audio/voices');
    const configured = make({ voices: ['af_bella', 'am_adam'] });
    assert.deepEqual(
      (await configured.listVoices({})).map((v) => v.name),
      ['af_bella', 'am_adam'],
    );
    const listing = await new FakeOpenAiServer({ listVoices: true, voices: ['af_sky', 'bm_george'] }).start();
    try {
      const voices = await make({ baseUrl: listing.url }).listVoices({ apiKey: ORG_KEY });
      assert.deepEqual(voices, [
        { providerVoiceId: 'af_sky', name: 'af_sky' },
        { providerVoiceId: 'bm_george', name: 'bm_george' },
      ]);
      assert.equal(listing.requests[0].headers.authorization, `Bearer ${ORG_KEY}`);
      listing.setMode('invalid_key');
      await assert.rejects(make({ baseUrl: listing.url }).listVoices({}), failsWith('key_invalid'));
    } finally {
      await listing.close();
    }
  });
});

describe('elevenlabs speech provider', () => {
  let fake: FakeElevenLabsServer;
  let workDir: string;
  let provider: ElevenLabsSpeechProvider;
  const RACHEL = '21m00Tcm4TlvDq8ikWAM';
  const make = (over: Partial<ConstructorParameters<typeof ElevenLabsSpeechProvider>[0]> = {}) =>
    new ElevenLabsSpeechProvider({
      baseUrl: fake.url,
      apiKey: SERVER_KEY,
      modelId: 'eleven_turbo_v2_5',
      allowPrivate: true,
      align: alignTranscript,
      ...over,
    });
  const synth = (p: ElevenLabsSpeechProvider, extra: { apiKey?: string | null; voice?: string } = {}) =>
    p.synthesize({
      text: SCRIPT,
      providerVoiceId: extra.voice ?? RACHEL,
      settings: { stability: 0.3, similarityBoost: 0.9, speed: 2 },
      apiKey: extra.apiKey,
      workDir,
    });

  before(async () => {
    fake = await new FakeElevenLabsServer({ keys: [SERVER_KEY, ORG_KEY] }).start();
    workDir = await makeTempDir('speech-elevenlabs-');
    provider = make();
  });
  after(async () => {
    await fake.close();
    await removeTempDir(workDir);
  });
  beforeEach(() => fake.reset());

  it('synthesizes from the with-timestamps endpoint; words come from the character alignment', async () => {
    const r = await synth(provider);
    await assertGoodResult(r, SCRIPT);
    const [req] = fake.requests;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, `/v1/text-to-speech/${RACHEL}/with-timestamps`);
    assert.equal(req.headers['xi-api-key'], SERVER_KEY);
    assert.deepEqual(JSON.parse(req.body.toString('utf8')), {
      text: SCRIPT,
      model_id: 'eleven_turbo_v2_5',
      // speed 2 is clamped to the 1.2 ElevenLabs accepts.
      voice_settings: { stability: 0.3, similarity_boost: 0.9, speed: 1.2 },
    });
  });

  it('derives phonemes from the word spans when forced alignment fails', async () => {
    const r = await synth(make({ align: () => Promise.reject(new Error('no aligner here')) }));
    await assertGoodResult(r, SCRIPT);
    const hello = r.timeline.phonemes.filter((p) => p.word === 0).map((p) => p.phone);
    assert.deepEqual(hello, ['hh', 'eh', 'l', 'l', 'aa']);
  });

  it("sends the organization's own key; with no key at all it is unavailable", async () => {
    await synth(provider, { apiKey: ORG_KEY });
    assert.equal(fake.requests[0].headers['xi-api-key'], ORG_KEY);
    await assert.rejects(synth(make({ apiKey: null })), failsWith('unavailable'));
    assert.equal(fake.requests.length, 1, 'nothing sent without a key');
  });

  for (const [mode, reason] of MODES) {
    it(`maps '${mode}' to ${reason}`, async () => {
      fake.setMode(mode);
      await assert.rejects(synth(provider), failsWith(reason));
    });
  }

  it('maps a hanging server to timeout, a wrong key to key_invalid, an unknown voice to voice_not_found', async () => {
    fake.setMode('hang', 1);
    await assert.rejects(synth(make({ timeoutMs: 300 })), failsWith('timeout'));
    await assert.rejects(
      synth(provider, { apiKey: 'xi-wrong-4444555566667777' }),
      failsWith('key_invalid', 'xi-wrong-4444555566667777'),
    );
    await assert.rejects(synth(provider, { voice: 'no-such-voice' }), failsWith('voice_not_found'));
  });

  it('refuses a private address unless private addresses are allowed', async () => {
    await assert.rejects(synth(make({ allowPrivate: false })), failsWith('unavailable'));
    assert.equal(fake.requests.length, 0);
  });

  it('clones a voice from a sample, lists it, speaks with it and deletes it', async () => {
    const spoken = await synth(provider);
    const sample = await readFile(spoken.audioPath);
    const cloned = await provider.clone({
      name: 'Narrator',
      samplePath: spoken.audioPath,
      apiKey: ORG_KEY,
      workDir,
    });
    assert.equal(cloned.profile, null);
    assert.equal(cloned.requiresVerification, false);
    assert.ok(cloned.providerVoiceId);
    assert.equal(fake.clones.length, 1);
    assert.equal(fake.clones[0].name, 'Narrator');
    assert.ok(fake.clones[0].sample.equals(sample), 'the sample arrives byte for byte');
    assert.equal(fake.requests.at(-1)?.headers['xi-api-key'], ORG_KEY);

    const listed = await provider.listVoices({});
    const mine = listed.find((v) => v.providerVoiceId === cloned.providerVoiceId);
    assert.deepEqual(mine, {
      providerVoiceId: cloned.providerVoiceId,
      name: 'Narrator',
      labels: { category: 'cloned' },
    });
    assert.deepEqual(listed.find((v) => v.providerVoiceId === RACHEL)?.labels, {
      accent: 'american',
      gender: 'female',
      age: 'young',
      category: 'premade',
    });
    await assertGoodResult(await synth(provider, { voice: cloned.providerVoiceId! }), SCRIPT);

    await provider.deleteVoice(cloned.providerVoiceId!, { apiKey: ORG_KEY });
    assert.equal(fake.requests.at(-1)?.method, 'DELETE');
    assert.ok(!(await provider.listVoices({})).some((v) => v.providerVoiceId === cloned.providerVoiceId));
    // Already gone counts as deleted; other failures do not.
    await provider.deleteVoice(cloned.providerVoiceId!, {});
    fake.setMode('invalid_key', 1);
    await assert.rejects(provider.deleteVoice(RACHEL, {}), failsWith('key_invalid'));
  });

  it('maps clone and list failures like synthesis failures', async () => {
    const spoken = await synth(provider);
    fake.setMode('quota', 1);
    await assert.rejects(
      provider.clone({ name: 'X', samplePath: spoken.audioPath, workDir }),
      failsWith('quota'),
    );
    fake.setMode('garbage', 1);
    await assert.rejects(provider.listVoices({}), failsWith('unavailable'));
    const withVerification = await new FakeElevenLabsServer({ requireVerification: true }).start();
    try {
      const c = await make({ baseUrl: withVerification.url }).clone({
        name: 'Y',
        samplePath: spoken.audioPath,
        workDir,
      });
      assert.equal(c.requiresVerification, true);
    } finally {
      await withVerification.close();
    }
  });
});
