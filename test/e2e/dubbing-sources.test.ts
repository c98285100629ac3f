// A dub from a language the local recognizer does not hear: a real `lipsync serve` whose recognition
// is an OpenAI-compatible transcription server (a protocol-level fake told the words really said).
// Spanish speech on a fixture face is dubbed into English offline (Apertium es -> en, an English
// local voice).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { TestServer } from '../helpers/index.js';
import { FakeTranscriptionServer } from '../helpers/fake-transcription-server.js';
import { api, createGeneration, uploadOverHttp, type E2eOrg } from './generations-support.js';
import { sourceVideo, startDubServer, type DubServer } from './dubbing-support.js';

const run = promisify(execFile);
const SPANISH = 'Hola mundo. Buenos días.';

describe('dubbing from Spanish with a recognition server', { timeout: 300_000 }, () => {
  let s: DubServer;
  let server: TestServer;
  let org: E2eOrg;
  let dir: string;
  let stt: FakeTranscriptionServer;

  before(async () => {
    stt = await new FakeTranscriptionServer({ keys: ['stt-key'] }).start();
    s = await startDubServer('dub-sources', {
      LIPSYNC_OPENAI_STT_URL: stt.url,
      LIPSYNC_OPENAI_STT_API_KEY: 'stt-key',
    });
    ({ server, org, dir } = s);
  });
  after(async () => {
    await s?.stop();
    await stt?.close();
  });

  test('Spanish into English: the recognition server hears it, Apertium translates, an English voice speaks', async () => {
    // Spanish speech from the server's own Spanish voice; its timeline is what was really said, when.
    const tts = await api(server, org, 'POST', '/v2/tts', { script: SPANISH, voiceId: 'espeak-es2' });
    assert.equal(tts.status, 200, tts.text);
    const timeline = (await api(server, org, 'GET', `/v2/assets/${tts.json.assetId}/timeline`)).json;
    const raw = join(dir, 'es-raw.wav');
    await writeFile(raw, Buffer.from(await (await fetch(tts.json.url)).arrayBuffer()));
    const speech = join(dir, 'es.wav');
    await run('ffmpeg', ['-v', 'error', '-y', '-i', raw, '-af', 'aresample=48000,adelay=500|500', speech]);
    const words = SPANISH.split(' ');
    assert.equal(timeline.words.length, words.length, JSON.stringify(timeline.words));
    stt.answerWith(
      timeline.words.map((w: any, i: number) => ({
        word: words[i],
        start: (w.startMs + 500) / 1000,
        end: (w.endMs + 500) / 1000,
      })),
      { roughMs: 100, language: 'es' },
    );

    const video = await uploadOverHttp(server, org, await sourceVideo(dir, 'es.mp4', [speech], 4));
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video }],
      dubParams: { targetLang: 'en', sourceLang: 'es' },
    });
    await s.completed(id, 240_000);
    assert.equal(stt.forms.at(-1)?.fields.language, 'es', 'the source language is passed on');
    const t = (await api(server, org, 'GET', `/v2/generations/${id}/transcript`)).json;
    assert.equal(t.sourceLang, 'es');
    assert.equal(t.targetLang, 'en');
    assert.equal(t.transcriptSource, 'recognized');
    assert.equal(t.segments.map((x: any) => x.sourceText).join(' '), SPANISH);
    assert.match(t.segments.map((x: any) => x.translatedText).join(' '), /world/i);
    assert.ok(
      ['slt-hts', 'rhvoice-clb', 'rhvoice-bdl', 'rhvoice-slt', 'rhvoice-alan'].includes(t.voices[0].voiceId),
    );
  });
});
