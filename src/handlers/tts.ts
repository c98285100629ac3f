// The `tts` job kind: an asynchronous text-to-speech job (POST /v2/tts/jobs). At claim time the server
// resolves the voice (a clone's profile, the organization's own provider key); the run synthesizes and
// probes and uploads the audio; the terminal transition stores it as a TTS asset with its timeline and
// that probe (a generation from it starts no ffprobe); the job system mirrors each transition onto
// the tts_jobs row, all in its transaction.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from '../store/index.js';
import type { AssetRecord } from '../store/assets.js';
import { DEFAULT_VISIBILITY } from '../domain/assets.js';
import { AppError } from '../domain/errors.js';
import { voiceClaimFailure } from './voice-claim.js';
import { JOB_CANCELED, JOB_TIMED_OUT } from '../domain/jobs.js';
import { ttsJobStatusOf, type TtsRequest } from '../domain/tts.js';
import { makeTempDir, removeTempDir } from '../media/tempdir.js';
import { probeMedia, type MediaProbe } from '../media/probe.js';
import type { SpeechTimeline } from '../speech/types.js';
import type { ResolvedVoice, SpeechService } from '../services/speech.js';
import { speechName } from '../services/speech.js';
import { JobFailure, type JobError, type JobHandler, type SettledResource } from '../jobs/handler.js';

import { TTS_KIND } from '../domain/job-kinds.js';

export interface TtsPayload {
  readonly ttsJobId: string;
}

export interface TtsRunInput {
  readonly ttsJobId: string;
  readonly organizationId: string;
  readonly apiKeyId: string | null;
  readonly request: TtsRequest;
  readonly voice: ResolvedVoice;
  /** The organization's own provider key, when it connected one. */
  readonly apiKey: string | null;
}

export interface TtsResult {
  readonly key: string;
  readonly size: number;
  readonly durationSeconds: number;
  readonly timeline: SpeechTimeline;
  /**
   * What ffprobe read from the uploaded file, kept with the asset (assets.probe, as uploads and
   * synthesized text inputs keep theirs) so that a generation from it starts no ffprobe.
   */
  readonly probe: MediaProbe;
}

/** The job system's own failure codes, as a TTS job reports them. */
function ttsError(e: JobError): JobError {
  switch (e.code) {
    case JOB_CANCELED.code:
      return { code: 'tts_canceled', message: 'The text-to-speech job was canceled.' };
    case JOB_TIMED_OUT.code:
      return { code: 'tts_timed_out', message: 'The synthesis ran longer than the server allows.' };
    case 'job_failed':
      return { code: 'internal_error', message: 'Synthesis failed because of an internal error.' };
    default:
      return e;
  }
}

export function ttsHandler(deps: {
  store: Store;
  speech: () => SpeechService;
}): JobHandler<TtsPayload, TtsRunInput, TtsResult> {
  const { store } = deps;
  return {
    kind: TTS_KIND,
    payloadVersion: 1,

    parsePayload(raw, version) {
      const p = raw as Partial<TtsPayload> | null;
      if (version !== 1 || typeof p?.ttsJobId !== 'string')
        throw new Error(`unreadable tts payload (version ${version})`);
      return { ttsJobId: p.ttsJobId };
    },

    async prepare(job, payload) {
      const t = await store.ttsJobs.findAny(payload.ttsJobId);
      const org = t ? await store.organizations.findById(t.organizationId) : null;
      if (!t || !org)
        throw new JobFailure(
          { code: 'tts_job_not_found', message: 'The job no longer exists.' },
          'permanent',
        );
      try {
        const speech = deps.speech();
        const voice = await speech.resolveVoice(org, t.request);
        const apiKey = await speech.ownKey(org, voice.provider);
        return {
          ttsJobId: t.id,
          organizationId: t.organizationId,
          apiKeyId: t.apiKeyId,
          request: t.request,
          voice,
          apiKey,
        };
      } catch (err) {
        // The voice was deleted or blocked since the job was accepted: the job cannot succeed. A
        // provider that could not list its voices may be back soon.
        throw voiceClaimFailure(err, job.id);
      }
    },

    async run(input, ctx) {
      const dir = await makeTempDir('tts-', ctx.tempRoot);
      try {
        ctx.progress(5);
        const result = await deps.speech().synthesize(input.voice, input.request, {
          workDir: join(dir),
          apiKey: input.apiKey,
          signal: ctx.signal,
        });
        ctx.progress(90);
        const probe = await probeMedia(result.audioPath);
        const { size } = await stat(result.audioPath);
        const key = await ctx.files.upload('speech.wav', result.audioPath, 'audio/wav');
        return {
          key,
          size,
          durationSeconds: probe.durationSeconds ?? result.durationMs / 1000,
          timeline: result.timeline,
          probe,
        };
      } finally {
        await removeTempDir(dir);
      }
    },

    classify(err) {
      if (!(err instanceof AppError)) return null;
      // An outage may pass: retried with backoff. Anything else the client must change.
      const transient = err.code === 'provider_service_unavailable';
      return new JobFailure(
        { code: err.code, message: err.message },
        transient ? 'transient' : 'permanent',
        err,
      );
    },

    mirror: {
      table: 'tts_jobs',
      statusOf: ttsJobStatusOf,
      errorColumns: { code: 'error_code', message: 'error_message' },
      settled(outcome, job): SettledResource {
        if (outcome.status !== 'completed') return { error: ttsError(outcome.error) };
        // The audio asset has the TTS job's id (onSettled stores it).
        return { values: { asset_id: job.subjectId, duration_seconds: outcome.result.durationSeconds } };
      },
    },

    async onSettled(trx, job, outcome) {
      if (outcome.status !== 'completed') return;
      const now = new Date().toISOString();
      const t = await store.ttsJobs.findAny(job.subjectId, trx);
      if (!t) return;
      const r = outcome.result;
      const asset: AssetRecord = {
        id: job.subjectId,
        organizationId: t.organizationId,
        projectId: null,
        name: speechName(t.request.script),
        type: 'AUDIO',
        size: r.size,
        format: 'wav',
        durationSeconds: r.durationSeconds,
        width: null,
        height: null,
        storageKey: r.key,
        contentType: 'audio/wav',
        visibility: DEFAULT_VISIBILITY,
        inputType: 'TTS',
        createdByKeyId: t.apiKeyId,
        createdAt: now,
        updatedAt: now,
        probe: r.probe,
      };
      await store.assets.insert(asset, trx);
      await store.assets.saveTimeline(t.organizationId, asset.id, r.timeline, trx);
    },
  };
}
