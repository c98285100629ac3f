// Migration 0012 on a database that already holds webhook deliveries: a generation's and a batch's
// deliveries (and their attempts) keep naming their resource as subject_id, and going down restores
// the generation ids.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type Db } from '../../src/store/database.js';
import * as m0001 from '../../src/store/migrations/0001_initial.js';
import * as m0002 from '../../src/store/migrations/0002_assets_extra.js';
import * as m0003 from '../../src/store/migrations/0003_generations.js';
import * as m0004 from '../../src/store/migrations/0004_jobs.js';
import * as m0005 from '../../src/store/migrations/0005_speech.js';
import * as m0006 from '../../src/store/migrations/0006_transcriptions.js';
import * as m0007 from '../../src/store/migrations/0007_dialogue_edits.js';
import * as m0008 from '../../src/store/migrations/0008_batches.js';
import * as m0009 from '../../src/store/migrations/0009_asset_sha256.js';
import * as m0010 from '../../src/store/migrations/0010_worker_tokens.js';
import * as m0011 from '../../src/store/migrations/0011_asset_probe.js';
import * as m0012 from '../../src/store/migrations/0012_webhook_subjects.js';
import { createTestSchema, testDatabase, type TestSchema } from '../helpers/database.js';

const DB = testDatabase();
const BEFORE = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011];

describe(`migration 0012, webhook subjects (${DB})`, () => {
  let dir: string;
  let schema: TestSchema | null = null;
  let db: Db;
  let k: Kysely<any>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-m0012-'));
    if (DB === 'postgres') schema = await createTestSchema();
    db = openDatabase({ databaseUrl: schema?.url ?? null, dataDir: dir });
    k = db.kysely as Kysely<any>;
    for (const m of BEFORE) await m.up(k);
  });
  after(async () => {
    await db?.close();
    await schema?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const delivery = (id: string, generationId: string | null, event: string, payload: unknown) => ({
    id,
    organization_id: 'org',
    generation_id: generationId,
    event,
    url: 'https://example.com/hook',
    payload: JSON.stringify(payload),
    status: 'delivered',
    attempts: 1,
    next_attempt_at: '2026-01-01T00:00:00.000Z',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });
  const attempt = (id: string, deliveryId: string, generationId: string | null) => ({
    id,
    delivery_id: deliveryId,
    generation_id: generationId,
    attempt: 1,
    status_code: 200,
    duration_ms: 5,
    attempted_at: '2026-01-01T00:00:01.000Z',
  });

  test('up names each delivery and attempt by its resource; down gives generations their ids back', async () => {
    await k
      .insertInto('webhook_deliveries')
      .values([
        delivery('d-gen', 'gen-1', 'generation.status', { id: 'gen-1', status: 'COMPLETED' }),
        delivery('d-batch', null, 'batch.status', { batchId: 'batch-1', status: 'COMPLETED' }),
      ])
      .execute();
    await k
      .insertInto('webhook_attempts')
      .values([attempt('a-gen', 'd-gen', 'gen-1'), attempt('a-batch', 'd-batch', null)])
      .execute();

    await m0012.up(k);
    const deliveries = await sql<{ id: string; subject_id: string }>`
      select id, subject_id from webhook_deliveries order by id`.execute(k);
    assert.deepEqual(
      deliveries.rows.map((r) => [r.id, r.subject_id]),
      [
        ['d-batch', 'batch-1'],
        ['d-gen', 'gen-1'],
      ],
    );
    const attempts = await sql<{ id: string; subject_id: string }>`
      select id, subject_id from webhook_attempts order by id`.execute(k);
    assert.deepEqual(
      attempts.rows.map((r) => [r.id, r.subject_id]),
      [
        ['a-batch', 'batch-1'],
        ['a-gen', 'gen-1'],
      ],
    );

    await m0012.down(k);
    const back = await sql<{ id: string; generation_id: string | null }>`
      select id, generation_id from webhook_attempts order by id`.execute(k);
    assert.deepEqual(
      back.rows.map((r) => [r.id, r.generation_id]),
      [
        ['a-batch', null],
        ['a-gen', 'gen-1'],
      ],
    );
  });
});
