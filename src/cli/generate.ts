// `lipsync generate`: a generation from the command line through a running server's HTTP API, as
// any client would make it: local files are uploaded as assets (URLs are passed on), the generation
// is created with an idempotency key, its progress is shown as a bar on stderr, and the output is
// downloaded. Needs a server (`lipsync serve`) and an API key; nothing here touches the database.
import { randomUUID } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

export interface GenerateArgs {
  server: string;
  key: string;
  model: string;
  video?: string;
  image?: string;
  audio: string;
  options: Record<string, unknown>;
  out?: string;
  /** Seconds between progress polls. */
  pollSeconds: number;
}

export class GenerateError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

interface Api {
  (
    method: string,
    path: string,
    body?: unknown,
    extraHeaders?: Record<string, string>,
  ): Promise<{ status: number; json: any; text: string }>;
}

function client(server: string, key: string): Api {
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
      throw new GenerateError(`cannot reach the server at ${base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, json, text };
  };
}

function apiError(what: string, r: { status: number; json: any; text: string }): GenerateError {
  const code = r.json?.errorCode ? ` ${r.json.errorCode}` : '';
  const message = r.json?.message ?? r.text.slice(0, 300);
  return new GenerateError(`${what}: HTTP ${r.status}${code}: ${message}`, {
    status: r.status,
    error: r.json,
  });
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** An input entry for the generation: a URL as is, a local file uploaded as an asset first. */
async function input(api: Api, type: 'video' | 'image' | 'audio', source: string) {
  if (isUrl(source)) return { type, url: source };
  let blob: Blob;
  try {
    blob = await openAsBlob(source);
  } catch (err) {
    throw new GenerateError(`cannot read ${source}: ${(err as Error).message}`);
  }
  const form = new FormData();
  form.append('file', blob, basename(source));
  const r = await api('POST', '/v2/assets/upload', form);
  if (r.status !== 201) throw apiError(`uploading ${source}`, r);
  return { type, assetId: r.json.id as string };
}

/** A progress bar on stderr: redrawn in place on a terminal, a line per 10 % otherwise. */
export class ProgressBar {
  private lastLine = -1;
  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly width = 30,
  ) {}

  update(status: string, percent: number | null): void {
    const p = Math.max(0, Math.min(100, percent ?? 0));
    const filled = Math.round((p / 100) * this.width);
    const text = `[${'#'.repeat(filled)}${'-'.repeat(this.width - filled)}] ${p.toFixed(0).padStart(3)}% ${status}`;
    if (this.stream.isTTY) {
      this.stream.write(`\r${text}\x1b[K`);
    } else {
      const step = Math.floor(p / 10);
      if (step !== this.lastLine) {
        this.lastLine = step;
        this.stream.write(`${text}\n`);
      }
    }
  }

  done(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);

export async function generate(
  args: GenerateArgs,
  bar: ProgressBar | null,
): Promise<Record<string, unknown>> {
  const api = client(args.server, args.key);
  const visual = args.image
    ? await input(api, 'image', args.image)
    : await input(api, 'video', args.video as string);
  const audio = await input(api, 'audio', args.audio);
  const created = await api(
    'POST',
    '/v2/generate',
    {
      model: args.model,
      input: [visual, audio],
      ...(Object.keys(args.options).length ? { options: args.options } : {}),
    },
    // A network or proxy retry of this request cannot create a second generation.
    { 'idempotency-key': randomUUID() },
  );
  if (created.status !== 201 && created.status !== 200) throw apiError('creating the generation', created);
  const id = created.json.id as string;

  let g = created.json;
  while (!TERMINAL.has(g.status)) {
    bar?.update(`${g.status.toLowerCase()} ${id}`, g.progress_percent ?? null);
    await new Promise((r) => setTimeout(r, args.pollSeconds * 1000));
    const r = await api('GET', `/v2/generate/${id}?include=progress`);
    if (r.status !== 200) throw apiError('reading the generation', r);
    g = r.json;
  }
  if (g.status === 'COMPLETED') bar?.update(`completed ${id}`, 100);
  bar?.done();

  const q = await api('GET', `/v2/generate/${id}?include=quality`);
  const quality = q.status === 200 ? (q.json.quality ?? null) : null;
  if (g.status !== 'COMPLETED') {
    throw new GenerateError(
      `generation ${id} ended ${g.status}: ${g.errorCode ?? ''} ${g.error ?? ''}`.trim(),
      {
        id,
        status: g.status,
        errorCode: g.errorCode ?? null,
        error: g.error ?? null,
        quality,
      },
    );
  }

  const d = await api('GET', `/v2/generations/${id}/download`);
  if (d.status !== 200) throw apiError('getting the download URL', d);
  const url = d.text.trim();
  const out = args.out ?? `${id}.${url.includes('.mov') ? 'mov' : 'mp4'}`;
  const file = await fetch(url);
  if (!file.ok || !file.body) throw new GenerateError(`downloading the output: HTTP ${file.status}`);
  await pipeline(Readable.fromWeb(file.body as WebReadableStream<Uint8Array>), createWriteStream(out));
  return { id, status: g.status, output: out, outputDuration: g.outputDuration ?? null, quality };
}

/** A short human summary of the engine's report. */
export function qualityText(quality: Record<string, any> | null): string {
  if (!quality) return 'no quality report';
  const parts = [
    `engine ${quality.engine}`,
    `face in ${quality.framesWithFace}/${quality.framesTotal} frames`,
  ];
  if (quality.mouthAudioCorrelation !== undefined && quality.mouthAudioCorrelation !== null)
    parts.push(`mouth/audio correlation ${quality.mouthAudioCorrelation}`);
  if (quality.activeSpeaker)
    parts.push(
      `active speaker: ${quality.activeSpeaker.method}, ${quality.activeSpeaker.faces} face(s), ${quality.activeSpeaker.switches} change(s)`,
    );
  const warnings = (quality.warnings as string[] | undefined) ?? [];
  return [parts.join(', '), ...warnings.map((w) => `warning: ${w}`)].join('\n');
}
