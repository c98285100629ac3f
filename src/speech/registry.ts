// The synthesis providers this server offers, built once from the validated config: local always
// (it needs no network), openai and elevenlabs when configured (docs/speech.md).
import type { SpeechConfig } from '../config.js';
import { alignTranscript } from './align.js';
import { ElevenLabsSpeechProvider } from './elevenlabs-provider.js';
import { LocalSynthesisProvider } from './local-provider.js';
import { OpenAiSpeechProvider } from './openai-provider.js';
import type { ProviderName, SynthesisProvider } from './types.js';

export function createSpeechProviders(
  speech: SpeechConfig,
  opts: { allowPrivate: boolean },
): Map<ProviderName, SynthesisProvider> {
  const providers = new Map<ProviderName, SynthesisProvider>();
  providers.set('local', new LocalSynthesisProvider());
  if (speech.openai) {
    providers.set(
      'openai',
      new OpenAiSpeechProvider({
        baseUrl: speech.openai.url,
        apiKey: speech.openai.apiKey,
        model: speech.openai.model,
        ...(speech.openai.voices ? { voices: speech.openai.voices } : {}),
        timeoutMs: speech.synthesisTimeoutMs,
        allowPrivate: opts.allowPrivate,
        align: alignTranscript,
      }),
    );
  }
  if (speech.elevenlabs) {
    providers.set(
      'elevenlabs',
      new ElevenLabsSpeechProvider({
        baseUrl: speech.elevenlabs.url,
        apiKey: speech.elevenlabs.apiKey,
        modelId: speech.elevenlabs.modelId,
        timeoutMs: speech.synthesisTimeoutMs,
        allowPrivate: opts.allowPrivate,
        align: alignTranscript,
      }),
    );
  }
  return providers;
}
