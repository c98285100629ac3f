// Dialogue edits: POST /v2/dialogue-edits (checked completely before any job exists: API-key rules,
// the source in our storage, every edit against the transcript, the voice) and GET. The preview is a
// `dialogue_edit` job (src/handlers/dialogue-edit.ts).
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { DialogueEditRecord } from '../store/dialogue-edits.js';
import type { AuthContext } from './api-keys.js';
import type { AssetService } from './assets.js';
import type { JobQueue } from '../jobs/queue.js';
import { DIALOGUE_EDIT_KIND } from '../domain/job-kinds.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { normaliseDialogueEditRequest } from '../domain/dialogue-edits.js';
import { DialogueEditError, validateEdits } from '../speech/dialogue/index.js';
import type { VoiceProfile } from '../speech/types.js';

export class DialogueEditService {
  constructor(
    private readonly deps: { config: Config; store: Store; assets: AssetService; queue: JobQueue },
  ) {}

  async create(auth: AuthContext, body: Record<string, unknown>): Promise<DialogueEditRecord> {
    const org = auth.organization;
    const req = normaliseDialogueEditRequest(body, org, auth.session !== null);
    const { store } = this.deps;
    if (req.projectId && !(isUuid(req.projectId) && (await store.projects.find(org.id, req.projectId))))
      throw new AppError('project_not_found', { status: 422, field: 'projectId' });
    const found = await this.deps.assets.resolveOwn(org.id, { url: req.sourceVideoUrl });
    if ('problem' in found || found.asset.type !== 'VIDEO')
      throw new AppError('dialogue_edit_source_not_accessible', { field: 'sourceVideoUrl' });
    const source = found.asset;
    const sourceMs = Math.round((source.durationSeconds ?? 0) * 1000);
    if (req.startMs >= sourceMs)
      throw new AppError('invalid_request', {
        field: 'startMs',
        message: `startMs must be before the end of the source (${sourceMs} ms)`,
      });
    try {
      validateEdits(req.words, req.edits, { sourceDurationMs: sourceMs });
    } catch (err) {
      if (err instanceof DialogueEditError)
        throw new AppError('invalid_request', { field: err.field, message: err.message, cause: err });
      throw err;
    }
    const voiceProfile = req.voiceId ? await this.voice(org.id, req.voiceId) : null;
    if (req.rerunOfJobId) {
      const earlier = isUuid(req.rerunOfJobId)
        ? await store.dialogueEdits.find(org.id, req.rerunOfJobId)
        : null;
      if (!earlier || JSON.stringify(earlier.edits) !== JSON.stringify(req.edits))
        throw new AppError('invalid_request', {
          field: 'rerunOfJobId',
          message: 'rerunOfJobId must name an earlier preview of this organization with the same edits.',
        });
    }
    const now = new Date().toISOString();
    const d: DialogueEditRecord = {
      id: randomUUID(),
      organizationId: org.id,
      apiKeyId: auth.key?.id ?? null,
      projectId: req.projectId,
      status: 'PENDING',
      sourceKey: source.storageKey,
      sourceAssetId: source.id,
      startMs: req.startMs,
      endMs: req.endMs,
      sourceTranscript: req.transcript,
      edits: req.edits,
      voiceId: req.voiceId,
      voiceProfile,
      // Both flags are required for API keys (checked above), so both hold for this preview.
      segmentLipsync: true,
      sectionExpansion: true,
      rerunOf: req.rerunOfJobId,
      previewKey: null,
      previewDurationMs: null,
      result: null,
      errorCode: null,
      errorMessage: null,
      errorDetails: null,
      createdAt: now,
      updatedAt: now,
      startedAt: null,
      finishedAt: null,
    };
    await store.db.kysely.transaction().execute(async (trx) => {
      await store.dialogueEdits.insert(d, trx);
      await this.deps.queue.enqueue(trx, {
        kind: DIALOGUE_EDIT_KIND,
        subjectId: d.id,
        organizationId: org.id,
        payload: { dialogueEditId: d.id },
        payloadVersion: 1,
        maxAttempts: this.deps.config.jobMaxAttempts,
        timeoutMs: this.deps.config.jobTimeoutMs,
      });
    });
    await this.deps.queue.announce(DIALOGUE_EDIT_KIND);
    return d;
  }

  async get(organizationId: string, id: string): Promise<DialogueEditRecord> {
    const d = isUuid(id) ? await this.deps.store.dialogueEdits.find(organizationId, id) : null;
    if (!d) throw new AppError('dialogue_edit_not_found', { field: 'id' });
    return d;
  }

  /** The client's view (api-details 2.3); URLs are signed afresh. */
  async view(d: DialogueEditRecord) {
    const done = d.status === 'COMPLETED' || d.status === 'COMPLETED_PARTIAL';
    const r = done ? d.result : null;
    return {
      id: d.id,
      status: d.status,
      createdAt: d.createdAt,
      sourceVideoUrl: await this.deps.assets.urlOfKey(d.sourceKey),
      sourceStartMs: d.startMs,
      sourceEndMs: d.endMs,
      edits: d.edits,
      segmentLipsyncEnabled: d.segmentLipsync,
      sectionExpansionEnabled: d.sectionExpansion,
      sourceTranscript: d.sourceTranscript,
      // A preview's measured voice can be reused by naming the preview as voiceId.
      voiceId: d.voiceId ?? (done && d.voiceProfile ? d.id : null),
      previewAudioUrl: done && d.previewKey ? await this.deps.assets.urlOfKey(d.previewKey) : null,
      previewDurationMs: done ? d.previewDurationMs : null,
      resultTranscript: r
        ? { segments: [{ id: 's1', words: r.resultWords.map((w) => ({ ...w, speakerId: null })) }] }
        : null,
      resultSlots: r ? r.slots : null,
      reusedWords: r ? r.reused : null,
      partialDetail: d.status === 'COMPLETED_PARTIAL' && r ? r.partial : null,
      error:
        d.status === 'FAILED'
          ? { code: d.errorCode, message: d.errorMessage, ...(d.errorDetails ?? {}) }
          : null,
      rerunOfJobId: d.rerunOf,
      projectId: d.projectId,
      startedAt: d.startedAt,
      finishedAt: d.finishedAt,
    };
  }

  /** A voice for synthesized words: a local clone of the organization, or an earlier preview's. */
  private async voice(orgId: string, voiceId: string): Promise<VoiceProfile> {
    const clone = isUuid(voiceId) ? await this.deps.store.voices.findAny(voiceId) : null;
    if (clone) {
      if (clone.organizationId !== orgId) throw new AppError('voice_access_denied', { field: 'voiceId' });
      if (!clone.profile)
        throw new AppError('voice_not_found', {
          field: 'voiceId',
          message: 'Dialogue previews speak with local voice profiles; this clone has none.',
        });
      return clone.profile;
    }
    const earlier = isUuid(voiceId) ? await this.deps.store.dialogueEdits.find(orgId, voiceId) : null;
    if (earlier?.voiceProfile) return earlier.voiceProfile;
    throw new AppError('voice_not_found', { field: 'voiceId' });
  }
}
