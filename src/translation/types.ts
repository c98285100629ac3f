// The one translation interface every provider implements (docs/dubbing.md, "Translation").
import type { TranslationProviderName } from '../domain/dubbing-languages.js';

export type { TranslationProviderName } from '../domain/dubbing-languages.js';

export interface TextSegment {
  id: string;
  text: string;
}

export interface TranslateOptions {
  /** Lower-case language code; null lets a remote provider detect it. */
  from: string | null;
  to: string;
  signal?: AbortSignal;
}

export interface TranslationProvider {
  readonly name: TranslationProviderName;
  /** One translation per segment, same ids, same order; rejects with TranslationError. */
  translate(segments: readonly TextSegment[], opts: TranslateOptions): Promise<TextSegment[]>;
}

/**
 * Why a translation failed. `untranslatable`: the provider answered, but a segment came back empty
 * or untouched (wrong source language, an unknown script); `malformed`: the answer did not follow
 * the protocol; `unsupported`: the pair is not offered; `busy`: no local process slot in time.
 */
export type TranslationFailure =
  | 'timeout'
  | 'unavailable'
  | 'key_invalid'
  | 'quota'
  | 'rate_limited'
  | 'malformed'
  | 'untranslatable'
  | 'unsupported'
  | 'busy'
  | 'aborted';

export class TranslationError extends Error {
  constructor(
    readonly reason: TranslationFailure,
    readonly provider: TranslationProviderName,
    /** For the log only (may quote the provider or the text). */
    readonly detail?: string,
    extra: { segmentId?: string; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(`${provider} translation: ${reason}${detail ? ` (${detail})` : ''}`, { cause: extra.cause });
    this.name = 'TranslationError';
    this.segmentId = extra.segmentId;
    this.retryAfterSeconds = extra.retryAfterSeconds;
  }

  /** The segment that could not be translated (reason `untranslatable`). */
  readonly segmentId?: string;
  readonly retryAfterSeconds?: number;
}

/** Whitespace as one space, trimmed: what every provider is given and returns. */
export function tidy(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
