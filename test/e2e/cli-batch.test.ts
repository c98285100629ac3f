// `lipsync batch …` and `lipsync org batch-limits` against a real server (passthrough engine, so 20
// records take seconds): a dry run validates and creates nothing, a malformed file exits 1 naming the
// line, --watch follows a batch to its end (exit 0 only when no record failed), status, list, results,
// cancel, and the operator's record limits as the server then applies them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { fixture } from '../helpers/paths.js';
import {
  createDeployment,
  runCli,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { api, cliOrg, uploadOverHttp, type E2eOrg } from './generations-support.js';

const run = promisify(execFile);
const ffmpeg = (args: string[]) => run('ffmpeg', ['-v', 'error', '-y', ...args]);

describe('lipsync batch', { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let org: E2eOrg;
  let dir: string;
  let video: string;
  let videoAsset: string;
  let audioAsset: string;
  // Media by URL for the records that must fail (404) or wait (held until the test lets it go).
  let media: Server;
  let mediaUrl: string;
  let slowRequested: () => void;
  const slowSeen = new Promise<void>((r) => (slowRequested = r));
  let releaseSlow: () => void;
  const slowReleased = new Promise<void>((r) => (releaseSlow = r));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-cli-batch-'));
    video = join(dir, 'face.mp4');
    const audio = join(dir, 'speech.wav');
    await Promise.all([
      ffmpeg([
        '-i',
        fixture('media/face_5.mp4'),
        '-t',
        '2',
        '-vf',
        'scale=256:256,fps=25',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        video,
      ]),
      ffmpeg(['-i', fixture('media/hello.wav'), '-t', '1.5', audio]),
    ]);
    media = createServer((req, res) => {
      if (req.url !== '/slow.mp4') return void res.writeHead(404).end();
      slowRequested();
      void slowReleased.then(() => {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        createReadStream(video).pipe(res);
      });
    });
    await new Promise<void>((r) => media.listen(0, '127.0.0.1', r));
    mediaUrl = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
    dep = await createDeployment({
      env: {
        LOG_LEVEL: 'warn',
        LIPSYNC_DEFAULT_ENGINE: 'passthrough',
        LIPSYNC_WORKER_CONCURRENCY: '8',
        LIPSYNC_ALLOW_PRIVATE_URLS: '1',
      },
    });
    server = await startServer({ env: { ...dep.env } });
    org = await cliOrg(dep.env, ['--plan', 'scale']);
    [videoAsset, audioAsset] = await Promise.all([
      uploadOverHttp(server, org, video),
      uploadOverHttp(server, org, audio),
    ]);
  });
  after(async () => {
    releaseSlow?.();
    await server?.stop();
    await dep?.cleanup();
    await new Promise((r) => (media ? media.close(r) : r(undefined)));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const record = (i: number, videoInput?: Record<string, unknown>) => ({
    request_id: `req-${i}`,
    endpoint: '/v2/generate',
    payload: {
      model: 'lipsync-2',
      input: [videoInput ?? { type: 'video', assetId: videoAsset }, { type: 'audio', assetId: audioAsset }],
    },
  });
  const records = (n = 20) => Array.from({ length: n }, (_, i) => record(i + 1));
  async function jsonlFile(name: string, lines: unknown[]): Promise<string> {
    const path = join(dir, name);
    await writeFile(
      path,
      lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n',
    );
    return path;
  }

  const env = () => ({ ...dep.env, LIPSYNC_API_KEY: org.key, LIPSYNC_SERVER: server.url });
  const batch = (args: string[], timeoutMs = 60_000) => runCli(['batch', ...args], { env: env(), timeoutMs });
  const batchJson = (args: string[]) => runCliJson(['batch', ...args], { env: env() });

  async function nothingCreated() {
    assert.deepEqual((await batchJson(['list'])).batches, []);
    const gens = await api(server, org, 'GET', '/v2/generations');
    assert.deepEqual(gens.json, []);
  }

  let done: string;

  test('submit --dry-run validates every record and creates nothing', async () => {
    const file = await jsonlFile('good.jsonl', records());
    const j = await batchJson(['submit', file, '--dry-run']);
    assert.equal(j.status, 'VALIDATED');
    assert.equal(j.summary.total_records, 20);
    assert.deepEqual(j.summary.request_ids, { first: 'req-1', last: 'req-20' });
    assert.equal(j.summary.assets_resolved, 40);
    const text = await batch(['submit', file, '--dry-run']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^VALIDATED: 20 records \(req-1 \.\. req-20\); nothing was created/);
    await nothingCreated();
    const both = await batch(['submit', file, '--dry-run', '--watch']);
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /--watch has nothing to follow with --dry-run/);
  });

  test('a malformed file exits 1 with the line named; nothing is created', async () => {
    const good = records();
    const lines = good.map((r) => JSON.stringify(r));
    const broken = await jsonlFile('broken.jsonl', [
      ...lines.slice(0, 2),
      '{"request_id": "x",',
      ...lines.slice(3),
    ]);
    const r = await batch(['submit', broken, '--watch']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /^lipsync: submitting .*broken\.jsonl: HTTP 400 batch_input_invalid: Line 3: not valid JSON/m,
    );

    // Blank lines are not counted by the server: the line as an editor shows it is named too.
    const spaced = await jsonlFile('spaced.jsonl', [lines[0], '', lines[1], '', '{oops', ...lines.slice(3)]);
    const s = await batch(['submit', spaced, '--json']);
    assert.equal(s.code, 1, s.stdout + s.stderr);
    const j = JSON.parse(s.stdout.trim());
    assert.equal(j.errorCode, 'batch_input_invalid');
    assert.equal(j.line, 3);
    assert.equal(j.fileLine, 5);
    assert.match(s.stderr, /Line 3: not valid JSON.*this is line 5 of .*spaced\.jsonl/);

    // A record the generation rules refuse (an asset of nobody): its line named.
    const missing = { type: 'video', assetId: '00000000-0000-4000-8000-000000000000' };
    const refused = await jsonlFile('refused.jsonl', [
      ...good.slice(0, 4),
      record(5, missing),
      ...good.slice(5),
    ]);
    const a = await batch(['submit', refused]);
    assert.equal(a.code, 1, a.stdout + a.stderr);
    assert.match(a.stderr, /HTTP 400 asset_not_found: Line 5: /);
    await nothingCreated();
  });

  test('submit --watch follows the batch to COMPLETED and exits 0', async () => {
    const file = await jsonlFile('good.jsonl', records());
    const r = await batch(['submit', file, '--watch', '--poll', '0.2']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const [first] = r.stdout.split('\n');
    const m = /^([0-9a-f-]{36}) {2}COMPLETED {2}20 records: 20 succeeded, 0 failed, 0 pending$/.exec(first);
    assert.ok(m, r.stdout);
    done = m[1];
    // Not a terminal: the bar is printed as lines, ending at 100 % with the counters.
    const bars = r.stderr.split('\n').filter((l) => l.startsWith('['));
    assert.ok(bars.length >= 2, r.stderr);
    assert.match(bars[bars.length - 1], new RegExp(`\\] 100% completed 20/20 \\(0 failed\\) ${done}$`));
    assert.ok(!r.stdout.includes('sig='), 'the signed results URL is not printed');
    const children = await api(server, org, 'GET', `/v2/generations?source=batch:${done}`);
    assert.equal(children.json.length, 20);
  });

  test('status and list show the batch', async () => {
    const s = await batchJson(['status', done]);
    assert.equal(s.id, done);
    assert.equal(s.status, 'COMPLETED');
    assert.deepEqual(s.metrics, {
      total_generations: 20,
      success_count: 20,
      failed_count: 0,
      pending_count: 0,
    });
    assert.ok(s.finished_at);
    assert.equal(s.outputUrl, undefined);
    const text = await batch(['status', done]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /COMPLETED {2}20 records: 20 succeeded/);
    assert.match(text.stdout, /finished \d{4}-/);
    const completed = await batchJson(['list', '--status', 'COMPLETED']);
    assert.deepEqual(
      completed.batches.map((b: { id: string }) => b.id),
      [done],
    );
    assert.deepEqual((await batchJson(['list', '--status', 'FAILED'])).batches, []);
    const bad = await batch(['list', '--status', 'DONE']);
    assert.equal(bad.code, 2);
    const unknown = await batch(['status', '00000000-0000-4000-8000-000000000000']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /HTTP 404 batch_not_found/);
  });

  test('results --out writes the JSONL results file and counts its statuses', async () => {
    const out = join(dir, 'results.jsonl');
    const r = await batch(['results', done, '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${out}\n20 records: 20 COMPLETED (batch COMPLETED)\n`);
    const lines = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 20);
    assert.deepEqual(
      lines.map((l) => l.request_id),
      records().map((x) => x.request_id),
    );
    for (const l of lines) {
      assert.equal(l.status, 'COMPLETED');
      assert.ok(l.generation_id && l.outputUrl, JSON.stringify(l));
    }
    const j = await batchJson(['results', done, '--out', out]);
    assert.deepEqual(j.statuses, { COMPLETED: 20 });
    assert.equal(j.records, 20);
  });

  test('--watch exits 1 when a record failed, with the counters', async () => {
    const file = await jsonlFile('one-bad.jsonl', [
      ...records(19),
      record(20, { type: 'video', url: `${mediaUrl}/missing.mp4` }),
    ]);
    const r = await batch(['submit', file, '--watch', '--poll', '0.2', '--json']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout.trim());
    assert.equal(j.status, 'COMPLETED');
    assert.deepEqual(j.metrics, {
      total_generations: 20,
      success_count: 19,
      failed_count: 1,
      pending_count: 0,
    });
    assert.match(j.error, /ended COMPLETED: 1 of 20 records failed/);
    assert.match(r.stderr, /lipsync batch results/);
    const out = join(dir, 'one-bad.results.jsonl');
    const res = await batch(['results', j.id, '--out', out]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /20 records: 19 COMPLETED, 1 FAILED/);
  });

  test('cancel stops a batch whose records have not started', async () => {
    // The first record's media is held: the batch is still creating its generations when canceled.
    const file = await jsonlFile('held.jsonl', [
      record(1, { type: 'video', url: `${mediaUrl}/slow.mp4` }),
      ...records().slice(1),
    ]);
    const created = await batchJson(['submit', file]);
    assert.equal(created.status, 'PENDING');
    await slowSeen;
    const r = await batch(['cancel', created.id]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^canceled batch ${created.id} `));
    releaseSlow();
    let s = await batchJson(['status', created.id]);
    for (let i = 0; s.status !== 'FAILED' && i < 100; i++) {
      await new Promise((res) => setTimeout(res, 200));
      s = await batchJson(['status', created.id]);
    }
    assert.equal(s.status, 'FAILED');
    assert.ok(s.canceled_at);
    assert.equal(s.metrics.success_count, 0);
    const again = await batch(['cancel', created.id]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^canceled batch/);
    const finished = await batch(['cancel', done]);
    assert.match(finished.stdout, /had already ended COMPLETED; nothing was canceled/);
  });

  test('org batch-limits sets the limits the server applies, and resets them', async () => {
    const op = (args: string[]) => runCliJson(['org', 'batch-limits', org.id, ...args], { env: dep.env });
    const initial = await op([]);
    assert.deepEqual(initial.limits, { minRecords: 20, maxRecords: 500, concurrency: 2 });
    assert.equal(initial.overrides, null);
    const raised = await op(['--min', '25']);
    assert.deepEqual(raised.limits, { minRecords: 25, maxRecords: 500, concurrency: 2 });
    // Options are set one at a time; an earlier override stays.
    const both = await op(['--max', '30', '--concurrency', '3']);
    assert.deepEqual(both.overrides, { minRecords: 25, maxRecords: 30, concurrency: 3 });

    const file = await jsonlFile('good.jsonl', records());
    const refused = await batch(['submit', file, '--dry-run']);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /20 records; a batch needs at least 25/);

    const bad = await runCli(['org', 'batch-limits', org.id, '--min', '40'], { env: dep.env });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /fewest records \(40\) would be more than the most \(30\)/);
    const zero = await runCli(['org', 'batch-limits', org.id, '--concurrency', '0'], { env: dep.env });
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /--concurrency must be a positive integer/);

    const reset = await op(['--reset']);
    assert.equal(reset.overrides, null);
    assert.deepEqual(reset.limits, { minRecords: 20, maxRecords: 500, concurrency: 2 });
    const text = await runCli(['org', 'batch-limits', org.id], { env: dep.env });
    assert.match(text.stdout, /plan=scale records=20\.\.500 concurrency=2 \(plan defaults\)/);
    const ok = await batch(['submit', file, '--dry-run']);
    assert.equal(ok.code, 0, ok.stderr);
  });
});
