// Shapes of a dialogue-edit preview (issue 11; api-details.md section 2): what the caller gives, what
// the preview reports, and the typed errors the API turns into 400s or a job's error.
import type { DialogueEdit, SourceWord } from '../../domain/dialogue-edits.js';
import type { AlignTranscript, SynthesisProvider, VoiceProfile } from '../types.js';

export type { DialogueEdit, SourceWord } from '../../domain/dialogue-edits.js';

export interface PreviewInput {
  /** The source audio (any WAV ffmpeg reads; mono 16-bit PCM is used as it is). */
  sourceWav: string;
  /** The source transcript's words, in order. */
  words: SourceWord[];
  /** The window the preview covers (default: the whole file); edits must lie inside it. */
  windowStartMs?: number;
  windowEndMs?: number;
  edits: DialogueEdit[];
  /** The voice for synthesized words; null = a profile measured from the window's own speech. */
  voice: { profile: VoiceProfile } | null;
  /** Scratch folder; the preview WAV is written here. */
  workDir: string;
  signal?: AbortSignal;
  /** Overrides for tests or other deployments; default the local provider and pocketsphinx aligner. */
  provider?: SynthesisProvider;
  align?: AlignTranscript;
}

/** One edited region: where it sits in the preview (output) and in the source. */
export interface PreviewSlot {
  kind: 'change' | 'remove';
  outputStartMs: number;
  outputDurationMs: number;
  sourceStartMs: number;
  sourceDurationMs: number;
}

export interface PreviewResult {
  /** Mono 16-bit WAV of the whole window at the source's sample rate. */
  previewWav: string;
  previewDurationMs: number;
  /** The window's words retimed to the preview; new words have ids `<edited word id>_e<k>`. */
  resultWords: SourceWord[];
  slots: PreviewSlot[];
  /** Slots that may sound rough and why (e.g. `background_bed_missing`); null when none. */
  partial: { failedSlots: number[]; reason: string } | null;
  /** Replacement words taken from the speaker's own recording, per slot index. */
  reused: { slot: number; words: string[] }[];
  /** The voice synthesized words were spoken in (null when nothing was synthesized). */
  voiceProfile: VoiceProfile | null;
}

export type EditRefusal =
  | 'no_edits'
  | 'too_many_edits'
  | 'unknown_word'
  | 'duplicate_word_id'
  | 'word_edited_twice'
  | 'removal_empty'
  | 'removal_not_contiguous'
  | 'replacement_blank'
  | 'bad_edit'
  | 'word_timing_invalid'
  | 'word_outside_window'
  | 'window_invalid';

/** An edit list that cannot apply (the API answers 400 before any job exists). */
export class DialogueEditError extends Error {
  constructor(
    readonly reason: EditRefusal,
    /** The offending field as a JSON path, e.g. `edits[2].wordIds[1]` or `transcript.words[4].startMs`. */
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'DialogueEditError';
  }
}

/** An edited span too long to be plausible: the job fails with EDIT_TOO_LONG (api-details 2.3). */
export class EditTooLongError extends Error {
  readonly code = 'EDIT_TOO_LONG' as const;
  constructor(
    readonly spanText: string,
    readonly wordIds: string[],
    readonly sourceDurationMs: number,
    readonly outputDurationMs: number,
  ) {
    super(
      `the edit "${spanText}" would last ${outputDurationMs} ms in place of ${sourceDurationMs} ms; shorten the replacement`,
    );
    this.name = 'EditTooLongError';
  }
}

/** Crossfade at every join, ms (the issue asks 5-10 ms). */
export const CROSSFADE_MS = 8;
/** Length of the quiet stretch a cut is centred in, ms. */
export const QUIET_WINDOW_MS = 5;
/** How far a cut may move from its nominal place to find that quiet stretch, ms. */
export const CUT_SEARCH_MS = 25;
/** A closed gap keeps this much pause (never more than the silence that was there). */
export const BREATH_PAUSE_MS = 200;
/** An edited span may grow to 3x its source length + 2 s before it is refused as EDIT_TOO_LONG. */
export const MAX_SPAN_FACTOR = 3;
export const MAX_SPAN_EXTRA_MS = 2000;
export const DEFAULT_MAX_EDITS = 100;
