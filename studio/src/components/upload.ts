// Sending a file to the asset library. Direct first: announce it (POST /v2/assets/upload, JSON), PUT
// the bytes to the signed URL (the bucket itself on S3, this server on local storage), register it
// (POST /v2/assets). Where the direct way is unavailable (a server or proxy without it, or a bucket
// that refuses the browser's cross-origin PUT) the file goes as one multipart form instead.
import { api, ApiError, errorOf, upload } from '../api.js';
import type { Asset, AssetKind, UploadTarget } from '../types.js';

/** The asset type a file declares; the server probes the content and refuses a mismatch. */
export function kindOfFile(file: File, fallback: AssetKind): AssetKind {
  const major = file.type.split('/')[0];
  return major === 'video' ? 'VIDEO' : major === 'audio' ? 'AUDIO' : major === 'image' ? 'IMAGE' : fallback;
}

/** PUT with progress; no cookies go to another origin (a presigned URL needs none). */
function put(url: string, file: File, onProgress: (f: number) => void, signal?: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      const res = new Response(xhr.responseText || '{}', { status: xhr.status });
      void errorOf(res).then(reject);
    };
    // Status 0: the request never got an answer the page may read (network, or CORS on a bucket).
    xhr.onerror = () => reject(new ApiError('The upload was interrupted.', 0));
    xhr.onabort = () => reject(new ApiError('The upload was canceled.', 0, 'upload_canceled'));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** Answers that mean "this server has no direct upload here", not "this file is refused". */
const NO_DIRECT = new Set([404, 405, 415, 501]);

export interface UploadOptions {
  kind: AssetKind;
  projectId?: string;
  onProgress: (fraction: number) => void;
  signal?: AbortSignal;
}

export async function uploadAsset(file: File, o: UploadOptions): Promise<Asset> {
  let target: UploadTarget | null = null;
  try {
    target = await api<UploadTarget>('POST', '/v2/assets/upload', {
      fileName: file.name.slice(-255) || 'upload',
      contentType: file.type || 'application/octet-stream',
      size: file.size,
    });
  } catch (e) {
    if (!(e instanceof ApiError) || !NO_DIRECT.has(e.status)) throw e;
  }
  if (target && typeof target.uploadUrl === 'string') {
    let sent = false;
    try {
      await put(target.uploadUrl, file, o.onProgress, o.signal);
      sent = true;
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 0 || o.signal?.aborted) throw e;
    }
    if (sent)
      return api<Asset>('POST', '/v2/assets', {
        url: target.url,
        type: kindOfFile(file, o.kind),
        name: file.name.slice(-255) || undefined,
        ...(o.projectId ? { projectId: o.projectId } : {}),
      });
  }
  const form = new FormData();
  form.append('file', file, file.name);
  if (o.projectId) form.append('projectId', o.projectId);
  o.onProgress(0);
  return upload<Asset>('/v2/assets/upload', form, o.onProgress, o.signal);
}
