// Idempotency-Key on POST /v2/generate, every row of the spec's table, on a real database: replays,
// conflicts, a request held in flight by a slow media server, deleted originals, stale claims, the
// operator switch (the real `lipsync idempotency` command), and 50 simultaneous identical requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  createOrgWithKey,
  createTestServices,
  runCliJson,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { fingerprint, IDEMPOTENCY_RETENTION_MS, IDEMPOTENCY_STALE_MS } from '../../src/domain/idempotency.js';
import {
  makeTestMedia,
  postGenerate,
  postGenerateForm,
  startMediaServer,
  uploadAsset,
  type MediaServer,
  type TestMedia,
  LIFECYCLE_ENGINE_ENV,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`idempotent creation (${DB})`, { timeout: 240_000 }, () => {
  let t: TestServices;
  let m: TestMedia;
  let srv: MediaServer;
  let org: TestOrg;
  let video: string;
  let audio: string;

  before(async () => {
    [t, m, srv] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          LIPSYNC_ALLOW_PRIVATE_URLS: '1',
        },
      }),
      makeTestMedia(),
      startMediaServer(),
    ]);
    // A contracted concurrency high enough for every generation this file leaves PENDING.
    org = await createOrgWithKey(t.services, { plan: 'enterprise', concurrency: 200 });
    video = await uploadAsset(t.app, org.owner.headers, m.video);
    audio = await uploadAsset(t.app, org.owner.headers, m.audioShort);
  });
  after(async () => {
    await t?.cleanup();
    await srv?.close();
    await m?.cleanup();
  });

  const body = (over: Record<string, unknown> = {}) => ({
    model: 'lipsync-2',
    input: [
      { type: 'video', assetId: video },
      { type: 'audio', assetId: audio },
    ],
    options: { sync_mode: 'cut_off', output_format: 'mp4' },
    ...over,
  });
  const keyed = (key: string | string[], b: unknown = body(), who: TestOrg = org) =>
    postGenerate(t.app, who.owner.headers, b, { 'idempotency-key': key });
  const countFor = async (organizationId: string) =>
    Number(
      (
        await t.services.store.db.kysely
          .selectFrom('generations')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  function assertError(res: { statusCode: number; body: string }, status: number, errorCode: string) {
    assert.equal(res.statusCode, status, res.body);
    const b = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(b.statusCode, status);
    assert.equal(b.errorCode, errorCode, res.body);
    return b;
  }

  test('first use 201; an equivalent replay 200 with Idempotency-Replayed: true, whatever the JSON key order', async () => {
    const key = `order-${randomUUID()}`;
    const before = await countFor(org.organization.id);
    const first = await keyed(key);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['idempotency-replayed'], undefined);
    const id = first.json().id;

    const again = await keyed(key);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotency-replayed'], 'true');
    assert.equal(again.json().id, id);

    // the same payload written with its keys (also nested ones) in another order
    const reordered =
      `{"options":{"output_format":"mp4","sync_mode":"cut_off"},` +
      `"input":[{"assetId":"${video}","type":"video"},{"assetId":"${audio}","type":"audio"}],"model":"lipsync-2"}`;
    const r3 = await keyed(key, reordered);
    assert.equal(r3.statusCode, 200, r3.body);
    assert.equal(r3.headers['idempotency-replayed'], 'true');
    assert.equal(r3.json().id, id);
    assert.equal(await countFor(org.organization.id), before + 1, 'exactly one generation');

    // the replay shows the current state: cancel the original, replay again
    await t.services.generations.cancel(id);
    const r4 = await keyed(key);
    assert.equal(r4.statusCode, 200);
    assert.equal(r4.json().status, 'CANCELED');
    assert.equal(r4.json().errorCode, 'generation_canceled');
  });

  test('the same key with another payload: 409 IDEMPOTENCY_KEY_CONFLICT', async () => {
    const key = `conflict-${randomUUID()}`;
    assert.equal((await keyed(key)).statusCode, 201);
    const before = await countFor(org.organization.id);
    for (const other of [
      body({ options: { sync_mode: 'loop', output_format: 'mp4' } }),
      body({ model: 'lipsync-2-pro' }),
      body({ webhookUrl: 'https://hooks.example.com/x' }),
      { ...body(), input: [...body().input].reverse() },
    ]) {
      assertError(await keyed(key, other), 409, 'IDEMPOTENCY_KEY_CONFLICT');
    }
    assert.equal(await countFor(org.organization.id), before);
  });

  test('while the original is being prepared: 409 IDEMPOTENCY_IN_PROGRESS with Retry-After: 2, then 201 and 200', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = srv.route(`/slow-${randomUUID()}.mp4`, { file: m.video, gate });
    const key = `slow-${randomUUID()}`;
    const b = body({
      input: [
        { type: 'video', url: slow },
        { type: 'audio', assetId: audio },
      ],
    });
    const first = keyed(key, b);
    // wait until the first request is inside input resolution (its media request reached the server)
    const path = new URL(slow).pathname;
    for (let i = 0; i < 200 && !srv.hits.get(path); i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(srv.hits.get(path), 1, 'the first request is fetching its media');

    const second = await keyed(key, b);
    const e = assertError(second, 409, 'IDEMPOTENCY_IN_PROGRESS');
    assert.equal(second.headers['retry-after'], '2');
    assert.equal(e.generationId, undefined);
    // a different payload under the in-flight key is a conflict, not "in progress"
    assertError(await keyed(key, body()), 409, 'IDEMPOTENCY_KEY_CONFLICT');

    release();
    const firstRes = await first;
    assert.equal(firstRes.statusCode, 201, firstRes.body);
    const third = await keyed(key, b);
    assert.equal(third.statusCode, 200);
    assert.equal(third.headers['idempotency-replayed'], 'true');
    assert.equal(third.json().id, firstRes.json().id);
    assert.equal(srv.hits.get(path), 1, 'replays never fetch the media again');
  });

  test('after the original is deleted: 410 and no replacement; the key stays bound', async () => {
    const key = `deleted-${randomUUID()}`;
    const first = await keyed(key);
    assert.equal(first.statusCode, 201);
    const id = first.json().id;
    await t.services.generations.cancel(id);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v2/generations/${id}`,
      headers: org.owner.headers,
    });
    assert.equal(del.statusCode, 200, del.body);
    const before = await countFor(org.organization.id);
    for (let i = 0; i < 2; i++) {
      const res = await keyed(key);
      const e = assertError(res, 410, 'IDEMPOTENCY_ORIGINAL_DELETED');
      assert.equal(e.generationId, id);
    }
    assert.equal(await countFor(org.organization.id), before, 'no replacement is created');
    // the payload is still checked against the bound key
    assertError(await keyed(key, body({ model: 'lipsync-1.8.0' })), 409, 'IDEMPOTENCY_KEY_CONFLICT');
  });

  test('a claim left pending by a request that died: 503 IDEMPOTENCY_OUTCOME_UNKNOWN, with generationId when known', async () => {
    // A request that crashed after its claim leaves a 'pending' row; the service cannot tell whether
    // its generation was created. Such rows are written here through the repository, backdated.
    const b = body({ outputFileName: `stale-${randomUUID()}` });
    const old = new Date(Date.now() - IDEMPOTENCY_STALE_MS - 5000);
    const claim = async (key: string, resourceId: string | null, createdAt: Date) => {
      assert.equal(
        await t.services.store.idempotency.claim({
          organizationId: org.organization.id,
          scope: 'generate',
          key,
          fingerprint: fingerprint(b),
          state: 'pending',
          resourceId,
          createdAt: createdAt.toISOString(),
          expiresAt: new Date(createdAt.getTime() + IDEMPOTENCY_RETENTION_MS).toISOString(),
        }),
        true,
      );
    };
    const before = await countFor(org.organization.id);
    const withId = `stale-known-${randomUUID()}`;
    const gid = randomUUID();
    await claim(withId, gid, old);
    const r1 = await keyed(withId, b);
    const e1 = assertError(r1, 503, 'IDEMPOTENCY_OUTCOME_UNKNOWN');
    assert.equal(e1.generationId, gid);
    assert.equal(r1.headers['retry-after'], '2');

    const withoutId = `stale-unknown-${randomUUID()}`;
    await claim(withoutId, null, old);
    const e2 = assertError(await keyed(withoutId, b), 503, 'IDEMPOTENCY_OUTCOME_UNKNOWN');
    assert.equal(e2.generationId, undefined);

    // the same pending claim while still fresh is "in progress"
    const fresh = `fresh-${randomUUID()}`;
    await claim(fresh, null, new Date());
    assertError(await keyed(fresh, b), 409, 'IDEMPOTENCY_IN_PROGRESS');
    assert.equal(await countFor(org.organization.id), before, 'never a second action');
  });

  test('a request refused before anything was created releases its key', async () => {
    const key = `retry-after-fix-${randomUUID()}`;
    const bad = body({
      input: [
        { type: 'video', assetId: randomUUID() },
        { type: 'audio', assetId: audio },
      ],
    });
    assertError(await keyed(key, bad), 422, 'asset_not_found');
    const ok = await keyed(key);
    assert.equal(ok.statusCode, 201, ok.body);
  });

  describe('storage failures while admitting', () => {
    const k = () => t.services.store.db.kysely;
    before(async () => {
      // A fault injected into the database itself: inserting a generation named 'explode' fails; on
      // PostgreSQL one named 'commit-fails' fails only at COMMIT (a deferred constraint trigger).
      if (t.database === 'sqlite') {
        await sql`create trigger t_fail_gen before insert on generations when new.output_file_name = 'explode'
          begin select raise(abort, 'simulated storage failure'); end`.execute(k());
      } else {
        await sql`create function t_fail_gen() returns trigger language plpgsql as
          $$ begin raise exception 'simulated storage failure'; end $$`.execute(k());
        await sql`create trigger t_fail_gen before insert on generations for each row
          when (new.output_file_name = 'explode') execute function t_fail_gen()`.execute(k());
        await sql`create constraint trigger t_fail_commit after insert on generations
          deferrable initially deferred for each row
          when (new.output_file_name = 'commit-fails') execute function t_fail_gen()`.execute(k());
      }
    });
    after(async () => {
      await sql`drop trigger if exists t_fail_gen${t.database === 'sqlite' ? sql`` : sql` on generations`}`.execute(
        k(),
      );
      if (t.database === 'postgres') {
        await sql`drop trigger if exists t_fail_commit on generations`.execute(k());
        await sql`drop function if exists t_fail_gen()`.execute(k());
      }
    });

    test('a failure before the commit: 500 with requestId, the key is released and works once the fault is gone', async () => {
      const key = `fault-${randomUUID()}`;
      const b = body({ outputFileName: 'explode' });
      const before = await countFor(org.organization.id);
      for (let i = 0; i < 2; i++) {
        // the same key again: still the real failure, not "in progress" or "outcome unknown"
        const res = await keyed(key, b);
        const e = assertError(res, 500, 'internal_error');
        assert.equal(typeof e.requestId, 'string');
      }
      assert.equal(await t.services.store.idempotency.find(org.organization.id, 'generate', key), null);
      assert.equal(await countFor(org.organization.id), before);
      // unkeyed: a plain 500 as well
      assertError(await postGenerate(t.app, org.owner.headers, b), 500, 'internal_error');
      // the fault goes away (here: the trigger only fires for that name); the key was never bound
      const ok = await keyed(key, body({ outputFileName: 'fine' }));
      assert.equal(ok.statusCode, 201, ok.body);
    });

    test(
      'a failed COMMIT: 503 IDEMPOTENCY_OUTCOME_UNKNOWN with generationId; the key stays bound to it',
      { skip: DB === 'sqlite' ? 'SQLite has no deferred trigger to make a COMMIT fail' : false },
      async () => {
        const key = `commit-${randomUUID()}`;
        const b = body({ outputFileName: 'commit-fails' });
        const res = await keyed(key, b);
        const e = assertError(res, 503, 'IDEMPOTENCY_OUTCOME_UNKNOWN');
        assert.match(String(e.generationId), /^[0-9a-f-]{36}$/);
        assert.equal(res.headers['retry-after'], '2');
        const claim = await t.services.store.idempotency.find(org.organization.id, 'generate', key);
        assert.equal(claim?.state, 'pending');
        assert.equal(claim?.resourceId, e.generationId);
        // while fresh the claim reads as in progress; once stale, replays name the generation to poll
        assertError(await keyed(key, b), 409, 'IDEMPOTENCY_IN_PROGRESS');
        await k()
          .updateTable('idempotency_keys')
          .set({ created_at: new Date(Date.now() - IDEMPOTENCY_STALE_MS - 1000).toISOString() })
          .where('key', '=', key)
          .execute();
        const later = assertError(await keyed(key, b), 503, 'IDEMPOTENCY_OUTCOME_UNKNOWN');
        assert.equal(later.generationId, e.generationId);
        // polling it tells the client the outcome (here: it was not stored)
        const poll = await t.app.inject({
          method: 'GET',
          url: `/v2/generate/${e.generationId}`,
          headers: org.owner.headers,
        });
        assert.equal(poll.statusCode, 404);
      },
    );
  });

  test('bad key syntax and two headers: 400 on field Idempotency-Key, nothing created', async () => {
    const before = await countFor(org.organization.id);
    for (const k of ['has space', 'x'.repeat(129), 'semi;colon', 'ü']) {
      const res = await keyed(k);
      assert.equal(res.statusCode, 400, `${k}: ${res.body}`);
      assert.equal(res.json().field, 'Idempotency-Key');
    }
    const two = await keyed(['same-key', 'same-key']);
    assert.equal(two.statusCode, 400, two.body);
    assert.equal(two.json().field, 'Idempotency-Key');
    const empty = await keyed('');
    assert.equal(empty.statusCode, 400, empty.body);
    assert.equal(await countFor(org.organization.id), before);
    // 128 characters is fine
    assert.equal((await keyed(`k${'y'.repeat(127)}`)).statusCode, 201);
  });

  test('keys are scoped to the organization', async () => {
    const key = `shared-${randomUUID()}`;
    const b2 = await createOrgWithKey(t.services, { plan: 'enterprise' });
    const v2 = await uploadAsset(t.app, b2.owner.headers, m.video);
    const a2 = await uploadAsset(t.app, b2.owner.headers, m.audioShort);
    const r1 = await keyed(key);
    const r2 = await keyed(
      key,
      body({
        input: [
          { type: 'video', assetId: v2 },
          { type: 'audio', assetId: a2 },
        ],
      }),
      b2,
    );
    assert.equal(r1.statusCode, 201);
    assert.equal(r2.statusCode, 201, 'the other organization is not bound by this key');
    assert.notEqual(r1.json().id, r2.json().id);
    // org B replaying its own key gets its own generation
    const r3 = await keyed(
      key,
      body({
        input: [
          { type: 'video', assetId: v2 },
          { type: 'audio', assetId: a2 },
        ],
      }),
      b2,
    );
    assert.equal(r3.statusCode, 200);
    assert.equal(r3.json().id, r2.json().id);
  });

  test('multipart: the files are part of the payload; a replay creates no new assets', async () => {
    const key = `multipart-${randomUUID()}`;
    const parts = (audioFile: string) => [
      { name: 'model', value: 'lipsync-2' },
      { name: 'video', file: m.video },
      { name: 'audio', file: audioFile },
    ];
    const send = (audioFile: string) =>
      postGenerateForm(t.app, { ...org.owner.headers, 'idempotency-key': key }, parts(audioFile));
    const assetCount = async () =>
      Number(
        (
          await t.services.store.db.kysely
            .selectFrom('assets')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('organization_id', '=', org.organization.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const first = await send(m.audioShort);
    assert.equal(first.statusCode, 201, first.body);
    const assets = await assetCount();
    const replay = await send(m.audioShort);
    assert.equal(replay.statusCode, 200, replay.body);
    assert.equal(replay.json().id, first.json().id);
    assert.equal(await assetCount(), assets);
    assertError(await send(m.audioLong), 409, 'IDEMPOTENCY_KEY_CONFLICT');
  });

  test('keyed admission switched off with `lipsync idempotency disable`: 503 IDEMPOTENCY_UNAVAILABLE until enabled', async () => {
    const env = { ...t.env, LOG_LEVEL: 'silent' };
    const off = await runCliJson(['idempotency', 'disable'], { env });
    assert.equal(off.keyedAdmission, false);
    try {
      const key = `switch-${randomUUID()}`;
      const before = await countFor(org.organization.id);
      const res = await keyed(key);
      assertError(res, 503, 'IDEMPOTENCY_UNAVAILABLE');
      assert.ok(Number(res.headers['retry-after']) > 0);
      assert.equal(await countFor(org.organization.id), before);
      // unkeyed requests are not affected
      assert.equal((await postGenerate(t.app, org.owner.headers, body())).statusCode, 201);
      const on = await runCliJson(['idempotency', 'enable'], { env });
      assert.equal(on.keyedAdmission, true);
      // same key and payload now go through
      assert.equal((await keyed(key)).statusCode, 201);
    } finally {
      await t.services.store.settings.set('idempotency_disabled', '0', new Date().toISOString());
    }
  });

  test('50 simultaneous identical keyed requests create exactly one generation', async () => {
    const racer = await createOrgWithKey(t.services, { plan: 'enterprise' });
    const v = await uploadAsset(t.app, racer.owner.headers, m.video);
    const a = await uploadAsset(t.app, racer.owner.headers, m.audioShort);
    const b = body({
      input: [
        { type: 'video', assetId: v },
        { type: 'audio', assetId: a },
      ],
    });
    const key = `race-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 50 }, () => keyed(key, b, racer)));
    const statuses = results.map((r) => r.statusCode);
    const created = results.filter((r) => r.statusCode === 201);
    assert.equal(created.length, 1, `statuses: ${statuses.join(',')}`);
    const id = created[0].json().id;
    for (const r of results) {
      if (r.statusCode === 409) assert.equal(r.json().errorCode, 'IDEMPOTENCY_IN_PROGRESS', r.body);
      else if (r.statusCode === 200) {
        assert.equal(r.json().id, id);
        assert.equal(r.headers['idempotency-replayed'], 'true');
      } else assert.equal(r.statusCode, 201, r.body);
    }
    assert.equal(await countFor(racer.organization.id), 1);
    // once settled, every retry replays
    const after = await keyed(key, b, racer);
    assert.equal(after.statusCode, 200);
    assert.equal(after.json().id, id);
  });
});
