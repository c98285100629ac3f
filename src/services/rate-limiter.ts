// Rate-limit counters: in memory by default, in Redis when REDIS_URL is set (shared by all API
// instances). Both count fixed windows aligned to the epoch.
import type { Logger } from 'pino';
import { Redis } from 'ioredis';
import { decide, windowStart, type RateDecision, type RateRule } from '../domain/rate-limits.js';

export interface RateLimiter {
  hit(rule: RateRule, identity: string, nowMs?: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, { count: number; expiresAt: number }>();
  private sweeps = 0;

  async hit(rule: RateRule, identity: string, nowMs = Date.now()): Promise<RateDecision> {
    const start = windowStart(nowMs, rule.windowMs);
    const key = `${rule.bucket}|${identity}|${start}`;
    const c = this.counters.get(key);
    const count = c ? ++c.count : 1;
    if (!c) this.counters.set(key, { count, expiresAt: start + rule.windowMs });
    if (++this.sweeps % 1000 === 0) this.sweep(nowMs);
    return decide(count, rule, nowMs);
  }

  private sweep(nowMs: number): void {
    for (const [k, v] of this.counters) if (v.expiresAt <= nowMs) this.counters.delete(k);
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;

  private lastWarned = 0;

  constructor(
    url: string,
    private readonly prefix = 'lipsync:rl:',
    logger?: Logger,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    // Without a listener ioredis prints "Unhandled error event" on every reconnect attempt; requests
    // already answer 503 while Redis is down, so one warning in the log every half minute is enough.
    this.redis.on('error', (err: Error) => {
      const now = Date.now();
      if (now - this.lastWarned < 30_000) return;
      this.lastWarned = now;
      logger?.warn({ err: { message: err.message } }, 'rate-limit store (Redis) unavailable');
    });
  }

  async hit(rule: RateRule, identity: string, nowMs = Date.now()): Promise<RateDecision> {
    const start = windowStart(nowMs, rule.windowMs);
    const key = `${this.prefix}${rule.bucket}:${identity}:${start}`;
    const res = await this.redis
      .multi()
      .incr(key)
      .pexpire(key, rule.windowMs + 1000)
      .exec();
    const count = Number(res?.[0]?.[1] ?? 1);
    return decide(count, rule, nowMs);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

export function createRateLimiter(redisUrl: string | null, logger?: Logger): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl, undefined, logger) : new MemoryRateLimiter();
}
