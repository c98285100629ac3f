// Messages between a benchmark (parent) and the service processes it starts (children).

export interface Ready {
  type: 'ready';
  pid: number;
  /** Base URL of the HTTP server (null for a process without one). */
  url: string | null;
  /** An owner key of the benchmark's own organization (server processes only). */
  apiKey: string | null;
  organizationId: string | null;
  apiKeyId: string | null;
  database: string | null;
}

export interface Stats {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** process.cpuUsage(): user and system CPU time in microseconds since start. */
  cpuUserUs: number;
  cpuSystemUs: number;
  /** Long-poll waiters registered on the event bus. */
  waiters: number;
}

export interface FinishTiming {
  id: string;
  ok: boolean;
  /** wallNow() just before finisher.finish() was called. */
  calledAt: number;
  /** wallNow() when it returned: the terminal state is committed and announced. */
  returnedAt: number;
}

export type Command =
  | { cmd: 'seed'; count: number; status: 'PENDING' | 'COMPLETED' }
  /**
   * Completes PENDING generations, `concurrency` at a time (like that many workers), each lane
   * pausing `gapMs` after each one.
   */
  | { cmd: 'finish'; ids: string[]; concurrency: number; gapMs: number }
  | { cmd: 'stats'; gc?: boolean }
  | { cmd: 'generation'; id: string }
  /** The process's wallNow(), to measure the clock offset between processes. */
  | { cmd: 'clock' }
  | { cmd: 'stop' };

export interface Request {
  type: 'request';
  id: number;
  command: Command;
}

export type Reply =
  | { type: 'reply'; id: number; ok: true; result: unknown }
  | { type: 'reply'; id: number; ok: false; error: string };
