// Assets: uploaded media of an organization. Upload (probe, plan limit, store, record), direct uploads
// (announce, PUT to the store, register), list, get, find by content digest, download URL, delete.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { AssetRecord, PendingUpload } from '../store/assets.js';
import { sortValueOf } from '../store/assets.js';
import type { Organization } from '../store/organizations.js';
import { BlobNotFoundError, type BlobStore } from '../storage/blob-store.js';
import { isUploadContentType } from '../storage/url-signer.js';
import { ensurePrivateDir } from '../private-files.js';
import { probeMedia, MediaProbeError, ProbeToolError, type MediaProbe } from '../media/probe.js';
import { PLAN_LIMITS } from '../domain/plans.js';
import { AppError } from '../domain/errors.js';
import { ACTIVE_STATUSES } from '../domain/generation-status.js';
import type { SpeechTimeline } from '../speech/types.js';
import {
  DEFAULT_ASSET_PAGE,
  DEFAULT_ASSET_SORT,
  assertOpenUploadRoom,
  OPEN_UPLOAD_WALK,
  openUploadExcess,
  uploadRoomAfterSeconds,
  assetName,
  contentTypeFor,
  decodeCursor,
  encodeCursor,
  parseVisibility,
  sortParts,
  storageExtension,
  type AssetSort,
  type AssetType,
} from '../domain/assets.js';
import { isUuid } from '../domain/ids.js';

export interface UploadInput {
  readonly organization: Organization;
  readonly keyId: string | null;
  /** A complete local file (the multipart temp file); it is moved into the blob store. */
  readonly path: string;
  readonly size: number;
  readonly fileName: string | null;
  readonly name?: string;
  readonly projectId?: string;
  readonly visibility?: string;
  /** Where the asset came from: UPLOAD (default) or TTS (synthesized speech). */
  readonly inputType?: 'UPLOAD' | 'TTS';
  /** The file's SHA-256 where the caller already read it (a form's idempotency fingerprint): not read twice. */
  readonly contentSha256?: string;
}

/** POST /v2/assets/upload with JSON: a direct upload is announced. */
export interface PresignInput {
  readonly organization: Organization;
  readonly keyId: string | null;
  readonly fileName: string;
  readonly contentType: string;
  readonly size: number;
}

export interface UploadTarget {
  /** Where the client PUTs the bytes (no API key), with the announced Content-Type. */
  readonly uploadUrl: string;
  /** Where the object will be readable; what POST /v2/assets registers. */
  readonly url: string;
  /** Seconds until uploadUrl expires. */
  readonly expiresIn: number;
}

/** POST /v2/assets: a direct upload is registered as an asset. */
export interface RegisterInput {
  readonly organization: Organization;
  readonly keyId: string | null;
  readonly url: string;
  readonly type: AssetType;
  readonly name?: string;
  readonly projectId?: string;
  readonly visibility?: string;
  /** Folder for the temp copy that is probed and hashed (the data folder's tmp). */
  readonly tmpDir: string;
}

/** How long an upload URL can be used; the returned `url` (to register) is valid seven days. */
export const UPLOAD_URL_SECONDS = 3600;

/** Where every direct upload's blob lies until registration moves it under the asset's key. */
const UPLOADS_PREFIX = 'uploads/';

/** Keys of direct uploads: the organization is part of the key, the pending record says the rest. */
export function uploadKeyPrefix(organizationId: string): string {
  return `${UPLOADS_PREFIX}${organizationId}/`;
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export interface AssetListInput {
  readonly projectId?: string;
  readonly limit?: number;
  readonly cursor?: string;
  readonly searchQuery?: string;
  readonly sortBy?: AssetSort;
  readonly types?: readonly AssetType[];
}

export interface AssetPage {
  readonly items: AssetRecord[];
  readonly nextCursor: string | null;
  readonly totalCount: number;
}

/** Width and height as displayed: a 90 or 270 degree rotation swaps them. */
function displaySize(p: MediaProbe): { width: number | null; height: number | null } {
  if (!p.video) return { width: null, height: null };
  const quarter = Math.abs(p.video.rotation) % 180 === 90;
  return quarter
    ? { width: p.video.height, height: p.video.width }
    : { width: p.video.width, height: p.video.height };
}

/**
 * The client-facing asset, shaped like the official client's Asset: optional fields that do not apply
 * (duration of an image, size of audio) are left out rather than null. url is omitted when not given.
 */
export interface AssetView {
  id: string;
  createdAt: string;
  updatedAt: string;
  name: string;
  type: AssetRecord['type'];
  inputType: string;
  size: number;
  visibility: AssetRecord['visibility'];
  projectId: string | null;
  organizationId: string;
  url?: string;
  format?: string;
  durationSeconds?: number;
  width?: number;
  height?: number;
}

export function assetView(a: AssetRecord, url?: string): AssetView {
  const v: AssetView = {
    id: a.id,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    name: a.name,
    type: a.type,
    inputType: a.inputType,
    size: a.size,
    visibility: a.visibility,
    projectId: a.projectId,
    organizationId: a.organizationId,
  };
  if (url !== undefined) v.url = url;
  if (a.format !== null) v.format = a.format;
  if (a.durationSeconds !== null) v.durationSeconds = a.durationSeconds;
  if (a.width !== null) v.width = a.width;
  if (a.height !== null) v.height = a.height;
  return v;
}

export interface AssetServiceOptions {
  /** How long after its URL expired an unregistered direct upload is kept (LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS). */
  readonly uploadGraceMs?: number;
  /** The clock (tests move it past an upload's expiry). */
  readonly now?: () => number;
}

/** Default grace after an upload URL's expiry: a PUT that started just before it may still be streaming. */
export const DEFAULT_UPLOAD_GRACE_MS = 3600_000;
/** Abandoned uploads removed per sweep at most; the next sweep takes the rest. */
const SWEEP_BATCH = 500;

export class AssetService {
  private readonly uploadGraceMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly blobs: BlobStore,
    private readonly logger: Logger,
    opts: AssetServiceOptions = {},
  ) {
    this.uploadGraceMs = opts.uploadGraceMs ?? DEFAULT_UPLOAD_GRACE_MS;
    this.now = opts.now ?? Date.now;
  }

  /** The largest file the organization's plan accepts. */
  maxFileBytes(organization: Organization): number {
    return PLAN_LIMITS[organization.plan].maxFileBytes;
  }

  async upload(input: UploadInput): Promise<AssetRecord> {
    const org = input.organization;
    const visibility = parseVisibility(input.visibility);
    const projectId = input.projectId?.trim() ? input.projectId.trim() : null;
    if (projectId !== null) await this.requireProject(org.id, projectId);
    const max = this.maxFileBytes(org);
    if (input.size > max) {
      throw new AppError('file_size_exceeds_plan_limit', {
        field: 'file',
        message: `The file has ${input.size} bytes; the ${org.plan} plan allows ${max}.`,
      });
    }
    const probe = await this.probe(input.path);
    const name = assetName(input.name, input.fileName, probe.format);
    return this.storeProbed({
      organizationId: org.id,
      keyId: input.keyId,
      path: input.path,
      probe,
      name,
      projectId,
      visibility,
      inputType: input.inputType ?? 'UPLOAD',
      contentSha256: input.contentSha256,
    });
  }

  /** Moves a probed local file into the blob store and records it (its SHA-256 included). */
  private async storeProbed(p: {
    organizationId: string;
    keyId: string | null;
    path: string;
    probe: MediaProbe;
    name: string;
    projectId: string | null;
    visibility: ReturnType<typeof parseVisibility>;
    inputType: string;
    contentSha256?: string;
  }): Promise<AssetRecord> {
    const { probe } = p;
    const format = probe.format;
    const contentSha256 = p.contentSha256 ?? (await sha256OfFile(p.path));
    const id = randomUUID();
    const key = `assets/${p.organizationId}/${id}.${storageExtension(format)}`;
    const contentType = contentTypeFor(format, probe.kind);
    const stored = await this.blobs.putFile(key, p.path, { contentType, move: true });
    const now = new Date().toISOString();
    const asset: AssetRecord = {
      id,
      organizationId: p.organizationId,
      projectId: p.projectId,
      name: p.name,
      type: probe.kind,
      size: stored.size,
      format,
      durationSeconds: probe.durationSeconds,
      ...displaySize(probe),
      storageKey: key,
      contentType,
      visibility: p.visibility,
      inputType: p.inputType,
      createdByKeyId: p.keyId,
      createdAt: now,
      updatedAt: now,
      contentSha256,
      // Kept so that a generation made from this asset never starts ffprobe on it again.
      probe,
    };
    try {
      await this.store.assets.insert(asset);
    } catch (err) {
      await this.blobs.delete(key).catch(() => undefined);
      throw err;
    }
    return asset;
  }

  /**
   * POST /v2/assets/upload (JSON): checks the announced size against the plan, records the pending
   * upload and signs where to PUT it (exactly that size and content type) and where it will be read.
   */
  async presignUpload(input: PresignInput): Promise<UploadTarget> {
    const org = input.organization;
    if (!isUploadContentType(input.contentType)) {
      throw new AppError('invalid_request', {
        field: 'contentType',
        message:
          'contentType must be a media type such as video/mp4 (printable ASCII, at most 200 characters).',
      });
    }
    if (input.fileName.trim() === '' || input.fileName.includes('\u0000')) {
      throw new AppError('invalid_request', {
        field: 'fileName',
        message: 'fileName must not be empty or contain NUL.',
      });
    }
    this.requireWithinPlan(org, input.size, 'size', 'The announced file');
    const key = `${uploadKeyPrefix(org.id)}${randomUUID()}`;
    const now = this.now();
    const pending: PendingUpload = {
      storageKey: key,
      organizationId: org.id,
      keyId: input.keyId,
      fileName: input.fileName,
      contentType: input.contentType,
      size: input.size,
      expiresAt: new Date(now + UPLOAD_URL_SECONDS * 1000).toISOString(),
      createdAt: new Date(now).toISOString(),
    };
    const uploadUrl = await this.blobs.signedUploadUrl(key, {
      contentType: input.contentType,
      size: input.size,
      expiresInSeconds: UPLOAD_URL_SECONDS,
    });
    const url = await this.blobs.signedUrl(key);
    // Counted and inserted under the organization's lock, so that parallel announcements cannot
    // together pass the allowance.
    await this.store.organizations.exclusive(org.id, async (trx) => {
      const since = this.openSince(now);
      const open = await this.store.assets.openUploads(org.id, since, trx);
      const excess = openUploadExcess(org.plan, open.bytes, input.size);
      if (excess > 0) {
        const byExpiry = await this.store.assets.openUploadsByExpiry(org.id, since, OPEN_UPLOAD_WALK, trx);
        const wait = uploadRoomAfterSeconds(byExpiry, excess, this.uploadGraceMs, now);
        assertOpenUploadRoom(org.plan, open.bytes, input.size, wait);
      }
      await this.store.assets.insertUpload(pending, trx);
    });
    return { uploadUrl, url, expiresIn: UPLOAD_URL_SECONDS };
  }

  /**
   * The oldest expiry of an upload whose URL may still take bytes: one that expired longer ago than
   * the grace period cannot (no PUT starts after the expiry; the grace lets a started one finish).
   */
  private openSince(now: number): string {
    return new Date(now - this.uploadGraceMs).toISOString();
  }

  /**
   * PUT of the local store's upload URL (its signature already checked): stores the body only while
   * the upload waits to be registered. A URL whose upload was registered, refused or removed is
   * used up (409 upload_url_used), so that no blob is left that nobody owns.
   */
  async receiveUpload(key: string, contentType: string, openBody: () => Readable): Promise<void> {
    const used = () => new AppError('upload_url_used');
    const before = await this.store.assets.findUploadByKey(key);
    if (!before || before.usedAt) throw used();
    // Opened only now: a refused PUT's body is never read.
    await this.blobs.put(key, openBody(), { contentType });
    // Registered (or refused) while the body streamed: what this PUT stored would be nobody's.
    const after = await this.store.assets.findUploadByKey(key);
    if (!after || after.usedAt) {
      await this.blobs.delete(key);
      throw used();
    }
  }

  /**
   * POST /v2/assets: the `url` of one of this organization's direct uploads becomes an asset. The
   * object must be there with the announced size (and within the plan); it is probed and hashed like
   * a multipart upload, then moved under the asset's own key, so that a second PUT to the upload URL
   * cannot change a registered asset. An upload is registered once; its record stays, used, until the
   * sweep (a PUT after registration is refused on the local store and swept on S3).
   */
  async register(input: RegisterInput): Promise<AssetRecord> {
    const org = input.organization;
    const visibility = parseVisibility(input.visibility);
    const projectId = input.projectId?.trim() ? input.projectId.trim() : null;
    if (projectId !== null) await this.requireProject(org.id, projectId);
    const pending = await this.pendingUploadOf(org.id, input.url);
    const st = await this.blobs.stat(pending.storageKey);
    if (!st) {
      throw new AppError('invalid_request', {
        field: 'url',
        message: 'Nothing has been uploaded to this URL yet: PUT the file to uploadUrl first.',
      });
    }
    if (st.size > this.maxFileBytes(org) || st.size !== pending.size) {
      // Nothing of a refused upload is kept.
      await this.discardUpload(pending);
      this.requireWithinPlan(org, st.size, 'url', 'The uploaded file');
      throw new AppError('invalid_request', {
        field: 'url',
        message: `The uploaded file has ${st.size} bytes, not the ${pending.size} announced; announce and upload it again.`,
      });
    }
    await ensurePrivateDir(input.tmpDir, { tighten: true });
    const path = join(input.tmpDir, `register-${randomUUID()}`);
    try {
      await this.blobs.download(pending.storageKey, path).catch((err: unknown) => {
        // Removed meanwhile (another registration of the same upload won the race).
        if (!(err instanceof BlobNotFoundError)) throw err;
        throw new AppError('invalid_request', { field: 'url', message: 'This upload is no longer there.' });
      });
      const probe = await this.probe(path);
      if (probe.kind !== input.type) {
        throw new AppError('asset_type_unsupported', {
          field: 'type',
          message: `The uploaded file is ${probe.kind === 'AUDIO' ? 'an' : 'a'} ${probe.kind} file, not ${input.type}.`,
        });
      }
      const name = assetName(input.name, pending.fileName, probe.format);
      if (!(await this.store.assets.useUpload(org.id, pending.storageKey, this.isoNow()))) {
        throw new AppError('invalid_request', {
          field: 'url',
          message: 'This upload has already been registered.',
        });
      }
      const asset = await this.storeProbed({
        organizationId: org.id,
        keyId: input.keyId,
        path,
        probe,
        name,
        projectId,
        visibility,
        inputType: 'UPLOAD',
      });
      await this.blobs.delete(pending.storageKey).catch((err: unknown) => {
        this.logger.warn({ err, key: pending.storageKey }, 'registered upload could not be removed');
      });
      return asset;
    } catch (err) {
      // Not media, or not the declared type: the upload can never become this asset.
      if (err instanceof AppError && err.code === 'asset_type_unsupported') await this.discardUpload(pending);
      throw err;
    } finally {
      await rm(path, { force: true });
    }
  }

  /**
   * GET /v2/assets/uploaded: the newest asset with this content (and type) that this API key stored,
   * or null. The spec scopes the lookup to the key that registered the asset, not the organization;
   * for web sessions (no key) to the assets stored without a key.
   */
  findUploaded(
    organizationId: string,
    keyId: string | null,
    contentSha256: string,
    type?: AssetType,
  ): Promise<AssetRecord | null> {
    return this.store.assets.findBySha256(organizationId, keyId, contentSha256.toLowerCase(), type);
  }

  /**
   * Removes what direct uploads leave behind. First the records (registered or not) whose upload URL
   * expired more than the grace period ago (no PUT can start after the expiry; the grace lets one
   * that started before it finish), each with whatever blob lies under its key: the stored bytes go
   * first, then the record, so that a failure is tried again by the next sweep. Then every blob under
   * the upload prefix that no waiting upload owns: a PUT to an S3 upload URL after its registration or
   * refusal (the bucket cannot refuse one), or a blob an older version left. Returns how many blobs
   * and records were removed.
   */
  async sweepAbandonedUploads(): Promise<number> {
    let removed = 0;
    for (const u of await this.store.assets.expiredUploads(this.openSince(this.now()), SWEEP_BATCH)) {
      try {
        await this.blobs.delete(u.storageKey);
        await this.store.assets.deleteUpload(u.organizationId, u.storageKey);
        removed++;
      } catch (err) {
        this.logger.warn({ err, key: u.storageKey }, 'abandoned upload could not be removed; next sweep');
      }
    }
    const keys = await this.blobs.list(UPLOADS_PREFIX);
    const waiting = await this.store.assets.waitingUploadKeys(keys);
    for (const key of keys) {
      if (waiting.has(key)) continue;
      try {
        await this.blobs.delete(key);
        removed++;
      } catch (err) {
        this.logger.warn({ err, key }, 'unowned upload blob could not be removed; next sweep');
      }
    }
    if (removed > 0) this.logger.info({ removed }, 'abandoned direct uploads removed');
    return removed;
  }

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  /** Whether a pending upload is past its URL's expiry plus the grace period (the sweep removes it). */
  private abandoned(p: PendingUpload): boolean {
    return Date.parse(p.expiresAt) + this.uploadGraceMs < this.now();
  }

  /** GET /v2/assets/{id}/download: a signed URL that downloads the file under the asset's name. */
  async downloadUrl(organizationId: string, id: string): Promise<string> {
    const a = await this.get(organizationId, id);
    return this.blobs.signedUrl(a.storageKey, { fileName: a.name });
  }

  /** The pending direct upload of this organization that `url` (a signed read URL of ours) names. */
  private async pendingUploadOf(organizationId: string, url: string): Promise<PendingUpload> {
    const refuse = (message: string) => new AppError('invalid_request', { field: 'url', message });
    const ours = this.blobs.keyFromUrl(url);
    if (ours.status === 'foreign') {
      throw refuse(
        'url is not a URL of this service: register the url that POST /v2/assets/upload returned.',
      );
    }
    if (ours.status === 'invalid') throw refuse('url is not a valid signed URL of this service.');
    if (ours.status === 'expired') throw refuse('url has expired: announce and upload the file again.');
    const pending = ours.key.startsWith(uploadKeyPrefix(organizationId))
      ? await this.store.assets.findUpload(organizationId, ours.key)
      : null;
    if (!pending) {
      throw refuse(
        'url is not a direct upload of this organization waiting to be registered (registered already, or announced by another organization).',
      );
    }
    if (pending.usedAt) {
      throw refuse(
        'This upload has already been registered (or was refused): announce and upload the file again.',
      );
    }
    // The same rule as the sweep, so that the outcome does not depend on when the sweep last ran.
    if (this.abandoned(pending)) {
      // A storage failure leaves the record, and so the blob, to the sweep: the answer stays this 400.
      const deleted = await this.blobs.delete(pending.storageKey).then(
        () => true,
        (err: unknown) => {
          this.logger.warn(
            { err, key: pending.storageKey },
            'abandoned upload could not be removed; the sweep will',
          );
          return false;
        },
      );
      if (deleted) await this.store.assets.deleteUpload(pending.organizationId, pending.storageKey);
      throw refuse(
        'This upload was not registered in time and has been removed: announce and upload it again.',
      );
    }
    return pending;
  }

  /** A refused upload: used up (its record stays until the sweep, still counted), its object removed. */
  private async discardUpload(p: PendingUpload): Promise<void> {
    await this.store.assets.useUpload(p.organizationId, p.storageKey, this.isoNow());
    await this.blobs.delete(p.storageKey).catch((err: unknown) => {
      this.logger.warn({ err, key: p.storageKey }, 'refused upload could not be removed');
    });
  }

  private requireWithinPlan(org: Organization, size: number, field: string, what: string): void {
    const max = this.maxFileBytes(org);
    if (size > max) {
      throw new AppError('file_size_exceeds_plan_limit', {
        field,
        message: `${what} has ${size} bytes; the ${org.plan} plan allows ${max}.`,
      });
    }
  }

  /** Synthesized speech as a TTS asset, with its word and phoneme timeline (the file is moved). */
  async storeSynthesized(input: {
    organization: Organization;
    keyId: string | null;
    path: string;
    name: string;
    timeline: unknown;
  }): Promise<AssetRecord> {
    const { size } = await stat(input.path);
    const asset = await this.upload({
      organization: input.organization,
      keyId: input.keyId,
      path: input.path,
      size,
      fileName: input.name,
      name: input.name,
      inputType: 'TTS',
    });
    try {
      await this.store.assets.saveTimeline(asset.organizationId, asset.id, input.timeline);
    } catch (err) {
      await this.delete(asset.organizationId, asset.id).catch(() => undefined);
      throw err;
    }
    return asset;
  }

  /** GET /v2/assets/{id}/timeline: 404 for an asset without one (uploads). */
  async timelineOf(organizationId: string, id: string): Promise<SpeechTimeline> {
    const a = await this.get(organizationId, id);
    const t = await this.timeline(organizationId, a.id);
    if (!t)
      throw new AppError('asset_not_found', {
        message: `Asset ${a.id} has no timeline (only synthesized speech has one).`,
      });
    return t;
  }

  /** The timeline of a synthesized asset, or null (uploads have none). */
  timeline(organizationId: string, assetId: string): Promise<SpeechTimeline | null> {
    // The store keeps the JSON of what saveTimeline was given: a synthesized asset's SpeechTimeline.
    return this.store.assets.timeline(organizationId, assetId) as Promise<SpeechTimeline | null>;
  }

  /**
   * The organization's asset a request names by id or by one of our own signed URLs (what uploads and
   * TTS return), or why not: 'foreign' (not our storage), 'invalid' or 'expired' (the signature),
   * 'missing' (no such asset of this organization). Nothing is ever fetched from elsewhere.
   */
  async resolveOwn(
    organizationId: string,
    ref: { url?: string; assetId?: string },
  ): Promise<{ asset: AssetRecord } | { problem: 'foreign' | 'invalid' | 'expired' | 'missing' }> {
    if (ref.assetId !== undefined) {
      const a = isUuid(ref.assetId) ? await this.store.assets.find(organizationId, ref.assetId) : null;
      return a ? { asset: a } : { problem: 'missing' };
    }
    const ours = this.blobs.keyFromUrl(ref.url ?? '');
    if (ours.status === 'foreign') return { problem: 'foreign' };
    if (ours.status !== 'valid') return { problem: ours.status };
    const a = await this.store.assets.findByStorageKey(organizationId, ours.key);
    return a ? { asset: a } : { problem: 'missing' };
  }

  /** The organization's asset stored under `key` (our own URLs given back as inputs), or null. */
  findByStorageKey(organizationId: string, key: string): Promise<AssetRecord | null> {
    return this.store.assets.findByStorageKey(organizationId, key);
  }

  /** A missing, malformed or foreign id is asset_not_found, never a hint that it exists elsewhere. */
  async get(organizationId: string, id: string): Promise<AssetRecord> {
    const a = isUuid(id) ? await this.store.assets.find(organizationId, id) : null;
    if (!a) throw new AppError('asset_not_found', { field: 'assetId' });
    return a;
  }

  async list(organizationId: string, q: AssetListInput): Promise<AssetPage> {
    const sortBy = q.sortBy ?? DEFAULT_ASSET_SORT;
    const sort = sortParts(sortBy);
    const limit = q.limit ?? DEFAULT_ASSET_PAGE;
    const after = q.cursor ? decodeCursor(q.cursor, sortBy) : undefined;
    const projectId = q.projectId?.trim() ? q.projectId.trim() : undefined;
    if (projectId !== undefined) await this.requireProject(organizationId, projectId);
    const search = q.searchQuery?.trim() ? q.searchQuery.trim() : undefined;
    const { items, total } = await this.store.assets.list(organizationId, {
      projectId,
      types: q.types,
      search,
      sort,
      after,
      limit: limit + 1,
    });
    const page = items.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor =
      items.length > limit && last
        ? encodeCursor({ sort: sortBy, value: sortValueOf(last, sort.field), id: last.id })
        : null;
    return { items: page, nextCursor, totalCount: total };
  }

  /**
   * Deletes the record, then the blob (a failure leaves an unreferenced blob, never a dead record).
   * An asset a PENDING or PROCESSING generation still needs is refused with 409 asset_in_use.
   */
  async delete(organizationId: string, id: string): Promise<AssetRecord> {
    const a = await this.get(organizationId, id);
    const outcome = await this.store.assets.deleteUnlessUsed(a, ACTIVE_STATUSES);
    if (outcome === 'missing') throw new AppError('asset_not_found', { field: 'assetId' });
    if (outcome === 'in_use') {
      throw new AppError('asset_in_use', {
        field: 'id',
        message: `Asset ${a.id} is used by a generation that is still pending or processing.`,
      });
    }
    await this.blobs.delete(a.storageKey).catch((err: unknown) => {
      this.logger.warn({ err, assetId: id, key: a.storageKey }, 'asset blob could not be removed');
    });
    return a;
  }

  /** A signed URL of a stored blob (a transcription's source). */
  urlOfKey(key: string): Promise<string> {
    return this.blobs.signedUrl(key);
  }

  /** The signed URL clients read the asset from. */
  url(asset: AssetRecord): Promise<string> {
    return this.blobs.signedUrl(asset.storageKey);
  }

  private async requireProject(organizationId: string, projectId: string): Promise<void> {
    const p = isUuid(projectId) ? await this.store.projects.find(organizationId, projectId) : null;
    if (!p) throw new AppError('project_not_found', { field: 'projectId' });
  }

  private async probe(path: string): Promise<MediaProbe> {
    try {
      return await probeMedia(path);
    } catch (err) {
      // A missing ffprobe is the server's fault, not the file's.
      if (!(err instanceof MediaProbeError) || err instanceof ProbeToolError) throw err;
      // The client gets the plain reason; what ffprobe said stays in the log.
      this.logger.info({ reason: err.message, detail: err.detail }, 'upload refused: not readable media');
      throw new AppError('asset_type_unsupported', {
        field: 'file',
        message: `The uploaded file is not a readable audio, video or image file: ${err.message}.`,
      });
    }
  }
}
