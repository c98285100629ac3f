// The Generation resource as clients see it (spec fields plus the official client's names).
import type { GenerationRecord } from '../store/generations.js';
import { redactedWebhookUrl } from '../domain/webhooks.js';

export interface GenerationViewOptions {
  outputUrl: string | null;
  /** A completed preview's still, signed; absent or null otherwise. */
  stillUrl?: string | null;
  includeProgress?: boolean;
  includeQuality?: boolean;
}

/**
 * A URL without its credentials (`https://user:pass@host/…` → `https://host/…`). The service keeps the
 * URL as given (the fetch needs them); responses and webhooks never echo them. Text that does not
 * parse as a URL is returned as it is.
 */
export function withoutUserinfo(url: string): string {
  // Userinfo ends at an '@': without one there is none, and parsing the URL would change nothing.
  if (!url.includes('@')) return url;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (u.username === '' && u.password === '') return url;
  u.username = '';
  u.password = '';
  return u.toString();
}

/** The inputs as clients see them: media URLs without credentials. */
function inputView(input: unknown[]): unknown[] {
  // A stored input is a JSON array; anything else is shown as it was stored.
  if (!Array.isArray(input)) return input;
  return input.map((item: unknown) => {
    if (typeof item !== 'object' || item === null) return item;
    const i = item as Record<string, unknown>;
    return typeof i.url === 'string' ? { ...i, url: withoutUserinfo(i.url) } : i;
  });
}

/** The Generation resource (GenerationSchema in src/http/schemas/generations.ts). */
export interface GenerationView {
  id: string;
  createdAt: string;
  status: string;
  model: string;
  input: unknown[];
  webhookUrl: string | null;
  options: Record<string, unknown> | null;
  segments: unknown[] | undefined;
  outputUrl: string | null;
  outputDuration: number | null;
  error: string | null;
  errorCode: string | undefined;
  error_code: string | undefined;
  projectId: string | null;
  outputFileName: string | null;
  source: string;
  updatedAt: string;
  progress_percent?: number;
  quality?: Record<string, unknown> | null;
  /** Only on a preview (options.preview): where it starts and its still once completed. */
  preview?: { atMs: number; stillUrl: string | null };
}

/** The preview's start as stored in the options view, or null for a full run. */
export function previewAtMs(g: GenerationRecord): number | null {
  const at = (g.options?.preview as { atMs?: unknown } | undefined)?.atMs;
  return typeof at === 'number' ? at : null;
}

export function generationView(g: GenerationRecord, o: GenerationViewOptions): GenerationView {
  const view: GenerationView = {
    id: g.id,
    createdAt: g.createdAt,
    status: g.status,
    model: g.model,
    input: inputView(g.input),
    webhookUrl: g.webhookUrl === null ? null : redactedWebhookUrl(g.webhookUrl),
    options: g.options,
    segments: g.segments ?? undefined,
    outputUrl: o.outputUrl,
    outputDuration: g.outputDuration,
    error: g.error,
    errorCode: g.errorCode ?? undefined,
    // The official client reads snake_case error_code.
    error_code: g.errorCode ?? undefined,
    projectId: g.projectId,
    outputFileName: g.outputFileName,
    source: g.source,
    updatedAt: g.updatedAt,
  };
  const atMs = previewAtMs(g);
  if (atMs !== null) view.preview = { atMs, stillUrl: o.stillUrl ?? null };
  if (o.includeProgress) view.progress_percent = Math.round(g.progress * 10) / 10;
  if (o.includeQuality) view.quality = g.quality;
  return view;
}
