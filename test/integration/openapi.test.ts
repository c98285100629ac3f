// The OpenAPI document as a client generator reads it: every operation named (operationId and
// summary, the official SDK's method names where it has the call), the multipart forms with their
// files, Redocly's recommended rules, and uploads built from the document alone against a real server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  createOrgWithKey,
  createTestServices,
  fixturesDir,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { CreateGenerationBody } from '../../src/http/schemas/generations.js';
import { GENERATION_FILE_FIELDS, GENERATION_JSON_FIELDS } from '../../src/services/generation-uploads.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  contentMediaType?: string;
  required?: string[];
  properties?: Record<string, Schema>;
};
type Operation = {
  operationId?: string;
  summary?: string;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
};
type Doc = {
  paths: Record<string, Partial<Record<string, Operation>>>;
  components?: { schemas?: Record<string, Schema> };
};

function operations(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method]! })),
  );
}

function operation(doc: Doc, operationId: string): { method: string; path: string; op: Operation } {
  const found = operations(doc).filter((o) => o.op.operationId === operationId);
  assert.equal(found.length, 1, `one operation ${operationId}`);
  return found[0]!;
}

function deref(doc: Doc, s: Schema): Schema {
  if (!s.$ref) return s;
  const name = s.$ref.replace('#/components/schemas/', '');
  const target = doc.components?.schemas?.[name];
  assert.ok(target, `unresolved ${s.$ref}`);
  return deref(doc, target);
}

function formSchema(doc: Doc, operationId: string): Schema {
  const body = operation(doc, operationId).op.requestBody;
  const media = body?.content['multipart/form-data'];
  assert.ok(media, `${operationId} documents multipart/form-data`);
  return deref(doc, media.schema);
}

type FileValue = { readonly file: string; readonly type: string };

/**
 * What a generated client does with a multipart operation: each value goes in the part the document
 * names, encoded as the document types it (binary: a file; JSON media type: JSON text; string: text).
 * A name or a type the document does not give is the client's error, not a guess.
 */
async function documentedRequest(
  doc: Doc,
  base: string,
  operationId: string,
  values: Record<string, unknown>,
  key: string,
): Promise<Response> {
  const { method, path } = operation(doc, operationId);
  const schema = formSchema(doc, operationId);
  for (const name of schema.required ?? []) assert.ok(name in values, `${operationId} requires ${name}`);
  const form = new FormData();
  for (const [name, value] of Object.entries(values)) {
    const prop = schema.properties?.[name] && deref(doc, schema.properties[name]);
    if (!prop) throw new Error(`${operationId}: the document has no form field ${name}`);
    if (prop.type === 'string' && prop.format === 'binary') {
      const { file, type } = value as FileValue;
      form.append(name, new Blob([await readFile(file)], { type }), basename(file));
    } else if (prop.type === 'string' && prop.contentMediaType === 'application/json') {
      form.append(name, JSON.stringify(value));
    } else if (prop.type === 'string') {
      form.append(name, String(value));
    } else {
      throw new Error(`${operationId}: form field ${name} has type ${prop.type}, which a form cannot carry`);
    }
  }
  return fetch(new URL(path, base), {
    method: method.toUpperCase(),
    headers: { 'x-api-key': key },
    body: form,
  });
}

async function documentedGet(doc: Doc, base: string, operationId: string, id: string, key: string) {
  const { method, path } = operation(doc, operationId);
  assert.equal(method, 'get');
  return fetch(new URL(path.replace('{id}', encodeURIComponent(id)), base), {
    headers: { 'x-api-key': key },
  });
}

describe(`OpenAPI document (${DB})`, { timeout: 120_000 }, () => {
  let t: TestServices;
  let org: TestOrg;
  let doc: Doc;
  let base: string;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(new URL('/v2/openapi.json', base));
    assert.equal(res.status, 200);
    doc = (await res.json()) as Doc;
  });
  after(() => t?.cleanup());

  test('every operation has a unique operationId and a summary', () => {
    const ops = operations(doc);
    assert.ok(ops.length > 40, `${ops.length} operations`);
    for (const { method, path, op } of ops) {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/, `${method} ${path} operationId`);
      assert.ok((op.summary ?? '').trim().length > 0, `${method} ${path} summary`);
    }
    const ids = ops.map((o) => o.op.operationId);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'duplicate operationIds',
    );
  });

  test("the official SDK's methods are the operationIds of their calls", () => {
    // @sync.so/sdk: client.<group>.<method>(...) and the call each one makes.
    const sdk: Record<string, string> = {
      'generations.create': 'post /v2/generate',
      'generations.get': 'get /v2/generate/{id}',
      'generations.list': 'get /v2/generations',
      'generations.estimateCost': 'post /v2/analyze/cost',
      'assets.list': 'get /v2/assets',
      'assets.get': 'get /v2/assets/{id}',
      'models.list': 'get /v2/models',
      'batch.create': 'post /v2/batch',
      'batch.get': 'get /v2/batch/{id}',
      'batch.list': 'get /v2/batch',
    };
    for (const [id, call] of Object.entries(sdk)) {
      const { method, path } = operation(doc, id);
      assert.equal(`${method} ${path}`, call, id);
    }
  });

  test('POST /v2/generate documents JSON and its multipart form, files as binary', () => {
    const content = operation(doc, 'generations.create').op.requestBody!.content;
    assert.deepEqual(Object.keys(content).sort(), ['application/json', 'multipart/form-data']);
    const form = formSchema(doc, 'generations.create');
    assert.deepEqual(form.required, ['model']);
    for (const name of GENERATION_FILE_FIELDS) {
      assert.deepEqual(
        { type: form.properties?.[name]?.type, format: form.properties?.[name]?.format },
        { type: 'string', format: 'binary' },
        name,
      );
    }
    // Every field of the JSON body can be sent in the form: as text, JSON text where the form reader
    // parses it.
    const json = deref(doc, content['application/json']!.schema);
    const names = Object.keys(CreateGenerationBody.properties).sort();
    assert.deepEqual(Object.keys(json.properties ?? {}).sort(), names);
    for (const name of names) {
      const field = form.properties?.[name];
      assert.equal(field?.type, 'string', `form field ${name}`);
      const isJson = (GENERATION_JSON_FIELDS as readonly string[]).includes(name);
      assert.equal(field?.contentMediaType === 'application/json', isJson, `form field ${name} as JSON text`);
    }
  });

  test('the asset upload and the batch document their multipart forms with a binary file', () => {
    for (const [id, file] of [
      ['assets.createUpload', 'file'],
      ['batch.create', 'input'],
    ] as const) {
      const form = formSchema(doc, id);
      assert.equal(form.properties?.[file]?.type, 'string', `${id} ${file}`);
      assert.equal(form.properties?.[file]?.format, 'binary', `${id} ${file}`);
    }
    assert.ok(operation(doc, 'assets.createUpload').op.requestBody!.content['application/json']);
  });

  test("Redocly's recommended rules report no error", async () => {
    const require = createRequire(import.meta.url);
    const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
    const file = join(t.dataDir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    // lint exits 1 when it finds errors; the JSON report says which.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, 'lint', '--extends', 'recommended', '--format', 'json', file],
      {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      },
    ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const report = JSON.parse(stdout) as {
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const errors = report.problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    assert.deepEqual(errors, []);
  });

  test('a client built from the document uploads an asset and creates a generation from files', async () => {
    const media = join(fixturesDir(), 'media');
    const video: FileValue = { file: join(media, 'face_5.mp4'), type: 'video/mp4' };
    const audio: FileValue = { file: join(media, 'hello.wav'), type: 'audio/wav' };
    const key = org.owner.key;

    const up = await documentedRequest(doc, base, 'assets.createUpload', { file: audio, name: 'hello' }, key);
    assert.equal(up.status, 201, await up.clone().text());
    const asset = (await up.json()) as { id: string; type: string; name: string };
    assert.equal(asset.type, 'AUDIO');
    assert.equal(asset.name, 'hello');

    const res = await documentedRequest(
      doc,
      base,
      'generations.create',
      { model: 'lipsync-2', video, audio, options: { sync_mode: 'loop' } },
      key,
    );
    assert.equal(res.status, 201, await res.clone().text());
    const g = (await res.json()) as { id: string; input: { type: string; assetId?: string }[] };
    const documented = deref(
      doc,
      operation(doc, 'generations.create').op.responses['201']!.content!['application/json']!.schema,
    );
    for (const name of documented.required ?? []) assert.ok(name in g, `201 body has ${name}`);
    assert.deepEqual(g.input.map((i) => i.type).sort(), ['audio', 'video']);
    for (const item of g.input) {
      const stored = await documentedGet(doc, base, 'assets.get', item.assetId!, key);
      assert.equal(stored.status, 200);
      assert.equal(((await stored.json()) as { type: string }).type, item.type.toUpperCase());
    }

    // A field the document does not have is refused by the client itself.
    await assert.rejects(
      documentedRequest(doc, base, 'generations.create', { model: 'lipsync-2', voice: audio }, key),
      /no form field voice/,
    );
  });
});
