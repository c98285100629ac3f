// The `generation` job kind: a lip-sync generation. Its payload names the generation; at claim time the
// server reads the generation's resolved inputs and request and decides the watermark; the run is the
// pipeline; the job system mirrors each transition onto the generation row (domain/generation-status.ts
// names the statuses), and a terminal one adds usage and the webhook outbox row in its transaction.
import type { Transaction } from 'kysely';
import type { Store } from '../store/index.js';
import type { Database } from '../store/schema.js';
import type { GenerationRecord } from '../store/generations.js';
import { generationStatusOf, webhookStatus } from '../domain/generation-status.js';
import { GENERATION_WEBHOOK_EVENT } from '../domain/webhooks.js';
import { estimateCost, type PriceTable } from '../domain/pricing.js';
import { isPlan, watermarksOutputs } from '../domain/plans.js';
import { isRemoteOwner, JOB_CANCELED, JOB_TIMED_OUT } from '../domain/jobs.js';
import { AppError } from '../domain/errors.js';
import { measuredGenerationResult } from '../domain/remote-outputs.js';
import { generationView } from '../services/generation-view.js';
import type { ResolvedMedia } from '../services/generation-inputs.js';
import type { NormalisedRequest } from '../domain/generation-request.js';
import type { EngineRegistry } from '../engines/registry.js';
import { JobFailure, type JobError, type JobHandler, type SettledResource } from '../jobs/handler.js';
import { runGeneration, type GenerationResult, type GenerationRunInput } from '../pipeline/run-generation.js';
import type { ArticulationDeps } from '../pipeline/articulation.js';
import type { DubTools, DubVoiceChoice } from '../pipeline/dub.js';
import { MAX_KEPT_SEGMENT_CLIPS, type DubRequest } from '../domain/dub.js';
import { redubBase, type RedubBase } from '../domain/redub.js';
import type { SpeechService } from '../services/speech.js';
import type { Organization } from '../store/organizations.js';
import type { JobRecord } from '../store/jobs.js';

import { GENERATION_KIND } from '../domain/job-kinds.js';
import { voiceClaimFailure } from './voice-claim.js';

export interface GenerationPayload {
  readonly generationId: string;
}

/** What the create transaction stores in generations.resolved_input. */
interface StoredInputs {
  video?: ResolvedMedia;
  image?: ResolvedMedia;
  audio?: ResolvedMedia;
  request?: NormalisedRequest;
}

/** The job system's own failure codes, as a generation reports them. */
function generationError(e: JobError): JobError {
  switch (e.code) {
    case JOB_CANCELED.code:
      return { code: 'generation_canceled', message: 'The generation was canceled.' };
    case JOB_TIMED_OUT.code:
      return { code: 'generation_timed_out', message: 'The generation ran longer than the server allows.' };
    case 'worker_lost':
      return {
        code: 'generation_worker_lost',
        message: e.message.replace('running this job', 'processing this generation'),
      };
    case 'job_failed':
      return {
        code: 'generation_processing_failed',
        message: 'Processing failed because of an internal error. Try again later.',
      };
    default:
      return e;
  }
}

export interface GenerationHandlerDeps {
  readonly store: Store;
  readonly prices: PriceTable;
  /** Built lazily: only processes that run generations load engine settings. */
  readonly engines: () => EngineRegistry;
  /** The articulation tools (voice activity, recognition, alignment); null: acoustic shapes only. */
  readonly articulation?: () => ArticulationDeps | null;
  /** Recognition, translation and the local voices, for dubs (built on first use). */
  readonly dubbing?: () => DubTools;
  /** The speech service (server only): resolves a dub's chosen voice at claim time. */
  readonly speech?: () => SpeechService;
  /** The webhook body at delivery time (the generation service's: it signs the output URL). */
  readonly webhookBody: () => (generationId: string, stored: string) => Promise<string | null>;
}

export function generationHandler(
  deps: GenerationHandlerDeps,
): JobHandler<GenerationPayload, GenerationRunInput, GenerationResult> {
  const { store } = deps;
  return {
    kind: GENERATION_KIND,
    payloadVersion: 1,

    parsePayload(raw, version) {
      const p = raw as Partial<GenerationPayload> | null;
      if (version !== 1 || typeof p?.generationId !== 'string')
        throw new Error(`unreadable generation payload (version ${version})`);
      return { generationId: p.generationId };
    },

    async prepare(job, payload) {
      const g = await store.generations.findAny(payload.generationId);
      if (!g || g.deletedAt)
        throw new JobFailure(
          { code: 'generation_not_found', message: 'The generation no longer exists.' },
          'permanent',
        );
      const org = await store.organizations.findById(g.organizationId);
      if (!org || !isPlan(org.plan))
        throw new JobFailure(
          { code: 'generation_processing_failed', message: 'The organization no longer exists.' },
          'permanent',
        );
      const stored = g.resolvedInput as StoredInputs;
      const visual = stored.video ?? stored.image;
      if (!visual || !stored.audio || !stored.request)
        throw new JobFailure(
          { code: 'generation_processing_failed', message: 'The generation has no resolved inputs.' },
          'permanent',
          `job ${job.id}: resolved_input incomplete`,
        );
      const dub = stored.request.dub;
      return {
        generationId: g.id,
        model: g.model,
        request: stored.request,
        visual,
        audio: stored.audio,
        watermark: watermarksOutputs(org.plan),
        ...(dub?.voiceId ? { dubVoice: await dubVoiceOf(job, org, dub, dub.voiceId, dub.chosenVoice) } : {}),
        ...(dub?.voices ? { dubVoices: await speakerVoicesOf(job, org, dub, dub.voices) } : {}),
        ...(dub?.basedOn
          ? { dubBase: await earlierDub(job, g.organizationId, dub.basedOn.generationId) }
          : {}),
      };
    },

    run(input, ctx) {
      return runGeneration(
        input,
        ctx,
        deps.engines(),
        deps.articulation?.() ?? null,
        input.request.dub ? (deps.dubbing?.() ?? null) : null,
      );
    },

    async warmUp({ jobsAtOnce }) {
      await Promise.all([deps.engines().warmUp({ jobsAtOnce }), deps.articulation?.()?.warmUp?.()]);
    },

    remote: {
      // A re-dub also reads the earlier dub's kept segment audio; a dub stores its segments' audio.
      inputKeys: (input) => [
        input.visual.blobKey,
        input.audio.blobKey,
        ...(input.dubBase?.kept.clips.map((c) => c.key) ?? []),
      ],
      outputKeys: (result) => [
        result.outputKey,
        result.watermarkedKey,
        result.dub?.audioKey ?? null,
        result.stillKey ?? null,
        ...(result.dub?.record.kept?.clips.map((c) => c.key) ?? []),
      ],
      maxOutputs: 3,
      async outputsOf(job) {
        const g = await store.generations.findAny(job.subjectId);
        // Output, watermarked output, and a dub's soundtrack and clips or a preview's still.
        return (g?.resolvedInput as StoredInputs | undefined)?.request?.dub ? 3 + MAX_KEPT_SEGMENT_CLIPS : 3;
      },
      measure: measuredGenerationResult,
    },

    notification: {
      event: GENERATION_WEBHOOK_EVENT,
      body: (generationId, stored) => deps.webhookBody()(generationId, stored),
    },

    classify(err) {
      if (err instanceof AppError) {
        const quality = err.extras.details?.quality as Record<string, unknown> | undefined;
        return new JobFailure(
          { code: err.code, message: err.message, ...(quality ? { details: { quality } } : {}) },
          // A provider outage (a dub's translation: 503/504) may pass; a refusal will not.
          err.status === 503 || err.status === 504 ? 'transient' : 'permanent',
          err,
        );
      }
      return null;
    },

    mirror: {
      table: 'generations',
      statusOf: generationStatusOf,
      errorColumns: { code: 'error_code', message: 'error' },
      showsProgress: true,
      settled(outcome): SettledResource {
        if (outcome.status === 'completed') {
          const r = outcome.result;
          return {
            values: {
              output_key: r.outputKey,
              watermarked_key: r.watermarkedKey,
              output_duration: r.outputDuration,
              quality: JSON.stringify(r.quality),
              ...(r.dub ? { dub: JSON.stringify(r.dub.record), dub_audio_key: r.dub.audioKey } : {}),
              ...(r.stillKey ? { still_key: r.stillKey } : {}),
            },
          };
        }
        const error = generationError(outcome.error);
        const quality = error.details?.quality;
        return { error, ...(quality ? { values: { quality: JSON.stringify(quality) } } : {}) };
      },
    },

    async onSettled(trx, job, outcome) {
      const g = await store.generations.findAny(job.subjectId, trx);
      if (!g) return;
      if (outcome.status === 'completed') await recordUsage(trx, g, outcome.result);
      if (g.webhookUrl) await enqueueWebhook(trx, g);
    },
  };

  /**
   * A re-dub's earlier dub as it is now: deleted since the submit (its stored audio with it), the
   * re-dub cannot run.
   */
  async function earlierDub(job: JobRecord, organizationId: string, id: string): Promise<RedubBase> {
    const g = await store.generations.find(id, organizationId);
    try {
      return redubBase(g);
    } catch (err) {
      throw new JobFailure(
        {
          code: 'generation_output_unavailable',
          message: 'The dub this re-dub is based on was deleted, or can no longer be re-dubbed.',
        },
        'permanent',
        err,
      );
    }
  }

  /**
   * A dub's chosen voice as the run needs it (provider, its voice id, a clone's profile, the
   * organization's own key). The voice may have been deleted or blocked since the submit: then the
   * dub cannot succeed. An organization's key never goes to a remote worker (a credential, like a
   * text-to-speech job's): such a dub waits for one of the server's workers.
   */
  async function dubVoiceOf(
    job: JobRecord,
    org: Organization,
    dub: DubRequest,
    voiceId: string,
    known: DubRequest['chosenVoice'],
  ): Promise<DubVoiceChoice> {
    if (!deps.speech)
      throw new JobFailure(
        { code: 'generation_processing_failed', message: 'This process cannot resolve voices.' },
        'transient',
        `job ${job.id}: no speech service`,
      );
    try {
      const speech = deps.speech();
      const v = await speech.resolveDubVoice(org, voiceId, dub.targetLang, known);
      const apiKey = v.provider === 'local' ? null : await speech.ownKey(org, v.provider);
      if (apiKey !== null && isRemoteOwner(job.lockedBy))
        throw new JobFailure(
          {
            code: 'provider_service_unavailable',
            message: `This dub's voice uses the organization's own ${v.provider} account, which only the server's own workers may use; none has taken it yet.`,
          },
          'transient',
          `job ${job.id}: an own-key voice claimed by a remote worker`,
        );
      return {
        voiceId,
        name: v.name,
        provider: v.provider,
        providerVoiceId: v.providerVoiceId,
        profile: v.profile,
        apiKey,
      };
    } catch (err) {
      // A provider that could not list its voices may be back soon; anything else will not pass.
      throw voiceClaimFailure(err, job.id);
    }
  }

  /** Each speaker's voice of `dubParams.voices` (a re-dub's: the earlier dub's, with its changes). */
  async function speakerVoicesOf(
    job: JobRecord,
    org: Organization,
    dub: DubRequest,
    voices: Readonly<Record<string, string>>,
  ): Promise<Record<string, DubVoiceChoice>> {
    const out: Record<string, DubVoiceChoice> = {};
    for (const [speaker, id] of Object.entries(voices))
      out[speaker] = await dubVoiceOf(job, org, dub, id, dub.chosenVoices?.[speaker]);
    return out;
  }

  async function recordUsage(trx: Transaction<Database>, g: GenerationRecord, r: GenerationResult) {
    const billing = (await store.usage.billingOf(trx, g.organizationId)) === 'credits' ? 'credits' : 'usd';
    let cost = 0;
    let credits: number | null = null;
    let frames = Math.ceil(r.outputDuration * r.fps);
    try {
      const e = estimateCost(
        deps.prices,
        { model: g.model, duration: r.outputDuration, fps: r.fps },
        billing,
      );
      cost = e.estimatedGenerationCost;
      credits = e.estimatedCredits;
      frames = e.estimatedFrameCount;
    } catch {
      // a model without a price is recorded at zero cost
    }
    await store.usage.record(trx, {
      organizationId: g.organizationId,
      generationId: g.id,
      apiKeyId: g.apiKeyId,
      model: g.model,
      seconds: r.outputDuration,
      frames,
      cost,
      credits,
    });
  }

  async function enqueueWebhook(trx: Transaction<Database>, g: GenerationRecord) {
    // The output URL is signed at delivery time (the notification's body), so that it is fresh.
    const payload = {
      ...generationView(g, { outputUrl: null }),
      status: webhookStatus(g.status),
      finalStatus: g.status,
    };
    await store.webhooks.enqueueNew(trx, {
      organizationId: g.organizationId,
      subjectId: g.id,
      event: GENERATION_WEBHOOK_EVENT,
      url: g.webhookUrl as string,
      payload: JSON.stringify(payload),
    });
  }
}
