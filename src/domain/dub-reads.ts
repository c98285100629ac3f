// What a dubbed generation's transcript and subtitles endpoints may serve (docs/dubbing.md,
// "Transcript and subtitles"), and the catalogue error of every generation that has none. Pure.
import type { DubRecord, SubtitleFormat, SubtitleLanguage } from './dub.js';
import type { GenerationStatus } from './generation-status.js';
import { AppError } from './errors.js';

/** What of a generation decides it (its row: status, stored dub, the request it was admitted with). */
export interface DubbedGeneration {
  id: string;
  status: GenerationStatus;
  dub: DubRecord | null;
  resolvedInput: Record<string, unknown>;
}

/** Asked for dubbing: the admitted request (resolvedInput.request) carries `dub`. */
function askedForDub(g: DubbedGeneration): boolean {
  const req = g.resolvedInput.request as { dub?: unknown } | undefined;
  return g.dub !== null || (typeof req === 'object' && req !== null && !!req.dub);
}

/**
 * The dub of a COMPLETED dubbed generation. Not a dub: 404 generation_not_dubbed, whatever its
 * state (waiting cannot help). Still running: 409 generation_not_ready. Failed, rejected, canceled or
 * timed out: 422 generation_not_downloadable, as its output download answers (its own errorCode says
 * why).
 */
export function completedDub(g: DubbedGeneration): DubRecord {
  if (!askedForDub(g)) throw new AppError('generation_not_dubbed', { field: 'id' });
  if (g.status === 'PENDING' || g.status === 'PROCESSING') throw new AppError('generation_not_ready');
  if (g.status !== 'COMPLETED')
    throw new AppError('generation_not_downloadable', {
      message: `The dub ended ${g.status} and has no transcript or subtitles.`,
    });
  // A completed dub always stores its transcript; a row without one has nothing to serve.
  if (!g.dub)
    throw new AppError('generation_output_unavailable', { message: 'The dub has no stored transcript.' });
  return g.dub;
}

export const SUBTITLE_CONTENT_TYPES: Readonly<Record<SubtitleFormat, string>> = {
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
};

/** The attachment name of a subtitles download: `<id>.<lang>.<format>`, lang the language code. */
export function subtitlesFileName(
  id: string,
  dub: DubRecord,
  lang: SubtitleLanguage,
  format: SubtitleFormat,
): string {
  return `${id}.${lang === 'source' ? dub.sourceLang : dub.targetLang}.${format}`;
}
