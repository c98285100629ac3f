// Speech as the services use it: which voice a request means (built-in, cloned, blocked, another
// organization's), synthesis through the right provider with the organization's own key when it has
// one, provider failures mapped onto the error catalogue, and synthesized audio stored as a TTS asset
// with its word and phoneme timeline.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { Organization } from '../store/organizations.js';
import type { AssetRecord } from '../store/assets.js';
import type { AssetService } from './assets.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { voiceSpeaks } from '../domain/dub.js';
import type { TtsRequest } from '../domain/tts.js';
import { makeTempDir, removeTempDir } from '../media/tempdir.js';
import {
  SpeechProviderError,
  type ProviderName,
  type SpeechTimeline,
  type SynthesisProvider,
  type SynthesisResult,
  type VoiceProfile,
} from '../speech/types.js';

/** Everything a synthesis needs once the voice is resolved (also stored in a TTS job's run input). */
export interface ResolvedVoice {
  provider: ProviderName;
  providerVoiceId: string;
  profile: VoiceProfile | null;
  /** The clone's id when the voice is a clone. */
  cloneId: string | null;
}

export interface SynthesizedAsset {
  asset: AssetRecord;
  timeline: SpeechTimeline;
  durationSeconds: number;
}

export { speechError } from '../speech/errors.js';
import { speechError } from '../speech/errors.js';

export type SpeechProviders = ReadonlyMap<ProviderName, SynthesisProvider>;

export class SpeechService {
  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly assets: AssetService,
    readonly providers: SpeechProviders,
    private readonly logger: Logger,
  ) {}

  provider(name: ProviderName, field = 'provider'): SynthesisProvider {
    const p = this.providers.get(name);
    if (!p)
      throw new AppError('invalid_request', {
        field,
        message: `The ${name} voice provider is not configured on this server.`,
      });
    return p;
  }

  /**
   * The voice a request names: a clone (UUID) of the organization, or a provider's built-in voice.
   * `prefix` places error fields ('' or 'input[1].provider.').
   */
  async resolveVoice(
    org: Organization,
    req: Pick<TtsRequest, 'voiceId' | 'provider'>,
    prefix = '',
  ): Promise<ResolvedVoice> {
    const field = `${prefix}voiceId`;
    const block = await this.store.voices.blockOf(req.voiceId);
    if (block)
      throw new AppError('voice_blocked', { field, message: `The voice ${req.voiceId} is blocked.` });
    if (isUuid(req.voiceId)) {
      const v = await this.store.voices.findAny(req.voiceId);
      if (!v) throw new AppError('voice_not_found', { field });
      if (v.organizationId !== org.id) throw new AppError('voice_access_denied', { field });
      if (req.provider && req.provider !== v.provider)
        throw new AppError('voice_not_found', {
          field,
          message: `The voice ${v.id} is a ${v.provider} voice, not a ${req.provider} one.`,
        });
      if (!v.verifiedAt)
        throw new AppError('voice_verification_required', {
          field,
          message: `The cloned voice ${v.id} has not been verified yet.`,
          suggestion: 'Ask the operator to verify the consent for this voice (lipsync voice verify ID).',
        });
      this.provider(v.provider, `${prefix}provider`);
      const providerVoiceId = v.provider === 'local' ? v.baseVoice : v.providerVoiceId;
      if (!providerVoiceId) throw new AppError('voice_not_found', { field });
      return { provider: v.provider, providerVoiceId, profile: v.profile, cloneId: v.id };
    }
    const name = req.provider ?? this.config.speech.defaultProvider;
    this.provider(name, `${prefix}provider`);
    // ElevenLabs answers an unknown voice itself (listing an account's voices costs a request).
    if (name !== 'elevenlabs') {
      const voices = await this.listProviderVoices(org, name);
      if (!voices.some((v) => v.providerVoiceId === req.voiceId))
        throw new AppError('voice_not_found', {
          field,
          message: `${name} has no voice ${JSON.stringify(req.voiceId)}; see GET /v2/voices?provider=${name}.`,
        });
    }
    return { provider: name, providerVoiceId: req.voiceId, profile: null, cloneId: null };
  }

  /**
   * A dub's voice (dubParams.voiceId, docs/dubbing.md): a clone of the organization, or a built-in
   * voice of any provider here (the local voices are looked at first, then openai's, then
   * ElevenLabs'; `known`: where the submit found it). A local voice must speak the target language; a
   * local clone's profile is applied to a local voice that does (chosen where the dub runs), so one
   * must be installed. The HTTP providers' voices are multilingual.
   */
  async resolveDubVoice(
    org: Organization,
    voiceId: string,
    targetLang: string,
    known?: { provider: ProviderName; name: string },
    field = 'dubParams.voiceId',
  ): Promise<ResolvedVoice & { name: string }> {
    let found: (ResolvedVoice & { name: string; labels?: Record<string, string> }) | null = null;
    if (isUuid(voiceId)) {
      // resolveVoice names `${prefix}voiceId`; a per-speaker field is named as sent.
      const v = await this.resolveVoice(org, { voiceId, provider: null }, 'dubParams.').catch(
        (err: unknown) => {
          if (
            err instanceof AppError &&
            err.extras.field === 'dubParams.voiceId' &&
            field !== err.extras.field
          )
            throw new AppError(err.code, { ...err.extras, field });
          throw err;
        },
      );
      const clone = await this.store.voices.findAny(voiceId);
      found = { ...v, name: clone?.name ?? voiceId };
    } else {
      const block = await this.store.voices.blockOf(voiceId);
      if (block) throw new AppError('voice_blocked', { field, message: `The voice ${voiceId} is blocked.` });
      // An outage of one provider hides only its own voices: it answers if no other has the voice.
      let outage: unknown = null;
      const order = known ? [known.provider] : (['local', 'openai', 'elevenlabs'] as const);
      for (const name of order.filter((n) => this.providers.has(n))) {
        // ElevenLabs answers an unknown voice itself (listing an account's voices costs a request).
        if (known && name === 'elevenlabs') {
          found = {
            provider: name,
            providerVoiceId: voiceId,
            profile: null,
            cloneId: null,
            name: known.name,
          };
          break;
        }
        const voices = await this.listProviderVoices(org, name).catch((err: unknown) => {
          if (!(err instanceof AppError && err.code === 'provider_service_unavailable')) throw err;
          outage ??= err;
          return [];
        });
        const v = voices.find((x) => x.providerVoiceId === voiceId);
        if (v) {
          found = { provider: name, providerVoiceId: voiceId, profile: null, cloneId: null, name: v.name };
          if (v.labels) found.labels = v.labels;
          break;
        }
      }
      if (!found) {
        if (outage) throw outage;
        throw new AppError('voice_not_found', {
          field,
          message: `No voice ${JSON.stringify(voiceId)} here; see GET /v2/voices.`,
        });
      }
    }
    if (found.provider === 'local') {
      const speaking = (await this.provider('local').listVoices({})).filter((v) =>
        voiceSpeaks(v.labels, targetLang),
      );
      if (speaking.length === 0)
        throw new AppError('dubbing_voice_unavailable', {
          field,
          message: `No local voice for ${targetLang} is installed on this server.`,
        });
      if (!found.cloneId && !voiceSpeaks(found.labels, targetLang))
        throw new AppError('dubbing_voice_unavailable', {
          field,
          message: `The voice ${voiceId} does not speak ${targetLang}; local voices that do: ${speaking.map((v) => v.providerVoiceId).join(', ')}.`,
          suggestion: `Give one of those, a voice of another provider, or leave dubParams.voiceId out (each speaker then gets a ${targetLang} voice matched to them).`,
        });
    }
    const { labels: _labels, ...voice } = found;
    return voice;
  }

  async listProviderVoices(org: Organization, name: ProviderName, signal?: AbortSignal) {
    const apiKey = await this.store.organizations.providerKey(org.id, name);
    try {
      return await this.provider(name).listVoices({ apiKey, signal });
    } catch (err) {
      if (err instanceof SpeechProviderError) throw speechError(err, apiKey !== null, 'provider');
      throw err;
    }
  }

  /**
   * Connects (or with null disconnects) the organization's own account at a provider: owners and
   * admins only. A key is tried before it is stored (a rejected key is 422 provider_api_key_invalid).
   */
  async setOwnKey(
    auth: { organization: Organization; role: string },
    provider: ProviderName,
    apiKey: string | null,
  ): Promise<{ provider: ProviderName; connected: boolean }> {
    if (auth.role !== 'owner' && auth.role !== 'admin')
      throw new AppError('forbidden', {
        message: 'Only owners and admins can connect provider accounts.',
      });
    return this.connect(auth.organization, provider, apiKey);
  }

  /** The operator's path (CLI) and the API's: check the key with the provider, then store it. */
  async connect(
    org: Organization,
    provider: ProviderName,
    apiKey: string | null,
  ): Promise<{ provider: ProviderName; connected: boolean }> {
    if (provider === 'local')
      throw new AppError('invalid_request', {
        field: 'provider',
        message: 'The local provider needs no key.',
      });
    const p = this.provider(provider);
    if (apiKey !== null) {
      const key = apiKey.trim();
      if (key === '' || key.length > 512 || /\s/.test(key))
        throw new AppError('invalid_request', {
          field: 'apiKey',
          message: 'apiKey must be 1 to 512 characters without spaces.',
        });
      try {
        await p.listVoices({ apiKey: key });
      } catch (err) {
        if (err instanceof SpeechProviderError) throw speechError(err, true, 'apiKey');
        throw err;
      }
      apiKey = key;
    }
    await this.store.organizations.setProviderKey(org.id, provider, apiKey);
    return { provider, connected: apiKey !== null };
  }

  /** Which providers the organization connected its own account for (never the keys). */
  async connected(org: Organization): Promise<{ provider: ProviderName; connected: boolean }[]> {
    const names = new Set(await this.store.organizations.providerKeyNames(org.id));
    return [...this.providers.keys()]
      .filter((p) => p !== 'local')
      .map((provider) => ({ provider, connected: names.has(provider) }));
  }

  /** The organization's own key for the provider, if it connected one. */
  ownKey(org: Organization, provider: ProviderName): Promise<string | null> {
    return this.store.organizations.providerKey(org.id, provider);
  }

  /**
   * Synthesizes `req` with a resolved voice into `workDir`, within the configured time. Provider
   * failures become catalogue errors (field names the voice).
   */
  async synthesize(
    voice: ResolvedVoice,
    req: TtsRequest,
    opts: { workDir: string; apiKey: string | null; signal?: AbortSignal; field?: string },
  ): Promise<SynthesisResult> {
    const timeout = AbortSignal.timeout(this.config.speech.synthesisTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    try {
      return await this.provider(voice.provider).synthesize({
        text: req.script,
        providerVoiceId: voice.providerVoiceId,
        settings: req.settings,
        profile: voice.profile,
        apiKey: opts.apiKey,
        workDir: opts.workDir,
        signal,
      });
    } catch (err) {
      // Our deadline fires with (or just before) the provider's own request deadline, and the HTTP
      // providers then report the abort as 'unavailable': a deadline that passed is a timeout.
      const e =
        timeout.aborted && !opts.signal?.aborted
          ? new SpeechProviderError('timeout', voice.provider, 'synthesis took too long')
          : err instanceof SpeechProviderError
            ? err
            : null;
      if (!e) throw err;
      this.logger.warn(
        { provider: e.provider, reason: e.reason, detail: e.detail },
        'speech synthesis failed',
      );
      throw speechError(e, opts.apiKey !== null, opts.field ?? 'voiceId');
    }
  }

  /** Resolve, synthesize and store as a TTS asset of the organization (POST /v2/tts, text inputs). */
  async synthesizeToAsset(
    org: Organization,
    keyId: string | null,
    req: TtsRequest,
    opts: { prefix?: string; signal?: AbortSignal; name?: string } = {},
  ): Promise<SynthesizedAsset> {
    const voice = await this.resolveVoice(org, req, opts.prefix);
    const apiKey = await this.ownKey(org, voice.provider);
    const workDir = await makeTempDir('tts-', this.config.tempDir);
    try {
      const result = await this.synthesize(voice, req, {
        workDir,
        apiKey,
        signal: opts.signal,
        field: `${opts.prefix ?? ''}voiceId`,
      });
      const asset = await this.assets.storeSynthesized({
        organization: org,
        keyId,
        path: result.audioPath,
        name: opts.name ?? speechName(req.script),
        timeline: result.timeline,
      });
      return { asset, timeline: result.timeline, durationSeconds: result.durationMs / 1000 };
    } finally {
      await removeTempDir(workDir);
    }
  }
}

/** A readable asset name from the start of the script. */
export function speechName(script: string): string {
  const words = script.replace(/\s+/g, ' ').trim().slice(0, 60);
  return `tts-${words.replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '_') || 'speech'}.wav`;
}
