// Dubbing end to end as users get it (docs/dubbing.md): a real `lipsync serve` with the local
// recognizer, Apertium, the espeak-ng + MBROLA voices and the cpu engine. English speech over a quiet
// background tone on a fixture face is dubbed into Spanish and Catalan offline; the test reads the
// transcript and subtitles through the API and measures the output's sound and mouth itself.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { measureMouth } from '../../src/engines/cpu/quality.js';
import { phonemeShapes } from '../../src/engines/cpu/phoneme-quality.js';
import { probeMedia } from '../../src/media/probe.js';
import { fixture } from '../helpers/paths.js';
import type { TestServer } from '../helpers/index.js';
import {
  api,
  createGeneration,
  downloadOutput,
  uploadOverHttp,
  waitDone,
  type E2eOrg,
} from './generations-support.js';
import {
  englishSpeech,
  FPS,
  sourceVideo,
  startDubServer,
  TONE_HZ,
  type DubServer,
} from './dubbing-support.js';

const run = promisify(execFile);
const SCRIPT = 'Bob bought a map. Pam ate pie by the blue boat.';
/** The bound for the lips at the translation's p, b, m against its open vowels. */
const BILABIAL_MAX = 0.25;

/** Mono 16 kHz samples of a media file's soundtrack. */
async function samples(path: string): Promise<Float32Array> {
  const { stdout } = await run(
    'ffmpeg',
    ['-v', 'error', '-i', path, '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', '-'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const b = stdout as Buffer;
  return new Float32Array(b.buffer, b.byteOffset, Math.floor(b.length / 4));
}

/** Amplitude of one frequency over [fromMs, toMs) (Goertzel). */
function toneLevel(x: Float32Array, hz: number, fromMs: number, toMs: number): number {
  const a = Math.floor((fromMs / 1000) * 16000);
  const b = Math.min(x.length, Math.floor((toMs / 1000) * 16000));
  const w = (2 * Math.PI * hz) / 16000;
  let s1 = 0;
  let s2 = 0;
  for (let i = a; i < b; i++) {
    const s0 = x[i] + 2 * Math.cos(w) * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - 2 * Math.cos(w) * s1 * s2;
  return (2 * Math.sqrt(Math.max(0, power))) / Math.max(1, b - a);
}

function rms(x: Float32Array, fromMs: number, toMs: number): number {
  const a = Math.floor((fromMs / 1000) * 16000);
  const b = Math.min(x.length, Math.floor((toMs / 1000) * 16000));
  let s = 0;
  for (let i = a; i < b; i++) s += x[i] * x[i];
  return Math.sqrt(s / Math.max(1, b - a));
}

/** SRT cues as [startMs, endMs, text]. */
function srtCues(text: string): [number, number, string][] {
  const ms = (t: string) => {
    const [h, m, rest] = t.split(':');
    const [s, f] = rest.split(',');
    return ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000 + Number(f);
  };
  return text
    .trim()
    .split(/\n\n+/)
    .map((block) => {
      const lines = block.split('\n');
      const [a, b] = lines[1].split(' --> ');
      return [ms(a), ms(b), lines.slice(2).join(' ')];
    });
}

describe('dubbing through the API, offline', { timeout: 600_000 }, () => {
  let s: DubServer;
  let server: TestServer;
  let org: E2eOrg;
  let dir: string;
  let receiver: Server;
  let hookUrl: string;
  const hooks: any[] = [];

  before(async () => {
    // A webhook receiver on this machine (private URLs allowed for it).
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        hooks.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    s = await startDubServer('dub-e2e');
    ({ server, org, dir } = s);
  });
  after(async () => {
    await s?.stop();
    receiver?.close();
  });

  async function dubbed(id: string): Promise<any> {
    await s.completed(id);
    return (await api(server, org, 'GET', `/v2/generate/${id}?include=quality`)).json;
  }

  test('English into Spanish with the words given: translation, subtitles, sound kept, lips shut at p/b/m', async () => {
    const speech = await englishSpeech(server, org, dir, 'bob', SCRIPT, 1000);
    const src = await sourceVideo(dir, 'bob.mp4', [speech], 8);
    const video = await uploadOverHttp(server, org, src);
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video }],
      dubParams: { targetLang: 'es', sourceLang: 'en', transcript: SCRIPT },
      webhookUrl: hookUrl,
    });
    const g = await dubbed(id);
    assert.equal(g.quality.dub.targetLang, 'es');
    assert.equal(g.quality.dub.transcriptSource, 'given');
    assert.equal(g.quality.mouthDriver, 'phonemes');

    const t = await api(server, org, 'GET', `/v2/generations/${id}/transcript`);
    assert.equal(t.status, 200, t.text);
    assert.equal(t.json.segments.length, 2, t.text);
    assert.equal(t.json.segments[0].sourceText, 'Bob bought a map.');
    assert.match(t.json.segments[0].translatedText, /mapa/);
    assert.match(t.json.segments[1].translatedText, /azul/);
    assert.equal(t.json.voices[0].voiceId.startsWith('espeak-es'), true);
    for (const s of t.json.segments) {
      assert.ok(s.stretch >= 0.8 && s.stretch <= 1.25, JSON.stringify(s));
      assert.equal(s.dubStartMs, s.startMs, 'the dub starts with the source speech');
    }

    const out = await downloadOutput(server, org, id, dir);
    const probe = await probeMedia(out.path);
    assert.ok(Math.abs((probe.durationSeconds as number) - 8) < 0.2, `output ${probe.durationSeconds} s`);

    // Subtitles: the translation on the spans where it is heard.
    const srt = await api(server, org, 'GET', `/v2/generations/${id}/subtitles?format=srt&lang=target`);
    assert.equal(srt.status, 200, srt.text);
    const cues = srtCues(srt.text);
    assert.equal(cues.length, 2);
    const [before, after] = [await samples(src), await samples(out.path)];
    for (const [i, [a, b, text]] of cues.entries()) {
      assert.equal(a, t.json.segments[i].dubStartMs);
      assert.equal(text, t.json.segments[i].translatedText);
      assert.ok(b <= (probe.durationSeconds as number) * 1000);
      // Speech where the source spoke: well above the background there.
      assert.ok(rms(after, a, b) > 4 * rms(after, 0, 800), `cue ${i}: speech ${rms(after, a, b)}`);
    }
    // The background stays where nobody speaks (the tone within 2 dB of the source's level).
    const lastEnd = Math.max(...t.json.segments.map((s: any) => Math.max(s.endMs, s.dubEndMs)));
    for (const [a, b] of [
      [100, 800],
      [lastEnd + 400, 7800],
    ]) {
      const ratio = toneLevel(after, TONE_HZ, a, b) / toneLevel(before, TONE_HZ, a, b);
      assert.ok(Math.abs(20 * Math.log10(ratio)) < 2, `background ${a}-${b} ms changed by ${ratio}`);
    }

    // The webhook says what was dubbed and how well.
    for (let i = 0; i < 100 && !hooks.some((h) => h.id === id); i++)
      await new Promise((r) => setTimeout(r, 100));
    const hook = hooks.find((h) => h.id === id);
    assert.equal(hook?.dub?.targetLang, 'es', JSON.stringify(hook));
    assert.equal(hook.dub.segments, 2);
    assert.equal(hook.dub.segmentsFitting, 2);

    // The mouth follows the Spanish: lips shut at its p, b, m.
    const shapes = phonemeShapes(await measureMouth(out.path), t.json.timeline.phonemes, FPS);
    assert.ok(shapes.bilabial.count >= 3, `${shapes.bilabial.count} p/b/m measured`);
    assert.ok(shapes.openRatio <= BILABIAL_MAX, `p/b/m opening ratio ${shapes.openRatio}`);
  });

  test('English into Catalan from recognized words', async () => {
    const speech = await englishSpeech(
      server,
      org,
      dir,
      'cat',
      'The weather is good today. We will walk to the market.',
      500,
    );
    const video = await uploadOverHttp(server, org, await sourceVideo(dir, 'cat.mp4', [speech], 7));
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video }],
      dubParams: { targetLang: 'ca' },
    });
    const g = await dubbed(id);
    assert.equal(g.quality.dub.transcriptSource, 'recognized');
    const t = await api(server, org, 'GET', `/v2/generations/${id}/transcript`);
    assert.equal(t.json.sourceLang, 'en');
    assert.equal(t.json.targetLang, 'ca');
    assert.equal(t.json.voices[0].voiceId, 'espeak-ca');
    assert.ok(t.json.segments.length >= 1);
    for (const s of t.json.segments) {
      assert.notEqual(s.translatedText, s.sourceText);
      assert.ok(s.confidence === null || (s.confidence >= 0 && s.confidence <= 1));
    }
    const vtt = await api(server, org, 'GET', `/v2/generations/${id}/subtitles?format=vtt&lang=source`);
    assert.equal(vtt.status, 200);
    assert.match(vtt.text, /^WEBVTT\n\n00:00:0\d\.\d{3} --> /);
  });

  test('two people: told apart by voice, each with a voice of their own', async () => {
    const a = await englishSpeech(server, org, dir, 'first', 'Good morning to all of you.', 300);
    const b = await englishSpeech(server, org, dir, 'second', 'Thank you very much indeed.', 4200, true);
    const video = await uploadOverHttp(server, org, await sourceVideo(dir, 'two.mp4', [a, b], 9));
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video }],
      dubParams: {
        targetLang: 'es',
        numSpeakers: 1, // deprecated and ignored: speakers are found by voice
        transcript: 'Good morning to all of you. Thank you very much indeed.',
      },
    });
    const g = await dubbed(id);
    // Several speakers turn active-speaker detection on: with one face in view, that face speaks.
    assert.equal(g.quality.activeSpeaker?.method, 'single-face', JSON.stringify(g.quality));
    const t = (await api(server, org, 'GET', `/v2/generations/${id}/transcript`)).json;
    const speakers = new Set(t.segments.map((x: any) => x.speaker));
    assert.equal(speakers.size, 2, JSON.stringify(t.segments));
    assert.equal(t.voices.length, 2);
    assert.notEqual(t.voices[0].voiceId, t.voices[1].voiceId, JSON.stringify(t.voices));
  });

  test('refusals: an unsupported pair, a video without sound, an image, nothing said', async () => {
    const face = await uploadOverHttp(server, org, fixture('media/face_1.mp4'));
    const pair = await api(server, org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: face }],
      dubParams: { targetLang: 'ja' },
    });
    assert.equal(pair.status, 422, pair.text);
    assert.equal(pair.json.errorCode, 'dubbing_language_unsupported');
    assert.equal(pair.json.field, 'dubParams.targetLang');

    // The local recognizer hears English only: Spanish speech needs its words (or a recognition server).
    const spanish = await api(server, org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: face }],
      dubParams: { targetLang: 'en', sourceLang: 'es' },
    });
    assert.equal(spanish.status, 422, spanish.text);
    assert.equal(spanish.json.errorCode, 'dubbing_language_unsupported');
    assert.equal(spanish.json.field, 'dubParams.sourceLang');

    const mute = join(dir, 'mute.mp4');
    await run('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      fixture('media/face_1.mp4'),
      '-an',
      '-c:v',
      'copy',
      mute,
    ]);
    const noSound = await api(server, org, 'POST', '/v2/generate', {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: await uploadOverHttp(server, org, mute) }],
      dubParams: { targetLang: 'es' },
    });
    assert.equal(noSound.status, 422, noSound.text);
    assert.equal(noSound.json.field, 'input[0]');

    const image = await api(server, org, 'POST', '/v2/generate', {
      model: 'sync-3',
      input: [{ type: 'image', url: 'https://example.com/face.png' }],
      dubParams: { targetLang: 'es' },
    });
    assert.equal(image.status, 400, image.text);
    assert.equal(image.json.field, 'input[0].type');

    // A soundtrack with nothing said: the job fails with a code that says so.
    const silent = await sourceVideo(dir, 'silent.mp4', [], 3);
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: await uploadOverHttp(server, org, silent) }],
      dubParams: { targetLang: 'es' },
    });
    const done = await waitDone(server, org, id, 300_000);
    assert.equal(done.status, 'FAILED', JSON.stringify(done));
    assert.equal(done.errorCode, 'dubbing_no_speech');
  });
});
