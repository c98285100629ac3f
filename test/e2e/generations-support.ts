// Helpers for the generation end-to-end tests: an organization and key made with the real CLI, assets
// uploaded over real HTTP, generations created and followed over real HTTP, outputs downloaded to disk.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { runCliJson, type TestServer } from '../helpers/index.js';

export interface E2eOrg {
  readonly id: string;
  readonly key: string;
  readonly headers: Record<string, string>;
}

export async function cliOrg(
  env: Record<string, string>,
  args: string[] = ['--plan', 'enterprise'],
): Promise<E2eOrg> {
  const o = await runCliJson(['org', 'create', '--name', `e2e ${Date.now()}`, ...args], { env });
  const k = await runCliJson(['key', 'create', '--org', String(o.id)], { env });
  return { id: String(o.id), key: String(k.key), headers: { 'x-api-key': String(k.key) } };
}

export async function uploadOverHttp(server: TestServer, org: E2eOrg, path: string): Promise<string> {
  const fd = new FormData();
  fd.append('file', new Blob([await readFile(path)]), basename(path));
  const res = await fetch(`${server.url}/v2/assets/upload`, {
    method: 'POST',
    headers: org.headers,
    body: fd,
  });
  const text = await res.text();
  assert.equal(res.status, 201, text);
  return (JSON.parse(text) as { id: string }).id;
}

export async function api(
  server: TestServer,
  org: E2eOrg,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...org.headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // text/plain answers
  }
  return { status: res.status, headers: res.headers, text, json };
}

export async function createGeneration(server: TestServer, org: E2eOrg, body: unknown): Promise<string> {
  const r = await api(server, org, 'POST', '/v2/generate', body);
  assert.equal(r.status, 201, r.text);
  return r.json.id as string;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);

/** Long-polls until terminal; returns the generation. */
export async function waitDone(
  server: TestServer,
  org: E2eOrg,
  id: string,
  deadlineMs = 120_000,
): Promise<any> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const r = await api(server, org, 'GET', `/v2/generate/${id}?wait=true&timeout=10`);
    assert.equal(r.status, 200, r.text);
    if (TERMINAL.has(r.json.status)) return r.json;
    if (Date.now() > end) assert.fail(`generation ${id} still ${r.json.status}`);
  }
}

/** GET the download URL (text/plain) and fetch it without the API key into dir; returns the path. */
export async function downloadOutput(
  server: TestServer,
  org: E2eOrg,
  id: string,
  dir: string,
  fileName?: string,
): Promise<{ path: string; url: string; contentType: string | null; contentDisposition: string | null }> {
  const q = fileName ? `?fileName=${encodeURIComponent(fileName)}` : '';
  const r = await api(server, org, 'GET', `/v2/generations/${id}/download${q}`);
  assert.equal(r.status, 200, r.text);
  assert.match(String(r.headers.get('content-type')), /^text\/plain/);
  const url = r.text;
  // The server's own /v2/files URL on local storage, a presigned URL of the bucket on S3.
  assert.ok(url.startsWith(server.filesBase), `${url} is not under ${server.filesBase}`);
  const file = await fetch(url);
  assert.equal(file.status, 200);
  const path = join(dir, `${id}-${fileName ?? 'out'}`);
  await writeFile(path, Buffer.from(await file.arrayBuffer()));
  return {
    path,
    url,
    contentType: file.headers.get('content-type'),
    contentDisposition: file.headers.get('content-disposition'),
  };
}
