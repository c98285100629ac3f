// Review notes on a generation's output (0021). Every statement names the organization, so a note is
// never read or changed through another organization's generation.
import type { Kysely, Selectable } from 'kysely';
import type { Database, GenerationNoteTable } from './schema.js';

export interface NoteRecord {
  id: string;
  organizationId: string;
  generationId: string;
  atMs: number;
  text: string;
  resolved: boolean;
  author: string;
  createdAt: string;
  updatedAt: string;
}

export interface NotePatch {
  atMs?: number;
  text?: string;
  resolved?: boolean;
}

function toNote(r: Selectable<GenerationNoteTable>): NoteRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    generationId: r.generation_id,
    atMs: Number(r.at_ms),
    text: r.text,
    resolved: Number(r.resolved) === 1,
    author: r.author,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class NoteRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** In the order of the timeline: by moment, then by when they were written. */
  async list(organizationId: string, generationId: string): Promise<NoteRecord[]> {
    const rows = await this.db
      .selectFrom('generation_notes')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('generation_id', '=', generationId)
      .orderBy('at_ms')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toNote);
  }

  async find(organizationId: string, generationId: string, id: string): Promise<NoteRecord | null> {
    const r = await this.db
      .selectFrom('generation_notes')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('generation_id', '=', generationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toNote(r) : null;
  }

  /**
   * Inserts the note while its generation is live, once `assertRoom` accepts the current count. The
   * transaction first writes the generation's row (a no-op): that row lock makes parallel inserts
   * count one after another, and a delete of the generation either waits for this insert (and then
   * deletes the note with it) or wins (and this finds no live generation). false: no live generation.
   */
  async insertWithinLimit(n: NoteRecord, assertRoom: (current: number) => void): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const locked = await trx
        .updateTable('generations')
        .set((eb) => ({ updated_at: eb.ref('updated_at') }))
        .where('id', '=', n.generationId)
        .where('organization_id', '=', n.organizationId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(locked.numUpdatedRows) === 0) return false;
      const c = await trx
        .selectFrom('generation_notes')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('generation_id', '=', n.generationId)
        .executeTakeFirstOrThrow();
      assertRoom(Number(c.n));
      await trx
        .insertInto('generation_notes')
        .values({
          id: n.id,
          organization_id: n.organizationId,
          generation_id: n.generationId,
          at_ms: n.atMs,
          text: n.text,
          resolved: n.resolved ? 1 : 0,
          author: n.author,
          created_at: n.createdAt,
          updated_at: n.updatedAt,
        })
        .execute();
      return true;
    });
  }

  async update(
    organizationId: string,
    generationId: string,
    id: string,
    patch: NotePatch,
    now: string,
  ): Promise<NoteRecord | null> {
    const r = await this.db
      .updateTable('generation_notes')
      .set({
        ...(patch.atMs !== undefined ? { at_ms: patch.atMs } : {}),
        ...(patch.text !== undefined ? { text: patch.text } : {}),
        ...(patch.resolved !== undefined ? { resolved: patch.resolved ? 1 : 0 } : {}),
        updated_at: now,
      })
      .where('organization_id', '=', organizationId)
      .where('generation_id', '=', generationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0 ? this.find(organizationId, generationId, id) : null;
  }

  async delete(organizationId: string, generationId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('generation_notes')
      .where('organization_id', '=', organizationId)
      .where('generation_id', '=', generationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
