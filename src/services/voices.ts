// Voices: the providers' built-in voices and the organization's clones (list, get, clone, delete),
// and the operator's controls (block, verify). A local clone is a voice profile measured from the
// sample and applied to the nearest built-in voice; an ElevenLabs clone is made by ElevenLabs.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { VoiceRecord } from '../store/voices.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { AuthContext } from './api-keys.js';
import type { AssetService } from './assets.js';
import type { Organization } from '../store/organizations.js';
import { insertWithinLimit, precheckLimit, type RowLimit } from './row-limits.js';
import { speechError, type SpeechService } from './speech.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { PLAN_LIMITS } from '../domain/plans.js';
import { isProviderName, PROVIDER_NAMES } from '../domain/tts.js';
import { makeTempDir, removeTempDir } from '../media/tempdir.js';
import {
  extractSample,
  LOCAL_BASE_VOICES,
  measureVoiceProfile,
  MIN_VOICED_SECONDS,
  nearestBaseVoice,
} from '../speech/voice-profile.js';
import { SpeechProviderError, type ProviderName, type ProviderVoice } from '../speech/types.js';

/** The staged-sample limit of the public API (api-details 4.2). */
export const MAX_SAMPLE_BYTES = 1024 ** 3;

export interface CloneBody {
  name?: unknown;
  provider?: unknown;
  url?: unknown;
  assetId?: unknown;
}

export interface VoiceView {
  id: string;
  name: string;
  provider: ProviderName;
  voiceId: string;
  type: 'builtin' | 'cloned';
  labels?: Record<string, string>;
  baseVoice?: string;
  createdAt?: string;
  restriction?: { code: string; message: string };
}

function bad(field: string, message: string): never {
  throw new AppError('invalid_request', { field, message });
}

export class VoiceService {
  constructor(
    private readonly deps: {
      config: Config;
      store: Store;
      blobs: BlobStore;
      assets: AssetService;
      speech: SpeechService;
      logger: Logger;
    },
  ) {}

  /** GET /v2/voices: built-in voices of each provider (or the one asked for), then the clones. */
  async list(auth: AuthContext, provider?: string): Promise<VoiceView[]> {
    const org = auth.organization;
    if (provider !== undefined && !isProviderName(provider))
      bad('provider', `provider must be one of ${PROVIDER_NAMES.join(', ')}`);
    const names = provider ? [provider] : [...this.deps.speech.providers.keys()];
    const blocked = await this.deps.store.voices.blockedIds();
    const views: VoiceView[] = [];
    for (const name of names) {
      if (!this.deps.speech.providers.has(name)) continue;
      const voices: ProviderVoice[] = await this.deps.speech.listProviderVoices(org, name).catch((err) => {
        // One provider's outage must not hide the others' voices when listing them all.
        if (!provider && err instanceof AppError) {
          this.deps.logger.warn({ provider: name, code: err.code }, 'listing provider voices failed');
          return [];
        }
        throw err;
      });
      for (const v of voices) views.push(builtinView(name, v, blocked.has(v.providerVoiceId)));
    }
    const clones = await this.deps.store.voices.list(org.id, provider);
    for (const c of clones) views.push(this.cloneView(c, blocked.has(c.id)));
    return views;
  }

  /** GET /v2/voices/{id}: a clone by id, or a provider's built-in voice (provider narrows it). */
  async get(auth: AuthContext, id: string, provider?: string): Promise<VoiceView> {
    if (isUuid(id)) {
      const c = await this.ownClone(auth, id);
      return this.cloneView(c, (await this.deps.store.voices.blockOf(c.id)) !== null);
    }
    const all = await this.list(auth, provider);
    const v = all.find((x) => x.type === 'builtin' && x.id === id);
    if (!v) throw new AppError('voice_not_found', { status: 404, field: 'id' });
    return v;
  }

  /** POST /v2/voices. */
  async clone(auth: AuthContext, body: CloneBody): Promise<VoiceView> {
    const org = auth.organization;
    const name = typeof body.name === 'string' ? body.name.trim() : '';
    if (name === '' || [...name].length > 100) bad('name', 'name must be 1 to 100 characters');
    if (body.provider !== undefined && body.provider !== null && !isProviderName(body.provider))
      bad('provider', `provider must be one of ${PROVIDER_NAMES.join(', ')}`);
    const provider: ProviderName = isProviderName(body.provider) ? body.provider : 'local';
    const hasUrl = typeof body.url === 'string' && body.url !== '';
    const hasAsset = typeof body.assetId === 'string' && body.assetId !== '';
    if (hasUrl === hasAsset) bad('url', 'send exactly one of url or assetId');
    const p = this.deps.speech.provider(provider);
    if (provider !== 'local' && !p.clone)
      throw new AppError('voice_clone_unsupported', { field: 'provider' });
    const slots = this.cloneSlots(org);
    await precheckLimit(this.deps.store, slots);
    if (await this.deps.store.voices.findByName(org.id, name))
      throw new AppError('voice_name_conflict', { field: 'name' });
    const sample = await this.sample(
      org.id,
      hasAsset ? { assetId: body.assetId as string } : { url: body.url as string },
    );
    if (sample.size > MAX_SAMPLE_BYTES) throw new AppError('voice_sample_source_too_large');
    if (sample.type === 'IMAGE') throw new AppError('voice_sample_type_unsupported', { field: sample.field });

    const dir = await makeTempDir('voice-', this.deps.config.tempDir);
    try {
      const source = join(dir, 'source');
      const wav = join(dir, 'sample.wav');
      await this.deps.blobs.download(sample.storageKey, source);
      await extractSample(source, wav).catch((err: unknown) => {
        throw new AppError('voice_sample_type_unsupported', { field: sample.field, cause: err });
      });
      const m = await measureVoiceProfile(wav, { workDir: dir });
      if (m.voicedSeconds < MIN_VOICED_SECONDS)
        throw new AppError('voice_sample_too_short', {
          field: sample.field,
          message: `The sample holds ${m.voicedSeconds.toFixed(1)} s of voiced speech in ${m.durationSeconds.toFixed(1)} s; a clone needs at least ${MIN_VOICED_SECONDS} s.`,
          suggestion: `Send a recording of one person speaking with at least ${MIN_VOICED_SECONDS} s of voiced speech (pauses, whispers and noise do not count); 30 s or more gives the closest match.`,
        });
      const now = new Date().toISOString();
      const record: VoiceRecord = {
        id: randomUUID(),
        organizationId: org.id,
        name,
        provider,
        providerVoiceId: null,
        baseVoice: null,
        profile: null,
        sampleAssetId: sample.id,
        sampleSeconds: m.durationSeconds,
        verifiedAt: this.deps.config.speech.cloneVerification ? null : now,
        createdByKeyId: auth.key?.id ?? null,
        createdAt: now,
        updatedAt: now,
      };
      if (provider === 'local') {
        const installed = new Set((await p.listVoices({})).map((v) => v.providerVoiceId));
        const base = nearestBaseVoice(
          m.profile,
          LOCAL_BASE_VOICES.filter((c) => installed.has(c.providerVoiceId)),
        );
        record.baseVoice = base;
        record.profile = { ...m.profile, baseVoice: base };
      } else {
        const apiKey = await this.deps.speech.ownKey(org, provider);
        const made = await (p.clone as NonNullable<typeof p.clone>)({
          name,
          samplePath: wav,
          apiKey,
          workDir: dir,
        }).catch((err: unknown) => {
          if (err instanceof SpeechProviderError) throw speechError(err, apiKey !== null, 'url');
          throw err;
        });
        record.providerVoiceId = made.providerVoiceId;
        if (made.requiresVerification) record.verifiedAt = null;
      }
      const { store } = this.deps;
      try {
        await insertWithinLimit(store, org.id, slots, async (trx) => {
          if ((await store.voices.findByName(org.id, name, trx)) || !(await store.voices.insert(record, trx)))
            throw new AppError('voice_name_conflict', { field: 'name' });
        });
      } catch (err) {
        if (record.providerVoiceId) await this.removeAtProvider(record);
        throw err;
      }
      return this.cloneView(record, false);
    } finally {
      await removeTempDir(dir);
    }
  }

  /** The plan's clone slots: an organization keeps at most this many cloned voices. */
  private cloneSlots(org: Organization): RowLimit {
    const allowed = PLAN_LIMITS[org.plan].voiceCloneSlots;
    return {
      count: (db) => this.deps.store.voices.count(org.id, db),
      assertRoom: (current) => {
        if (current >= allowed)
          throw new AppError('voice_clone_limit_reached', {
            message: `The ${org.plan} plan keeps at most ${allowed} cloned voices.`,
          });
      },
    };
  }

  /** DELETE /v2/voices/{id}: only clones; frees a clone slot. */
  async delete(auth: AuthContext, id: string): Promise<true> {
    if (!isUuid(id)) {
      throw new AppError('voice_not_deletable', { field: 'id' });
    }
    const c = await this.ownClone(auth, id);
    await this.removeAtProvider(c);
    if (!(await this.deps.store.voices.delete(auth.organization.id, c.id)))
      throw new AppError('voice_not_found', { status: 404, field: 'id' });
    return true;
  }

  /** Operator: a clone's consent is verified (lipsync voice verify ID). */
  async verify(id: string): Promise<boolean> {
    return isUuid(id) && this.deps.store.voices.markVerified(id, new Date().toISOString());
  }

  /** Operator: blocks any voice id (built-in or clone). */
  async block(id: string, reason: string | null): Promise<void> {
    await this.deps.store.voices.block(id, reason);
  }

  async unblock(id: string): Promise<boolean> {
    return this.deps.store.voices.unblock(id);
  }

  private async ownClone(auth: AuthContext, id: string): Promise<VoiceRecord> {
    const c = await this.deps.store.voices.findAny(id);
    if (!c) throw new AppError('voice_not_found', { status: 404, field: 'id' });
    if (c.organizationId !== auth.organization.id) throw new AppError('voice_access_denied', { field: 'id' });
    return c;
  }

  private async removeAtProvider(c: VoiceRecord): Promise<void> {
    const p = this.deps.speech.providers.get(c.provider);
    if (!c.providerVoiceId || !p?.deleteVoice || c.provider === 'local') return;
    const org = await this.deps.store.organizations.findById(c.organizationId);
    const apiKey = org ? await this.deps.speech.ownKey(org, c.provider) : null;
    await p.deleteVoice(c.providerVoiceId, { apiKey }).catch((err: unknown) => {
      this.deps.logger.warn({ err, voiceId: c.id }, 'removing the clone at its provider failed');
    });
  }

  /** Only a sample stored here (an asset, or the url an upload or TTS returned), never a fetch. */
  private async sample(orgId: string, ref: { url?: string; assetId?: string }) {
    const field = ref.assetId !== undefined ? 'assetId' : 'url';
    const r = await this.deps.assets.resolveOwn(orgId, ref);
    if ('asset' in r) return { ...r.asset, field };
    if (r.problem === 'foreign') throw new AppError('voice_sample_upload_required', { field });
    throw new AppError('voice_sample_not_accessible', {
      field,
      message:
        r.problem === 'missing'
          ? 'The sample is not an asset of this organization.'
          : `The sample URL is ${r.problem === 'expired' ? 'expired' : 'not a valid signed URL'}.`,
    });
  }

  private cloneView(c: VoiceRecord, blocked: boolean): VoiceView {
    const v: VoiceView = {
      id: c.id,
      name: c.name,
      provider: c.provider,
      voiceId: c.providerVoiceId ?? c.id,
      type: 'cloned',
      createdAt: c.createdAt,
    };
    if (c.baseVoice) v.baseVoice = c.baseVoice;
    const r = restriction(blocked, !c.verifiedAt);
    if (r) v.restriction = r;
    return v;
  }
}

function restriction(blocked: boolean, unverified: boolean): VoiceView['restriction'] {
  if (blocked) return { code: 'voice_blocked', message: 'The operator blocked this voice.' };
  if (unverified)
    return { code: 'voice_verification_required', message: 'The clone waits for consent verification.' };
  return undefined;
}

function builtinView(provider: ProviderName, v: ProviderVoice, blocked: boolean): VoiceView {
  const view: VoiceView = {
    id: v.providerVoiceId,
    name: v.name,
    provider,
    voiceId: v.providerVoiceId,
    type: 'builtin',
  };
  if (v.labels) view.labels = v.labels;
  const r = restriction(blocked, false);
  if (r) view.restriction = r;
  return view;
}
