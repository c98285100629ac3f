// Batches on a real database through the API: every malformed-file case (400 naming the line, nothing
// created), record validation by the rules of POST /v2/generate, dry runs, the plan and batch-concurrency
// rules, a 20-record batch run by in-process workers (children visible as generations, counters, the
// results file behind the signed outputUrl, a record refused while its child was being created), cancel,
// the signed batch webhook, list filters, and the organization's share at claim time.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createOrgWithKey, createTestServices, type TestServices } from '../helpers/index.js';
import { encodeForm, type FormPart } from '../helpers/multipart.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { verifyWebhook } from '../../src/domain/webhooks.js';
import {
  makeTestMedia,
  uploadAsset,
  fetchSigned,
  LIFECYCLE_ENGINE_ENV,
  type TestMedia,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Batch {
  id: string;
  status: string;
  created_at: string;
  metrics: { total_generations: number; success_count: number; failed_count: number; pending_count: number };
  outputUrl: string;
  webhookUrl: string | null;
  canceled_at: string | null;
}

const jsonl = (records: unknown[]): Buffer =>
  Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

describe(`batches (${DB})`, { timeout: 300_000 }, () => {
  let t: TestServices;
  let m: TestMedia;

  before(async () => {
    [t, m] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          LIPSYNC_ALLOW_PRIVATE_URLS: 'true',
          LIPSYNC_BATCH_CONCURRENCY: 'scale=1,enterprise=3',
          LIPSYNC_WORKER_CONCURRENCY: '2',
        },
      }),
      makeTestMedia(),
    ]);
  });
  after(async () => {
    await t?.cleanup();
    await m?.cleanup();
  });

  async function scaleOrg(plan = 'scale') {
    const o = await createOrgWithKey(t.services, { plan });
    const video = await uploadAsset(t.app, o.owner.headers, m.video);
    const audio = await uploadAsset(t.app, o.owner.headers, m.audioShort);
    return { o, video, audio, headers: o.owner.headers };
  }
  type Org = Awaited<ReturnType<typeof scaleOrg>>;

  const record = (org: Org, i: number, payload: Record<string, unknown> = {}) => ({
    request_id: `req-${i}`,
    endpoint: '/v2/generate',
    payload: {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: org.video },
        { type: 'audio', assetId: org.audio },
      ],
      ...payload,
    },
  });
  const records = (org: Org, n = 20) => Array.from({ length: n }, (_, i) => record(org, i + 1));

  async function submit(
    headers: Record<string, string>,
    file: Buffer | null,
    fields: Record<string, string> = {},
    fileField = 'input',
  ) {
    const parts: FormPart[] = Object.entries(fields).map(([name, value]) => ({ name, value }));
    if (file) parts.push({ name: fileField, file, filename: 'batch.jsonl', type: 'application/x-ndjson' });
    const form = await encodeForm(parts);
    return t.app.inject({
      method: 'POST',
      url: '/v2/batch',
      headers: { ...headers, ...form.headers },
      payload: form.payload,
    });
  }

  async function nothingCreated(org: Org) {
    const list = await t.app.inject({ method: 'GET', url: '/v2/batch', headers: org.headers });
    assert.deepEqual(list.json(), []);
    const gens = await t.app.inject({ method: 'GET', url: '/v2/generations', headers: org.headers });
    assert.deepEqual(gens.json(), []);
  }

  async function getBatch(org: Org, id: string): Promise<Batch> {
    const r = await t.app.inject({ method: 'GET', url: `/v2/batch/${id}`, headers: org.headers });
    assert.equal(r.statusCode, 200, r.body);
    return r.json() as Batch;
  }

  /** Polls the batch until it ends; each read waits on the batch's change events between polls. */
  async function waitDone(org: Org, id: string): Promise<Batch> {
    for (;;) {
      const b = await getBatch(org, id);
      if (b.status === 'COMPLETED' || b.status === 'FAILED') return b;
      await t.services.bus.waitForChange(id, 2_000);
    }
  }

  test('only the Scale and Enterprise plans may create batches (402)', async () => {
    const org = await scaleOrg('growth');
    const r = await submit(org.headers, jsonl(records(org)));
    assert.equal(r.statusCode, 402, r.body);
    assert.match(r.json().message, /Scale/);
    await nothingCreated(org);
  });

  test('while an operator has paused admission, batches are refused too (503)', async () => {
    const org = await scaleOrg();
    await t.services.admission.pause('maintenance');
    try {
      const r = await submit(org.headers, jsonl(records(org)));
      assert.equal(r.statusCode, 503, r.body);
      assert.equal(r.json().errorCode, 'generation_admission_paused');
    } finally {
      await t.services.admission.resume();
    }
    await nothingCreated(org);
  });

  test('malformed files: a clear 400 naming the line, nothing created', async () => {
    const org = await scaleOrg();
    const good = records(org);
    const lines = good.map((r) => JSON.stringify(r));
    const cases: { name: string; file: Buffer | null; fields?: Record<string, string>; match: RegExp }[] = [
      { name: 'no file', file: null, match: /input/ },
      // A text field named like the file field names no file on the server.
      { name: 'input as text', file: null, fields: { input: '/etc/hostname' }, match: /input/ },
      {
        name: 'BOM',
        file: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), jsonl(good)]),
        match: /byte order mark/,
      },
      { name: 'CRLF', file: Buffer.from(lines.join('\r\n') + '\r\n'), match: /Line 1 .*CRLF/ },
      {
        name: 'malformed JSON',
        file: Buffer.from([...lines.slice(0, 2), '{"request_id": "x",', ...lines.slice(2)].join('\n')),
        match: /Line 3: not valid JSON/,
      },
      {
        name: 'duplicate request_id',
        file: jsonl([...good.slice(0, 4), { ...good[5], request_id: 'req-2' }, ...good.slice(6)]),
        match: /Line 5: request_id "req-2" was already used on line 2/,
      },
      {
        name: 'wrong endpoint',
        file: jsonl([...good.slice(0, 6), { ...good[6], endpoint: '/v2/tts' }, ...good.slice(7)]),
        match: /Line 7: endpoint must be exactly "\/v2\/generate"/,
      },
      {
        name: 'payload not an object',
        file: jsonl([...good.slice(0, 1), { ...good[1], payload: 'x' }, ...good.slice(2)]),
        match: /Line 2: payload/,
      },
      {
        name: 'too few records',
        file: jsonl(good.slice(0, 19)),
        match: /19 records; a batch needs at least 20/,
      },
      { name: 'too many records', file: jsonl(records(org, 501)), match: /more than 500/ },
      {
        name: 'over 5 MB',
        file: Buffer.concat([jsonl(good), Buffer.alloc(5 * 1024 * 1024, 0x20)]),
        match: /5 MB/,
      },
      { name: 'bad dry_run', file: jsonl(good), fields: { dry_run: 'maybe' }, match: /dry_run/ },
    ];
    for (const c of cases) {
      const r = await submit(org.headers, c.file, c.fields);
      assert.equal(r.statusCode, 400, `${c.name}: ${r.body}`);
      const body = r.json();
      assert.match(body.message, c.match, c.name);
      assert.ok(body.errorCode, c.name);
    }
    // Empty lines do not count: the alias field "file" is accepted too.
    const spaced = Buffer.from(lines.join('\n\n') + '\n\n');
    const dry = await submit(org.headers, spaced, { dry_run: 'true' }, 'file');
    assert.equal(dry.statusCode, 200, dry.body);
    await nothingCreated(org);
  });

  test('records are validated by the rules of POST /v2/generate, the line named', async () => {
    const org = await scaleOrg();
    const base = records(org);
    const withRecord = (i: number, rec: unknown) => jsonl([...base.slice(0, i - 1), rec, ...base.slice(i)]);
    const schema = await submit(org.headers, withRecord(4, record(org, 4, { model: 42 })));
    assert.equal(schema.statusCode, 400, schema.body);
    assert.match(schema.json().message, /^Line 4: /);
    const model = await submit(org.headers, withRecord(6, record(org, 6, { model: 'no-such-model' })));
    assert.equal(model.statusCode, 400, model.body);
    assert.match(model.json().message, /^Line 6: /);
    const asset = await submit(
      org.headers,
      withRecord(
        9,
        record(org, 9, {
          input: [
            { type: 'video', assetId: randomUUID() },
            { type: 'audio', assetId: org.audio },
          ],
        }),
      ),
    );
    assert.equal(asset.statusCode, 400, asset.body);
    assert.equal(asset.json().errorCode, 'asset_not_found');
    assert.equal(asset.json().field, 'payload.input[0].assetId');
    assert.match(asset.json().message, /^Line 9: /);
    const project = await submit(org.headers, withRecord(11, record(org, 11, { projectId: randomUUID() })));
    assert.equal(project.json().errorCode, 'project_not_found');
    assert.match(project.json().message, /^Line 11: /);
    const edit = await submit(
      org.headers,
      withRecord(13, {
        ...record(org, 13),
        payload: {
          model: 'lipsync-2',
          input: [{ type: 'video', assetId: org.video }],
          dialogueEdit: { id: randomUUID() },
        },
      }),
    );
    assert.equal(edit.statusCode, 400, edit.body);
    // This organization lacks the retime flag: a dialogue-edit refusal, which also carries lineNumber.
    assert.match(edit.json().errorCode, /^dialogue_edit_/);
    assert.equal(edit.json().lineNumber, 13);
    assert.equal(model.json().lineNumber, undefined);
    await nothingCreated(org);
  });

  test('NUL in any string of a record: 400 naming the line and the field, nothing created', async () => {
    const org = await scaleOrg();
    const base = records(org);
    const NUL = '\u0000';
    const script = { type: 'text', provider: { name: 'local', voiceId: 'slt-hts', script: `hi${NUL}` } };
    const cases: { name: string; rec: unknown; field: string }[] = [
      { name: 'request_id', rec: { ...record(org, 7), request_id: `req-7${NUL}` }, field: 'request_id' },
      {
        name: 'webhook URL',
        rec: record(org, 7, { webhookUrl: `http://127.0.0.1/${NUL}` }),
        field: 'payload.webhookUrl',
      },
      {
        name: 'text',
        rec: record(org, 7, { input: [{ type: 'video', assetId: org.video }, script] }),
        field: 'payload.input[1].provider.script',
      },
      {
        name: 'a name',
        rec: record(org, 7, { options: { [`x${NUL}`]: 1 } }),
        field: 'payload.options.x\\u0000',
      },
    ];
    const forms: Record<string, string>[] = [{}, { dry_run: 'true' }];
    for (const c of cases) {
      const file = jsonl([...base.slice(0, 6), c.rec, ...base.slice(7)]);
      for (const fields of forms) {
        const r = await submit(org.headers, file, fields);
        assert.equal(r.statusCode, 400, `${c.name}: ${r.body}`);
        const body = r.json();
        assert.equal(body.errorCode, 'batch_input_invalid', c.name);
        assert.equal(body.field, c.field, c.name);
        assert.match(body.message, /^Line 7: .*NUL character/, c.name);
      }
    }
    await nothingCreated(org);
    // The same 20 records without the NUL pass.
    const ok = await submit(org.headers, jsonl(base), { dry_run: 'true' });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('a dry run validates and resolves everything and creates nothing', async () => {
    const org = await scaleOrg();
    const r = await submit(org.headers, jsonl(records(org)), { dry_run: 'true' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json();
    assert.equal(body.status, 'VALIDATED');
    assert.equal(body.summary.total_records, 20);
    assert.equal(body.summary.assets_resolved, 40);
    assert.deepEqual(body.summary.models, { 'lipsync-2': 20 });
    await nothingCreated(org);
  });

  test('batch concurrency under parallel submissions: one accepted, the others 429', async () => {
    const org = await scaleOrg(); // scale=1 in this deployment; no workers run in this test
    const file = jsonl(records(org));
    const answers = await Promise.all(Array.from({ length: 4 }, () => submit(org.headers, file)));
    const accepted = answers.filter((r) => r.statusCode === 200);
    assert.equal(accepted.length, 1, answers.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
    for (const r of answers.filter((x) => x.statusCode !== 200)) {
      assert.equal(r.statusCode, 429, r.body);
      assert.equal(r.json().errorCode, 'concurrency_limit_reached');
    }
    const list = await t.app.inject({ method: 'GET', url: '/v2/batch', headers: org.headers });
    assert.equal(list.json().length, 1);
    const id = (accepted[0]!.json() as Batch).id;
    const canceled = await t.app.inject({
      method: 'POST',
      url: `/v2/batch/${id}/cancel`,
      headers: org.headers,
    });
    assert.equal(canceled.statusCode, 200, canceled.body);
  });

  test('batch concurrency: one more running batch than the plan allows is 429; cancel frees it', async () => {
    const org = await scaleOrg(); // scale=1 in this deployment; no workers run in this test
    const first = await submit(org.headers, jsonl(records(org)));
    assert.equal(first.statusCode, 200, first.body);
    const b1 = first.json() as Batch;
    assert.equal(b1.status, 'PENDING');
    const second = await submit(org.headers, jsonl(records(org)));
    assert.equal(second.statusCode, 429, second.body);
    assert.equal(second.json().errorCode, 'concurrency_limit_reached');
    assert.match(second.json().message, /batch/);
    // The batch's records do not take the organization's generation slots.
    const single = await t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: { ...org.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(record(org, 0).payload),
    });
    assert.equal(single.statusCode, 201, single.body);
    const canceled = await t.app.inject({
      method: 'POST',
      url: `/v2/batch/${b1.id}/cancel`,
      headers: org.headers,
    });
    assert.equal(canceled.statusCode, 200, canceled.body);
    const c = canceled.json() as Batch;
    assert.equal(c.status, 'FAILED');
    assert.ok(c.canceled_at);
    assert.deepEqual(c.metrics, {
      total_generations: 20,
      success_count: 0,
      failed_count: 20,
      pending_count: 0,
    });
    const third = await submit(org.headers, jsonl(records(org)));
    assert.equal(third.statusCode, 200, third.body);
    await t.app.inject({
      method: 'POST',
      url: `/v2/batch/${(third.json() as Batch).id}/cancel`,
      headers: org.headers,
    });
    const failed = await t.app.inject({
      method: 'GET',
      url: '/v2/batch?status=FAILED',
      headers: org.headers,
    });
    assert.equal((failed.json() as Batch[]).length, 2);
    const none = await t.app.inject({
      method: 'GET',
      url: `/v2/batch?created_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
      headers: org.headers,
    });
    assert.deepEqual(none.json(), []);
    const bad = await t.app.inject({
      method: 'GET',
      url: '/v2/batch?created_before=yesterday',
      headers: org.headers,
    });
    assert.equal(bad.statusCode, 400);
  });

  describe('with workers', () => {
    let bg: Background;
    let receiver: Server;
    let receiverUrl: string;
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    let onReceived: (() => void) | null = null;

    before(async () => {
      bg = startBackground(t.services);
      receiver = createServer((req, res) => {
        if (req.method !== 'POST') return void res.writeHead(404).end(); // the missing media of a record
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          received.push({ headers: req.headers, body });
          res.writeHead(204).end();
          onReceived?.();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    });
    after(async () => {
      await bg?.stop();
      await new Promise((r) => receiver?.close(r));
    });

    test('a 20-record batch runs to COMPLETED; results, children, webhook', async () => {
      const org = await scaleOrg('enterprise');
      const file = records(org);
      // One record's media cannot be fetched: refused when its child is created, the rest go on.
      file[7] = record(org, 8, {
        input: [
          { type: 'video', url: receiverUrl.replace('/hook', '/missing.mp4') },
          { type: 'audio', assetId: org.audio },
        ],
      });
      const hook = new Promise<void>((r) => (onReceived = r));
      const r = await submit(org.headers, jsonl(file), { webhook_url: receiverUrl });
      assert.equal(r.statusCode, 200, r.body);
      const created = r.json() as Batch;
      assert.equal(created.webhookUrl, receiverUrl);
      const done = await waitDone(org, created.id);
      assert.equal(done.status, 'COMPLETED');
      assert.deepEqual(done.metrics, {
        total_generations: 20,
        success_count: 19,
        failed_count: 1,
        pending_count: 0,
      });

      const children = await t.app.inject({
        method: 'GET',
        url: `/v2/generations?source=batch:${created.id}`,
        headers: org.headers,
      });
      const gens = children.json() as { status: string; webhookUrl: string | null }[];
      assert.equal(gens.length, 19);
      assert.ok(gens.every((g) => g.status === 'COMPLETED' && !g.webhookUrl));

      // The signed outputUrl needs no key: 302 to the JSONL file.
      const redirect = await fetchSigned(t.app, done.outputUrl);
      assert.equal(redirect.statusCode, 302, redirect.body);
      const file2 = await fetchSigned(t.app, redirect.headers.location as string);
      assert.equal(file2.statusCode, 200);
      const lines = file2.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, string>);
      assert.equal(lines.length, 20);
      assert.deepEqual(
        lines.map((l) => l.request_id),
        file.map((f) => f.request_id),
      );
      for (const l of lines) {
        if (l.request_id === 'req-8') {
          assert.equal(l.status, 'FAILED');
          assert.equal(l.error_code, 'generation_input_video_inaccessible');
          assert.equal(l.generation_id, null);
        } else {
          assert.equal(l.status, 'COMPLETED');
          assert.ok(l.generation_id && l.outputUrl);
          const out = await fetchSigned(t.app, l.outputUrl);
          assert.equal(out.statusCode, 200);
        }
      }
      // Without a signature the API key is needed.
      const path = `/v2/batch/${created.id}/results`;
      assert.equal((await t.app.inject({ method: 'GET', url: path })).statusCode, 401);
      assert.equal((await t.app.inject({ method: 'GET', url: path, headers: org.headers })).statusCode, 302);

      await hook;
      const got = received.find((h) => JSON.parse(h.body).id === created.id);
      assert.ok(got);
      const sig = got.headers['webhook-signature'] as string;
      assert.equal(got.headers['sync-signature'], sig);
      const org2 = await t.services.store.organizations.findById(org.o.organization.id);
      assert.ok(verifyWebhook(org2!.webhookSecret, got.body, sig, Math.floor(Date.now() / 1000)));
      const sent = JSON.parse(got.body) as Batch;
      assert.equal(sent.status, 'COMPLETED');
      assert.equal(sent.metrics.success_count, 19);
    });
  });

  test('claims respect the organization share of bulk jobs', async () => {
    const jobs = t.services.store.jobs;
    const kind = `share-test-${randomUUID().slice(0, 8)}`;
    const a = randomUUID();
    const b = randomUUID();
    const insert = (org: string, shareLimit: number | null, priority = 0) =>
      t.services.store.db.kysely.transaction().execute((trx) =>
        jobs.insert(trx, {
          kind,
          subjectId: randomUUID(),
          organizationId: org,
          payload: {},
          payloadVersion: 1,
          maxAttempts: 1,
          timeoutMs: 60_000,
          shareLimit,
          priority,
        }),
      );
    for (let i = 0; i < 3; i++) await insert(a, 1, -10);
    const claim = () =>
      t.services.store.db.kysely.transaction().execute((trx) => jobs.claim(trx, [kind], 'test', 60_000));
    const first = await claim();
    assert.equal(first?.organizationId, a);
    assert.equal(await claim(), null); // a's share (1) is running
    assert.equal(await jobs.nextDueInMs([kind]), null);
    await insert(b, 1, -10);
    assert.equal((await claim())?.organizationId, b);
    await insert(a, null);
    assert.equal((await claim())?.organizationId, a); // interactive work is not held back by the share
  });
});
