import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Small operator switches shared by every process on the database (admission pause, ...). */
export class SettingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(key: string): Promise<string | null> {
    const r = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return r ? r.value : null;
  }

  async set(key: string, value: string, now: string): Promise<void> {
    await this.db
      .insertInto('settings')
      .values({ key, value, updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
      .execute();
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('settings').where('key', '=', key).execute();
  }
}
