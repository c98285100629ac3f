// A child process that runs our service from source, driven by the benchmark over IPC.
//
//   BENCH_CHILD_MODE=server    `lipsync serve` as src/main.ts starts it (LIPSYNC_ROLE from the
//                              environment), plus an organization and key for the benchmark
//   BENCH_CHILD_MODE=finisher  only the service container on the same database, like a separate
//                              `lipsync worker` process: it writes terminal states through the
//                              GenerationFinisher, as a worker does at the end of a job
//
// Commands (see protocol.ts) seed generation rows, finish them, and report memory, CPU time and the
// number of long-poll waiters. The process exits when told to stop or when the parent goes away.
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { start, type Running } from '../../src/main.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import type { GenerationRecord } from '../../src/store/generations.js';
import { createOrgWithKey } from '../../test/helpers/orgs.js';
import type { Command, FinishTiming, Ready, Reply, Request, Stats } from './protocol.js';
import { wallNow } from './stats.js';

const mode = process.env.BENCH_CHILD_MODE === 'finisher' ? 'finisher' : 'server';
const config = loadConfig(process.env);

let running: Running | null = null;
let services: Services;
if (mode === 'server') {
  running = await start(config, () => undefined);
  services = running.services;
} else {
  services = await createServices(config, createLogger(config.logLevel));
}

let organizationId: string | null = null;
let apiKeyId: string | null = null;
let apiKey: string | null = null;
if (mode === 'server') {
  const org = await createOrgWithKey(services, { name: 'Benchmark org', plan: 'enterprise' });
  organizationId = org.organization.id;
  apiKeyId = org.owner.record.id;
  apiKey = org.owner.key;
}

/** A generation row as POST /v2/generate writes it (a face clip and a WAV, already resolved). */
function generationRow(status: 'PENDING' | 'COMPLETED'): GenerationRecord {
  if (!organizationId) throw new Error('seed needs a server process');
  const now = new Date().toISOString();
  const id = randomUUID();
  const probe = (kind: string, durationSeconds: number) => ({ kind, durationSeconds, sizeBytes: 662788 });
  const done = status === 'COMPLETED';
  return {
    id,
    organizationId,
    projectId: null,
    apiKeyId,
    model: 'lipsync-2',
    status,
    source: 'api',
    input: [
      { type: 'video', url: 'https://example.com/face.mp4' },
      { type: 'audio', url: 'https://example.com/speech.wav' },
    ],
    resolvedInput: {
      video: {
        blobKey: `inputs/${organizationId}/${randomUUID()}.mp4`,
        source: 'url',
        probe: probe('VIDEO', 6.13),
      },
      audio: {
        blobKey: `inputs/${organizationId}/${randomUUID()}.wav`,
        source: 'url',
        probe: probe('AUDIO', 5.02),
      },
    },
    options: { sync_mode: 'cut_off', temperature: 0.5, output_format: 'mp4', speedup: 1 },
    segments: null,
    webhookUrl: null,
    outputFileName: null,
    outputFormat: 'mp4',
    outputKey: done ? `outputs/${organizationId}/${id}.mp4` : null,
    watermarkedKey: null,
    outputUrl: null,
    outputDuration: done ? 5.02 : null,
    progress: done ? 100 : 0,
    error: null,
    errorCode: null,
    quality: done ? { engine: 'passthrough', framesTotal: 151, width: 700, height: 700, fps: 30 } : null,
    dub: null,
    dubAudioKey: null,
    stillKey: null,
    startedAt: done ? now : null,
    finishedAt: done ? now : null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
}

async function seed(count: number, status: 'PENDING' | 'COMPLETED'): Promise<string[]> {
  const rows = Array.from({ length: count }, () => generationRow(status));
  await services.db.kysely.transaction().execute(async (trx) => {
    for (const g of rows) {
      await services.store.generations.insert(g, trx);
      if (status === 'PENDING')
        await services.queue.enqueue(trx, {
          kind: 'generation',
          subjectId: g.id,
          organizationId: g.organizationId,
          payload: { generationId: g.id },
          payloadVersion: 1,
          maxAttempts: config.jobMaxAttempts,
          timeoutMs: config.jobTimeoutMs,
        });
    }
  });
  // A live database has statistics on its tables (autovacuum analyzes after bulk inserts, within a
  // minute); without them the planner guesses about a table just filled here.
  if (services.db.dialect === 'postgres')
    await sql`analyze generations, api_keys, organizations`.execute(services.db.kysely);
  return rows.map((g) => g.id);
}

/** Completes PENDING generations, `concurrency` at a time, each lane pausing `gapMs` after each. */
async function finish(ids: string[], concurrency: number, gapMs: number): Promise<FinishTiming[]> {
  const out: FinishTiming[] = new Array(ids.length);
  let next = 0;
  const lane = async () => {
    while (next < ids.length) {
      const i = next++;
      const id = ids[i];
      const calledAt = wallNow();
      const job = await services.store.jobs.findBySubject('generation', id);
      const g =
        job &&
        (await services.queue.settle(
          job,
          { statuses: ['queued', 'running'] },
          {
            status: 'completed',
            result: {
              outputKey: `outputs/${organizationId ?? 'bench'}/${id}.mp4`,
              watermarkedKey: null,
              outputDuration: 5.02,
              fps: 30,
              quality: { engine: 'passthrough', framesTotal: 151 },
            },
          },
        ));
      out[i] = { id, ok: g !== null, calledAt, returnedAt: wallNow() };
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
  return out;
}

function stats(gc: boolean): Stats {
  if (gc) (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const cpu = process.cpuUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    cpuUserUs: cpu.user,
    cpuSystemUs: cpu.system,
    waiters: services.bus.waiterCount(),
  };
}

let stopping: Promise<void> | null = null;
function stop(): Promise<void> {
  stopping ??= (async () => {
    const guard = setTimeout(() => process.exit(1), 15_000);
    guard.unref();
    try {
      if (running) await running.stop();
      else await services.close();
    } finally {
      clearTimeout(guard);
    }
  })();
  return stopping;
}

async function handle(c: Command): Promise<unknown> {
  switch (c.cmd) {
    case 'seed':
      return seed(c.count, c.status);
    case 'finish':
      return finish(c.ids, c.concurrency, c.gapMs);
    case 'stats':
      return stats(c.gc ?? false);
    case 'generation':
      return services.store.generations.findAny(c.id);
    case 'clock':
      return wallNow();
    case 'stop':
      await stop();
      return null;
  }
}

const send = (m: Ready | Reply) => process.send?.(m);

process.on('message', (m: Request) => {
  if (m?.type !== 'request') return;
  handle(m.command).then(
    (result) => {
      send({ type: 'reply', id: m.id, ok: true, result });
      if (m.command.cmd === 'stop') process.disconnect();
    },
    (err: unknown) =>
      send({ type: 'reply', id: m.id, ok: false, error: String((err as Error)?.stack ?? err) }),
  );
});
// The parent went away (finished, crashed or was killed): do not outlive it.
process.on('disconnect', () => void stop().then(() => process.exit(0)));

send({
  type: 'ready',
  pid: process.pid,
  url: running?.url ?? null,
  apiKey,
  organizationId,
  apiKeyId,
  database: services.db.dialect,
});
