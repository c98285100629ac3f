// Worker tokens: the credential of a remote worker (hashed; the token itself is shown once).
import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';

export interface WorkerTokenTable {
  id: string;
  name: string;
  prefix: string;
  token_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface WorkerTokenRecord {
  id: string;
  name: string;
  prefix: string;
  tokenHash: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

type Db = Kysely<Database & { worker_tokens: WorkerTokenTable }>;

function toRecord(r: Selectable<WorkerTokenTable>): WorkerTokenRecord {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    tokenHash: r.token_hash,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

export class WorkerTokenRepository {
  private readonly db: Db;

  constructor(db: Kysely<Database>) {
    this.db = db.withTables<{ worker_tokens: WorkerTokenTable }>();
  }

  async insert(t: WorkerTokenRecord): Promise<void> {
    await this.db
      .insertInto('worker_tokens')
      .values({
        id: t.id,
        name: t.name,
        prefix: t.prefix,
        token_hash: t.tokenHash,
        created_at: t.createdAt,
        last_used_at: t.lastUsedAt,
        revoked_at: t.revokedAt,
      })
      .execute();
  }

  async findByHash(hash: string): Promise<WorkerTokenRecord | null> {
    const r = await this.db
      .selectFrom('worker_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async findById(id: string): Promise<WorkerTokenRecord | null> {
    const r = await this.db.selectFrom('worker_tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async list(): Promise<WorkerTokenRecord[]> {
    const rows = await this.db
      .selectFrom('worker_tokens')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  async revoke(id: string, at: string): Promise<void> {
    await this.db
      .updateTable('worker_tokens')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable('worker_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
