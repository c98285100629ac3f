// Submit-time part of a re-dub (docs/dubbing.md, "Re-dubbing segments"): the earlier dub is read,
// the corrections are checked against its transcript, and the request takes over what that dub
// decided (languages, provider, voice, video). The stage itself is src/pipeline/redub.ts.
import type { Store } from '../store/index.js';
import type { Organization } from '../store/organizations.js';
import type { MediaRef, NormalisedRequest } from '../domain/generation-request.js';
import type { ResolvedMedia } from '../pipeline/resolved-media.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { changedVoices, checkEdits, redubBase } from '../domain/redub.js';

export async function attachRedub(
  store: Store,
  org: Organization,
  req: NormalisedRequest,
): Promise<NormalisedRequest> {
  const ask = req.dub?.basedOn;
  if (!req.dub || !ask) return req;
  const g = isUuid(ask.generationId) ? await store.generations.find(ask.generationId, org.id) : null;
  const base = redubBase(g);
  if (req.dub.targetLang && req.dub.targetLang !== base.targetLang)
    throw new AppError('invalid_request', {
      field: 'dubParams.targetLang',
      message: `The earlier dub is in ${base.targetLang}; a re-dub keeps its language (leave targetLang out).`,
    });
  const stored = (g as NonNullable<typeof g>).resolvedInput;
  const earlier = (stored.request as NormalisedRequest | undefined)?.dub ?? null;
  const video = stored.video as ResolvedMedia | undefined;
  const videoSeconds = video?.probe?.durationSeconds ?? 0;
  if (!video?.blobKey || !(videoSeconds > 0))
    throw new AppError('generation_output_unavailable', {
      status: 422,
      field: 'dubParams.basedOn',
      message: "The earlier dub's video is no longer stored: dub the video again.",
    });
  // Spans and texts are bounded by the video the re-dub reuses (as the pipeline checks again).
  checkEdits(base, ask.segments, Math.round(videoSeconds * 1000));
  const changed = changedVoices(base, ask.voices ?? {});
  if (ask.segments.length === 0 && Object.keys(changed).length === 0)
    throw new AppError('invalid_request', {
      field: 'dubParams.voices',
      message: 'Each speaker named already has that voice: the re-dub would change nothing.',
    });
  // The earlier dub's per-speaker voices, with the changes: all are resolved again at claim.
  const voices = { ...(earlier?.voices ?? {}), ...changed };
  // An asset stays the asset (in use while this runs); a fetched video is the earlier generation's
  // stored copy, read but never deleted with this one.
  const field = 'dubParams.basedOn';
  const ref: MediaRef = video.assetId
    ? { field, assetId: video.assetId }
    : { field, storedKey: video.blobKey };
  return {
    ...req,
    video: ref,
    audio: { ...ref },
    dub: {
      targetLang: base.targetLang,
      sourceLang: base.sourceLang,
      provider: base.provider,
      // The earlier dub's chosen voice is resolved again when the job is claimed (its key, its clone).
      voiceId: earlier?.voiceId ?? null,
      ...(earlier?.chosenVoice ? { chosenVoice: earlier.chosenVoice } : {}),
      ...(Object.keys(voices).length ? { voices } : {}),
      // Where each unchanged voice was found (a changed one is looked up anew at submit).
      chosenVoices: Object.fromEntries(
        Object.entries(earlier?.chosenVoices ?? {}).filter(([speaker]) => !Object.hasOwn(changed, speaker)),
      ),
      transcript: null,
      basedOn: { generationId: ask.generationId, segments: ask.segments, voices: changed },
    },
  };
}
