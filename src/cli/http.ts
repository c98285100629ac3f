// What the API commands of `lipsync` (generate, tts, voices, voice clone/delete) share: a small JSON
// client for a running server with an API key, uploads and downloads. Nothing here touches the
// database.
import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { streamToFile } from '../stream-to-file.js';
import { sha256File } from '../file-hash.js';
import { ClientError, usageError } from './client-error.js';
import { readSavedLogin } from './user-config.js';

export { ClientError, usageError } from './client-error.js';

/** Help of --server and --key: what each falls back to (docs/cli.md, "Connection"). */
export const SERVER_HELP =
  'server base URL (default $LIPSYNC_SERVER, else the `lipsync login` server, else http://127.0.0.1:$PORT)';
export const KEY_HELP =
  'API key (default $LIPSYNC_API_KEY, else the `lipsync login` key when talking to its server)';

/** Adds --server and --key to a client command. */
export function connectionOptions(cmd: Command): Command {
  return cmd.option('--server <url>', SERVER_HELP).option('--key <key>', KEY_HELP);
}

const sameServer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/**
 * The server and key of a client command. Each comes from its flag, else its environment variable,
 * else the saved login (`lipsync login`); the server last from this machine's $PORT. The saved key
 * is only ever sent to the saved server: naming another server needs its own key.
 */
export function connection(given: { server?: string; key?: string }): { server: string; key: string } {
  const explicitServer = given.server ?? process.env.LIPSYNC_SERVER;
  const explicitKey = given.key ?? process.env.LIPSYNC_API_KEY;
  const saved = explicitServer !== undefined && explicitKey !== undefined ? null : readSavedLogin();
  const server = explicitServer ?? saved?.server ?? `http://127.0.0.1:${process.env.PORT ?? '8080'}`;
  const key = explicitKey ?? (saved && sameServer(saved.server, server) ? saved.key : undefined);
  if (!key)
    throw usageError(
      saved
        ? `an API key is needed for ${server} (the saved login is for ${saved.server}): --key or LIPSYNC_API_KEY`
        : 'an API key is needed: --key, LIPSYNC_API_KEY or `lipsync login --server URL --key KEY`',
    );
  return { server, key };
}

/** The client of a command's --server and --key (see `connection`). */
export function apiFrom(given: { server?: string; key?: string }): Api {
  const c = connection(given);
  return client(c.server, c.key);
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
      // Never followed: the key would go along to wherever Location points.
      res = await fetch(`${base}${path}`, { method, headers, body: payload, redirect: 'manual' });
    } catch (err) {
      throw new ClientError(`cannot reach the server at ${base}: ${(err as Error).message}`);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw new ClientError(
        `the server at ${base} redirects (HTTP ${res.status}) to ${locationOrigin(res, base)}; the CLI ` +
          'does not follow redirects, so that the API key stays with the named server: give the final URL as --server',
      );
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

/** The origin a redirect points to (never its path or query, which may carry secrets). */
function locationOrigin(res: Response, base: string): string {
  const location = res.headers.get('location');
  if (!location) return 'nowhere (no Location header)';
  try {
    return new URL(location, `${base}/`).origin;
  } catch {
    return 'an invalid Location';
  }
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

/** A local file as an asset (uploaded unless this key uploaded the same bytes before); its id. */
export async function uploadFile(api: Api, path: string): Promise<string> {
  return (await uploadAsset(api, path)).id;
}

/**
 * A local file as an asset: its id, its type as the server detected it, and its signed URL. A file
 * this key uploaded before (same SHA-256, GET /v2/assets/uploaded) is reused instead of sent again;
 * `reused` says which happened.
 */
export async function uploadAsset(
  api: Api,
  path: string,
): Promise<{ id: string; type: string; url: string; reused: boolean }> {
  let blob: Blob;
  let digest: string;
  try {
    blob = await openAsBlob(path);
    digest = await sha256File(path);
  } catch (err) {
    throw new ClientError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const found = await api('GET', `/v2/assets/uploaded?contentSha256=${digest}`);
  // A server without the lookup (or any failure of it) only costs the upload.
  const known = found.status === 200 ? found.json?.asset : null;
  if (known?.id)
    return { id: String(known.id), type: String(known.type), url: String(known.url ?? ''), reused: true };
  const form = new FormData();
  form.append('file', blob, basename(path));
  const r = await api('POST', '/v2/assets/upload', form);
  if (r.status !== 201) throw apiError(`uploading ${path}`, r);
  return { id: r.json.id as string, type: String(r.json.type), url: String(r.json.url ?? ''), reused: false };
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
