// Asset rules without I/O: types, visibility, sort orders, list cursors, names and content types.
import { AppError } from './errors.js';
import { PLAN_LIMITS, type Plan } from './plans.js';

export const ASSET_TYPES = ['AUDIO', 'VIDEO', 'IMAGE'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

/** As the official client defines them: USER (the creator only) or ORGANIZATION (every member). */
export const ASSET_VISIBILITIES = ['USER', 'ORGANIZATION'] as const;
export type AssetVisibility = (typeof ASSET_VISIBILITIES)[number];
export const DEFAULT_VISIBILITY: AssetVisibility = 'ORGANIZATION';

/** The official client's AssetSort values. */
export const ASSET_SORTS = [
  'dateDesc',
  'dateAsc',
  'nameAsc',
  'nameDesc',
  'durationAsc',
  'durationDesc',
  'sizeAsc',
  'sizeDesc',
  'kindAsc',
  'kindDesc',
] as const;
export type AssetSort = (typeof ASSET_SORTS)[number];
export type AssetSortField = 'date' | 'name' | 'duration' | 'size' | 'kind';

export const DEFAULT_ASSET_SORT: AssetSort = 'dateDesc';
export const DEFAULT_ASSET_PAGE = 20;
export const MAX_ASSET_NAME_LENGTH = 255;

export function sortParts(sort: AssetSort): { field: AssetSortField; desc: boolean } {
  const desc = sort.endsWith('Desc');
  return { field: sort.slice(0, desc ? -4 : -3) as AssetSortField, desc };
}

/** The position after the last item of a page: its sort value and id, and the sort it belongs to. */
export interface AssetCursor {
  readonly sort: AssetSort;
  readonly value: string | number;
  readonly id: string;
}

export function encodeCursor(c: AssetCursor): string {
  return Buffer.from(JSON.stringify([c.sort, c.value, c.id]), 'utf8').toString('base64url');
}

export function decodeCursor(raw: string, sort: AssetSort): AssetCursor {
  const bad = (why: string) =>
    new AppError('invalid_request', { field: 'cursor', message: `cursor is not valid: ${why}` });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad('it was not returned by this endpoint');
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw bad('it was not returned by this endpoint');
  const [s, value, id] = parsed as unknown[];
  if (s !== sort) throw bad('it belongs to another sortBy; start again without a cursor');
  if ((typeof value !== 'string' && typeof value !== 'number') || typeof id !== 'string') {
    throw bad('it was not returned by this endpoint');
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw bad('it was not returned by this endpoint');
  return { sort, value, id };
}

/**
 * The types filter: a comma-separated list (AUDIO,VIDEO), a repeated parameter, or a JSON array
 * (["AUDIO","VIDEO"], which is what the official client sends). Case-insensitive.
 */
export function parseTypesFilter(values: readonly string[] | undefined): AssetType[] | undefined {
  if (!values || values.length === 0) return undefined;
  const out = new Set<AssetType>();
  for (const raw of values) {
    let items: unknown[];
    const t = raw.trim();
    if (t.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(t);
        items = Array.isArray(parsed) ? parsed : [parsed];
      } catch {
        items = [t];
      }
    } else {
      items = t.split(',');
    }
    for (const item of items) {
      const v = String(item).trim().toUpperCase();
      if (v === '') continue;
      if (!(ASSET_TYPES as readonly string[]).includes(v)) {
        throw new AppError('invalid_request', {
          field: 'types',
          message: `types must list AUDIO, VIDEO or IMAGE, not ${JSON.stringify(String(item))}`,
        });
      }
      out.add(v as AssetType);
    }
  }
  return out.size > 0 ? [...out] : undefined;
}

export function parseVisibility(raw: string | undefined): AssetVisibility {
  if (raw === undefined || raw.trim() === '') return DEFAULT_VISIBILITY;
  const v = raw.trim().toUpperCase();
  if (!(ASSET_VISIBILITIES as readonly string[]).includes(v)) {
    throw new AppError('invalid_request', {
      field: 'visibility',
      message: 'visibility must be USER or ORGANIZATION',
    });
  }
  return v as AssetVisibility;
}

/** The asset's display name: the given name, else the uploaded file's name, else "upload.<format>". */
export function assetName(given: string | undefined, fileName: string | null, format: string): string {
  const clean = (s: string) =>
    s
      .replace(/[\p{Cc}\p{Cf}]/gu, '')
      .trim()
      .slice(0, MAX_ASSET_NAME_LENGTH);
  if (given !== undefined) {
    const n = clean(given);
    if (n === '') throw new AppError('invalid_request', { field: 'name', message: 'name must not be empty' });
    return n;
  }
  const fromFile = fileName ? clean(fileName.split(/[\\/]/).pop() ?? '') : '';
  return fromFile !== '' ? fromFile : `upload.${format}`;
}

/** A file extension for the storage key, from the probed format. */
export function storageExtension(format: string): string {
  const f = format.toLowerCase();
  return /^[a-z0-9]{1,8}$/.test(f) ? f : 'bin';
}

const CONTENT_TYPES: Record<string, { VIDEO?: string; AUDIO?: string; IMAGE?: string }> = {
  mp4: { VIDEO: 'video/mp4', AUDIO: 'audio/mp4' },
  mov: { VIDEO: 'video/quicktime', AUDIO: 'audio/mp4' },
  webm: { VIDEO: 'video/webm', AUDIO: 'audio/webm' },
  mkv: { VIDEO: 'video/x-matroska', AUDIO: 'audio/x-matroska' },
  avi: { VIDEO: 'video/x-msvideo' },
  wav: { AUDIO: 'audio/wav' },
  mp3: { AUDIO: 'audio/mpeg' },
  flac: { AUDIO: 'audio/flac' },
  ogg: { AUDIO: 'audio/ogg', VIDEO: 'video/ogg' },
  aac: { AUDIO: 'audio/aac' },
  png: { IMAGE: 'image/png' },
  jpeg: { IMAGE: 'image/jpeg' },
  webp: { IMAGE: 'image/webp' },
  gif: { IMAGE: 'image/gif', VIDEO: 'image/gif' },
  bmp: { IMAGE: 'image/bmp' },
  tiff: { IMAGE: 'image/tiff' },
};

/** The Content-Type the asset is served with, from its probed format and type. */
export function contentTypeFor(format: string, type: AssetType): string {
  return CONTENT_TYPES[format.toLowerCase()]?.[type] ?? 'application/octet-stream';
}

/**
 * Direct uploads whose URL may still take bytes (announced, registered or not, until the URL expired
 * plus the grace period) may add up to this many of the plan's largest file: their blobs are nobody's
 * asset yet, and a PUT after registration on S3 stores one until the next sweep.
 */
export const OPEN_UPLOAD_FILES = 50;

/** The most open uploads walked for a Retry-After: past them the answer is the last one's expiry. */
export const OPEN_UPLOAD_WALK = 1000;

/** How many bytes announcing `size` more would pass the organization's allowance by (<= 0: it fits). */
export function openUploadExcess(plan: Plan, openBytes: number, size: number): number {
  return openBytes + size - OPEN_UPLOAD_FILES * PLAN_LIMITS[plan].maxFileBytes;
}

/**
 * Seconds until enough open uploads have closed (each at its expiry plus the grace period), walked in
 * expiry order, to free `excessBytes`. Retry-After of upload_limit_reached: the earliest expiry alone
 * may free too little, and a client retrying then would only be refused again.
 */
export function uploadRoomAfterSeconds(
  open: readonly { size: number; expiresAt: string }[],
  excessBytes: number,
  graceMs: number,
  nowMs: number,
): number {
  let freed = 0;
  let at = nowMs;
  for (const u of [...open].sort((a, b) => Date.parse(a.expiresAt) - Date.parse(b.expiresAt))) {
    at = Date.parse(u.expiresAt) + graceMs;
    freed += u.size;
    if (freed >= excessBytes) break;
  }
  return Math.max(0, (at - nowMs) / 1000);
}

/** 429 upload_limit_reached when announcing `size` more bytes would pass the organization's allowance. */
export function assertOpenUploadRoom(
  plan: Plan,
  openBytes: number,
  size: number,
  retryAfterSeconds: number,
): void {
  if (openUploadExcess(plan, openBytes, size) <= 0) return;
  const allowed = OPEN_UPLOAD_FILES * PLAN_LIMITS[plan].maxFileBytes;
  const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  throw new AppError('upload_limit_reached', {
    field: 'size',
    message: `Direct uploads of ${openBytes} bytes are still open (announced within the last hours); with ${size} more the ${plan} plan's ${allowed} would be passed.`,
    retryAfter,
    headers: { 'Retry-After': String(retryAfter) },
    details: { openUploadBytes: openBytes, openUploadLimitBytes: allowed },
  });
}
