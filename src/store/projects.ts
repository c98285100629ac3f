import type { Kysely, Selectable } from 'kysely';
import type { Database, ProjectTable } from './schema.js';

export interface Project {
  id: string;
  organizationId: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

function toProject(r: Selectable<ProjectTable>): Project {
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class ProjectRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(p: Project): Promise<void> {
    await this.db
      .insertInto('projects')
      .values({
        id: p.id,
        organization_id: p.organizationId,
        name: p.name,
        created_at: p.createdAt,
        updated_at: p.updatedAt,
      })
      .execute();
  }

  async find(organizationId: string, id: string): Promise<Project | null> {
    const r = await this.db
      .selectFrom('projects')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toProject(r) : null;
  }

  /** Newest first; the cursor is the id of the last project of the previous page. */
  async list(organizationId: string, opts: { limit: number; cursor?: Project | null }): Promise<Project[]> {
    let q = this.db.selectFrom('projects').selectAll().where('organization_id', '=', organizationId);
    const c = opts.cursor;
    if (c) {
      q = q.where((eb) =>
        eb.or([
          eb('created_at', '<', c.createdAt),
          eb.and([eb('created_at', '=', c.createdAt), eb('id', '<', c.id)]),
        ]),
      );
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit).execute();
    return rows.map(toProject);
  }

  async rename(organizationId: string, id: string, name: string, now: string): Promise<void> {
    await this.db
      .updateTable('projects')
      .set({ name, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  }

  async delete(organizationId: string, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('assets')
        .set({ project_id: null })
        .where('organization_id', '=', organizationId)
        .where('project_id', '=', id)
        .execute();
      await trx
        .deleteFrom('projects')
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .execute();
    });
  }
}
