// The recognizer transcriptions use, from the validated config: pocketsphinx by default (offline), or
// an OpenAI-compatible transcription server (docs/transcription.md).
import type { SpeechConfig } from '../../config.js';
import { LocalRecognitionProvider } from './local.js';
import { OpenAiRecognitionProvider } from './openai.js';
import type { RecognitionProvider } from './types.js';

export function createRecognizer(
  cfg: SpeechConfig['recognition'],
  opts: { allowPrivate: boolean },
): RecognitionProvider {
  if (cfg.provider === 'openai' && cfg.openai) {
    return new OpenAiRecognitionProvider({
      baseUrl: cfg.openai.url,
      apiKey: cfg.openai.apiKey,
      model: cfg.openai.model,
      allowPrivate: opts.allowPrivate,
    });
  }
  return new LocalRecognitionProvider();
}
