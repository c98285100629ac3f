// The Redis the rate-limit tests share counters through (TEST_REDIS_URL, default the local one).
import { Redis } from 'ioredis';

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
}

/** A client that fails fast instead of retrying forever; the caller quits it. */
export function redisClient(url = testRedisUrl()): Redis {
  return new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
}

/** null when Redis answers PING, otherwise why not. */
export async function redisProblem(url = testRedisUrl()): Promise<string | null> {
  const r = redisClient(url);
  let cause: string | null = null;
  r.on('error', (err: Error) => (cause ??= err.message));
  try {
    await r.connect();
    return (await r.ping()) === 'PONG' ? null : 'PING was not answered with PONG';
  } catch (err) {
    return cause ?? (err instanceof Error ? err.message : String(err));
  } finally {
    r.disconnect();
  }
}
