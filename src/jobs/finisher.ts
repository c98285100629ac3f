// Writes a terminal state, its usage record and its webhook outbox row in ONE transaction, then wakes
// waiters. Every path to a terminal state (worker, watchdog, cancel) goes through here.
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/index.js';
import type { GenerationRecord } from '../store/generations.js';
import type { GenerationEventBus } from './event-bus.js';
import type { GenerationStatus } from '../domain/generation-status.js';
import { webhookStatus } from '../domain/generation-status.js';
import { estimateCost, type PriceTable } from '../domain/pricing.js';
import { generationView } from '../services/generation-view.js';

export type Outcome =
  | {
      status: 'COMPLETED';
      outputKey: string;
      watermarkedKey: string | null;
      outputDuration: number;
      fps: number;
      quality: Record<string, unknown> | null;
    }
  | {
      status: Exclude<GenerationStatus, 'COMPLETED' | 'PENDING' | 'PROCESSING'>;
      error: string;
      errorCode: string;
      quality?: Record<string, unknown> | null;
    };

export class GenerationFinisher {
  constructor(
    private readonly store: Store,
    private readonly bus: GenerationEventBus,
    private readonly prices: PriceTable,
  ) {}

  /** Null when the guard no longer holds (another worker or the watchdog finished it first). */
  async finish(
    id: string,
    guard: { owner?: string; statuses: GenerationStatus[] },
    outcome: Outcome,
  ): Promise<GenerationRecord | null> {
    const done = await this.store.db.kysely.transaction().execute(async (trx) => {
      const set =
        outcome.status === 'COMPLETED'
          ? {
              status: outcome.status,
              output_key: outcome.outputKey,
              watermarked_key: outcome.watermarkedKey,
              output_duration: outcome.outputDuration,
              progress: 100,
              quality: outcome.quality ? JSON.stringify(outcome.quality) : null,
              error: null,
              error_code: null,
            }
          : {
              status: outcome.status,
              error: outcome.error,
              error_code: outcome.errorCode,
              ...(outcome.quality ? { quality: JSON.stringify(outcome.quality) } : {}),
            };
      const g = await this.store.generations.finish(trx, id, guard, set);
      if (!g) return null;
      const now = new Date().toISOString();
      if (outcome.status === 'COMPLETED') {
        const org = await trx
          .selectFrom('organizations')
          .select('billing')
          .where('id', '=', g.organizationId)
          .executeTakeFirst();
        const key = g.apiKeyId
          ? await trx.selectFrom('api_keys').select('name').where('id', '=', g.apiKeyId).executeTakeFirst()
          : undefined;
        let cost = 0;
        let credits: number | null = null;
        let frames = Math.ceil(outcome.outputDuration * outcome.fps);
        try {
          const e = estimateCost(
            this.prices,
            { model: g.model, duration: outcome.outputDuration, fps: outcome.fps },
            (org?.billing ?? 'usd') as 'usd' | 'credits',
          );
          cost = e.estimatedGenerationCost;
          credits = e.estimatedCredits;
          frames = e.estimatedFrameCount;
        } catch {
          // a model without a price is recorded at zero cost
        }
        await trx
          .insertInto('usage_records')
          .values({
            id: randomUUID(),
            organization_id: g.organizationId,
            generation_id: g.id,
            api_key_id: g.apiKeyId,
            api_key_name: key?.name ?? null,
            model: g.model,
            seconds: outcome.outputDuration,
            frames,
            cost,
            credits,
            created_at: now,
          })
          .execute();
      }
      if (g.webhookUrl) {
        const payload = {
          ...generationView(g, { outputUrl: null }),
          status: webhookStatus(g.status),
          finalStatus: g.status,
        };
        await this.store.webhooks.enqueue(trx, {
          id: randomUUID(),
          organizationId: g.organizationId,
          generationId: g.id,
          event: 'generation.status',
          url: g.webhookUrl,
          payload: JSON.stringify(payload),
          status: 'pending',
          attempts: 0,
          nextAttemptAt: now,
          lastStatusCode: null,
          lastError: null,
          createdAt: now,
          updatedAt: now,
        });
      }
      return g;
    });
    if (done) await this.bus.publish(id).catch(() => undefined);
    return done;
  }
}
