// The articulation step's tools as the config chooses them: Silero voice activity, the configured
// recognizer (the same one transcriptions use) and pocketsphinx forced alignment.
import type { SpeechConfig } from '../config.js';
import { alignTranscript } from './align.js';
import type { ArticulationDeps } from './articulation.js';
import { createRecognizer } from './recognition/registry.js';
import { detectSpeech, loadSpeechDetector } from './vad.js';
import { VISEME_SAMPLE_RATE, loadVisemeModel, type VisemeResult } from './viseme-model.js';
import { readMono } from '../media/mono.js';

function visemesOf(id: string, modelPath: string) {
  return async (path: string, signal?: AbortSignal): Promise<VisemeResult> => {
    const model = await loadVisemeModel(modelPath);
    const samples = await readMono(path, VISEME_SAMPLE_RATE, { signal });
    return { ...(await model.run(samples, VISEME_SAMPLE_RATE, signal)), model: id };
  };
}

export function articulationTools(
  cfg: SpeechConfig,
  opts: { allowPrivate: boolean },
): ArticulationDeps | null {
  if (cfg.articulation.mode === 'acoustic') return null;
  return {
    detectSpeech: async (path, signal) => (await detectSpeech(path, { signal })).segments,
    recognizer: cfg.articulation.recognize ? createRecognizer(cfg.recognition, opts) : null,
    align: alignTranscript,
    visemes: cfg.articulation.visemeModel
      ? visemesOf(cfg.articulation.visemeModel.id, cfg.articulation.visemeModel.path)
      : null,
    warmUp: loadSpeechDetector,
  };
}
