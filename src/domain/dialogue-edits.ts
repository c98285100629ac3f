// Rules for POST /v2/dialogue-edits (api-details 2.1; spec rule 6): the body's shape, the API-key
// rules (no window; both rollout flags), and the transcript's words. Pure; the edit list itself is
// checked by validateEdits (src/speech/dialogue/validate.ts).
import { AppError } from './errors.js';
import type { JobStatus } from './jobs.js';
import type { Transcript } from './transcriptions.js';
import { SECTION_EXPANSION_FLAG, SEGMENT_LIPSYNC_FLAG } from './feature-flags.js';

/** A word of the source transcript; times are absolute milliseconds in the source. */
export interface SourceWord {
  id: string;
  text: string;
  startMs: number;
  endMs: number;
}

export type DialogueEdit =
  | { kind: 'change'; wordId: string; replacement: string; pronunciation?: string }
  | { kind: 'remove'; wordIds: string[] };

export interface DialogueEditRequest {
  transcript: Transcript;
  words: SourceWord[];
  edits: DialogueEdit[];
  sourceVideoUrl: string;
  voiceId: string | null;
  rerunOfJobId: string | null;
  projectId: string | null;
  /** The window an interactive session selected; 0 and null (the end) otherwise. */
  startMs: number;
  endMs: number | null;
}

/** A window's bound: a whole number of milliseconds, 0 or more; absent or null when not given. */
function windowBound(body: Record<string, unknown>, field: 'startMs' | 'endMs'): number | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 24 * 3600 * 1000)
    bad(field, `${field} must be a whole number of milliseconds from 0 to 86400000`);
  return v;
}

function bad(field: string, message: string): never {
  throw new AppError('invalid_request', { field, message });
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The transcript as GET /v2/transcriptions returned it: segments of words with ids and times. */
function readTranscript(raw: unknown): { transcript: Transcript; words: SourceWord[] } {
  const segs = (raw as { segments?: unknown } | null)?.segments;
  if (!raw || typeof raw !== 'object' || !Array.isArray(segs))
    bad('transcript', 'transcript must be the transcript object of a transcription ({segments: [...]})');
  const words: SourceWord[] = [];
  const transcript: Transcript = { segments: [] };
  segs.forEach((s: unknown, i: number) => {
    const seg = s as { id?: unknown; words?: unknown };
    if (!seg || typeof seg !== 'object' || !Array.isArray(seg.words))
      bad(`transcript.segments[${i}]`, 'each segment needs a words array');
    const out = {
      id: typeof seg.id === 'string' ? seg.id : `s${i + 1}`,
      words: [] as Transcript['segments'][0]['words'],
    };
    (seg.words as unknown[]).forEach((w: unknown, j: number) => {
      const at = `transcript.segments[${i}].words[${j}]`;
      const word = w as Record<string, unknown>;
      if (!word || typeof word !== 'object' || typeof word.id !== 'string' || typeof word.text !== 'string')
        bad(at, `${at} needs id and text`);
      if (!Number.isInteger(word.startMs) || !Number.isInteger(word.endMs))
        bad(at, `${at} needs integer startMs and endMs`);
      const sw = {
        id: word.id,
        text: word.text,
        startMs: word.startMs as number,
        endMs: word.endMs as number,
      };
      words.push(sw);
      out.words.push({ ...sw, speakerId: typeof word.speakerId === 'string' ? word.speakerId : null });
    });
    transcript.segments.push(out);
  });
  if (words.length === 0) bad('transcript', 'the transcript has no words');
  return { transcript, words };
}

/**
 * Spec rule 6: dialogue edits retime sections, which needs both rollout flags (422 without them);
 * flags that cannot be read are 503 generation_infra_service_unavailable, not a guess.
 */
export function assertRolloutFlags(
  org: { flags: readonly string[]; flagsReadable: boolean },
  field?: string,
): void {
  if (!org.flagsReadable)
    throw new AppError('generation_infra_service_unavailable', {
      message: "The organization's rollout flags cannot be read.",
      headers: { 'Retry-After': '30' },
    });
  if (!org.flags.includes(SEGMENT_LIPSYNC_FLAG) || !org.flags.includes(SECTION_EXPANSION_FLAG))
    throw new AppError('dialogue_edit_retime_required', field ? { field } : {});
}

export function normaliseDialogueEditRequest(
  body: Record<string, unknown>,
  org: { flags: readonly string[]; flagsReadable: boolean },
  /** An interactive web session: the spec lets it select a window. */
  interactive = false,
): DialogueEditRequest {
  // Spec rule 6 and api-details 2.1: API keys edit the whole video.
  if (!interactive)
    for (const f of ['startMs', 'endMs'])
      if (body[f] !== undefined && body[f] !== null)
        throw new AppError('dialogue_edit_unsupported', { field: f });
  const startMs = interactive ? (windowBound(body, 'startMs') ?? 0) : 0;
  const endMs = interactive ? windowBound(body, 'endMs') : null;
  if (endMs !== null && endMs <= startMs) bad('endMs', 'endMs must be after startMs');
  assertRolloutFlags(org);
  const sourceVideoUrl = str(body.sourceVideoUrl);
  if (!sourceVideoUrl)
    bad('sourceVideoUrl', 'sourceVideoUrl is required (the source your transcription used)');
  if (!Array.isArray(body.edits)) bad('edits', 'edits must be an array of {kind: "change" | "remove", ...}');
  const { transcript, words } = readTranscript(body.transcript);
  return {
    transcript,
    words,
    edits: body.edits as DialogueEdit[],
    sourceVideoUrl,
    voiceId: str(body.voiceId),
    rerunOfJobId: str(body.rerunOfJobId),
    projectId: str(body.projectId),
    startMs,
    endMs,
  };
}

export type DialogueEditStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'COMPLETED_PARTIAL' | 'FAILED';

/**
 * A dialogue edit's status for each state of its preview's job; a completed preview that left some
 * edits unapplied is COMPLETED_PARTIAL.
 */
export function dialogueEditStatusOf(s: JobStatus, partial = false): DialogueEditStatus {
  if (s === 'queued') return 'PENDING';
  if (s === 'running') return 'PROCESSING';
  if (s === 'completed') return partial ? 'COMPLETED_PARTIAL' : 'COMPLETED';
  return 'FAILED';
}
