// Checks that an edit list can apply to a transcript before any work starts (the API's 400): every
// refusal names its reason and the offending field.
import { transcriptWords } from '../text.js';
import { DEFAULT_MAX_EDITS, DialogueEditError, type DialogueEdit, type SourceWord } from './types.js';

export interface ValidateOptions {
  sourceDurationMs: number;
  maxEdits?: number;
}

/** The edits resolved to word indices, in source order (what the preview builder works on). */
export interface ResolvedEdit {
  edit: DialogueEdit;
  /** Position in the submitted list. */
  index: number;
  /** First and last word index (inclusive) the edit replaces or removes. */
  first: number;
  last: number;
}

const fail = (reason: DialogueEditError['reason'], field: string, message: string): never => {
  throw new DialogueEditError(reason, field, message);
};

function checkWords(words: readonly SourceWord[], sourceDurationMs: number): Map<string, number> {
  const byId = new Map<string, number>();
  words.forEach((w, i) => {
    const at = `transcript.words[${i}]`;
    if (typeof w.id !== 'string' || w.id === '') fail('bad_edit', `${at}.id`, 'a word has no id');
    if (byId.has(w.id)) fail('duplicate_word_id', `${at}.id`, `word id ${w.id} appears twice`);
    byId.set(w.id, i);
    for (const key of ['startMs', 'endMs'] as const) {
      const v = w[key];
      if (!Number.isFinite(v) || v < 0 || v > sourceDurationMs) {
        fail(
          'word_timing_invalid',
          `${at}.${key}`,
          `word ${w.id}: ${key} must be within 0..${sourceDurationMs}`,
        );
      }
    }
    if (w.startMs >= w.endMs)
      fail('word_timing_invalid', `${at}.endMs`, `word ${w.id} ends before it starts`);
    // Splicing needs words in order and apart: a word starting inside the previous one cannot be cut out.
    if (i > 0 && w.startMs < words[i - 1].endMs) {
      fail('word_timing_invalid', `${at}.startMs`, `word ${w.id} starts before the previous word ends`);
    }
  });
  return byId;
}

/**
 * Throws a DialogueEditError for the first problem found; returns the edits resolved to word ranges,
 * sorted by where they are in the source.
 */
export function validateEdits(
  words: readonly SourceWord[],
  edits: readonly DialogueEdit[],
  opts: ValidateOptions,
): ResolvedEdit[] {
  const maxEdits = opts.maxEdits ?? DEFAULT_MAX_EDITS;
  if (!Array.isArray(edits) || edits.length === 0) fail('no_edits', 'edits', 'there are no edits');
  if (edits.length > maxEdits) fail('too_many_edits', 'edits', `at most ${maxEdits} edits per preview`);
  const byId = checkWords(words, opts.sourceDurationMs);
  const touched = new Map<number, number>();
  const indexOf = (id: unknown, field: string): number => {
    if (typeof id !== 'string') return fail('bad_edit', field, 'a word id is a string');
    return byId.get(id) ?? fail('unknown_word', field, `no word with id ${id} in the transcript`);
  };
  const touch = (word: number, edit: number, field: string): void => {
    const other = touched.get(word);
    if (other !== undefined) {
      fail('word_edited_twice', field, `word ${words[word].id} is in edits ${other} and ${edit}`);
    }
    touched.set(word, edit);
  };

  const resolved = edits.map((edit, n): ResolvedEdit => {
    const at = `edits[${n}]`;
    const raw = edit as unknown as Record<string, unknown>;
    // The API's schema refuses these first; other callers may hand in anything.
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      fail('bad_edit', at, 'an edit is an object: {kind: "change" | "remove", ...}');
    for (const key of ['startMs', 'endMs']) {
      if (key in raw) fail('bad_edit', `${at}.${key}`, 'edits name words; they carry no times');
    }
    if (edit.kind === 'change') {
      const i = indexOf(edit.wordId, `${at}.wordId`);
      if (typeof edit.replacement !== 'string' || transcriptWords(edit.replacement).length === 0) {
        fail('replacement_blank', `${at}.replacement`, 'the replacement has no words');
      }
      if (
        edit.pronunciation !== undefined &&
        (typeof edit.pronunciation !== 'string' || transcriptWords(edit.pronunciation).length === 0)
      ) {
        fail('replacement_blank', `${at}.pronunciation`, 'the pronunciation has no words');
      }
      touch(i, n, `${at}.wordId`);
      return { edit, index: n, first: i, last: i };
    }
    if (edit.kind === 'remove') {
      if (!Array.isArray(edit.wordIds) || edit.wordIds.length === 0) {
        fail('removal_empty', `${at}.wordIds`, 'a removal names no words');
      }
      const seen = new Set<string>();
      const idx = edit.wordIds.map((id, j) => {
        if (typeof id !== 'string') return fail('bad_edit', `${at}.wordIds[${j}]`, 'a word id is a string');
        if (seen.has(id)) fail('duplicate_word_id', `${at}.wordIds[${j}]`, `word id ${id} is repeated`);
        seen.add(id);
        return indexOf(id, `${at}.wordIds[${j}]`);
      });
      idx.forEach((i, j) => {
        if (j > 0 && i !== idx[j - 1] + 1) {
          fail('removal_not_contiguous', `${at}.wordIds[${j}]`, 'removed words must be contiguous, in order');
        }
        touch(i, n, `${at}.wordIds[${j}]`);
      });
      return { edit, index: n, first: idx[0], last: idx[idx.length - 1] };
    }
    return fail('bad_edit', `${at}.kind`, 'an edit is a change or a remove');
  });
  return resolved.sort((a, b) => a.first - b.first);
}
