// The small part of autocannon 8's API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Per-request timeout in seconds. */
    timeout?: number;
    maxOverallRequests?: number;
    /** Requests per second over all connections. */
    overallRate?: number;
    excludeErrorStats?: boolean;
    /** Requests each connection cycles through; setupRequest may rewrite one before it is sent. */
    requests?: { setupRequest?: (req: Record<string, unknown>) => Record<string, unknown> }[];
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
    '2xx': number;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  type Callback = (err: Error | null, result: Result) => void;
  function autocannon(opts: Options, cb: Callback): Instance;
  export default autocannon;
}
