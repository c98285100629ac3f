// What the API commands of `lipsync` (generate, tts, voices, voice clone/delete) share: a small JSON
// client for a running server with an API key, uploads and downloads. Nothing here touches the
// database.
import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { streamToFile } from '../stream-to-file.js';

/**
 * A failure the command reports on stderr ("lipsync: message") and exits with: 1 for what went wrong
 * at the server or with files, 2 for bad usage. `details` go into its --json object.
 */
export class ClientError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new ClientError(message, {}, 2);

/** The API key of the API commands: --key, else $LIPSYNC_API_KEY. */
export function apiKey(given?: string): string {
  const key = given ?? process.env.LIPSYNC_API_KEY;
  if (!key) throw usageError('an API key is needed: --key or LIPSYNC_API_KEY');
  return key;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

export interface Api {
  (method: string, path: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<ApiResponse>;
}

/** The server the API commands talk to: --server, else $LIPSYNC_SERVER, else this machine's $PORT. */
export function serverUrl(given?: string): string {
  return given ?? process.env.LIPSYNC_SERVER ?? `http://127.0.0.1:${process.env.PORT ?? '8080'}`;
}

export function client(server: string, key: string): Api {
  const base = server.replace(/\/+$/, '');
  return async (method, path, body, extraHeaders = {}) => {
    const headers: Record<string, string> = { 'x-api-key': key, ...extraHeaders };
    let payload: FormData | string | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, { method, headers, body: payload });
    } catch (err) {
      throw new ClientError(`cannot reach the server at ${base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
}

/** "what: HTTP 422 voice_blocked: message", with the API's error object kept for --json. */
export function apiError(what: string, r: { status: number; json: any; text: string }): ClientError {
  const code = r.json?.errorCode ? ` ${r.json.errorCode}` : '';
  const message = r.json?.message ?? r.text.slice(0, 300);
  return new ClientError(`${what}: HTTP ${r.status}${code}: ${message}`, {
    status: r.status,
    errorCode: r.json?.errorCode ?? null,
    error: r.json,
  });
}

/** Uploads a local file as an asset (POST /v2/assets/upload); returns the asset's id. */
export async function uploadFile(api: Api, path: string): Promise<string> {
  return (await uploadAsset(api, path)).id;
}

/** Uploads a local file as an asset; its id, its type as the server detected it, and its signed URL. */
export async function uploadAsset(
  api: Api,
  path: string,
): Promise<{ id: string; type: string; url: string }> {
  let blob: Blob;
  try {
    blob = await openAsBlob(path);
  } catch (err) {
    throw new ClientError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const form = new FormData();
  form.append('file', blob, basename(path));
  const r = await api('POST', '/v2/assets/upload', form);
  if (r.status !== 201) throw apiError(`uploading ${path}`, r);
  return { id: r.json.id as string, type: String(r.json.type), url: String(r.json.url ?? '') };
}

/** Streams a (signed) URL to a file. The URL is never part of the message: it grants access. */
export async function download(url: string, out: string, what: string): Promise<void> {
  let file: Response;
  try {
    file = await fetch(url);
  } catch (err) {
    throw new ClientError(`downloading ${what}: ${(err as Error).message}`);
  }
  if (!file.ok || !file.body) throw new ClientError(`downloading ${what}: HTTP ${file.status}`);
  try {
    await streamToFile(Readable.fromWeb(file.body as WebReadableStream<Uint8Array>), [], out);
  } catch (err) {
    throw new ClientError(`writing ${out}: ${(err as Error).message}`);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Seconds from a Retry-After header (delta or HTTP date), bounded so a bad header cannot hang us. */
export function retryAfterSeconds(h: string | null, fallback: number): number {
  if (!h) return fallback;
  const n = Number(h);
  const s = Number.isFinite(n) ? n : (Date.parse(h) - Date.now()) / 1000;
  return Number.isFinite(s) ? Math.min(60, Math.max(0.2, s)) : fallback;
}

/** Status of a long step on stderr: redrawn in place on a terminal, a line per change otherwise. */
export class StatusLine {
  private last = '';
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}
  update(text: string): void {
    if (this.stream.isTTY) this.stream.write(`\r${text}\x1b[K`);
    else if (text !== this.last) this.stream.write(`${text}\n`);
    this.last = text;
  }
  done(): void {
    if (this.stream.isTTY && this.last) this.stream.write('\n');
    this.last = '';
  }
}
