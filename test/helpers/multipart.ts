// multipart/form-data bodies for inject and fetch, built by the platform's own FormData encoder.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';

export type FormPart =
  | { readonly name: string; readonly value: string }
  | {
      readonly name: string;
      /** A path to read, or the content itself. */
      readonly file: string | Buffer;
      readonly filename?: string;
      readonly type?: string;
    };

export interface EncodedForm {
  readonly payload: Buffer;
  readonly headers: Record<string, string>;
}

export async function encodeForm(parts: readonly FormPart[]): Promise<EncodedForm> {
  const fd = new FormData();
  for (const p of parts) {
    if ('value' in p) {
      fd.append(p.name, p.value);
      continue;
    }
    const content = typeof p.file === 'string' ? await readFile(p.file) : p.file;
    const filename = p.filename ?? (typeof p.file === 'string' ? basename(p.file) : 'blob.bin');
    fd.append(p.name, new Blob([content], { type: p.type ?? 'application/octet-stream' }), filename);
  }
  const req = new Request('http://form.invalid/', { method: 'POST', body: fd });
  const payload = Buffer.from(await req.arrayBuffer());
  return { payload, headers: { 'content-type': req.headers.get('content-type') ?? '' } };
}

/**
 * A form with one file of `size` zero bytes, generated as a stream (never held in memory), for tests
 * of size limits.
 */
export function streamedZeroFileForm(
  fieldName: string,
  size: number,
): { payload: Readable; headers: Record<string, string> } {
  const boundary = `----lipsync-test-${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${fieldName}"; filename="zeros.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(1024 * 1024);
  async function* body() {
    yield head;
    let left = size;
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      yield n === chunk.length ? chunk : chunk.subarray(0, n);
      left -= n;
    }
    yield tail;
  }
  return {
    payload: Readable.from(body(), { objectMode: false }),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

/** Uploads a local file with POST /v2/assets/upload through `inject`; asserts 201 and returns the asset. */
export async function uploadAssetFile(
  app: { inject(opts: object): Promise<{ statusCode: number; body: string; json(): any }> },
  headers: Record<string, string>,
  path: string,
): Promise<any> {
  const form = await encodeForm([{ name: 'file', file: path }]);
  const res = await app.inject({
    method: 'POST',
    url: '/v2/assets/upload',
    headers: { ...headers, ...form.headers },
    payload: form.payload,
  });
  if (res.statusCode !== 201) throw new Error(`upload of ${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}
