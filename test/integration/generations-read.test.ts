// Get (with long-poll and progress), list, delete, download and estimate, through inject on a real
// database. The first tests run with no worker (generations stay PENDING); then an in-process worker
// pool starts and the generations really complete.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { watchBusWaits } from '../helpers/bus-waits.js';
import {
  fetchSigned,
  makeTestMedia,
  postGenerate,
  uploadAsset,
  waitTerminal,
  type TestMedia,
  LIFECYCLE_ENGINE_ENV,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`get, list, delete, download, estimate (${DB})`, { timeout: 240_000 }, () => {
  let t: TestServices;
  let bg: Background | null = null;
  let m: TestMedia;
  let org: TestOrg;
  let other: TestOrg;
  let assets: { video: string; audio: string };
  let pending: string;
  /** A FAILED generation, deleted by the delete test. */
  let pendingFailed = '';

  before(async () => {
    [t, m] = await Promise.all([
      createTestServices({
        env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_RATE_LIMIT_ENABLED: 'false', LIPSYNC_JOB_LEASE_SECONDS: '2' },
      }),
      makeTestMedia(),
    ]);
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    other = await createOrgWithKey(t.services, { plan: 'enterprise' });
    assets = {
      video: await uploadAsset(t.app, org.owner.headers, m.video),
      audio: await uploadAsset(t.app, org.owner.headers, m.audioShort),
    };
  });
  after(async () => {
    await bg?.stop();
    await t?.cleanup();
    await m?.cleanup();
  });

  const get = (url: string, who: TestOrg = org) =>
    t.app.inject({ method: 'GET', url, headers: who.owner.headers });
  const create = async (who: TestOrg = org, extra: Record<string, unknown> = {}, a = assets) => {
    const res = await postGenerate(t.app, who.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: a.video },
        { type: 'audio', assetId: a.audio },
      ],
      ...extra,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as Record<string, any>;
  };
  function assertError(
    res: { statusCode: number; body: string },
    status: number,
    errorCode?: string,
    field?: string,
  ) {
    assert.equal(res.statusCode, status, res.body);
    const b = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(b.statusCode, status);
    if (errorCode) assert.equal(b.errorCode, errorCode, res.body);
    if (field) assert.equal(b.field, field, res.body);
    return b;
  }

  describe('with no worker running', () => {
    test('GET returns the generation; other organizations and unknown ids get 404 generation_not_found', async () => {
      pending = (await create()).id;
      const res = await get(`/v2/generate/${pending}`);
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().id, pending);
      assert.equal(res.json().status, 'PENDING');
      assert.equal(res.json().progress_percent, undefined, 'only with include=progress');
      assert.equal(res.headers['x-wait-mode'], undefined);
      for (const [url, who] of [
        [`/v2/generate/${pending}`, other],
        [`/v2/generate/${randomUUID()}`, org],
        ['/v2/generate/not-a-uuid', org],
      ] as const) {
        assertError(await get(url, who), 404, 'generation_not_found');
      }
    });

    test('wait/timeout/include rules: 400 for timeout 0 or 11, and for wait with include=progress', async () => {
      for (const q of [
        'wait=true&timeout=0',
        'wait=true&timeout=11',
        'wait=true&timeout=-1',
        'timeout=0',
        'wait=true&timeout=abc',
      ]) {
        assertError(await get(`/v2/generate/${pending}?${q}`), 400, undefined, 'timeout');
      }
      assertError(
        await get(`/v2/generate/${pending}?wait=true&include=progress`),
        400,
        'invalid_request',
        'include',
      );
      assertError(
        await get(`/v2/generate/${pending}?wait=true&include=quality,progress`),
        400,
        'invalid_request',
        'include',
      );
    });

    test('include=progress adds progress_percent', async () => {
      const res = await get(`/v2/generate/${pending}?include=progress`);
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().progress_percent, 0);
    });

    test('wait=true on a generation that stays PENDING returns it after the timeout, with the wait headers', async () => {
      const waits = watchBusWaits(t.services.bus);
      let res;
      try {
        res = await get(`/v2/generate/${pending}?wait=true&timeout=1`);
      } finally {
        waits.restore();
      }
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().status, 'PENDING');
      assert.equal(res.headers['retry-after'], '2');
      assert.equal(res.headers['x-wait-mode'], 'long_poll');
      assert.equal(res.headers['x-wait-timeout-seconds'], '1');
      // held on the bus until its timer ended the wait (other wake-ups re-read it and waited on)
      assert.equal(waits.outcomes.at(-1), 'timeout', waits.outcomes.join(', '));
      // the default timeout is 5 s
      const d = await get(`/v2/generate/${pending}?wait=true`);
      assert.equal(d.headers['x-wait-timeout-seconds'], '5');
    });

    test('DELETE and download of a non-terminal generation: 409', async () => {
      assertError(
        await t.app.inject({
          method: 'DELETE',
          url: `/v2/generations/${pending}`,
          headers: org.owner.headers,
        }),
        409,
        'generation_not_deletable_while_processing',
      );
      assertError(await get(`/v2/generations/${pending}/download`), 409, 'generation_not_ready');
      assert.equal((await get(`/v2/generate/${pending}`)).json().status, 'PENDING');
    });

    test('list: filters by status, ids, source and project; limit and cursor page newest first', async () => {
      const lister = await createOrgWithKey(t.services, { plan: 'enterprise' });
      const la = {
        video: await uploadAsset(t.app, lister.owner.headers, m.video),
        audio: await uploadAsset(t.app, lister.owner.headers, m.audioShort),
      };
      const project = await t.app.inject({
        method: 'POST',
        url: '/v2/projects',
        headers: { ...lister.owner.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'listed' }),
      });
      const projectId = project.json().id as string;
      const g1 = (await create(lister, { projectId }, la)).id as string;
      const g2 = (await create(lister, {}, la)).id as string;
      const g3 = (await create(lister, {}, la)).id as string;
      const canceled = await t.services.generations.cancel(g2);
      assert.equal(canceled.status, 'CANCELED');
      const ids = async (q: string) => {
        const res = await get(`/v2/generations${q}`, lister);
        assert.equal(res.statusCode, 200, res.body);
        return (res.json() as { id: string }[]).map((g) => g.id);
      };
      assert.deepEqual(await ids(''), [g3, g2, g1]);
      assert.deepEqual(await ids('?status=PENDING'), [g3, g1]);
      assert.deepEqual(await ids('?status=canceled'), [g2]);
      assert.deepEqual(await ids('?status=CANCELED,PENDING'), [g3, g2, g1]);
      assert.deepEqual(await ids('?status=COMPLETED'), []);
      assert.deepEqual(await ids(`?ids=${g1},${g3}`), [g3, g1]);
      assert.deepEqual(await ids(`?ids=${g1},${pending}`), [g1], 'ids of other organizations are not listed');
      assert.deepEqual(await ids('?source=api'), [g3, g2, g1]);
      assert.deepEqual(await ids('?source=batch'), []);
      assert.deepEqual(await ids(`?projectId=${projectId}`), [g1]);
      assert.deepEqual(await ids(`?projectId=${randomUUID()}`), []);
      // another organization cannot see into the project
      const foreign = await get(`/v2/generations?projectId=${projectId}`, org);
      assert.deepEqual(foreign.json(), []);
      assert.deepEqual(await ids('?limit=2'), [g3, g2]);
      assert.deepEqual(await ids(`?limit=2&cursor=${g2}`), [g1]);
      assert.deepEqual(await ids(`?limit=1&cursor=${g3}`), [g2]);
      assert.deepEqual(await ids(`?limit=5&cursor=${g1}`), []);
      assert.deepEqual(await ids('?limit=100'), [g3, g2, g1]);
      assertError(await get(`/v2/generations?cursor=${g2}`, lister), 400, 'invalid_request', 'cursor');
      assertError(
        await get(`/v2/generations?limit=2&cursor=${pending}`, lister),
        400,
        'invalid_request',
        'cursor',
      );
      for (const q of ['limit=0', 'limit=101', 'limit=two']) {
        assertError(await get(`/v2/generations?${q}`, lister), 400, undefined, 'limit');
      }
      assertError(await get('/v2/generations?status=DONE', lister), 400, 'invalid_request', 'status');
      assertError(await get('/v2/generations?projectId=xyz', lister), 400, 'invalid_request', 'projectId');
    });

    test('POST /v2/generations/{id}/cancel: a pending one ends CANCELED at once; other organizations get 404', async () => {
      const id = (await create()).id as string;
      const cancel = (who: TestOrg, target = id) =>
        t.app.inject({ method: 'POST', url: `/v2/generations/${target}/cancel`, headers: who.owner.headers });
      assertError(await cancel(other), 404, 'generation_not_found');
      assertError(await cancel(org, randomUUID()), 404, 'generation_not_found');
      assert.equal(
        (await get(`/v2/generate/${id}`)).json().status,
        'PENDING',
        'untouched by the refused cancel',
      );
      const res = await cancel(org);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'CANCELED');
      assert.equal(res.json().errorCode, 'generation_canceled');
      // an ended one is returned as it is
      const again = await cancel(org);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().status, 'CANCELED');
      assert.equal((await get(`/v2/generate/${id}`)).json().status, 'CANCELED');
    });
  });

  describe('with the worker running', () => {
    before(() => {
      bg = startBackground(t.services);
    });

    test('a long-poll is woken by the generation’s completion, not by its timer', async () => {
      const g = await create();
      const waits = watchBusWaits(t.services.bus);
      try {
        // A loaded machine may take longer than one 10 s poll (another generation runs first), so
        // poll as a client does until it is done. What must hold: the waits are woken by the
        // generation's changes, and the poll that sees COMPLETED was woken by the completion itself
        // (or, if it finished between two polls, found it done at once).
        const { res, last } = await pollUntilDone(waits, () =>
          get(`/v2/generate/${g.id}?wait=true&timeout=10`),
        );
        assert.equal(res.json().status, 'COMPLETED', res.body);
        assert.equal(res.headers['x-wait-mode'], 'long_poll');
        assert.equal(res.headers['x-wait-timeout-seconds'], '10');
        assert.equal(res.headers['retry-after'], '2');
        assertWokenByCompletion(last);
        // a terminal generation answers at once: its one wait is dropped unwoken
        waits.outcomes.length = 0;
        const res2 = await get(`/v2/generate/${g.id}?wait=true&timeout=10`);
        assert.equal(res2.json().status, 'COMPLETED');
        assert.deepEqual(waits.outcomes, ['dropped']);
      } finally {
        waits.restore();
      }
      // progress of a completed generation
      assert.equal((await get(`/v2/generate/${g.id}?include=progress`)).json().progress_percent, 100);
    });

    test('a long-poll on another instance (no worker) is woken by the worker instance’s change', async () => {
      // What a separate API process sees: the change is made by another instance's worker and must
      // reach this instance's bus (PostgreSQL NOTIFY, or SQLite's shared watcher).
      const apiOnly = await createTestServices({ shareDatabaseWith: t });
      const waits = watchBusWaits(apiOnly.services.bus);
      try {
        const g = await create();
        const { res, last } = await pollUntilDone(waits, () =>
          apiOnly.app.inject({
            method: 'GET',
            url: `/v2/generate/${g.id}?wait=true&timeout=10`,
            headers: org.owner.headers,
          }),
        );
        assert.equal(res.json().status, 'COMPLETED', res.body);
        assertWokenByCompletion(last);
      } finally {
        waits.restore();
        await apiOnly.cleanup();
      }
    });

    test('the PENDING generation from before completes too', async () => {
      const g = await waitTerminal(t.app, org.owner.headers, pending);
      assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
      assert.ok(g.outputUrl);
      assert.ok(g.outputDuration > 1);
    });

    test('download: text/plain URL of the output; fileName gets the output extension; other org 404; bad UUID 400', async () => {
      const g = await create(org, {
        outputFileName: 'greeting.final.mov',
        options: { output_format: 'mp4' },
      });
      await waitTerminal(t.app, org.owner.headers, g.id);
      const res = await get(`/v2/generations/${g.id}/download`);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/plain/);
      const url = res.body;
      assert.doesNotMatch(url, /^"/, 'unquoted, not JSON');
      assert.equal(res.headers.location, undefined, 'not a redirect');
      const u = new URL(url);
      assert.equal(u.searchParams.get('name'), 'greeting.final.mp4');
      const file = await fetchSigned(t.app, url);
      assert.equal(file.statusCode, 200);
      assert.equal(file.rawPayload.subarray(4, 8).toString('latin1'), 'ftyp');
      assert.match(String(file.headers['content-disposition']), /greeting\.final\.mp4/);
      // fileName query: its extension is replaced by the output's
      for (const [given, expected] of [
        ['clip.mov', 'clip.mp4'],
        ['clip', 'clip.mp4'],
        ['my.video.webm', 'my.video.mp4'],
      ]) {
        const r = await get(`/v2/generations/${g.id}/download?fileName=${encodeURIComponent(given)}`);
        assert.equal(r.statusCode, 200);
        assert.equal(new URL(r.body).searchParams.get('name'), expected);
      }
      // any key of the organization may download
      const member = await t.services.apiKeys.create({
        organizationId: org.organization.id,
        name: 'member',
        role: 'member',
      });
      const byMember = await t.app.inject({
        method: 'GET',
        url: `/v2/generations/${g.id}/download`,
        headers: { 'x-api-key': member.key },
      });
      assert.equal(byMember.statusCode, 200);
      // fetched without the API key, and only with a valid signature
      const tampered = new URL(url);
      tampered.searchParams.set('sig', '0'.repeat(64));
      assert.equal((await fetchSigned(t.app, tampered.toString())).statusCode, 403);
      assertError(await get(`/v2/generations/${g.id}/download`, other), 404, 'generation_not_found');
      assertError(await get(`/v2/generations/${randomUUID()}/download`), 404, 'generation_not_found');
      assertError(await get('/v2/generations/not-a-uuid/download'), 400, 'invalid_request');
    });

    test('download: the free plan gets the watermarked derivative, a paid plan the clean output', async () => {
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      const paid = await createOrgWithKey(t.services, { plan: 'creator' });
      const run = async (who: TestOrg) => {
        const a = {
          video: await uploadAsset(t.app, who.owner.headers, m.video),
          audio: await uploadAsset(t.app, who.owner.headers, m.audioShort),
        };
        const g = await create(who, {}, a);
        const done = await waitTerminal(t.app, who.owner.headers, g.id);
        assert.equal(done.status, 'COMPLETED');
        const url = (await get(`/v2/generations/${g.id}/download`, who)).body;
        const file = await fetchSigned(t.app, url);
        assert.equal(file.statusCode, 200);
        const row = await t.services.store.generations.find(g.id);
        return { url, bytes: file.rawPayload, row: row!, outputUrl: done.outputUrl as string };
      };
      const f = await run(free);
      const p = await run(paid);
      assert.ok(f.row.watermarkedKey, 'the free plan output has a watermarked derivative');
      assert.equal(p.row.watermarkedKey, null, 'paid plans need none');
      assert.ok(new URL(f.url).pathname.endsWith(`/v2/files/${f.row.watermarkedKey}`), f.url);
      assert.ok(new URL(p.url).pathname.endsWith(`/v2/files/${p.row.outputKey}`), p.url);
      // the outputUrl in the resource follows the same rule
      assert.ok(new URL(f.outputUrl).pathname.endsWith(f.row.watermarkedKey!));
      // the derivative differs from the clean output of the same generation
      const clean = await t.services.blobs.open(f.row.outputKey!);
      const chunks: Buffer[] = [];
      for await (const c of clean) chunks.push(c as Buffer);
      const cleanBytes = Buffer.concat(chunks);
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      assert.notEqual(sha(cleanBytes), sha(f.bytes), 'the free plan must not get the clean file');
      assert.equal(sha(f.bytes), sha(await readBlob(f.row.watermarkedKey!)));
      assert.equal(sha(p.bytes), sha(await readBlob(p.row.outputKey!)));
    });

    async function readBlob(key: string): Promise<Buffer> {
      const chunks: Buffer[] = [];
      for await (const c of await t.services.blobs.open(key)) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    }

    test('a generation whose input vanished from storage FAILS; its download is 422 generation_not_downloadable', async () => {
      const lost = {
        video: await uploadAsset(t.app, org.owner.headers, m.video),
        audio: assets.audio,
      };
      // Stop the worker so the input can be removed before the job runs.
      await bg?.stop();
      const g = await create(org, {}, lost);
      const asset = await t.services.store.assets.find(org.organization.id, lost.video);
      assert.ok(asset);
      await t.services.blobs.delete(asset.storageKey);
      assert.equal(await t.services.blobs.exists(asset.storageKey), false);
      bg = startBackground(t.services);
      const done = await waitTerminal(t.app, org.owner.headers, g.id);
      assert.equal(done.status, 'FAILED', JSON.stringify(done));
      assert.equal(typeof done.error, 'string');
      assert.equal(done.errorCode, 'generation_processing_failed');
      assert.equal(done.error_code, 'generation_processing_failed');
      assert.equal(done.outputUrl, null);
      assertError(await get(`/v2/generations/${g.id}/download`), 422, 'generation_not_downloadable');
      // FAILED is terminal: it can be deleted
      pendingFailed = g.id;
    });

    test('DELETE a terminal generation: 200 with it, then 404 everywhere', async () => {
      const g = await create();
      await waitTerminal(t.app, org.owner.headers, g.id);
      assertError(
        await t.app.inject({
          method: 'DELETE',
          url: `/v2/generations/${g.id}`,
          headers: other.owner.headers,
        }),
        404,
        'generation_not_found',
      );
      const del = await t.app.inject({
        method: 'DELETE',
        url: `/v2/generations/${g.id}`,
        headers: org.owner.headers,
      });
      assert.equal(del.statusCode, 200, del.body);
      assert.equal(del.json().id, g.id);
      assert.equal(del.json().status, 'COMPLETED');
      assertError(await get(`/v2/generate/${g.id}`), 404, 'generation_not_found');
      assertError(await get(`/v2/generations/${g.id}/download`), 404, 'generation_not_found');
      assertError(
        await t.app.inject({ method: 'DELETE', url: `/v2/generations/${g.id}`, headers: org.owner.headers }),
        404,
        'generation_not_found',
      );
      const list = (await get(`/v2/generations?ids=${g.id}`)).json() as unknown[];
      assert.deepEqual(list, []);
      if (pendingFailed) {
        const d = await t.app.inject({
          method: 'DELETE',
          url: `/v2/generations/${pendingFailed}`,
          headers: org.owner.headers,
        });
        assert.equal(d.statusCode, 200);
        assert.equal(d.json().status, 'FAILED');
      }
    });
  });

  describe('estimate', () => {
    const post = (url: string, who: TestOrg, body: unknown) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { ...who.owner.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });

    test('dollar-billed organizations get estimatedCredits null; credit-billed ones a number; the alias answers the same', async () => {
      const credits = await createOrgWithKey(t.services, { plan: 'creator', billing: 'credits' });
      for (const url of ['/v2/generations/estimate', '/v2/generate/estimate-cost']) {
        const usd = await post(url, org, { model: 'lipsync-2', duration: 10 });
        assert.equal(usd.statusCode, 200, usd.body);
        assert.deepEqual(usd.json(), {
          model: 'lipsync-2',
          duration: 10,
          fps: 30,
          estimatedFrameCount: 300,
          estimatedGenerationCost: 0.5,
          estimatedCredits: null,
        });
        const cr = await post(url, credits, { model: 'lipsync-2', duration: 10, fps: 25 });
        assert.equal(cr.statusCode, 200, cr.body);
        assert.equal(cr.json().estimatedCredits, 50);
        assert.equal(cr.json().estimatedFrameCount, 250);
      }
    });

    test('POST /v2/analyze/cost (the official client) prices a whole request from its probed media and creates nothing', async () => {
      const before = (await get('/v2/generations')).json().length;
      const body = {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: assets.video },
          { type: 'audio', assetId: assets.audio },
        ],
        options: { sync_mode: 'cut_off' },
      };
      const res = await post('/v2/analyze/cost', org, body);
      assert.equal(res.statusCode, 200, res.body);
      const [e] = res.json();
      // cut_off: the shorter input (the 1.5 s audio) at the video's 25 fps
      assert.ok(Math.abs(e.duration - 1.5) < 0.05, JSON.stringify(e));
      assert.equal(e.fps, 25);
      assert.equal(e.estimatedFrameCount, Math.ceil(e.duration * 25 - 1e-9));
      assert.ok(Math.abs(e.estimatedGenerationCost - e.duration * 0.05) < 1e-3);
      assert.equal(e.estimatedCredits, null);
      // loop follows the audio, silence the video
      const silence = await post('/v2/analyze/cost', org, { ...body, options: { sync_mode: 'silence' } });
      assert.ok(Math.abs(silence.json()[0].duration - 2) < 0.05, silence.body);
      assert.equal((await get('/v2/generations')).json().length, before);
      const missing = await post('/v2/analyze/cost', org, {
        ...body,
        input: [{ type: 'video', assetId: '00000000-0000-4000-8000-000000000000' }, body.input[1]],
      });
      assertError(missing, 422, 'asset_not_found');
    });

    test('422 cost_estimate_unavailable for durations or frame rates billing rejects, with no price fields', async () => {
      for (const body of [
        { model: 'lipsync-2', duration: 1e9 },
        { model: 'lipsync-2', duration: 10, fps: 100000 },
      ]) {
        for (const url of ['/v2/generations/estimate', '/v2/generate/estimate-cost']) {
          const b = assertError(await post(url, org, body), 422, 'cost_estimate_unavailable');
          assert.equal(b.estimatedCredits, undefined);
          assert.equal(b.estimatedGenerationCost, undefined);
        }
      }
    });

    test('400 for invalid fields', async () => {
      const cases: [unknown, string | undefined][] = [
        [{ model: 'lipsync-2' }, 'duration'],
        [{ duration: 5 }, 'model'],
        [{ model: 'lipsync-2', duration: 0 }, 'duration'],
        [{ model: 'lipsync-2', duration: -3 }, 'duration'],
        [{ model: 'lipsync-2', duration: 'ten' }, 'duration'],
        [{ model: 'lipsync-2', duration: 5, fps: 0 }, 'fps'],
        [{ model: 'lipsync-9', duration: 5 }, 'model'],
      ];
      for (const [body, field] of cases) {
        assertError(await post('/v2/generations/estimate', org, body), 400, undefined, field);
      }
      assert.equal(
        (await t.app.inject({ method: 'POST', url: '/v2/generations/estimate', payload: {} })).statusCode,
        401,
      );
    });
  });
});

/**
 * Long-polls as a client does until the generation is done: a loaded machine may need more than one
 * 10 s poll. Returns the last answer and the bus waits of the last poll.
 */
async function pollUntilDone<R extends { statusCode: number; body: string; json: () => { status: string } }>(
  waits: ReturnType<typeof watchBusWaits>,
  poll: () => Promise<R>,
): Promise<{ res: R; last: string[] }> {
  for (let polls = 0; ; polls++) {
    waits.outcomes.length = 0;
    const res = await poll();
    assert.equal(res.statusCode, 200, res.body);
    const last = [...waits.outcomes];
    if (!['PENDING', 'PROCESSING'].includes(res.json().status) || polls >= 60) return { res, last };
  }
}

/**
 * The poll that saw the generation done was woken by the completion itself (its last wait is a
 * change, then the wait on the done generation is dropped), never by its timer; or the generation
 * finished between two polls and the poll found it done at once.
 */
function assertWokenByCompletion(last: string[]) {
  const woken = last.filter((o) => o !== 'dropped');
  assert.ok(
    woken.length === 0 ? last.length === 1 : woken.at(-1) === 'changed',
    `the last poll's waits: ${last.join(', ')}`,
  );
}
