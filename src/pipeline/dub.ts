// The dubbing stage of a generation (docs/dubbing.md): the video's own speech -> words with times
// (recognized, or a given transcript aligned) -> speakers told apart -> one-speaker sentences ->
// translated -> spoken by a target-language voice matched to each speaker (or by the one voice the
// client chose, through its provider) -> fitted into the source
// spans (stretch, then the pause after) -> mixed over the lowered original. What comes out is an audio
// input like any other (with the synthesizer's own phone times for the mouth) and the dub's public
// transcript. It sees no database: it runs the same on the server and on a remote worker.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../domain/errors.js';
import type { CheckedPair } from '../domain/dubbing-languages.js';
import { fitSegments, type DubSegmentPlan } from '../domain/dub-timing.js';
import {
  dubSourceLang,
  sentencesOf,
  voiceSpeaks,
  MAX_KEPT_SEGMENT_CLIPS,
  type DubKept,
  type DubRecord,
  type DubRequest,
  type DubSegment,
  type DubVoice,
  type SourceSentence,
  type SourceWord,
} from '../domain/dub.js';
import { runFfmpeg } from '../media/ffmpeg.js';
import { mixDub } from '../media/dub-mix.js';
import { AlignmentMismatchError, alignTranscript } from '../speech/align.js';
import { readWavInfo } from '../speech/local-wav.js';
import { refineWordTimes } from '../speech/recognition/refine.js';
import { applySpeakers, buildTranscript, estimateSpeakers } from '../speech/recognition/transcript.js';
import type { RecognitionProvider, RecognizedWord } from '../speech/recognition/types.js';
import { stretchWav } from '../speech/stretch.js';
import { transcriptWords } from '../speech/text.js';
import { measureVoiceProfile, semitones } from '../speech/voice-profile.js';
import { PraatError } from '../speech/praat.js';
import {
  SpeechProviderError,
  type ProviderName,
  type ProviderVoice,
  type SpeechTimeline,
  type SynthesisProvider,
  type SynthesisRequest,
  type SynthesisResult,
  type TimedPhoneme,
  type TimedWord,
  type VoiceProfile,
} from '../speech/types.js';
import { speechError } from '../speech/errors.js';
import type { TextSegment } from '../translation/types.js';

/** What the dubbing stage uses; built from the configuration (handlers/index.ts runTools). */
export interface DubTools {
  readonly recognizer: RecognitionProvider;
  /** The pair as this process's translation providers offer it (422 when they do not). */
  checkPair(dub: DubRequest): Promise<CheckedPair>;
  translate(pair: CheckedPair, segments: readonly TextSegment[], signal: AbortSignal): Promise<TextSegment[]>;
  /** The local synthesizer: its other-language voices speak the translation. */
  readonly synthesizer: SynthesisProvider;
  /** A provider's synthesizer as configured in this process (a chosen voice's); null: not here. */
  synthesizers(name: ProviderName): SynthesisProvider | null;
  /** The longest one sentence's synthesis may take (LIPSYNC_TTS_TIMEOUT_SECONDS). */
  readonly synthesisTimeoutMs: number;
}

/** A dub's one voice (dubParams.voiceId), resolved on the server when the job is claimed. */
export interface DubVoiceChoice {
  /** The id the client gave (GET /v2/voices). */
  readonly voiceId: string;
  readonly name: string;
  readonly provider: ProviderName;
  readonly providerVoiceId: string;
  /** A local clone's profile. */
  readonly profile: VoiceProfile | null;
  /** The organization's own key for the provider, when it connected one (server workers only). */
  readonly apiKey: string | null;
}

export interface DubInput {
  /** The source media (the video), with its soundtrack. */
  sourcePath: string;
  durationMs: number;
  request: DubRequest;
  /** The voice every speaker speaks with; null: a local voice matched to each speaker. */
  voice?: DubVoiceChoice | null;
  /** Per speaker label (dubParams.voices): that speaker's voice; the others are matched. */
  voices?: Readonly<Record<string, DubVoiceChoice>>;
  workDir: string;
  signal: AbortSignal;
  /** 0..1 of the dubbing stage. */
  onProgress(fraction: number): void;
}

export interface DubOutput {
  /** The dubbed soundtrack: a 48 kHz 16-bit WAV as long as the source (longer when speech runs on). */
  audioPath: string;
  /** Words and phones of the dubbed speech, ms of the dubbed soundtrack. */
  timeline: SpeechTimeline;
  record: DubRecord;
  /** Seconds spent per stage, for the quality report and docs/dubbing.md. */
  stageSeconds: Record<string, number>;
  /** What the quality report should say about how the dub was made. */
  notes: string[];
  /**
   * Each segment's fitted audio, to be stored for re-dubs and listening (DubKept once uploaded);
   * null: too many segments to keep (MAX_KEPT_SEGMENT_CLIPS).
   */
  clips: StageClip[] | null;
  /** Each speaker's provider voice and the profile applied. */
  speakers: DubKept['speakers'];
}

/** A segment's fitted WAV on this machine, and its words and phones in the dub's timeline. */
export interface StageClip {
  id: string;
  path: string;
  words: [number, number];
  phonemes: [number, number];
}

/** The voice's typical pitch by its gender label, for choosing among a language's voices. */
const NOMINAL_PITCH_HZ: Record<string, number> = { male: 115, female: 205 };
/** At most this much of each speaker's speech is measured for their profile. */
const PROFILE_SAMPLE_MS = 30_000;

/** Runs `fn`, adding its seconds to `times[stage]`. */
export async function timed<T>(
  times: Record<string, number>,
  stage: string,
  fn: () => Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    times[stage] = Math.round(((times[stage] ?? 0) + (performance.now() - t0) / 1000) * 100) / 100;
  }
}

export async function dubSpeech(input: DubInput, tools: DubTools): Promise<DubOutput> {
  const { request, workDir, signal } = input;
  const times: Record<string, number> = {};
  const pair = await tools.checkPair(request);
  const from = pair.from ?? 'en';
  if (!request.transcript && tools.recognizer.name === 'local' && from !== 'en')
    throw new AppError('dubbing_language_unsupported', {
      field: 'dubParams.sourceLang',
      message: `This server recognizes English speech only; give dubParams.transcript to dub from ${from}.`,
      details: { supported: { recognition: ['en'] } },
    });
  const dir = join(workDir, 'dub');
  await mkdir(dir, { recursive: true });

  // 16 kHz mono: what recognition, alignment, speakers and voice profiles read.
  const wav = join(dir, 'source-16k.wav');
  await runFfmpeg(
    ['-i', input.sourcePath, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', wav],
    { signal },
  );
  input.onProgress(0.03);

  const { words, language: heard } = await timed(times, 'recognition', () =>
    sourceWords(wav, request, tools, dir, signal),
  );
  if (words.length === 0) throw new AppError('dubbing_no_speech');
  input.onProgress(0.3);

  const transcript = buildTranscript(words);
  const speakers = await timed(times, 'speakers', () =>
    estimateSpeakers(wav, transcript.segments, { workDir: dir, signal }),
  );
  const withSpeakers = applySpeakers(transcript, speakers);
  const confidence = new Map(words.map((w, i) => [`w${i + 1}`, w.confidence]));
  const sentences = sentencesOf(
    withSpeakers.segments.map((s) =>
      s.words.map((w): SourceWord => ({
        text: w.text,
        startMs: w.startMs,
        endMs: w.endMs,
        speaker: w.speakerId,
        confidence: confidence.get(w.id),
      })),
    ),
  );
  input.onProgress(0.38);

  const translated = await timed(times, 'translation', () =>
    tools.translate(
      pair,
      sentences.map((s) => ({ id: s.id, text: s.text })),
      signal,
    ),
  );
  const textOf = new Map(translated.map((t) => [t.id, t.text]));
  input.onProgress(0.45);

  const given = input.voice ?? null;
  const named = input.voices ?? {};
  const voices = await timed(times, 'voices', () =>
    voicesOf(given, named, { wav, sentences, language: pair.to, tools, dir, signal }),
  );
  const unheard = Object.keys(named).filter((k) => !voices.has(k));
  input.onProgress(0.5);

  // Each sentence spoken, then fitted into its span.
  const unmatched = new Set<string>();
  const spoken: SpokenSentence[] = [];
  for (const [i, s] of sentences.entries()) {
    signal.throwIfAborted();
    const sdir = join(dir, `sentence-${i + 1}`);
    await mkdir(sdir, { recursive: true });
    const r = await timed(times, 'synthesis', () =>
      speakSentence(voices.get(s.speaker)!.synthesizer, voices.get(s.speaker)!, {
        text: textOf.get(s.id) ?? '',
        language: pair.to,
        apiKey: voices.get(s.speaker)!.apiKey,
        workDir: sdir,
        signal,
        timeoutMs: tools.synthesisTimeoutMs,
      }),
    );
    if (r.plain) unmatched.add(s.id);
    spoken.push({ path: r.audioPath, durationMs: r.durationMs, timeline: r.timeline });
    input.onProgress(0.5 + (0.35 * (i + 1)) / sentences.length);
  }
  const plans = fitSegments(
    sentences.map((s, i) => ({
      startMs: s.startMs,
      endMs: s.endMs,
      nextStartMs: sentences[i + 1]?.startMs ?? Math.max(input.durationMs, s.endMs),
      speechMs: spoken[i].durationMs,
    })),
  );
  const clips: { path: string; startMs: number }[] = [];
  const kept: StageClip[] = [];
  const timeline: SpeechTimeline = { words: [], phonemes: [] };
  for (const [i, plan] of plans.entries()) {
    const stretched = join(dir, `sentence-${i + 1}`, 'fitted.wav');
    const [w0, p0] = [timeline.words.length, timeline.phonemes.length];
    await timed(times, 'timing', () => fitSpoken(spoken[i], plan, stretched, timeline, signal));
    clips.push({ path: stretched, startMs: plan.startMs });
    kept.push({
      id: sentences[i].id,
      path: stretched,
      words: [w0, timeline.words.length],
      phonemes: [p0, timeline.phonemes.length],
    });
  }
  input.onProgress(0.9);

  const audioPath = join(dir, 'dub.wav');
  await timed(times, 'mix', () =>
    mixDub(
      {
        sourcePath: input.sourcePath,
        speechSpans: sentences.map((s) => ({ startMs: s.startMs, endMs: s.endMs })),
        clips,
        outPath: audioPath,
        minDurationMs: input.durationMs,
      },
      { workDir: dir, signal },
    ),
  );
  input.onProgress(1);

  const segments: DubSegment[] = sentences.map((s, i) => segmentOf(s, textOf.get(s.id) ?? '', plans[i]));
  return {
    audioPath,
    timeline,
    stageSeconds: times,
    notes: [
      ...(unmatched.size
        ? [
            `${unmatched.size} sentence(s) kept the plain voice: its pitch could not be moved to the speaker's`,
          ]
        : []),
      ...(unheard.length ? [`dubParams.voices names speakers not heard: ${unheard.join(', ')}`] : []),
    ],
    clips: kept.length <= MAX_KEPT_SEGMENT_CLIPS ? kept : null,
    speakers: [...voices.values()].map((v) => ({
      speaker: v.voice.speaker,
      providerVoiceId: v.providerVoiceId,
      profile: v.profile,
    })),
    record: {
      sourceLang: dubSourceLang(pair.from, heard),
      targetLang: pair.to,
      provider: pair.provider,
      route: pair.route ? { via: pair.route.via ?? null, quality: pair.route.quality } : null,
      transcriptSource: request.transcript ? 'given' : 'recognized',
      voices: [...voices.values()].map((v) => v.voice),
      segments,
      timeline,
    },
  };
}

/** The synthesizer of the dub's chosen voice (its provider must be configured here), else the local one. */
export function synthesizerFor(tools: DubTools, given: DubVoiceChoice | null): SynthesisProvider {
  const synthesizer = given ? tools.synthesizers(given.provider) : tools.synthesizer;
  if (!synthesizer)
    throw new AppError('provider_service_unavailable', {
      field: 'dubParams.voiceId',
      message: `The ${given?.provider} voice provider is not configured where this dub runs.`,
      headers: { 'Retry-After': '30' },
    });
  return synthesizer;
}

/** A sentence as the synthesizer spoke it. */
export interface SpokenSentence {
  path: string;
  durationMs: number;
  timeline: SpeechTimeline;
}

/** One sentence stretched to its plan into `out`, its words and phones appended where it is placed. */
export async function fitSpoken(
  spoken: SpokenSentence,
  plan: DubSegmentPlan,
  out: string,
  timeline: SpeechTimeline,
  signal: AbortSignal,
): Promise<void> {
  const outMs = await stretchWav(spoken.path, out, plan.stretch, { signal });
  placeTimeline(timeline, spoken.timeline, plan.startMs, outMs / Math.max(1, spoken.durationMs));
}

/**
 * One sentence in its speaker's voice. Praat refuses some pitch moves (a wide-ranging speaker on a
 * flat synthetic voice can ask for negative pitch): that sentence then keeps the voice as it is
 * (`plain`) rather than failing the dub.
 */
export async function speakSentence(
  synthesizer: SynthesisProvider,
  voice: { providerVoiceId: string; profile: VoiceProfile | null },
  o: {
    text: string;
    language: string;
    apiKey: string | null;
    workDir: string;
    signal: AbortSignal;
    timeoutMs: number;
  },
): Promise<SynthesisResult & { plain: boolean }> {
  const say = (profile: VoiceProfile | null) =>
    speak(
      synthesizer,
      {
        text: o.text,
        providerVoiceId: voice.providerVoiceId,
        // A local voice takes the profile fully; remote voices keep their provider's defaults.
        settings: synthesizer.name === 'local' ? { similarityBoost: 1 } : {},
        profile,
        apiKey: o.apiKey,
        language: o.language,
        workDir: o.workDir,
        signal: o.signal,
      },
      o.timeoutMs,
    );
  try {
    return { ...(await say(voice.profile)), plain: false };
  } catch (err) {
    o.signal.throwIfAborted();
    if (!voice.profile || !(err instanceof PraatError)) throw err;
    return { ...(await say(null)), plain: true };
  }
}

function segmentOf(s: SourceSentence, translatedText: string, plan: DubSegmentPlan): DubSegment {
  return {
    id: s.id,
    startMs: s.startMs,
    endMs: s.endMs,
    speaker: s.speaker,
    sourceText: s.text,
    translatedText,
    dubStartMs: plan.startMs,
    dubEndMs: plan.endMs,
    stretch: Math.round(plan.stretch * 1000) / 1000,
    fits: plan.fits,
    confidence: s.confidence,
  };
}

/** Appends a sentence's timeline, scaled by its stretch and moved to where it is placed. */
function placeTimeline(into: SpeechTimeline, t: SpeechTimeline, atMs: number, scale: number): void {
  const at = (ms: number) => atMs + Math.round(ms * scale);
  const base = into.words.length;
  into.words.push(
    ...t.words.map((w): TimedWord => ({ text: w.text, startMs: at(w.startMs), endMs: at(w.endMs) })),
  );
  // Where the synthesizer could not tell its words apart, a phone belongs to the word it falls in
  // (the words were then spread by length): the mouth reads only phones that have a word.
  const wordAt = (p: TimedPhoneme): number | undefined => {
    if (p.word !== undefined) return p.word;
    if (p.phone === 'sil') return undefined;
    const mid = (p.startMs + p.endMs) / 2;
    const k = t.words.findIndex((w) => mid >= w.startMs && mid < w.endMs);
    return k >= 0 ? k : undefined;
  };
  into.phonemes.push(
    ...t.phonemes.map((p): TimedPhoneme => {
      const w = wordAt(p);
      return {
        phone: p.phone,
        startMs: at(p.startMs),
        endMs: at(p.endMs),
        ...(w !== undefined ? { word: base + w } : {}),
      };
    }),
  );
}

/** The source's words with times: recognized and refined, or the given transcript aligned. */
async function sourceWords(
  wav: string,
  request: DubRequest,
  tools: DubTools,
  dir: string,
  signal: AbortSignal,
): Promise<{ words: RecognizedWord[]; language: string | null }> {
  if (request.transcript)
    return { words: await givenWords(wav, request.transcript, dir, signal), language: null };
  const recognized = await tools.recognizer.transcribe(wav, {
    workDir: dir,
    signal,
    ...(request.sourceLang ? { language: request.sourceLang } : {}),
  });
  if (recognized.words.length === 0) return { words: [], language: recognized.language };
  const refined = await refineWordTimes(wav, recognized.words, { workDir: dir, signal });
  return {
    words: refined.map((w) => ({
      text: w.text,
      startMs: w.startMs,
      endMs: w.endMs,
      ...(w.confidence !== undefined ? { confidence: w.confidence } : {}),
    })),
    // What was heard, where the request left it to the recognizer (sourceLang auto).
    language: recognized.language,
  };
}

/**
 * The client's transcript timed on the source speech. Words that do not fit the speech are the
 * client's to correct (422 naming dubParams.transcript, no retry), not an internal failure.
 */
export async function givenWords(
  wav: string,
  transcript: string,
  dir: string,
  signal: AbortSignal,
): Promise<RecognizedWord[]> {
  try {
    const t = await alignTranscript(wav, transcript, { workDir: dir, signal });
    return asWritten(transcript, t.words);
  } catch (err) {
    if (!(err instanceof AlignmentMismatchError)) throw err;
    throw new AppError('invalid_request', {
      status: 422,
      field: 'dubParams.transcript',
      message: 'dubParams.transcript does not match the speech in the video: give the words as spoken.',
      cause: err,
    });
  }
}

/**
 * The aligned words as the client wrote them: the aligner's words are spelled out and stripped of
 * punctuation, but sentence ends split the dub's sentences and the translator reads punctuation. Each
 * written token takes the span of the words it was spelled into; if they do not add up (the aligner
 * dropped a word), the aligner's words are kept.
 */
export function asWritten(text: string, aligned: readonly TimedWord[]): RecognizedWord[] {
  const tokens = text.split(/\s+/).filter((t) => transcriptWords(t).length > 0);
  const counts = tokens.map((t) => transcriptWords(t).length);
  if (counts.reduce((a, b) => a + b, 0) !== aligned.length)
    return aligned.map((w) => ({ text: w.text, startMs: w.startMs, endMs: w.endMs }));
  let k = 0;
  return tokens.map((token, i) => {
    const first = aligned[k];
    k += counts[i];
    return { text: token, startMs: first.startMs, endMs: aligned[k - 1].endMs };
  });
}

export interface ChosenVoice {
  voice: DubVoice;
  providerVoiceId: string;
  profile: VoiceProfile | null;
}

/**
 * One synthesis within the deadline; provider failures become catalogue errors as in text-to-speech
 * (an outage or a deadline passed: 503/504, retried; a key, quota or voice problem: the client's).
 */
async function speak(
  synthesizer: SynthesisProvider,
  req: SynthesisRequest & { signal: AbortSignal },
  timeoutMs: number,
): Promise<SynthesisResult> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    return await synthesizer.synthesize({ ...req, signal: AbortSignal.any([req.signal, timeout]) });
  } catch (err) {
    // The HTTP providers report our deadline's abort as 'unavailable': a deadline that passed is a timeout.
    const e =
      timeout.aborted && !req.signal.aborted
        ? new SpeechProviderError('timeout', synthesizer.name, 'synthesis took too long')
        : err instanceof SpeechProviderError
          ? err
          : null;
    if (!e) throw err;
    if (e.reason === 'rejected')
      throw new AppError('invalid_request', {
        status: 422,
        field: 'dubParams',
        message: `The ${e.provider} voice provider refused the translated text of a sentence.`,
        cause: e,
      });
    throw speechError(e, (req.apiKey ?? null) !== null, 'dubParams.voiceId');
  }
}

/** A speaker's voice, with the synthesizer and key that speak it. */
export interface SpeakingVoice extends ChosenVoice {
  synthesizer: SynthesisProvider;
  apiKey: string | null;
}

/**
 * Each speaker's voice: the one voice for all (dubParams.voiceId), else the speaker's own
 * (dubParams.voices), else the local voice matched to them. Speakers named but not heard get none.
 */
async function voicesOf(
  given: DubVoiceChoice | null,
  named: Readonly<Record<string, DubVoiceChoice>>,
  o: {
    wav: string;
    sentences: readonly SourceSentence[];
    language: string;
    tools: DubTools;
    dir: string;
    signal: AbortSignal;
  },
): Promise<Map<string, SpeakingVoice>> {
  const out = new Map<string, SpeakingVoice>();
  const add = (chosen: Map<string, ChosenVoice>, choice: DubVoiceChoice | null) => {
    const synthesizer = synthesizerFor(o.tools, choice);
    for (const [k, v] of chosen) out.set(k, { ...v, synthesizer, apiKey: choice?.apiKey ?? null });
  };
  const choices: [string | null, DubVoiceChoice][] = given ? [[null, given]] : Object.entries(named);
  for (const [speaker, choice] of choices) {
    const own = o.sentences.filter((s) => speaker === null || s.speaker === speaker);
    if (own.length) add(await givenVoice(choice, own, o.language, o.tools.synthesizer, o.signal), choice);
  }
  const rest = o.sentences.filter((s) => !out.has(s.speaker));
  if (rest.length)
    add(await chooseVoices(o.wav, rest, o.language, o.tools.synthesizer, o.dir, o.signal), null);
  return out;
}

/**
 * The client's voice for every speaker. A local clone keeps its profile on a local voice of the
 * target language (the installed one nearest its pitch) where its own base voice speaks another.
 */
export async function givenVoice(
  given: DubVoiceChoice,
  sentences: readonly { speaker: string }[],
  language: string,
  local: SynthesisProvider,
  signal: AbortSignal,
): Promise<Map<string, ChosenVoice>> {
  let providerVoiceId = given.providerVoiceId;
  let profile = given.profile;
  if (given.provider === 'local' && profile) {
    const candidates = (await local.listVoices({ signal })).filter((v) => voiceSpeaks(v.labels, language));
    if (!candidates.some((c) => c.providerVoiceId === providerVoiceId)) {
      if (candidates.length === 0)
        throw new AppError('dubbing_voice_unavailable', {
          field: 'dubParams.voiceId',
          message: `No local voice for ${language} is installed where this dub runs.`,
        });
      providerVoiceId = nearestVoice(candidates, profile.pitchMedianHz, new Map()).providerVoiceId;
      profile = { ...profile, baseVoice: providerVoiceId };
    }
  }
  const chosen = new Map<string, ChosenVoice>();
  for (const s of sentences)
    if (!chosen.has(s.speaker))
      chosen.set(s.speaker, {
        voice: {
          speaker: s.speaker,
          provider: given.provider,
          voiceId: given.voiceId,
          name: given.name,
          matched: profile !== null,
        },
        providerVoiceId,
        profile,
      });
  return chosen;
}

/**
 * A target-language voice per speaker: the installed voice nearest the speaker's pitch (a voice
 * already taken counts as four semitones further, so two speakers get two voices where the language
 * has them), with the speaker's measured pitch and timbre applied on top. A speaker too short to
 * measure keeps the voice as it is.
 */
async function chooseVoices(
  wav: string,
  sentences: readonly SourceSentence[],
  language: string,
  synthesizer: SynthesisProvider,
  dir: string,
  signal: AbortSignal,
): Promise<Map<string, ChosenVoice>> {
  const all = await synthesizer.listVoices({ signal });
  const candidates = all.filter((v) => voiceSpeaks(v.labels, language));
  if (candidates.length === 0)
    throw new AppError('dubbing_voice_unavailable', {
      field: 'dubParams.targetLang',
      message: `No voice for ${language} is installed on this server.`,
    });
  // Speakers by how much they say: the main speaker chooses first.
  const talk = new Map<string, { ms: number; spans: [number, number][] }>();
  for (const s of sentences) {
    const t = talk.get(s.speaker) ?? { ms: 0, spans: [] };
    t.ms += s.endMs - s.startMs;
    t.spans.push([s.startMs, s.endMs]);
    talk.set(s.speaker, t);
  }
  const order = [...talk.entries()].sort((a, b) => b[1].ms - a[1].ms);
  // Pico speaks only when chosen: its slower delivery fit fewer translated sentences into their
  // source spans than the MBROLA voices (docs/dubbing-voices.md).
  const matchable = candidates.filter((v) => v.labels?.engine !== 'pico');
  const pool = matchable.length > 0 ? matchable : candidates;
  const used = new Map<string, number>();
  const chosen = new Map<string, ChosenVoice>();
  for (const [speaker, t] of order) {
    const sample = join(dir, `speaker-${chosen.size + 1}.wav`);
    await cutSpans(wav, t.spans, sample, signal);
    const m = await measureVoiceProfile(sample, { workDir: dir, signal });
    const pitch = m.voicedSeconds >= 1 ? m.profile.pitchMedianHz : 0;
    const voice = nearestVoice(pool, pitch, used);
    used.set(voice.providerVoiceId, (used.get(voice.providerVoiceId) ?? 0) + 1);
    chosen.set(speaker, {
      voice: {
        speaker,
        provider: synthesizer.name,
        voiceId: voice.providerVoiceId,
        name: voice.name,
        matched: pitch > 0,
      },
      providerVoiceId: voice.providerVoiceId,
      profile: pitch > 0 ? { ...m.profile, baseVoice: voice.providerVoiceId } : null,
    });
  }
  return chosen;
}

function nearestVoice(
  candidates: readonly ProviderVoice[],
  pitchHz: number,
  used: ReadonlyMap<string, number>,
): ProviderVoice {
  let best = candidates[0];
  let bestCost = Infinity;
  for (const c of candidates) {
    const nominal = NOMINAL_PITCH_HZ[c.labels?.gender ?? ''] ?? 150;
    const distance = pitchHz > 0 ? Math.abs(semitones(nominal, pitchHz)) : 0;
    const cost = distance + 4 * (used.get(c.providerVoiceId) ?? 0);
    if (cost < bestCost) [best, bestCost] = [c, cost];
  }
  return best;
}

/** The spans of a 16 kHz WAV joined into one file, at most PROFILE_SAMPLE_MS of them. */
async function cutSpans(
  wav: string,
  spans: readonly [number, number][],
  out: string,
  signal: AbortSignal,
): Promise<void> {
  const picked: [number, number][] = [];
  let total = 0;
  for (const [a, b] of spans) {
    if (total >= PROFILE_SAMPLE_MS) break;
    const end = Math.min(b, a + PROFILE_SAMPLE_MS - total);
    picked.push([a, end]);
    total += end - a;
  }
  const select = picked
    .map(([a, b]) => `between(t,${(a / 1000).toFixed(3)},${(b / 1000).toFixed(3)})`)
    .join('+');
  await runFfmpeg(
    ['-i', wav, '-af', `aselect='${select}',asetpts=N/SR/TB`, '-ac', '1', '-c:a', 'pcm_s16le', out],
    { signal },
  );
  await readWavInfo(out);
}
