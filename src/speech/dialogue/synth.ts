// Synthesized replacement words in a voice matched to the speaker (speech-options.md (c)): the local
// provider speaks the text in the base voice nearest the speaker's pitch, with the speaker's measured
// profile applied (Praat Change gender + LTAS EQ), resampled to the source's rate.
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { SynthesisProvider, TimedWord, VoiceProfile } from '../types.js';
import { LOCAL_BASE_VOICES, measureVoiceProfile, nearestBaseVoice } from '../voice-profile.js';
import { readPcm, writePcm, type Pcm } from './pcm.js';

export interface MatchedVoice {
  profile: VoiceProfile;
  providerVoiceId: string;
}

/**
 * The voice for synthesized words: the given profile (on its own base voice), or one measured from
 * the speech in `window` with the installed base voice nearest its pitch. Null when the window has no
 * measurable voiced speech (the provider's default voice is then used unconverted).
 */
export async function matchVoice(
  given: { profile: VoiceProfile } | null,
  window: Pcm,
  provider: SynthesisProvider,
  opts: { workDir: string; signal?: AbortSignal },
): Promise<MatchedVoice | null> {
  if (given) return { profile: given.profile, providerVoiceId: given.profile.baseVoice };
  const file = join(opts.workDir, 'speaker-sample.wav');
  // Two minutes give stable statistics (voice-profile.ts MAX_SAMPLE_SECONDS).
  const cap = Math.min(window.samples.length, window.sampleRate * 120);
  await writePcm(file, { samples: window.samples.subarray(0, cap), sampleRate: window.sampleRate });
  const m = await measureVoiceProfile(file, opts);
  if (!(m.voicedSeconds > 0.3 && m.profile.pitchMedianHz > 0)) return null;
  const installed = new Set(
    (await provider.listVoices({ signal: opts.signal })).map((v) => v.providerVoiceId),
  );
  const candidates = LOCAL_BASE_VOICES.filter((c) => installed.has(c.providerVoiceId));
  if (candidates.length === 0) return null;
  const baseVoice = nearestBaseVoice(m.profile, candidates);
  return { profile: { ...m.profile, baseVoice }, providerVoiceId: baseVoice };
}

export interface SpokenPiece {
  samples: Int16Array;
  /** Word spans in samples of `samples`. */
  words: { text: string; start: number; end: number }[];
}

/** Speaks `text` and returns it at `rate` with its word spans (from the synthesizer's timeline). */
export async function speak(
  text: string,
  voice: MatchedVoice | null,
  provider: SynthesisProvider,
  rate: number,
  opts: { workDir: string; signal?: AbortSignal },
): Promise<SpokenPiece> {
  const voices = voice ? null : await provider.listVoices({ signal: opts.signal });
  const providerVoiceId = voice?.providerVoiceId ?? voices?.[0]?.providerVoiceId;
  if (!providerVoiceId) throw new Error('no synthesis voice is installed');
  // The provider names its files itself: a folder of its own keeps them off the caller's files.
  const workDir = await mkdtemp(join(opts.workDir, 'synth-'));
  const res = await provider.synthesize({
    text,
    providerVoiceId,
    settings: {},
    profile: voice?.profile ?? null,
    workDir,
    signal: opts.signal,
  });
  // Resampling keeps time, so the timeline in ms stays valid.
  const pcm = await readPcm(res.audioPath, { workDir, signal: opts.signal, rate });
  const at = (ms: number) => Math.min(pcm.samples.length, Math.max(0, Math.round((ms * rate) / 1000)));
  const words = res.timeline.words.map((w: TimedWord) => ({
    text: w.text,
    start: at(w.startMs),
    end: at(w.endMs),
  }));
  if (words.length === 0) throw new Error('the synthesizer returned no words');
  return { samples: pcm.samples, words };
}
