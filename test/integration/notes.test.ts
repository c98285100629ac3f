// /v2/generations/{id}/notes (our extension): notes pinned to moments of the output, scoped to the
// organization, bounded per generation, and deleted with their generation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { completedGenerationRecord } from '../helpers/generations.js';
import { MAX_NOTES_PER_GENERATION } from '../../src/domain/notes.js';

describe(`generation notes (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;

  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services);
    other = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  const call = (who: TestOrg, method: string, url: string, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: who.owner.headers, payload: payload as object });

  /** A COMPLETED generation of `who`, 5 seconds long. */
  async function generation(who: TestOrg): Promise<string> {
    const g = completedGenerationRecord(who.organization.id);
    await t.services.store.generations.insert(g);
    return g.id;
  }

  const storedNotes = async (generationId: string) =>
    t.services.store.db.kysely
      .selectFrom('generation_notes')
      .select('id')
      .where('generation_id', '=', generationId)
      .execute();

  test('add, list in timeline order, edit, resolve, delete', async () => {
    const id = await generation(org);
    const late = await call(org, 'POST', `/v2/generations/${id}/notes`, { atMs: 4200, text: ' Lips late ' });
    assert.equal(late.statusCode, 201, late.body);
    const n = late.json();
    assert.deepEqual(
      { atMs: n.atMs, text: n.text, resolved: n.resolved, author: n.author, generationId: n.generationId },
      { atMs: 4200, text: 'Lips late', resolved: false, author: 'Owner key', generationId: id },
    );
    const early = (await call(org, 'POST', `/v2/generations/${id}/notes`, { atMs: 0, text: 'Start' })).json();
    const list = await call(org, 'GET', `/v2/generations/${id}/notes`);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json().map((x: { id: string }) => x.id),
      [early.id, n.id],
    );

    const resolved = await call(org, 'PATCH', `/v2/generations/${id}/notes/${n.id}`, {
      resolved: true,
      text: 'Lips late (fixed)',
    });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().resolved, true);
    assert.equal(resolved.json().text, 'Lips late (fixed)');
    assert.equal(resolved.json().atMs, 4200);
    assert.equal(resolved.json().createdAt, n.createdAt);

    const del = await call(org, 'DELETE', `/v2/generations/${id}/notes/${early.id}`);
    assert.equal(del.statusCode, 200);
    assert.equal(del.json().id, early.id);
    const gone = await call(org, 'DELETE', `/v2/generations/${id}/notes/${early.id}`);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().errorCode, 'note_not_found');
    assert.deepEqual(
      (await call(org, 'GET', `/v2/generations/${id}/notes`)).json().map((x: { id: string }) => x.id),
      [n.id],
    );
  });

  test('bad moments and texts are 400s that name the field', async () => {
    const id = await generation(org);
    const cases: [unknown, string][] = [
      [{ atMs: 5101, text: 'after the end' }, 'atMs'],
      [{ atMs: -1, text: 'before the start' }, 'atMs'],
      [{ atMs: 1.5, text: 'half a millisecond' }, 'atMs'],
      [{ atMs: 100, text: '   ' }, 'text'],
      [{ atMs: 100, text: 'x'.repeat(2001) }, 'text'],
      [{ atMs: 100 }, 'text'],
    ];
    for (const [body, field] of cases) {
      const res = await call(org, 'POST', `/v2/generations/${id}/notes`, body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.body}`);
      assert.equal(res.json().errorCode, 'invalid_request');
      assert.match(res.json().field ?? '', new RegExp(field), res.body);
    }
    const n = (
      await call(org, 'POST', `/v2/generations/${id}/notes`, { atMs: 5000, text: 'the end' })
    ).json();
    const moved = await call(org, 'PATCH', `/v2/generations/${id}/notes/${n.id}`, { atMs: 9000 });
    assert.equal(moved.statusCode, 400);
    assert.equal(moved.json().field, 'atMs');
    const empty = await call(org, 'PATCH', `/v2/generations/${id}/notes/${n.id}`, {});
    assert.equal(empty.statusCode, 400);
  });

  test("another organization's generation and notes are not found", async () => {
    const id = await generation(org);
    const n = (await call(org, 'POST', `/v2/generations/${id}/notes`, { atMs: 10, text: 'mine' })).json();
    for (const [method, url, body] of [
      ['GET', `/v2/generations/${id}/notes`, undefined],
      ['POST', `/v2/generations/${id}/notes`, { atMs: 10, text: 'theirs' }],
      ['PATCH', `/v2/generations/${id}/notes/${n.id}`, { resolved: true }],
      ['DELETE', `/v2/generations/${id}/notes/${n.id}`, undefined],
    ] as const) {
      const res = await call(other, method, url, body);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.equal(res.json().errorCode, 'generation_not_found');
    }
    // A note is reached only through its own generation.
    const elsewhere = await generation(org);
    const wrong = await call(org, 'PATCH', `/v2/generations/${elsewhere}/notes/${n.id}`, { resolved: true });
    assert.equal(wrong.statusCode, 404);
    assert.equal(wrong.json().errorCode, 'note_not_found');
    const unknown = await call(org, 'GET', `/v2/generations/${randomUUID()}/notes`);
    assert.equal(unknown.json().errorCode, 'generation_not_found');
    const after = (await call(org, 'GET', `/v2/generations/${id}/notes`)).json();
    assert.deepEqual(
      after.map((x: { text: string; resolved: boolean }) => [x.text, x.resolved]),
      [['mine', false]],
    );
  });

  test('a generation holds a bounded number of notes, however many requests race', async () => {
    const id = await generation(org);
    const now = new Date().toISOString();
    // Filled in one statement: the API's own inserts are what races below.
    await t.services.store.db.kysely
      .insertInto('generation_notes')
      .values(
        Array.from({ length: MAX_NOTES_PER_GENERATION - 3 }, (_, i) => ({
          id: randomUUID(),
          organization_id: org.organization.id,
          generation_id: id,
          at_ms: i,
          text: `note ${i}`,
          resolved: 0,
          author: 'test',
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(org, 'POST', `/v2/generations/${id}/notes`, { atMs: 1000 + i, text: `racing ${i}` }),
      ),
    );
    const codes = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [201, 201, 201, 409, 409, 409]);
    const refused = answers.find((r) => r.statusCode === 409)!.json();
    assert.equal(refused.errorCode, 'note_limit_reached');
    assert.equal((await storedNotes(id)).length, MAX_NOTES_PER_GENERATION);
  });

  test('deleting the generation deletes its notes', async () => {
    const id = await generation(org);
    const keep = await generation(org);
    for (const g of [id, keep])
      assert.equal(
        (await call(org, 'POST', `/v2/generations/${g}/notes`, { atMs: 1, text: 'x' })).statusCode,
        201,
      );
    assert.equal((await call(org, 'DELETE', `/v2/generations/${id}`)).statusCode, 200);
    assert.deepEqual(await storedNotes(id), []);
    assert.equal((await storedNotes(keep)).length, 1);
    const res = await call(org, 'GET', `/v2/generations/${id}/notes`);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().errorCode, 'generation_not_found');
  });
});
