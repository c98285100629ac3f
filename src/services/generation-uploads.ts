// Multipart POST /v2/generate: the form becomes the same request body as JSON (rule 2 of Create
// Generation: each uploaded file is saved as an asset and passed by assetId), with the files'
// hashes in the idempotency fingerprint.
import { sha256File } from '../file-hash.js';
import { AppError } from '../domain/errors.js';
import type { MediaRef, NormalisedRequest } from '../domain/generation-request.js';

export const GENERATION_FILE_FIELDS = ['video', 'image', 'audio'] as const;
/** Form fields whose text is JSON (the body's arrays and objects). */
export const GENERATION_JSON_FIELDS = ['input', 'options', 'segments', 'dubParams', 'dialogueEdit'] as const;
const UPLOAD_PREFIX = 'upload:';

export interface UploadedFormFile {
  readonly fieldName: string;
  readonly fileName: string | null;
  readonly path: string;
  readonly size: number;
}

export interface UploadedForm {
  readonly fields: Readonly<Record<string, string>>;
  readonly files: readonly UploadedFormFile[];
}

/** The request body a form stands for; each file is a placeholder input until it is saved. */
export function formToGenerationBody(form: UploadedForm): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(form.fields)) {
    if ((GENERATION_JSON_FIELDS as readonly string[]).includes(k)) {
      try {
        body[k] = JSON.parse(v);
      } catch {
        throw new AppError('invalid_request', { field: k, message: `${k} must be a JSON string` });
      }
    } else body[k] = v;
  }
  const seen = new Set<string>();
  for (const f of form.files) {
    if (seen.has(f.fieldName))
      throw new AppError('invalid_request', {
        field: f.fieldName,
        message: `only one ${f.fieldName} file is allowed`,
      });
    seen.add(f.fieldName);
  }
  // A file replaces input items of the same type; its assetId is filled in after the idempotency check.
  const input = Array.isArray(body.input) ? (body.input as Record<string, unknown>[]) : [];
  // The replaced item's own words about the media (refId, an audio transcript) stay with the file.
  const kept = (type: string) => {
    const item = input.find((i) => String(i?.type) === type);
    return {
      ...(item?.refId !== undefined ? { refId: item.refId } : {}),
      ...(item?.transcript !== undefined ? { transcript: item.transcript } : {}),
    };
  };
  body.input = [
    ...input.filter((i) => !seen.has(String(i?.type))),
    ...[...seen].map((type) => ({ type, assetId: `${UPLOAD_PREFIX}${type}`, ...kept(type) })),
  ];
  return body;
}

const hashesOf = new WeakMap<UploadedForm, Promise<Record<string, string>>>();

/**
 * The SHA-256 of each file of the form, by field name, read once per form: the fingerprint and the
 * asset the file becomes use the same reading.
 */
export function formFileHashes(form: UploadedForm): Promise<Record<string, string>> {
  let hashes = hashesOf.get(form);
  if (!hashes) {
    hashes = (async () => {
      const files: Record<string, string> = {};
      for (const f of form.files) files[f.fieldName] = await sha256File(f.path);
      return files;
    })();
    hashesOf.set(form, hashes);
  }
  return hashes;
}

/** The idempotency fingerprint of a form request: the body plus the content of every file. */
export async function formFingerprintPayload(body: object, form: UploadedForm): Promise<unknown> {
  return { ...body, files: await formFileHashes(form) };
}

/**
 * The request as preflight prepared it (a re-dub's earlier video, a dialogue edit, a voice chosen)
 * with each placeholder input replaced by the id of the asset its file was saved as: normalising
 * the form's body again would lose what preflight added.
 */
export function withUploadedAssets(
  req: NormalisedRequest,
  assetIds: Readonly<Record<string, string>>,
): NormalisedRequest {
  const saved = <T extends MediaRef | null>(ref: T): T => {
    const id = ref?.assetId;
    if (!ref || !id?.startsWith(UPLOAD_PREFIX)) return ref;
    const assetId = assetIds[id.slice(UPLOAD_PREFIX.length)];
    if (!assetId) throw new Error(`no saved asset for ${id}`);
    return { ...ref, assetId };
  };
  return { ...req, video: saved(req.video), image: saved(req.image), audio: saved(req.audio) };
}
