// Translation for dubbing: the languages catalogue of this server (GET /v2/dubbing/languages), the
// pair check every dub passes, and translation with provider failures mapped onto the catalogue.
import {
  checkDubbingPair,
  dubbingLanguages,
  type CheckedPair,
  type DirectPair,
  type DubbingLanguages,
  type TranslationProviderName,
} from '../domain/dubbing-languages.js';
import { AppError } from '../domain/errors.js';
import { translationAppError } from '../translation/errors.js';
import { TranslationError, type TextSegment, type TranslationProvider } from '../translation/types.js';

export class TranslationService {
  private readonly catalogue: DubbingLanguages;

  constructor(
    private readonly providers: ReadonlyMap<TranslationProviderName, TranslationProvider>,
    localPairs: readonly DirectPair[],
  ) {
    this.catalogue = dubbingLanguages({
      localPairs,
      openai: providers.has('openai'),
      deepl: providers.has('deepl'),
    });
  }

  languages(): DubbingLanguages {
    return this.catalogue;
  }

  /** The pair a dub asks for, or 422 dubbing_language_unsupported. */
  checkPair(
    provider: TranslationProviderName,
    sourceLang: string | null | undefined,
    targetLang: string,
  ): CheckedPair {
    return checkDubbingPair(this.catalogue, provider, sourceLang, targetLang);
  }

  /** Translates a checked pair; provider failures leave as AppError (503/504/422). */
  async translate(
    pair: CheckedPair,
    segments: readonly TextSegment[],
    signal?: AbortSignal,
  ): Promise<TextSegment[]> {
    const provider = this.providers.get(pair.provider);
    if (!provider)
      throw new AppError('dubbing_language_unsupported', {
        field: 'dubParams.provider',
        message: `Translation provider ${pair.provider} is not available on this server.`,
      });
    try {
      return await provider.translate(segments, { from: pair.from, to: pair.to, signal });
    } catch (err) {
      if (err instanceof TranslationError) throw translationAppError(err);
      throw err;
    }
  }
}
