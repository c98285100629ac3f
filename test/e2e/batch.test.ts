// Batches end to end with real processes: an API-only server and `lipsync worker` processes on the same
// database. A 20-record batch of real fixture media runs through the lip-sync engine (every child's
// output checked with ffprobe), a single generation of another organization submitted behind it
// finishes first, and the signed webhook is verified by a receiver. A worker killed with SIGKILL while
// it is creating a batch's generations (and running some) leaves every record ending exactly once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeployment, startServer, type TestDeployment, type TestServer } from '../helpers/index.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import { verifyWebhook } from '../../src/domain/webhooks.js';
import {
  AUDIO_LONG_SECONDS,
  AUDIO_SHORT_SECONDS,
  LIFECYCLE_ENGINE_ENV,
  makeTestMedia,
  probeFile,
  startMediaServer,
  type MediaServer,
  type TestMedia,
  VIDEO_SECONDS,
} from '../integration/generations-support.js';
import {
  api,
  cliOrg,
  createGeneration,
  uploadOverHttp,
  waitDone,
  type E2eOrg,
} from './generations-support.js';
import { allOutput, exitOf, HANG_GUARD_MS, startWorkers, type WorkerProcess } from './worker-processes.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Batch {
  id: string;
  status: string;
  metrics: { total_generations: number; success_count: number; failed_count: number; pending_count: number };
  outputUrl: string;
}

async function submitBatch(
  server: TestServer,
  org: E2eOrg,
  records: unknown[],
  fields: Record<string, string> = {},
) {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const text = records.map((r) => JSON.stringify(r)).join('\n') + '\n';
  fd.append('input', new Blob([text], { type: 'application/x-ndjson' }), 'batch.jsonl');
  const res = await fetch(`${server.url}/v2/batch`, { method: 'POST', headers: org.headers, body: fd });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  return JSON.parse(body) as Batch;
}

/** Polls the batch (a short sleep between reads) until `done` holds; fails instead of hanging. */
async function waitBatch(
  server: TestServer,
  org: E2eOrg,
  id: string,
  done: (b: Batch) => boolean,
  context: () => string,
  deadlineMs = 240_000,
): Promise<Batch> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const r = await api(server, org, 'GET', `/v2/batch/${id}`);
    assert.equal(r.status, 200, r.text);
    if (done(r.json as Batch)) return r.json as Batch;
    if (Date.now() > end) assert.fail(`batch ${id} is ${r.text}\n${context()}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** The results file: the signed outputUrl answers 302 to the JSONL file (no API key needed). */
async function results(b: Batch): Promise<Record<string, string>[]> {
  const redirect = await fetch(b.outputUrl, { redirect: 'manual' });
  assert.equal(redirect.status, 302);
  const file = await fetch(redirect.headers.get('location')!);
  assert.equal(file.status, 200);
  return (await file.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, string>);
}

describe(`batches with worker processes (${DB})`, { timeout: 600_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let m: TestMedia;
  let media: MediaServer;
  let out: string;
  let db: Services;
  let receiver: Server;
  let receiverUrl: string;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let workers: WorkerProcess[] = [];

  before(async () => {
    [dep, m, media, out] = await Promise.all([
      createDeployment({ env: { LIPSYNC_ALLOW_PRIVATE_URLS: 'true', LIPSYNC_JOB_LEASE_SECONDS: '2' } }),
      makeTestMedia(),
      startMediaServer(),
      mkdtemp(join(tmpdir(), 'lipsync-batch-out-')),
    ]);
    server = await startServer({ env: { ...dep.env, LIPSYNC_ROLE: 'api' } });
    db = await createServices(loadConfig({ ...dep.env, LOG_LEVEL: 'silent' }), createLogger('silent'));
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/batch-hook`;
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await server?.stop();
    await db?.close();
    await media?.close();
    await new Promise((r) => receiver?.close(r));
    await dep?.cleanup();
    await m?.cleanup();
    if (out) await rm(out, { recursive: true, force: true });
  });

  async function stopWorkers(): Promise<void> {
    await Promise.all(workers.map((w) => w.stop()));
    workers = [];
  }

  test('20 records of real fixture media: every child an output; another organization is not starved', async () => {
    const org = await cliOrg({ ...dep.env }, ['--plan', 'scale']);
    const other = await cliOrg({ ...dep.env }, ['--plan', 'creator']);
    const [video, short, long] = await Promise.all([
      uploadOverHttp(server, org, m.video),
      uploadOverHttp(server, org, m.audioShort),
      uploadOverHttp(server, org, m.audioLong),
    ]);
    const otherVideo = await uploadOverHttp(server, other, m.video);
    const otherAudio = await uploadOverHttp(server, other, m.audioShort);
    const records = Array.from({ length: 20 }, (_, i) => ({
      request_id: `clip-${i + 1}`,
      endpoint: '/v2/generate',
      payload: {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: i % 2 ? long : short },
        ],
        outputFileName: `clip-${i + 1}`,
      },
    }));
    const batch = await submitBatch(server, org, records, { webhook_url: receiverUrl });
    assert.equal(batch.status, 'PENDING');
    workers = await startWorkers(1, { ...dep.env, LIPSYNC_WORKER_CONCURRENCY: '2' });
    try {
      await waitBatch(
        server,
        org,
        batch.id,
        (b) => b.metrics.success_count >= 1,
        () => allOutput(workers),
      );
      // Submitted behind 19 queued records: interactive work is claimed first.
      const single = await createGeneration(server, other, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: otherVideo },
          { type: 'audio', assetId: otherAudio },
        ],
      });
      const g = await waitDone(server, other, single, 240_000);
      assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
      const atThatTime = (await api(server, org, 'GET', `/v2/batch/${batch.id}`)).json as Batch;
      assert.ok(atThatTime.metrics.pending_count > 0, JSON.stringify(atThatTime));

      const done = await waitBatch(
        server,
        org,
        batch.id,
        (b) => b.status === 'COMPLETED' || b.status === 'FAILED',
        () => allOutput(workers),
      );
      assert.equal(done.status, 'COMPLETED', allOutput(workers));
      assert.deepEqual(done.metrics, {
        total_generations: 20,
        success_count: 20,
        failed_count: 0,
        pending_count: 0,
      });
      const lines = await results(done);
      assert.deepEqual(
        lines.map((l) => l.request_id),
        records.map((r) => r.request_id),
      );
      for (const [i, l] of lines.entries()) {
        assert.equal(l.status, 'COMPLETED', JSON.stringify(l));
        const file = join(out, `${l.request_id}.mp4`);
        const res = await fetch(l.outputUrl);
        assert.equal(res.status, 200);
        await writeFile(file, Buffer.from(await res.arrayBuffer()));
        const p = await probeFile(file);
        assert.ok(p.video && p.audio, JSON.stringify(p));
        // The default sync mode cuts the output at the shorter of the video and the speech.
        const seconds = Math.min(VIDEO_SECONDS, i % 2 ? AUDIO_LONG_SECONDS : AUDIO_SHORT_SECONDS);
        assert.ok(Math.abs(p.duration - seconds) < 0.15, `${l.request_id}: ${p.duration} s`);
      }
      // Children are ordinary generations naming the batch.
      const children = await api(server, org, 'GET', `/v2/generations?source=batch:${batch.id}`);
      assert.equal((children.json as unknown[]).length, 20);

      // The webhook arrives signed with the organization's secret under both header names.
      const end = Date.now() + HANG_GUARD_MS;
      while (!received.some((r) => JSON.parse(r.body).id === batch.id)) {
        if (Date.now() > end) assert.fail('no batch webhook arrived');
        await new Promise((res) => setTimeout(res, 100));
      }
      const hook = received.find((r) => JSON.parse(r.body).id === batch.id)!;
      const secret = (await db.store.organizations.findById(org.id))!.webhookSecret;
      const sig = String(hook.headers['webhook-signature']);
      assert.equal(hook.headers['sync-signature'], sig);
      assert.ok(verifyWebhook(secret, hook.body, sig, Math.floor(Date.now() / 1000)));
      assert.equal(JSON.parse(hook.body).status, 'COMPLETED');
    } finally {
      await stopWorkers();
    }
  });

  test('a worker killed with SIGKILL mid-batch: every record ends exactly once, counters right', async () => {
    const org = await cliOrg({ ...dep.env }, ['--plan', 'scale']);
    const audio = await uploadOverHttp(server, org, m.audioShort);
    // Each record's video comes from its own URL; records 6..20 are held until the worker is dead, so
    // the kill lands while the batch job is creating generations.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const records = Array.from({ length: 20 }, (_, i) => ({
      request_id: `r${i + 1}`,
      endpoint: '/v2/generate',
      payload: {
        model: 'lipsync-2',
        input: [
          {
            type: 'video',
            url: media.route(`/kill/${i + 1}.mp4`, { file: m.video, ...(i >= 5 ? { gate: held } : {}) }),
          },
          { type: 'audio', assetId: audio },
        ],
      },
    }));
    const engine = { ...dep.env, ...LIFECYCLE_ENGINE_ENV, LIPSYNC_WORKER_CONCURRENCY: '2' };
    const batch = await submitBatch(server, org, records);
    const [victim] = await startWorkers(1, engine);
    workers = [victim];
    try {
      const end = Date.now() + HANG_GUARD_MS;
      const createdCount = async () =>
        Number(
          (
            await db.store.db.kysely
              .selectFrom('batch_items')
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .where('batch_id', '=', batch.id)
              .where('status', '=', 'created')
              .executeTakeFirstOrThrow()
          ).n,
        );
      while ((await createdCount()) < 5) {
        if (Date.now() > end) assert.fail(`records were not created\n${allOutput(workers)}`);
        await new Promise((res) => setTimeout(res, 50));
      }
      const parent = (await db.store.jobs.findBySubject('batch', batch.id))!;
      assert.equal(parent.status, 'running');
      victim.child.kill('SIGKILL');
      const exit = await exitOf(victim);
      assert.equal(exit.signal, 'SIGKILL');
      release();
      workers = await startWorkers(1, engine);

      const done = await waitBatch(
        server,
        org,
        batch.id,
        (b) => b.status === 'COMPLETED' || b.status === 'FAILED',
        () => allOutput(workers),
      );
      assert.equal(done.status, 'COMPLETED', allOutput(workers));
      assert.deepEqual(done.metrics, {
        total_generations: 20,
        success_count: 20,
        failed_count: 0,
        pending_count: 0,
      });
      const items = await db.store.db.kysely
        .selectFrom('batch_items')
        .selectAll()
        .where('batch_id', '=', batch.id)
        .execute();
      const gens = new Set(items.map((it) => it.generation_id));
      assert.equal(items.length, 20);
      assert.equal(gens.size, 20, 'one generation per record');
      assert.ok(items.every((it) => it.status === 'created' && it.generation_id));
      const children = await api(server, org, 'GET', `/v2/generations?source=batch:${batch.id}`);
      assert.equal((children.json as unknown[]).length, 20, 'no record created twice');
      for (const it of items) {
        const usage = await db.store.db.kysely
          .selectFrom('usage_records')
          .select('generation_id')
          .where('generation_id', '=', it.generation_id!)
          .execute();
        assert.equal(usage.length, 1, `${it.request_id}: billed ${usage.length} times`);
      }
      const again = (await db.store.jobs.findBySubject('batch', batch.id))!;
      assert.equal(again.status, 'completed');
      assert.equal(again.attempts, 2, 'the batch job was resumed by the second worker');
      const lines = await results(done);
      assert.ok(lines.every((l) => l.status === 'COMPLETED'));
    } finally {
      await stopWorkers();
    }
  });
});
