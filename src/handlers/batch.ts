// The `batch` job kind: turns a batch's records into child generations (bulk jobs whose parent is this
// job), one record per transaction, so that a run stopped anywhere (kill -9, lost lease, shutdown)
// resumes where it was and never creates a record's generation twice. A record the generation rules
// refuse now (media not reachable, over the plan) ends as failed in the batch's results. The batch's
// part of its children's claims and ends (counters, status) plugs in through onChildClaimed and
// onChildSettled. It runs on the server's own workers: it needs the database.
import type { Store } from '../store/index.js';
import type { Organization } from '../store/organizations.js';
import type { GenerationRecord } from '../store/generations.js';
import type { BatchProgress } from '../services/batch-progress.js';
import type { GenerationRequestBody } from '../domain/generation-request.js';
import { AppError } from '../domain/errors.js';
import { batchLimits, batchSource, type BatchLimits } from '../domain/batches.js';
import { JOB_CANCELED } from '../domain/jobs.js';
import { isPlan } from '../domain/plans.js';
import { BATCH_WEBHOOK_EVENT } from '../domain/webhooks.js';
import { JobFailure, JobYield, type JobHandler } from '../jobs/handler.js';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';

import { BATCH_KIND } from '../domain/job-kinds.js';

/** Children created per run before the job yields (in time): a few generations' worth of waiting. */
export const BATCH_SLICE_MS = 5_000;

export interface BatchPayload {
  readonly batchId: string;
}

export interface BatchRunInput {
  readonly batchId: string;
  readonly organization: Organization;
  readonly keyId: string | null;
  readonly limits: BatchLimits;
}

export interface BatchRunResult {
  readonly created: number;
  readonly refused: number;
}

/** What creating a child needs from the generation service. */
export type AdmitChild = (
  who: { organization: Organization; keyId: string | null },
  body: GenerationRequestBody,
  child: {
    source: string;
    parentJobId: string;
    shareLimit: number;
    attach: (trx: Transaction<Database>, generationId: string) => Promise<void>;
    signal?: AbortSignal;
  },
) => Promise<GenerationRecord>;

export interface BatchHandlerDeps {
  readonly store: Store;
  readonly progress: BatchProgress;
  /** Built lazily: the generation service exists once the container is wired. */
  readonly admitChild: () => AdmitChild;
  readonly planConcurrency?: Partial<Record<string, number>>;
  /** The webhook body at delivery time: the batch as it is then (the batch service's view). */
  readonly webhookBody: () => (batchId: string) => Promise<string | null>;
  /** How long one run creates children before it yields to other work. */
  readonly sliceMs: number;
}

/** Another run (or a cancel) moved the record first: this run's child is rolled back. */
class RecordTaken extends Error {}

export function batchHandler(
  deps: BatchHandlerDeps,
): JobHandler<BatchPayload, BatchRunInput, BatchRunResult> {
  const { store, progress } = deps;
  return {
    kind: BATCH_KIND,
    payloadVersion: 1,

    parsePayload(raw, version) {
      const p = raw as Partial<BatchPayload> | null;
      if (version !== 1 || typeof p?.batchId !== 'string')
        throw new Error(`unreadable batch payload (version ${version})`);
      return { batchId: p.batchId };
    },

    async prepare(_job, payload) {
      const b = await store.batches.find(payload.batchId);
      const org = b ? await store.organizations.findById(b.organizationId) : null;
      if (!b || !org || !isPlan(org.plan))
        throw new JobFailure(
          { code: 'batch_not_found', message: 'The batch no longer exists.' },
          'permanent',
        );
      const overrides = await store.organizations.batchLimits(org.id);
      return {
        batchId: b.id,
        organization: org,
        keyId: b.apiKeyId,
        limits: batchLimits(org.plan, overrides, deps.planConcurrency),
      };
    },

    async run(input, ctx) {
      const items = await store.batches.queuedItems(input.batchId);
      const total = Math.max(1, items.length);
      const started = Date.now();
      let created = 0;
      let refused = 0;
      for (const [i, item] of items.entries()) {
        ctx.signal.throwIfAborted();
        // Creating 500 children takes minutes: step aside now and then so that the workers serve
        // interactive work (and other organizations) in between. The next run resumes here.
        if (i > 0 && Date.now() - started >= deps.sliceMs) throw new JobYield();
        // A cancel ended every queued record: stop at once instead of at the next heartbeat.
        if ((await store.batches.find(input.batchId))?.canceledAt) break;
        try {
          await deps.admitChild()(
            { organization: input.organization, keyId: input.keyId },
            item.payload as unknown as GenerationRequestBody,
            {
              source: batchSource(input.batchId),
              parentJobId: ctx.jobId,
              shareLimit: input.limits.runningChildren,
              signal: ctx.signal,
              attach: async (trx, generationId) => {
                const moved = await store.batches.moveItem(trx, input.batchId, item.line, {
                  status: 'created',
                  generationId,
                });
                if (!moved) throw new RecordTaken();
              },
            },
          );
          created++;
        } catch (err) {
          if (err instanceof RecordTaken) continue;
          if (!(err instanceof AppError)) throw err; // transient: the job is retried from this record
          // The generation rules refused the record now: it ends as failed; the others go on.
          await store.db.kysely.transaction().execute((trx) =>
            progress.recordEnded(trx, input.batchId, item.line, 'failed', {
              code: err.code,
              message: err.message,
            }),
          );
          ctx.logger.info({ line: item.line, errorCode: err.code }, 'batch record refused');
          refused++;
        }
        ctx.progress(((i + 1) / total) * 100);
      }
      return { created, refused };
    },

    // Sent by BatchProgress when the last record ends (the batch's state is its children's).
    notification: {
      event: BATCH_WEBHOOK_EVENT,
      body: (batchId) => deps.webhookBody()(batchId),
    },

    async onSettled(trx, job, outcome) {
      const batchId = job.subjectId;
      if (outcome.status === 'completed') return progress.creationEnded(trx, batchId);
      if (outcome.status === 'canceled' || outcome.error.code === JOB_CANCELED.code) {
        await progress.endQueued(trx, batchId, 'canceled', {
          code: 'batch_canceled',
          message: 'The batch was canceled before this record started.',
        });
        return progress.creationEnded(trx, batchId);
      }
      return progress.creationEnded(trx, batchId, {
        code: 'batch_processing_failed',
        message: 'Creating the batch generations failed; the records not started were not processed.',
      });
    },

    async onChildClaimed(trx, parent) {
      await progress.childStarted(trx, parent.subjectId);
    },

    async onChildSettled(trx, parent, _child, outcome) {
      await progress.childEnded(trx, parent.subjectId, outcome.status === 'completed');
    },
  };
}
