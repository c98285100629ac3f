// The recognition interface every speech-to-text provider implements (issue 11). Providers give rough
// word times; refine.ts sharpens them by forced alignment before anything is cut at them.
// Failures are SpeechProviderError (../types.ts) with the same reasons as synthesis.

export type RecognitionProviderName = 'local' | 'openai';

/** A recognized word; times are integer ms from the start of the audio given to the provider. */
export interface RecognizedWord {
  text: string;
  startMs: number;
  endMs: number;
  /** 0..1 when the provider reports one (pocketsphinx's word posterior). */
  confidence?: number;
}

export interface RecognitionResult {
  words: RecognizedWord[];
  /** ISO 639-1 code when known ('en'), else the provider's own name for it, or null. */
  language: string | null;
}

export interface TranscribeOptions {
  /** A folder the provider may write into; the caller removes it. */
  workDir: string;
  signal?: AbortSignal;
  /** ISO 639-1 hint ('en'); a provider that cannot recognize it rejects the call. */
  language?: string;
}

export interface RecognitionProvider {
  readonly name: RecognitionProviderName;
  /** Words of the speech in an audio or video file (any format ffmpeg reads). */
  transcribe(wavPath: string, opts: TranscribeOptions): Promise<RecognitionResult>;
}
