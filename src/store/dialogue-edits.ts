// Dialogue-edit previews: the public resource of the `dialogue_edit` job kind.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, DialogueEditTable } from './schema.js';
import type { DialogueEdit, PreviewSlot, SourceWord } from '../speech/dialogue/types.js';
import type { VoiceProfile } from '../speech/types.js';
import type { Transcript } from './transcriptions.js';

import type { DialogueEditStatus } from '../domain/dialogue-edits.js';

export type { DialogueEditStatus };

/** What a finished preview produced (stored as one JSON document). */
export interface PreviewOutcome {
  resultWords: SourceWord[];
  slots: PreviewSlot[];
  partial: { failedSlots: number[]; reason: string } | null;
  reused: { slot: number; words: string[] }[];
}

export interface DialogueEditRecord {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  projectId: string | null;
  status: DialogueEditStatus;
  sourceKey: string;
  sourceAssetId: string | null;
  startMs: number;
  endMs: number | null;
  sourceTranscript: Transcript;
  edits: DialogueEdit[];
  /** The voice asked for (a clone or an earlier preview), or null: measured from the source. */
  voiceId: string | null;
  /** The voice synthesized words were spoken in, once known (reusable by later previews). */
  voiceProfile: VoiceProfile | null;
  segmentLipsync: boolean;
  sectionExpansion: boolean;
  rerunOf: string | null;
  previewKey: string | null;
  previewDurationMs: number | null;
  result: PreviewOutcome | null;
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

type Db = Kysely<Database> | Transaction<Database>;
const json = <T>(v: string | null): T | null => (v ? (JSON.parse(v) as T) : null);

function toRecord(r: Selectable<DialogueEditTable>): DialogueEditRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    apiKeyId: r.api_key_id,
    projectId: r.project_id,
    status: r.status as DialogueEditStatus,
    sourceKey: r.source_key,
    sourceAssetId: r.source_asset_id,
    startMs: Number(r.start_ms),
    endMs: r.end_ms === null ? null : Number(r.end_ms),
    sourceTranscript: JSON.parse(r.source_transcript) as Transcript,
    edits: JSON.parse(r.edits) as DialogueEdit[],
    voiceId: r.voice_id,
    voiceProfile: json<VoiceProfile>(r.voice_profile),
    segmentLipsync: r.segment_lipsync === 1,
    sectionExpansion: r.section_expansion === 1,
    rerunOf: r.rerun_of,
    previewKey: r.preview_key,
    previewDurationMs: r.preview_duration_ms === null ? null : Number(r.preview_duration_ms),
    result: json<PreviewOutcome>(r.result),
    errorCode: r.error_code,
    errorMessage: r.error_message,
    errorDetails: json<Record<string, unknown>>(r.error_details),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

export class DialogueEditRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(d: DialogueEditRecord, db: Db = this.db): Promise<void> {
    await db
      .insertInto('dialogue_edits')
      .values({
        id: d.id,
        organization_id: d.organizationId,
        api_key_id: d.apiKeyId,
        project_id: d.projectId,
        status: d.status,
        source_key: d.sourceKey,
        source_asset_id: d.sourceAssetId,
        start_ms: d.startMs,
        end_ms: d.endMs,
        source_transcript: JSON.stringify(d.sourceTranscript),
        edits: JSON.stringify(d.edits),
        voice_id: d.voiceId,
        voice_profile: d.voiceProfile ? JSON.stringify(d.voiceProfile) : null,
        segment_lipsync: d.segmentLipsync ? 1 : 0,
        section_expansion: d.sectionExpansion ? 1 : 0,
        rerun_of: d.rerunOf,
        preview_key: d.previewKey,
        preview_duration_ms: d.previewDurationMs,
        result: d.result ? JSON.stringify(d.result) : null,
        error_code: d.errorCode,
        error_message: d.errorMessage,
        error_details: d.errorDetails ? JSON.stringify(d.errorDetails) : null,
        created_at: d.createdAt,
        updated_at: d.updatedAt,
        started_at: d.startedAt,
        finished_at: d.finishedAt,
      })
      .execute();
  }

  async find(organizationId: string, id: string): Promise<DialogueEditRecord | null> {
    const r = await this.db
      .selectFrom('dialogue_edits')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async findAny(id: string, db: Db = this.db): Promise<DialogueEditRecord | null> {
    const r = await db.selectFrom('dialogue_edits').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRecord(r) : null;
  }
}
