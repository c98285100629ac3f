// The translation providers this server offers, built once from the validated config: local
// (Apertium) with the pairs installed, openai and deepl when configured (docs/dubbing.md).
import type { TranslationConfig } from '../config.js';
import type { DirectPair, TranslationProviderName } from '../domain/dubbing-languages.js';
import { ApertiumTranslationProvider } from './apertium.js';
import { DeepLTranslationProvider } from './deepl.js';
import { OpenAiTranslationProvider } from './openai.js';
import type { TranslationProvider } from './types.js';

export function createTranslationProviders(
  config: TranslationConfig,
  opts: { allowPrivate: boolean; localPairs: readonly DirectPair[] },
): Map<TranslationProviderName, TranslationProvider> {
  const providers = new Map<TranslationProviderName, TranslationProvider>();
  providers.set(
    'local',
    new ApertiumTranslationProvider({ pairs: opts.localPairs, timeoutMs: config.timeoutMs }),
  );
  if (config.openai)
    providers.set(
      'openai',
      new OpenAiTranslationProvider({
        baseUrl: config.openai.url,
        apiKey: config.openai.apiKey,
        model: config.openai.model,
        timeoutMs: config.timeoutMs,
        allowPrivate: opts.allowPrivate,
      }),
    );
  if (config.deepl)
    providers.set(
      'deepl',
      new DeepLTranslationProvider({
        apiKey: config.deepl.apiKey,
        baseUrl: config.deepl.url,
        timeoutMs: config.timeoutMs,
        allowPrivate: opts.allowPrivate,
      }),
    );
  return providers;
}
