// Review notes pinned to moments of a generation's output (our extension, docs/generations.md#notes):
// the rules of a note's moment, text and author, and how many one generation may hold.
import { AppError } from './errors.js';

/** A generation holds at most this many notes; the next one is refused (note_limit_reached). */
export const MAX_NOTES_PER_GENERATION = 500;
export const MAX_NOTE_TEXT = 2000;

/** Text without surrounding blanks; empty (after trimming) or longer than MAX_NOTE_TEXT is refused. */
export function noteText(text: string): string {
  const t = text.trim();
  if (t === '') throw new AppError('invalid_request', { field: 'text', message: 'text must not be empty' });
  if (t.length > MAX_NOTE_TEXT)
    throw new AppError('invalid_request', {
      field: 'text',
      message: `text may have at most ${MAX_NOTE_TEXT} characters`,
    });
  return t;
}

/**
 * The moment in the output, in whole milliseconds. When the output's duration is known (seconds) the
 * moment must lie within it; before the output exists any moment from 0 is taken.
 */
const END_TOLERANCE_MS = 100;

export function noteMoment(atMs: number, outputSeconds: number | null): number {
  if (!Number.isInteger(atMs) || atMs < 0)
    throw new AppError('invalid_request', { field: 'atMs', message: 'atMs must be a whole number from 0' });
  if (outputSeconds !== null && outputSeconds > 0) {
    const endMs = Math.round(outputSeconds * 1000);
    // A player's last frame can sit a little past the stored length (its container's duration):
    // within a tenth of a second that is the end.
    if (atMs > endMs && atMs <= endMs + END_TOLERANCE_MS) return endMs;
    if (atMs > endMs)
      throw new AppError('invalid_request', {
        field: 'atMs',
        message: `atMs must be within the output (0 to ${endMs} ms)`,
      });
  }
  return atMs;
}

/** Refuses a note once the generation holds MAX_NOTES_PER_GENERATION. */
export function assertNoteRoom(current: number): void {
  if (current >= MAX_NOTES_PER_GENERATION)
    throw new AppError('note_limit_reached', {
      message: `A generation holds at most ${MAX_NOTES_PER_GENERATION} notes.`,
    });
}

/** Who wrote it, as the request names itself: the signed-in user's email, else the API key's name. */
export function noteAuthor(who: { email: string | null; keyName: string | null }): string {
  return who.email || who.keyName || 'API key';
}
