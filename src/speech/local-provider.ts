// The local synthesis provider: offline voices (festival HTS, RHVoice; other languages through
// espeak-ng + MBROLA, espeak.ts), the default provider. Text is
// made speakable once (text.ts), cut into sentence groups, rendered per group, and the groups are
// joined into one mono 16-bit WAV with their timelines shifted by exact sample offsets. festival gives
// its own timings; RHVoice's come from forced alignment of the known text (align.ts).
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { synthesizeEspeak, type EspeakVoice } from './espeak.js';
import { synthesizeFestival } from './festival.js';
import { joinPieces, readWavInfo, type TimedPiece } from './local-wav.js';
import { synthesizePico, type PicoVoice } from './pico.js';
import { synthesizeRhvoice } from './rhvoice.js';
import { splitIntoChunks, speakableText } from './text.js';
import { detectLocalEngines, type LocalEngines, type RhvoiceVoice } from './tools.js';
import {
  SpeechProviderError,
  type ProviderVoice,
  type SynthesisProvider,
  type SynthesisRequest,
  type SynthesisResult,
} from './types.js';
import { convertVoice } from './voice-convert.js';
import { PraatError } from './praat.js';

export const MAX_LOCAL_TEXT_CHARS = 5000;

interface LocalVoice extends ProviderVoice {
  engine: 'festival' | 'rhvoice' | 'espeak' | 'pico';
  rhvoice?: RhvoiceVoice;
  espeak?: EspeakVoice;
  pico?: PicoVoice;
}

const voice = (
  providerVoiceId: string,
  name: string,
  gender: string,
  accent: string,
  engine: 'festival' | 'rhvoice',
  rhvoice?: RhvoiceVoice,
): LocalVoice => ({
  providerVoiceId,
  name,
  labels: { gender, accent, engine, language: 'en' },
  engine,
  rhvoice,
});

/** An other-language voice (espeak-ng rules, MBROLA database); `language` is the first code it serves. */
const foreign = (
  providerVoiceId: string,
  name: string,
  gender: string,
  espeak: string,
  db: string,
  languages: readonly string[],
): LocalVoice => ({
  providerVoiceId,
  name,
  labels: {
    gender,
    // The language as the accent ("spanish"); `license: mbrola` points at docs/dubbing-voices.md.
    accent: name.split(' ')[0].toLowerCase(),
    engine: 'espeak-mbrola',
    language: languages[0],
    languages: languages.join(','),
    license: 'mbrola',
  },
  engine: 'espeak',
  espeak: { espeak, db, languages },
});

/**
 * The other-language voices, best first per language (docs/dubbing-voices.md says how they were
 * chosen). MBROLA's voice data may not be used in a product that is sold without its authors' leave:
 * the labels say so, and the voices are offered only when their Debian packages are installed.
 */
export const FOREIGN_VOICES: readonly LocalVoice[] = [
  foreign('espeak-es2', 'Spanish male (espeak-ng + MBROLA es2)', 'male', 'mb-es2', 'es2', ['es']),
  foreign('espeak-es1', 'Spanish male (espeak-ng + MBROLA es1)', 'male', 'mb-es1', 'es1', ['es']),
  foreign('espeak-ca', 'Catalan male (espeak-ng, Spanish MBROLA es2)', 'male', 'lipsync/ca-es2', 'es2', [
    'ca',
  ]),
  foreign('espeak-gl', 'Galician male (Spanish rules, MBROLA es2)', 'male', 'lipsync/gl-es2', 'es2', ['gl']),
  foreign('espeak-eo', 'Esperanto male (espeak-ng, Spanish MBROLA es2)', 'male', 'lipsync/eo-es2', 'es2', [
    'eo',
  ]),
  foreign('espeak-hr', 'Serbo-Croatian male (espeak-ng + MBROLA cr1)', 'male', 'mb-cr1', 'cr1', [
    'hr',
    'sr',
    'bs',
    'sh',
    'hbs',
  ]),
  foreign('espeak-pt', 'Portuguese female (espeak-ng + MBROLA pt1)', 'female', 'mb-pt1', 'pt1', [
    'pt',
    'pt-PT',
  ]),
  foreign('espeak-pt-br', 'Brazilian Portuguese male (espeak-ng + MBROLA br3)', 'male', 'mb-br3', 'br3', [
    'pt-BR',
    'pt',
  ]),
  foreign('espeak-it3', 'Italian male (espeak-ng + MBROLA it3)', 'male', 'mb-it3', 'it3', ['it']),
  foreign('espeak-it4', 'Italian female (espeak-ng + MBROLA it4)', 'female', 'mb-it4', 'it4', ['it']),
  foreign('espeak-fr1', 'French male (espeak-ng + MBROLA fr1)', 'male', 'mb-fr1', 'fr1', ['fr']),
  foreign('espeak-fr4', 'French female (espeak-ng + MBROLA fr4)', 'female', 'mb-fr4', 'fr4', ['fr']),
];

/** A Pico voice: pico2wave's language, and the espeak-ng + MBROLA voice its phone times are aligned from. */
const pico = (providerVoiceId: string, name: string, lang: string, reference: EspeakVoice): LocalVoice => ({
  providerVoiceId,
  name,
  labels: {
    gender: 'female',
    accent: name.split(' ')[0].toLowerCase(),
    engine: 'pico',
    language: reference.languages[0],
    languages: reference.languages.join(','),
    license: 'mbrola',
  },
  engine: 'pico',
  pico: { lang, reference },
});

/**
 * SVOX Pico voices, offered for the languages where the alignment of their phone times passed
 * (median boundary error <= 20 ms, p90 <= 50 ms; docs/dubbing-voices.md). They come before the
 * MBROLA voices of their language: among voices equally near a speaker's pitch, a dub takes the first.
 */
export const PICO_VOICES: readonly LocalVoice[] = [
  pico('pico-es', 'Spanish female (SVOX Pico, aligned to MBROLA es1)', 'es-ES', {
    espeak: 'mb-es1',
    db: 'es1',
    languages: ['es'],
  }),
  pico('pico-it', 'Italian female (SVOX Pico, aligned to MBROLA it4)', 'it-IT', {
    espeak: 'mb-it4',
    db: 'it4',
    languages: ['it'],
  }),
  pico('pico-fr', 'French female (SVOX Pico, aligned to MBROLA fr4)', 'fr-FR', {
    espeak: 'mb-fr4',
    db: 'fr4',
    languages: ['fr'],
  }),
];

/** The installed-or-not catalogue entries that speak a language (codes compared case-blind). */
export function foreignVoicesFor(language: string): readonly LocalVoice[] {
  const l = language.toLowerCase();
  return FOREIGN_VOICES.filter((v) => v.espeak!.languages.some((x) => x.toLowerCase() === l));
}

/** The built-in voices; only LGPL/BSD voice data (never RHVoice's evgeniy-eng or lyubov). */
export const LOCAL_VOICES: readonly LocalVoice[] = [
  voice('slt-hts', 'SLT (festival HTS)', 'female', 'american', 'festival'),
  voice('rhvoice-clb', 'CLB (RHVoice)', 'female', 'american', 'rhvoice', 'clb'),
  voice('rhvoice-bdl', 'BDL (RHVoice)', 'male', 'american', 'rhvoice', 'bdl'),
  voice('rhvoice-slt', 'SLT (RHVoice)', 'female', 'american', 'rhvoice', 'slt'),
  voice('rhvoice-alan', 'Alan (RHVoice)', 'male', 'scottish', 'rhvoice', 'alan'),
  ...PICO_VOICES,
  ...FOREIGN_VOICES,
];

export interface LocalProviderOptions {
  /** Which engines to use; detected on the first call when absent. */
  engines?: LocalEngines;
  /** Longest text per engine call / alignment (characters). */
  chunkChars?: number;
}

function installed(v: LocalVoice, e: LocalEngines): boolean {
  if (v.engine === 'festival') return e.festival;
  if (v.engine === 'espeak') return e.espeak?.mbrolaDbs.includes(v.espeak!.db) ?? false;
  if (v.engine === 'pico')
    return (e.pico ?? false) && (e.espeak?.mbrolaDbs.includes(v.pico!.reference.db) ?? false);
  return v.rhvoice !== undefined && e.rhvoice.includes(v.rhvoice) && e.pocketsphinx && e.ffmpeg;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** The pitch-range factor a stability setting asks for; null when the voice is left as it is. */
export function rangeFactorFor(stability: number | undefined): number | null {
  if (stability === undefined || !Number.isFinite(stability)) return null;
  const factor = 1.5 - clamp(stability, 0, 1);
  return Math.abs(factor - 1) < 0.02 ? null : factor;
}

export class LocalSynthesisProvider implements SynthesisProvider {
  readonly name = 'local' as const;

  constructor(private readonly opts: LocalProviderOptions = {}) {}

  private engines(): Promise<LocalEngines> {
    return this.opts.engines ? Promise.resolve(this.opts.engines) : detectLocalEngines();
  }

  async listVoices(_opts: { apiKey?: string | null; signal?: AbortSignal } = {}): Promise<ProviderVoice[]> {
    const e = await this.engines();
    return LOCAL_VOICES.filter((v) => installed(v, e)).map(({ providerVoiceId, name, labels }) => ({
      providerVoiceId,
      name,
      labels: { ...labels },
    }));
  }

  async synthesize(req: SynthesisRequest): Promise<SynthesisResult> {
    req.signal?.throwIfAborted();
    const v = LOCAL_VOICES.find((x) => x.providerVoiceId === req.providerVoiceId);
    if (!v || !installed(v, await this.engines())) {
      throw new SpeechProviderError('voice_not_found', 'local', `no local voice ${req.providerVoiceId}`);
    }
    if (req.text.length > MAX_LOCAL_TEXT_CHARS) {
      throw new SpeechProviderError(
        'rejected',
        'local',
        `text longer than ${MAX_LOCAL_TEXT_CHARS} characters`,
      );
    }
    // speakableText spells numbers in English; espeak-ng reads them in the voice's own language.
    const text = v.engine === 'espeak' || v.engine === 'pico' ? req.text : speakableText(req.text);
    const chunks = splitIntoChunks(text, this.opts.chunkChars ?? 300).filter((c) => /[\p{L}0-9]/u.test(c));
    if (chunks.length === 0)
      throw new SpeechProviderError('rejected', 'local', 'nothing speakable in the text');
    const speed = clamp(req.settings.speed ?? 1, 0.5, 2);

    let pieces: TimedPiece[];
    try {
      pieces =
        v.engine === 'festival'
          ? await synthesizeFestival(chunks, { workDir: req.workDir, speed, signal: req.signal })
          : v.engine === 'pico'
            ? await synthesizePico(chunks, {
                voice: v.pico!,
                workDir: req.workDir,
                speed,
                signal: req.signal,
              })
            : v.engine === 'espeak'
              ? await synthesizeEspeak(chunks, {
                  voice: v.espeak!,
                  workDir: req.workDir,
                  speed,
                  signal: req.signal,
                })
              : await synthesizeRhvoice(chunks, {
                  voice: v.rhvoice!,
                  workDir: req.workDir,
                  speed,
                  signal: req.signal,
                });
    } catch (err) {
      req.signal?.throwIfAborted();
      throw new SpeechProviderError('unavailable', 'local', (err as Error).message, { cause: err });
    }
    const joined = join(req.workDir, 'local-speech.wav');
    const { timeline, sampleRate, durationMs } = await joinPieces(pieces, joined);

    const rangeFactor = rangeFactorFor(req.settings.stability);
    if (!req.profile && rangeFactor === null) {
      return { audioPath: joined, durationMs, sampleRate, timeline };
    }
    // Profile and pitch range are applied after synthesis; durations are kept, so the timeline holds.
    const converted = join(req.workDir, 'local-speech-converted.wav');
    try {
      await convertVoice(joined, converted, {
        profile: req.profile ?? null,
        similarity: clamp(req.settings.similarityBoost ?? 1, 0, 1),
        rangeFactor: rangeFactor ?? 1,
        workDir: req.workDir,
        signal: req.signal,
      });
    } catch (err) {
      // No speech process slot (processes/pool.ts) is an outage for the client (503), not a bug.
      if (err instanceof PraatError && err.reason === 'busy')
        throw new SpeechProviderError('unavailable', 'local', err.message, { cause: err });
      throw err;
    }
    const out = join(req.workDir, 'local-speech-final.wav');
    await rename(converted, out);
    const info = await readWavInfo(out);
    return { audioPath: out, durationMs: info.durationMs, sampleRate: info.sampleRate, timeline };
  }
}
