// A generation driven by text, end to end as users get it: a real `lipsync serve` process with the
// local speech provider and the cpu engine; the text is spoken at submit, the output lasts as long as
// the speech, the engine shapes the mouth from the phonemes (its report says so), and the quality
// meter finds the lips shut at p, b and m (docs/engine.md, "Mouth shapes from phonemes"). The URL of a
// POST /v2/tts result used as an audio input brings its timeline along too. The same speech uploaded as
// a plain recording gets its phonemes by aligning the transcript the client gives (or by recognition),
// and the quality report says which source shaped each stretch (docs/engine.md, "Articulation").
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { measureMouth } from '../../src/engines/cpu/quality.js';
import { phonemeShapes } from '../../src/engines/cpu/phoneme-quality.js';
import { probeMedia } from '../../src/media/probe.js';
import { fixture } from '../helpers/paths.js';
import { createDeployment, startServer, type TestDeployment, type TestServer } from '../helpers/index.js';
import {
  api,
  cliOrg,
  createGeneration,
  downloadOutput,
  uploadOverHttp,
  waitDone,
  type E2eOrg,
} from './generations-support.js';

const run = promisify(execFile);
const FPS = 25;
const SCRIPT = 'Bob bought a map. Pam ate pie by the blue boat.';
/** The target for the lips at p, b, m against open vowels (people score well under 0.3). */
const BILABIAL_MAX = 0.25;

describe(
  'text-driven generations and recordings with their words, through the API',
  { timeout: 300_000 },
  () => {
    let dep: TestDeployment;
    let server: TestServer;
    let org: E2eOrg;
    let dir: string;
    let video: string;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lipsync-speech-e2e-'));
      const face = join(dir, 'face.mp4');
      // 6 s of face_3 at 400x400: longer than the speech, so the output lasts as long as the speech.
      await run('ffmpeg', [
        '-v',
        'error',
        '-y',
        '-i',
        fixture('media/face_3.mp4'),
        '-t',
        '6',
        '-vf',
        `scale=400:400,fps=${FPS}`,
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '16',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        face,
      ]);
      dep = await createDeployment({
        env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn', LIPSYNC_ARTICULATION_RECOGNIZE: '1' },
      });
      server = await startServer({ env: { ...dep.env } });
      org = await cliOrg(dep.env);
      video = await uploadOverHttp(server, org, face);
    });
    after(async () => {
      await server?.stop();
      await dep?.cleanup();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    async function finished(id: string): Promise<any> {
      const done = await waitDone(server, org, id);
      assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
      const r = await api(server, org, 'GET', `/v2/generate/${id}?include=quality`);
      return r.json;
    }

    test('a text input: output as long as the speech, mouth shaped per sound, lips shut at p/b/m', async () => {
      const id = await createGeneration(server, org, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'text', provider: { name: 'local', voiceId: 'slt-hts', script: SCRIPT } },
        ],
      });
      const g = await finished(id);
      const textInput = g.input.find((i: any) => i.type === 'text');
      assert.equal(textInput.provider.script, SCRIPT);
      assert.equal(g.quality.mouthDriver, 'phonemes');

      const speech = await api(server, org, 'GET', `/v2/assets/${textInput.assetId}`);
      assert.equal(speech.json.inputType, 'TTS');
      const timeline = (await api(server, org, 'GET', `/v2/assets/${textInput.assetId}/timeline`)).json;
      const out = await downloadOutput(server, org, id, dir);
      const probe = await probeMedia(out.path);
      assert.ok(
        Math.abs((probe.durationSeconds as number) - speech.json.durationSeconds) < 0.15,
        `output ${probe.durationSeconds} s, speech ${speech.json.durationSeconds} s`,
      );

      const shapes = phonemeShapes(await measureMouth(out.path), timeline.phonemes, FPS);
      assert.ok(shapes.bilabial.count >= 4, `${shapes.bilabial.count} p/b/m measured`);
      assert.ok(
        shapes.openRatio <= BILABIAL_MAX,
        `p/b/m opening ${shapes.bilabial.mean} vs open vowels ${shapes.openVowel.mean}: ratio ${shapes.openRatio}`,
      );
    });

    test('the url of a POST /v2/tts result as an audio input brings its phoneme timeline', async () => {
      const tts = await api(server, org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: 'slt-hts' });
      assert.equal(tts.status, 200, tts.text);
      const id = await createGeneration(server, org, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', url: tts.json.url },
        ],
      });
      const g = await finished(id);
      assert.equal(g.quality.mouthDriver, 'phonemes');
      assert.equal(g.quality.articulation.primary, 'text');
    });

    test('a recording with its transcript: aligned phonemes shape the mouth; without one, recognized words where confident', async () => {
      const tts = await api(server, org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: 'slt-hts' });
      assert.equal(tts.status, 200, tts.text);
      const truth = (await api(server, org, 'GET', `/v2/assets/${tts.json.assetId}/timeline`)).json;
      // The same speech uploaded as a plain file: a recording, no timeline of its own.
      const wav = join(dir, 'speech.wav');
      const file = await fetch(tts.json.url);
      assert.equal(file.status, 200);
      await writeFile(wav, Buffer.from(await file.arrayBuffer()));
      const upload = await uploadOverHttp(server, org, wav);

      const withText = await createGeneration(server, org, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: upload, transcript: SCRIPT },
        ],
      });
      const aligned = await finished(withText);
      assert.equal(aligned.quality.mouthDriver, 'phonemes');
      assert.equal(aligned.quality.articulation.primary, 'alignment');
      assert.ok(aligned.quality.articulation.speechSegments >= 1);
      for (const span of aligned.quality.articulation.spans) {
        // What the transcript does not cover gets the shipped viseme model's lips.
        assert.ok(['alignment', 'model'].includes(span.source), JSON.stringify(span));
        assert.ok(span.confidence >= 0 && span.confidence <= 1);
      }
      const out = await downloadOutput(server, org, withText, dir);
      const shapes = phonemeShapes(await measureMouth(out.path), truth.phonemes, FPS);
      assert.ok(shapes.bilabial.count >= 4, `${shapes.bilabial.count} p/b/m measured`);
      assert.ok(shapes.openRatio <= 0.3, `p/b/m opening ratio ${shapes.openRatio} from aligned phonemes`);

      // No transcript: the words are recognized; each span says where it came from and how sure it is.
      const plain = await createGeneration(server, org, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: upload },
        ],
      });
      const recognized = (await finished(plain)).quality.articulation;
      assert.ok(recognized.spans.length >= 1);
      for (const span of recognized.spans) {
        assert.ok(['recognition', 'model'].includes(span.source), JSON.stringify(span));
        if (span.source === 'recognition') assert.ok(span.confidence >= 0.5, JSON.stringify(span));
      }
      assert.ok(recognized.timings.recognitionMs > 0);
    });

    test('a transcript on anything but an audio input is refused', async () => {
      const r = await api(server, org, 'POST', '/v2/generate', {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video, transcript: 'hello' },
          { type: 'audio', assetId: video },
        ],
      });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.errorCode, 'invalid_request');
      assert.equal(r.json.field, 'input[0].transcript');
    });
  },
);
