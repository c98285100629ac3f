// `lipsync models`: the viseme model fetched from a mirror (a local HTTP server standing in for the
// upstream host), kept only when its checksum matches (a tampered file leaves nothing behind), listed
// as verified; a server with the defaults shapes a recording without words with the shipped model, one
// told to use the downloaded model with that one, and their quality reports say so.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { fixture } from '../helpers/paths.js';
import { createDeployment, runCli, startServer, type TestDeployment } from '../helpers/index.js';
import { api, cliOrg, createGeneration, uploadOverHttp, waitDone } from './generations-support.js';

const run = promisify(execFile);

describe('lipsync models', { timeout: 300_000 }, () => {
  let dir: string;
  let mirror: Server;
  let base: string;
  let dep: TestDeployment;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-cli-models-'));
    const model = await readFile(fixture('models/cherry-visemes.onnx'));
    const tampered = Buffer.from(model);
    tampered[tampered.length - 1] ^= 0xff;
    mirror = createServer((req, res) => {
      const body =
        req.url === '/good/cherry-visemes.onnx'
          ? model
          : req.url === '/bad/cherry-visemes.onnx'
            ? tampered
            : null;
      res.writeHead(body ? 200 : 404).end(body ?? 'not found');
    });
    await new Promise<void>((ok) => mirror.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
    dep = await createDeployment({ env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn' } });
  });
  after(async () => {
    mirror?.close();
    await dep?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const models = (args: string[]) =>
    runCli(['models', ...args], { env: { ...dep.env, LIPSYNC_ALLOW_PRIVATE_URLS: '1' }, timeoutMs: 60_000 });

  test('a tampered file is refused and leaves nothing; the right one is kept, listed as verified, not fetched twice', async () => {
    const folder = join(dir, 'models');
    const bad = await models(['download', '--dir', folder, '--from', `${base}/bad`]);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stderr, /checksum .* is not the expected/);
    assert.deepEqual(await readdir(folder), [], 'no partial file left');
    const missing = JSON.parse((await models(['list', '--dir', folder, '--json'])).stdout);
    assert.equal(missing.models[0].state, 'missing');

    const good = await models(['download', '--dir', folder, '--from', `${base}/good`, '--json']);
    assert.equal(good.code, 0, good.stderr);
    assert.deepEqual(JSON.parse(good.stdout).models, [{ file: 'cherry-visemes.onnx', result: 'downloaded' }]);
    const again = JSON.parse(
      (await models(['download', '--dir', folder, '--from', `${base}/good`, '--json'])).stdout,
    );
    assert.equal(again.models[0].result, 'present');
    const listed = await models(['list', '--dir', folder]);
    assert.match(listed.stdout, /^cherry-visemes\.onnx {2}verified/m);
  });

  test('a recording without words gets the shipped model by default, the downloaded one when chosen', async () => {
    const folder = join(dir, 'models');
    const face = join(dir, 'face.mp4');
    const speech = join(dir, 'speech.wav');
    await Promise.all([
      run('ffmpeg', [
        '-v',
        'error',
        '-y',
        '-i',
        fixture('media/face_3.mp4'),
        '-t',
        '2',
        '-vf',
        'scale=320:320',
        face,
      ]),
      run('ffmpeg', ['-v', 'error', '-y', '-i', fixture('media/hello.wav'), '-t', '2', speech]),
    ]);
    for (const [env, model] of [
      [{}, 'articulation-v1'],
      [{ LIPSYNC_MODELS_DIR: folder, LIPSYNC_VISEME_MODEL: 'cherry' }, 'cherry'],
    ] as const) {
      const server = await startServer({ env: { ...dep.env, ...env } });
      try {
        const org = await cliOrg(dep.env);
        const id = await createGeneration(server, org, {
          model: 'lipsync-2',
          input: [
            { type: 'video', assetId: await uploadOverHttp(server, org, face) },
            { type: 'audio', assetId: await uploadOverHttp(server, org, speech) },
          ],
        });
        const done = await waitDone(server, org, id);
        assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
        const q = (await api(server, org, 'GET', `/v2/generate/${id}?include=quality`)).json.quality;
        assert.equal(q.lipShapesOutsidePhonemes, 'viseme-model');
        assert.equal(q.articulation.primary, 'model');
        assert.equal(q.articulation.visemeModel, model);
        assert.equal(q.articulation.timings.recognitionMs, 0, 'recognition is off by default');
        assert.ok(q.articulation.speechSegments >= 1);
        // Each model span names the model and how sure it was (its mean top-class probability).
        const spans = q.articulation.spans.filter((sp: { source: string }) => sp.source === 'model');
        assert.ok(spans.length >= 1, JSON.stringify(q.articulation));
        for (const sp of spans) {
          assert.equal(sp.model, model);
          assert.ok(sp.confidence > 0 && sp.confidence <= 1, JSON.stringify(sp));
        }
      } finally {
        await server.stop();
      }
    }
  });
});
