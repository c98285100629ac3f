// POST/GET /v2/transcriptions with the real local recognizer (pocketsphinx) and aligner: sources only
// from our own storage, the request rules, dedupe of the same source and window, the `transcription`
// job to COMPLETED (word ids, absolute times inside the window, a speaker estimate), and the job
// failure codes NO_AUDIO_TRACK, SOURCE_TOO_LONG and NO_AUDIO; a source over an hour without endMs is
// processed for its first hour only.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { uploadAssetFile } from '../helpers/multipart.js';
import { startBackground, type Background } from '../../src/app/runtime.js';

const run = promisify(execFile);

describe(`transcriptions (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;
  let dir: string;
  let bg: Background;
  let face: { id: string; url: string };

  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services);
    other = await createOrgWithKey(t.services);
    dir = await mkdtemp(join(tmpdir(), 'transcriptions-'));
    face = await uploadAssetFile(t.app, org.owner.headers, fixture('media/face_1.mp4'));
    bg = startBackground(t.services, { kinds: ['transcription'] });
  });
  after(async () => {
    await bg?.stop();
    await t.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (who: TestOrg, method: string, url: string, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: who.owner.headers, payload: payload as object });

  function assertError(res: { statusCode: number; body: string; json(): any }, status: number, code: string) {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(res.json().errorCode, code);
    assert.doesNotMatch(res.body, /\/tmp\/|pocketsphinx|stderr/i);
    return res.json();
  }

  async function finished(id: string): Promise<any> {
    for (;;) {
      const res = await call(org, 'GET', `/v2/transcriptions/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      const v = res.json();
      if (v.status === 'COMPLETED' || v.status === 'FAILED') {
        assert.equal(res.headers['retry-after'], undefined);
        return v;
      }
      assert.equal(res.headers['retry-after'], '3');
      await t.services.bus.waitForChange(id, 1000);
    }
  }

  async function media(name: string, args: string[]): Promise<{ id: string; url: string }> {
    const path = join(dir, name);
    await run('ffmpeg', ['-v', 'error', '-y', ...args, path]);
    return uploadAssetFile(t.app, org.owner.headers, path);
  }

  test('a video in our storage is transcribed: word ids, absolute times, one speaker; the same request is reused', async () => {
    const res = await call(org, 'POST', '/v2/transcriptions', { sourceVideoUrl: face.url });
    assert.equal(res.statusCode, 201, res.body);
    const job = res.json();
    assert.match(job.id, /^[0-9a-f-]{36}$/);
    assert.equal(job.sourceStartMs, 0);
    assert.equal(job.transcript, null);
    assert.ok(job.sourceVideoUrl);
    assert.equal(job.sourceAudioUrl, null);
    const again = await call(org, 'POST', '/v2/transcriptions', { sourceVideoUrl: face.url });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['transcription-reused'], 'true');
    assert.equal(again.json().id, job.id);

    const done = await finished(job.id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done.error));
    assert.equal(done.speakerCount, 1);
    const words = done.transcript.segments.flatMap((s: any) => s.words);
    assert.ok(words.length >= 5, `${words.length} words`);
    assert.equal(new Set(words.map((w: any) => w.id)).size, words.length);
    let last = -1;
    for (const w of words) {
      assert.ok(
        Number.isInteger(w.startMs) && w.endMs > w.startMs && w.startMs >= last - 1,
        JSON.stringify(w),
      );
      assert.ok(w.endMs <= done.sourceEndMs + 1);
      last = w.startMs;
    }
    // A completed job is reused for the same source and window; another window is a new job.
    const later = await call(org, 'POST', '/v2/transcriptions', { sourceVideoUrl: face.url });
    assert.equal(later.json().id, job.id);
    assert.equal(later.json().status, 'COMPLETED');
    assertError(await call(other, 'GET', `/v2/transcriptions/${job.id}`), 404, 'transcription_not_found');
  });

  test('a window: times stay absolute and inside it; an end past the source is clamped', async () => {
    const res = await call(org, 'POST', '/v2/transcriptions', {
      sourceVideoUrl: face.url,
      startMs: 1000,
      endMs: 600_000,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.notEqual(res.headers['transcription-reused'], 'true');
    const done = await finished(res.json().id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done.error));
    assert.equal(done.sourceStartMs, 1000);
    assert.ok(done.sourceEndMs < 600_000, `clamped end ${done.sourceEndMs}`);
    for (const w of done.transcript.segments.flatMap((s: any) => s.words)) {
      assert.ok(w.startMs >= 1000 - 30 && w.endMs <= done.sourceEndMs + 30, JSON.stringify(w));
    }
  });

  test('failure codes: NO_AUDIO_TRACK, SOURCE_TOO_LONG, NO_AUDIO', async () => {
    const mute = await media('mute.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10',
      '-t',
      '2',
      '-c:v',
      'libx264',
    ]);
    const silent = await media('silent.wav', ['-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '2']);
    const cases: [Record<string, unknown>, string][] = [
      [{ sourceVideoUrl: mute.url }, 'NO_AUDIO_TRACK'],
      [{ sourceVideoUrl: face.url, maxSourceSeconds: 2 }, 'SOURCE_TOO_LONG'],
      [{ sourceAudioUrl: silent.url }, 'NO_AUDIO'],
    ];
    for (const [body, code] of cases) {
      const res = await call(org, 'POST', '/v2/transcriptions', body);
      assert.equal(res.statusCode, 201, res.body);
      const done = await finished(res.json().id);
      assert.equal(done.status, 'FAILED');
      assert.equal(done.error.code, code);
      assert.ok(done.error.message);
      assert.equal(done.transcript, null);
    }
  });

  test('without endMs only the first 60 minutes from startMs are processed: speech after them is not', async () => {
    // 60 min 5 s of silence, then the speech of face_1.mp4 (FLAC keeps the upload small).
    const long = await media('long.flac', [
      ...['-f', 'lavfi', '-t', '3605', '-i', 'anullsrc=r=16000:cl=mono', '-i', fixture('media/face_1.mp4')],
      ...[
        '-filter_complex',
        '[1:a]aresample=16000,aformat=channel_layouts=mono[s];[0:a][s]concat=n=2:v=0:a=1',
      ],
      ...['-c:a', 'flac'],
    ]);
    const res = await call(org, 'POST', '/v2/transcriptions', { sourceAudioUrl: long.url });
    assert.equal(res.statusCode, 201, res.body);
    const done = await finished(res.json().id);
    // The hour of silence is all that was processed: nothing audible in it.
    assert.equal(done.status, 'FAILED', JSON.stringify(done.transcript));
    assert.equal(done.error.code, 'NO_AUDIO');
  });

  test('request rules: one source in our own storage, a sane window, a known project', async () => {
    assertError(
      await call(org, 'POST', '/v2/transcriptions', { sourceVideoUrl: 'https://example.com/v.mp4' }),
      422,
      'transcription_source_upload_required',
    );
    const forged = face.url.replace(/sig=[0-9a-f]+/, `sig=${'0'.repeat(64)}`);
    assertError(
      await call(org, 'POST', '/v2/transcriptions', { sourceVideoUrl: forged }),
      422,
      'transcription_source_not_accessible',
    );
    // Another organization's upload is not this one's source.
    assertError(
      await call(other, 'POST', '/v2/transcriptions', { sourceVideoUrl: face.url }),
      422,
      'transcription_source_not_accessible',
    );
    const still = await media('still.png', ['-f', 'lavfi', '-i', 'color=red:size=64x64', '-frames:v', '1']);
    assertError(
      await call(org, 'POST', '/v2/transcriptions', { sourceVideoUrl: still.url }),
      422,
      'transcription_source_type_unsupported',
    );
    const bad: Record<string, unknown>[] = [
      {},
      { sourceVideoUrl: face.url, sourceAudioUrl: face.url },
      { sourceVideoUrl: face.url, startMs: 2000, endMs: 1000 },
      { sourceVideoUrl: face.url, startMs: 0, endMs: 3_700_000 },
      { sourceVideoUrl: face.url, startMs: -1 },
      { sourceVideoUrl: face.url, startMs: 999_999 },
      { sourceVideoUrl: face.url, maxSourceSeconds: 0 },
    ];
    for (const body of bad)
      assertError(await call(org, 'POST', '/v2/transcriptions', body), 400, 'invalid_request');
    assertError(
      await call(org, 'POST', '/v2/transcriptions', {
        sourceVideoUrl: face.url,
        projectId: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      }),
      422,
      'project_not_found',
    );
    assertError(await call(org, 'GET', '/v2/transcriptions/not-a-uuid'), 404, 'transcription_not_found');
  });
});
