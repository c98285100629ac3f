// One autocannon load against a URL, with every response's latency kept (sub-millisecond; the
// summary histogram of autocannon has whole milliseconds only) and the server's CPU time measured.
import autocannon, { type Result } from 'autocannon';
import type { BenchChild } from './child.js';
import { quantile } from './stats.js';

export interface LoadSettings {
  connections: number;
  /** Seconds. */
  duration: number;
  /**
   * Paths to spread the requests over (each request picks one at random), instead of the URL's own:
   * many clients polling different resources rather than one resource polled again and again.
   */
  paths?: readonly string[];
  /** Requests per second over all connections (a paced load); unset, as fast as the server answers. */
  rate?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  /** Mean latency in ms. */
  mean: number;
  non2xx: number;
  errors: number;
  /** Server process CPU time (user + system) per request, microseconds. */
  serverCpuUsPerRequest: number;
}

/** Bound on the number of requests of one load, whatever the duration. */
const MAX_REQUESTS = 2_000_000;

export async function load(
  url: string,
  headers: Record<string, string>,
  settings: LoadSettings,
  server: BenchChild,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const before = await server.stats();
  const started = performance.now();
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        headers,
        connections: settings.connections,
        pipelining: 1,
        duration: settings.duration,
        timeout: 10,
        maxOverallRequests: MAX_REQUESTS,
        ...(settings.rate ? { overallRate: settings.rate } : {}),
        ...(settings.paths?.length ? { requests: [{ setupRequest: randomPath(settings.paths) }] } : {}),
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300 && latencies.length < MAX_REQUESTS)
        latencies.push(responseTime);
    });
    // A guard in case autocannon does not stop by itself.
    const guard = setTimeout(() => instance.stop(), (settings.duration + 15) * 1000);
    instance.once('done', () => clearTimeout(guard));
  });
  const seconds = (performance.now() - started) / 1000;
  const after = await server.stats();
  const cpuUs = after.cpuUserUs + after.cpuSystemUs - (before.cpuUserUs + before.cpuSystemUs);
  const ok = result['2xx'];
  return {
    requests: ok,
    seconds,
    rps: ok / result.duration,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    serverCpuUsPerRequest: ok > 0 ? cpuUs / ok : NaN,
  };
}

function randomPath(paths: readonly string[]) {
  return (req: Record<string, unknown>) => ({
    ...req,
    path: paths[Math.floor(Math.random() * paths.length)],
  });
}
