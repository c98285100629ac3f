// The local synthesis provider: offline voices (festival HTS, RHVoice), the default provider. Text is
// made speakable once (text.ts), cut into sentence groups, rendered per group, and the groups are
// joined into one mono 16-bit WAV with their timelines shifted by exact sample offsets. festival gives
// its own timings; RHVoice's come from forced alignment of the known text (align.ts).
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { synthesizeFestival } from './festival.js';
import { joinPieces, readWavInfo, type TimedPiece } from './local-wav.js';
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
  engine: 'festival' | 'rhvoice';
  rhvoice?: RhvoiceVoice;
}

const voice = (
  providerVoiceId: string,
  name: string,
  gender: string,
  accent: string,
  engine: 'festival' | 'rhvoice',
  rhvoice?: RhvoiceVoice,
): LocalVoice => ({ providerVoiceId, name, labels: { gender, accent, engine }, engine, rhvoice });

/** The built-in voices; only LGPL/BSD voice data (never RHVoice's evgeniy-eng or lyubov). */
export const LOCAL_VOICES: readonly LocalVoice[] = [
  voice('slt-hts', 'SLT (festival HTS)', 'female', 'american', 'festival'),
  voice('rhvoice-clb', 'CLB (RHVoice)', 'female', 'american', 'rhvoice', 'clb'),
  voice('rhvoice-bdl', 'BDL (RHVoice)', 'male', 'american', 'rhvoice', 'bdl'),
  voice('rhvoice-slt', 'SLT (RHVoice)', 'female', 'american', 'rhvoice', 'slt'),
  voice('rhvoice-alan', 'Alan (RHVoice)', 'male', 'scottish', 'rhvoice', 'alan'),
];

export interface LocalProviderOptions {
  /** Which engines to use; detected on the first call when absent. */
  engines?: LocalEngines;
  /** Longest text per engine call / alignment (characters). */
  chunkChars?: number;
}

function installed(v: LocalVoice, e: LocalEngines): boolean {
  if (v.engine === 'festival') return e.festival;
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
    const chunks = splitIntoChunks(speakableText(req.text), this.opts.chunkChars ?? 300).filter((c) =>
      /[\p{L}0-9]/u.test(c),
    );
    if (chunks.length === 0)
      throw new SpeechProviderError('rejected', 'local', 'nothing speakable in the text');
    const speed = clamp(req.settings.speed ?? 1, 0.5, 2);

    let pieces: TimedPiece[];
    try {
      pieces =
        v.engine === 'festival'
          ? await synthesizeFestival(chunks, { workDir: req.workDir, speed, signal: req.signal })
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
