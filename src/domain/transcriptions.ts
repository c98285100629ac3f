// Rules for POST /v2/transcriptions (api-details 1.1): exactly one source in our own storage, an
// optional window (at most 60 minutes), an optional refusal length. Pure.
import { AppError } from './errors.js';
import type { JobStatus } from './jobs.js';

/** The longest window one transcription covers. */
export const MAX_WINDOW_MS = 60 * 60 * 1000;
/** A running job for the same source and window is reused when it started this recently. */
export const REUSE_RUNNING_MS = 60 * 60 * 1000;

export interface TranscriptWord {
  id: string;
  text: string;
  startMs: number;
  endMs: number;
  speakerId: string | null;
}

/** A finished transcription's words, by segment: the value stored and returned to clients. */
export interface Transcript {
  segments: { id: string; words: TranscriptWord[] }[];
}

export interface TranscriptionSourceRef {
  kind: 'video' | 'audio';
  /** The field the client used: sourceVideoUrl, sourceAudioUrl or assetId. */
  field: 'sourceVideoUrl' | 'sourceAudioUrl' | 'assetId';
  url?: string;
  assetId?: string;
}

export interface TranscriptionRequest {
  source: TranscriptionSourceRef;
  startMs: number;
  endMs: number | null;
  maxSourceSeconds: number | null;
  projectId: string | null;
}

function bad(field: string, message: string): never {
  throw new AppError('invalid_request', { field, message });
}

function optionalInt(v: unknown, field: string, min: number): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
    bad(field, `${field} must be an integer >= ${min}`);
  return v;
}

export function normaliseTranscriptionRequest(body: Record<string, unknown>): TranscriptionRequest {
  const given = (['sourceVideoUrl', 'sourceAudioUrl', 'assetId'] as const).filter(
    (f) => typeof body[f] === 'string' && body[f] !== '',
  );
  if (given.length !== 1) bad('sourceVideoUrl', 'send exactly one of sourceVideoUrl or sourceAudioUrl');
  const field = given[0];
  for (const f of ['sourceVideoUrl', 'sourceAudioUrl', 'assetId'] as const)
    if (f !== field && body[f] !== undefined && body[f] !== null && body[f] !== '')
      bad(f, `${f} must be a non-empty string`);
  const value = body[field] as string;
  if (field !== 'assetId') {
    try {
      const u = new URL(value);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    } catch {
      bad(field, `${field} must be an http or https URL`);
    }
  }
  const startMs = optionalInt(body.startMs, 'startMs', 0) ?? 0;
  const endMs = optionalInt(body.endMs, 'endMs', 1);
  if (endMs !== null && endMs <= startMs) bad('endMs', 'endMs must be after startMs');
  if (endMs !== null && endMs - startMs > MAX_WINDOW_MS) bad('endMs', 'the window is at most 60 minutes');
  const maxSourceSeconds = optionalInt(body.maxSourceSeconds, 'maxSourceSeconds', 1);
  const projectId =
    typeof body.projectId === 'string' && body.projectId.trim() ? body.projectId.trim() : null;
  return {
    source: {
      kind: field === 'sourceAudioUrl' ? 'audio' : 'video',
      field,
      ...(field === 'assetId' ? { assetId: value } : { url: value }),
    },
    startMs,
    endMs,
    maxSourceSeconds,
    projectId,
  };
}

/**
 * The end of the span a transcription processes: the requested end (or the source's end when none
 * was given), never past the source, and never more than MAX_WINDOW_MS after the start, so that a
 * request without `endMs` costs no more than one with the longest window.
 */
export function transcriptionWindowEnd(startMs: number, endMs: number | null, sourceMs: number): number {
  return Math.min(endMs ?? sourceMs, sourceMs, startMs + MAX_WINDOW_MS);
}

export type TranscriptionStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

/** A transcription's status for each state of its job: a cancel or a timeout is a failure to the client. */
export function transcriptionStatusOf(s: JobStatus): TranscriptionStatus {
  return s === 'queued'
    ? 'PENDING'
    : s === 'running'
      ? 'PROCESSING'
      : s === 'completed'
        ? 'COMPLETED'
        : 'FAILED';
}

/** A hand correction of a word: what was really said where the recognizer heard `id`'s text. */
export interface WordCorrection {
  id: string;
  text: string;
}

/** The transcription job's payload version that carries a correction (version 1: recognition). */
export const TRANSCRIPTION_CORRECTION_VERSION = 2;

/** The longest text one corrected word may take (a word, or the few words it really was). */
export const MAX_CORRECTION_CHARS = 100;

/**
 * PATCH /v2/transcriptions/{id} (our extension): the corrections checked against the transcript they
 * correct. Every id names a word of it, once; every text has a letter or digit (something alignment can
 * place). A text equal to the word's own is no correction and is left out.
 */
export function checkCorrections(transcript: Transcript, words: readonly WordCorrection[]): WordCorrection[] {
  const current = new Map(transcript.segments.flatMap((s) => s.words.map((w) => [w.id, w.text] as const)));
  const seen = new Set<string>();
  const out: WordCorrection[] = [];
  words.forEach((c, i) => {
    if (!current.has(c.id)) bad(`words[${i}].id`, `words[${i}].id is not a word of this transcript`);
    if (seen.has(c.id)) bad(`words[${i}].id`, `words[${i}].id corrects ${c.id} a second time`);
    seen.add(c.id);
    const text = c.text.trim().replace(/\s+/g, ' ');
    if (!/[\p{L}\p{N}]/u.test(text)) bad(`words[${i}].text`, `words[${i}].text needs a letter or digit`);
    if (text.length > MAX_CORRECTION_CHARS)
      bad(`words[${i}].text`, `words[${i}].text is longer than ${MAX_CORRECTION_CHARS} characters`);
    if (text !== current.get(c.id)) out.push({ id: c.id, text });
  });
  return out;
}

/** The transcript with the corrected texts (times and speakers as they were). */
export function applyCorrections(transcript: Transcript, words: readonly WordCorrection[]): Transcript {
  const text = new Map(words.map((c) => [c.id, c.text]));
  return {
    segments: transcript.segments.map((s) => ({
      id: s.id,
      words: s.words.map((w) => ({ ...w, text: text.get(w.id) ?? w.text })),
    })),
  };
}
