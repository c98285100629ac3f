// Cloned voices and operator blocks on voices.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, VoiceTable } from './schema.js';
import type { ProviderName, VoiceProfile } from '../speech/types.js';
import { isUniqueViolation } from './errors.js';

export interface VoiceRecord {
  id: string;
  organizationId: string;
  name: string;
  provider: ProviderName;
  /** The provider's id of the clone (ElevenLabs); null for a local profile. */
  providerVoiceId: string | null;
  /** The local base voice the profile is applied to. */
  baseVoice: string | null;
  profile: VoiceProfile | null;
  sampleAssetId: string | null;
  sampleSeconds: number | null;
  verifiedAt: string | null;
  createdByKeyId: string | null;
  createdAt: string;
  updatedAt: string;
}

type Q = Kysely<Database> | Transaction<Database>;

export function voiceNameKey(name: string): string {
  return name.trim().toLowerCase();
}

function toVoice(r: Selectable<VoiceTable>): VoiceRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    provider: r.provider as ProviderName,
    providerVoiceId: r.provider_voice_id,
    baseVoice: r.base_voice,
    profile: r.profile ? (JSON.parse(r.profile) as VoiceProfile) : null,
    sampleAssetId: r.sample_asset_id,
    sampleSeconds: r.sample_seconds === null ? null : Number(r.sample_seconds),
    verifiedAt: r.verified_at,
    createdByKeyId: r.created_by_key_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class VoiceRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** False when the organization already has a voice of that name (the unique index decides). */
  async insert(v: VoiceRecord, trx: Q = this.db): Promise<boolean> {
    try {
      await trx
        .insertInto('voices')
        .values({
          id: v.id,
          organization_id: v.organizationId,
          name: v.name,
          name_key: voiceNameKey(v.name),
          provider: v.provider,
          provider_voice_id: v.providerVoiceId,
          base_voice: v.baseVoice,
          profile: v.profile ? JSON.stringify(v.profile) : null,
          sample_asset_id: v.sampleAssetId,
          sample_seconds: v.sampleSeconds,
          verified_at: v.verifiedAt,
          created_by_key_id: v.createdByKeyId,
          created_at: v.createdAt,
          updated_at: v.updatedAt,
        })
        .execute();
      return true;
    } catch (err) {
      if (isUniqueViolation(err) && (await this.findByName(v.organizationId, v.name))) return false;
      throw err;
    }
  }

  async findByName(organizationId: string, name: string, trx: Q = this.db): Promise<VoiceRecord | null> {
    const r = await trx
      .selectFrom('voices')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name_key', '=', voiceNameKey(name))
      .executeTakeFirst();
    return r ? toVoice(r) : null;
  }

  /** Any organization's voice: the caller tells "not yours" from "does not exist". */
  async findAny(id: string): Promise<VoiceRecord | null> {
    const r = await this.db.selectFrom('voices').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toVoice(r) : null;
  }

  async list(organizationId: string, provider?: string): Promise<VoiceRecord[]> {
    let q = this.db.selectFrom('voices').selectAll().where('organization_id', '=', organizationId);
    if (provider) q = q.where('provider', '=', provider);
    const rows = await q.orderBy('created_at').orderBy('id').execute();
    return rows.map(toVoice);
  }

  async count(organizationId: string, trx: Q = this.db): Promise<number> {
    const r = await trx
      .selectFrom('voices')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('voices')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async markVerified(id: string, at: string): Promise<boolean> {
    const r = await this.db
      .updateTable('voices')
      .set({ verified_at: at, updated_at: at })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async block(voiceId: string, reason: string | null): Promise<void> {
    await this.db.deleteFrom('voice_blocks').where('voice_id', '=', voiceId).execute();
    await this.db
      .insertInto('voice_blocks')
      .values({ voice_id: voiceId, reason, created_at: new Date().toISOString() })
      .execute();
  }

  async unblock(voiceId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('voice_blocks').where('voice_id', '=', voiceId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** The block on a voice id, or null. */
  async blockOf(voiceId: string): Promise<{ reason: string | null } | null> {
    const r = await this.db
      .selectFrom('voice_blocks')
      .select('reason')
      .where('voice_id', '=', voiceId)
      .executeTakeFirst();
    return r ? { reason: r.reason } : null;
  }

  async blockedIds(): Promise<Set<string>> {
    const rows = await this.db.selectFrom('voice_blocks').select('voice_id').execute();
    return new Set(rows.map((r) => r.voice_id));
  }
}
