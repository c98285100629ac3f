// The one list of job kinds. The server registers every kind from here (its composition root) and a
// remote worker the kinds that can run without a database, from the same list: adding a kind is its
// handler, its resource slice and one line below.
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { PriceTable } from '../domain/pricing.js';
import { DEFAULT_PRICES } from '../domain/pricing.js';
import { EngineRegistry } from '../engines/registry.js';
import { articulationTools } from '../speech/articulation-tools.js';
import type { ArticulationDeps } from '../speech/articulation.js';
import { createRecognizer } from '../speech/recognition/registry.js';
import type { RecognitionProvider } from '../speech/recognition/types.js';
import type { SpeechService } from '../services/speech.js';
import { TranslationService } from '../services/translation.js';
import { installedApertiumPairs } from '../translation/apertium.js';
import { createTranslationProviders } from '../translation/registry.js';
import { createSpeechProviders } from '../speech/registry.js';
import type { ProviderName, SynthesisProvider } from '../speech/types.js';
import type { DubTools } from '../pipeline/dub.js';
import type { BatchProgress } from '../services/batch-progress.js';
import { HandlerRegistry, type AnyJobHandler } from '../jobs/handler.js';
import { generationHandler } from './generation.js';
import { ttsHandler } from './tts.js';
import { transcriptionHandler } from './transcription.js';
import { dialogueEditHandler } from './dialogue-edit.js';
import { BATCH_SLICE_MS, batchHandler, type AdmitChild } from './batch.js';

/** The tools runs use, built from the configuration on first use (a process loads only what it runs). */
export interface RunTools {
  readonly engines: () => EngineRegistry;
  readonly articulation: () => ArticulationDeps | null;
  readonly recognizer: () => RecognitionProvider;
  readonly dubbing: () => DubTools;
}

export function runTools(config: Config): RunTools {
  let engines: EngineRegistry | null = null;
  let articulation: ArticulationDeps | null | undefined;
  let dubbing: DubTools | null = null;
  return {
    engines: () => (engines ??= EngineRegistry.fromFile(config.enginesFile, config.defaultEngine)),
    articulation: () =>
      (articulation ??= articulationTools(config.speech, { allowPrivate: config.allowPrivateUrls })),
    recognizer: () => createRecognizer(config.speech.recognition, { allowPrivate: config.allowPrivateUrls }),
    dubbing: () => (dubbing ??= dubTools(config)),
  };
}

/**
 * A dub's tools in this process: its recognizer, the translation providers with the Apertium pairs
 * installed here (read once), and the voice providers configured here (a chosen voice's provider).
 */
function dubTools(config: Config): DubTools {
  let translation: Promise<TranslationService> | null = null;
  const synthesizers: ReadonlyMap<ProviderName, SynthesisProvider> = createSpeechProviders(config.speech, {
    allowPrivate: config.allowPrivateUrls,
  });
  const service = () =>
    (translation ??= installedApertiumPairs().then(
      (localPairs) =>
        new TranslationService(
          createTranslationProviders(config.translation, {
            allowPrivate: config.allowPrivateUrls,
            localPairs,
          }),
          localPairs,
        ),
    ));
  return {
    recognizer: createRecognizer(config.speech.recognition, { allowPrivate: config.allowPrivateUrls }),
    checkPair: async (dub) => (await service()).checkPair(dub.provider, dub.sourceLang, dub.targetLang),
    translate: async (pair, segments, signal) => (await service()).translate(pair, segments, signal),
    synthesizer: synthesizers.get('local')!,
    synthesizers: (name) => synthesizers.get(name) ?? null,
    synthesisTimeoutMs: config.speech.synthesisTimeoutMs,
  };
}

export interface JobHandlerDeps {
  readonly store: Store;
  readonly prices: PriceTable;
  readonly tools: RunTools;
  /** Built lazily: the speech service exists on the server only. */
  readonly speech: () => SpeechService;
  /** Webhook bodies at delivery time, by the services that render the resources (server only). */
  readonly webhookBodies: () => {
    readonly generation: (generationId: string, stored: string) => Promise<string | null>;
    readonly batch: (batchId: string) => Promise<string | null>;
  };
  readonly batch: {
    readonly progress: BatchProgress;
    readonly admitChild: () => AdmitChild;
    readonly planConcurrency?: Partial<Record<string, number>>;
    readonly sliceMs?: number;
  };
}

/** Every job kind this build knows. */
export function jobHandlers(deps: JobHandlerDeps): AnyJobHandler[] {
  const { store, tools } = deps;
  return [
    generationHandler({
      store,
      prices: deps.prices,
      engines: tools.engines,
      articulation: tools.articulation,
      dubbing: tools.dubbing,
      speech: deps.speech,
      webhookBody: () => deps.webhookBodies().generation,
    }),
    ttsHandler({ store, speech: deps.speech }),
    transcriptionHandler({ store, recognizer: tools.recognizer }),
    dialogueEditHandler({ store }),
    batchHandler({
      store,
      progress: deps.batch.progress,
      admitChild: deps.batch.admitChild,
      planConcurrency: deps.batch.planConcurrency,
      sliceMs: deps.batch.sliceMs ?? BATCH_SLICE_MS,
      webhookBody: () => deps.webhookBodies().batch,
    }),
  ];
}

export function registryOf(handlers: readonly AnyJobHandler[]): HandlerRegistry {
  const registry = new HandlerRegistry();
  for (const h of handlers) registry.register(h);
  return registry;
}

/**
 * Stands in for what a remote worker does not have (the database, the server's services): the kinds it
 * runs never reach them (that is what makes a kind remote), and anything that did would fail loudly.
 */
function absent<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get(_t, prop) {
      throw new Error(`a remote worker has no ${what} (${what}.${String(prop)} was used)`);
    },
  });
}

/** The kinds a remote worker can run: those of the list that declare a remote run. */
export function remoteJobHandlers(config: Config): AnyJobHandler[] {
  return jobHandlers({
    store: absent<Store>('store'),
    prices: DEFAULT_PRICES,
    tools: runTools(config),
    speech: () => absent<SpeechService>('speech'),
    webhookBodies: () => absent('webhookBodies'),
    batch: {
      progress: absent<BatchProgress>('batchProgress'),
      admitChild: () => {
        throw new Error('a remote worker creates no generations');
      },
    },
  }).filter((h) => h.remote);
}
