// Submit-time checks of a dialogue-edit render (POST /v2/generate and /v2/analyze/cost with
// dialogueEdit): the preview exists, is finished, belongs to the video input's source and can be
// absorbed by the footage. Refusals happen before anything is stored; the found preview rides in the
// request so the job never looks it up again.
import type { Store } from '../store/index.js';
import type { Organization } from '../store/organizations.js';
import type { AssetService } from './assets.js';
import type { NormalisedRequest } from '../domain/generation-request.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { assertRemovalsAbsorbable, assertRetimeAllowed } from '../domain/dialogue-render.js';

export async function attachDialogueEdit(
  deps: { store: Store; assets: AssetService },
  org: Organization,
  req: NormalisedRequest,
): Promise<NormalisedRequest> {
  const ref = req.dialogueEdit;
  if (!ref) return req;
  assertRetimeAllowed(org);
  const d = isUuid(ref.id) ? await deps.store.dialogueEdits.find(org.id, ref.id) : null;
  // 422, not 404: the generation request is what failed (api-details 2.4).
  if (!d) throw new AppError('dialogue_edit_not_found', { status: 422, field: 'dialogueEdit.id' });
  const done = d.status === 'COMPLETED' || d.status === 'COMPLETED_PARTIAL';
  if (!done || !d.previewKey || d.previewDurationMs === null || !d.result)
    throw new AppError('dialogue_edit_not_ready', {
      field: 'dialogueEdit.id',
      message: `The dialogue edit is ${d.status}; only a COMPLETED or COMPLETED_PARTIAL preview can be rendered.`,
    });
  const video = req.video;
  if (!video) throw new AppError('invalid_request', { field: 'input', message: 'a video input is required' });
  // The same stored object, whichever way it was named (assetId or our own signed URL).
  const found = await deps.assets.resolveOwn(org.id, { url: video.url, assetId: video.assetId });
  if (!('asset' in found) || found.asset.storageKey !== d.sourceKey)
    throw new AppError('dialogue_edit_source_mismatch', { field: video.field });
  assertRemovalsAbsorbable(d.result.slots);
  return {
    ...req,
    // Stored with the generation: the preview WAV is the audio input.
    audio: { field: 'dialogueEdit' },
    dialogueEdit: {
      id: d.id,
      previewKey: d.previewKey,
      previewDurationMs: d.previewDurationMs,
      sourceKey: d.sourceKey,
      slots: d.result.slots,
      transcript: d.result.resultWords.map((w) => w.text).join(' '),
    },
  };
}
