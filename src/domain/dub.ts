// Dubbing's pure rules (docs/dubbing.md): what `dubParams` may say, how a transcript becomes the
// segments a dub translates and places, what a completed dub stores (its public transcript), and its
// subtitles. No I/O.
import { AppError } from './errors.js';
import { TRANSLATION_PROVIDERS, type TranslationProviderName } from './dubbing-languages.js';
import type { ProviderName } from './tts.js';

/** The longest known source transcript a dub may be given, characters. */
export const MAX_DUB_TRANSCRIPT_CHARS = 20_000;

/** `dubParams` after validation. */
export interface DubRequest {
  /** Lower-case language code the speech is dubbed into. */
  targetLang: string;
  /** Lower-case language code of the source speech; null: auto (English for the local recognizer). */
  sourceLang: string | null;
  /** The translation provider. */
  provider: TranslationProviderName;
  /**
   * Extension: a voice of GET /v2/voices for every speaker (its provider speaks the translation);
   * null: each speaker gets the closest local voice of the target language, matched to them.
   */
  voiceId: string | null;
  /**
   * Extension: a voice of GET /v2/voices per speaker label of the dub's transcript (`speaker_1`…);
   * speakers not named get the matched voice. A re-dub holds the earlier dub's with its changes.
   */
  voices?: Readonly<Record<string, string>> | null;
  /**
   * Set at submit, never by the client: the provider voiceId was found at and the voice's name (the
   * claim then asks that provider only).
   */
  chosenVoice?: { provider: ProviderName; name: string };
  /** Set at submit, as chosenVoice, for each of `voices`. */
  chosenVoices?: Readonly<Record<string, { provider: ProviderName; name: string }>>;
  /** Extension: the words spoken in the source, when known (recognition then only times them). */
  transcript: string | null;
  /**
   * A re-dub (docs/dubbing.md, "Re-dubbing segments"): an earlier completed dub of the organization
   * with some segments corrected; the rest of its dub is reused. Languages, provider and voice are
   * then the earlier dub's (filled in at submit).
   */
  basedOn?: RedubRequest | null;
}

/** The longest corrected translation of one segment, characters. */
export const MAX_SEGMENT_TEXT_CHARS = 2_000;
/** The most segments one re-dub may correct. */
export const MAX_REDUB_EDITS = 200;
/**
 * A dub keeps each segment's fitted audio (for re-dubs and listening) up to this many segments; a
 * longer dub keeps none (a remote worker's outputs per attempt are bounded by it).
 */
export const MAX_KEPT_SEGMENT_CLIPS = 400;

/** One segment's correction (`dubParams.segments[]`). */
export interface DubSegmentEdit {
  id: string;
  /** The new translation; absent: the segment's translation is spoken again (a timing correction). */
  translatedText?: string;
  /** A new source span: the room the dubbed speech is fitted to, and where the original is lowered. */
  startMs?: number;
  endMs?: number;
}

export interface RedubRequest {
  /** The earlier dub's generation id. */
  generationId: string;
  segments: DubSegmentEdit[];
  /** Speakers given another voice (at submit: only those whose voice changes); their segments are spoken anew. */
  voices?: Readonly<Record<string, string>>;
}

/** The most speakers `dubParams.voices` may name. */
export const MAX_DUB_VOICES = 32;
const SPEAKER = /^[\p{L}\p{N}_.-]{1,100}$/u;

/** `dubParams.voices`: speaker label -> voice id; null when absent. */
function speakerVoices(raw: unknown): Record<string, string> | null {
  if (raw === undefined || raw === null) return null;
  const f = 'dubParams.voices';
  if (typeof raw !== 'object' || Array.isArray(raw))
    bad(f, `${f} must be an object {"<speaker>": "<voiceId>"} (speakers as the dub's transcript names them)`);
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length === 0 || entries.length > MAX_DUB_VOICES)
    bad(f, `${f} must name 1 to ${MAX_DUB_VOICES} speakers`);
  const out: Record<string, string> = {};
  for (const [speaker, id] of entries) {
    // A name every object has (__proto__, constructor) would not be stored as a key of its own.
    if (!SPEAKER.test(speaker) || speaker in Object.prototype)
      bad(f, `${f}: ${JSON.stringify(speaker.slice(0, 100))} is not a speaker label`);
    if (typeof id !== 'string' || id.trim() === '' || id.length > 200)
      bad(`${f}.${speaker}`, `${f}.${speaker} must be the id of a voice (GET /v2/voices)`);
    out[speaker] = id.trim();
  }
  return out;
}

function bad(field: string, message: string): never {
  throw new AppError('invalid_request', { field, message });
}

const LANG = /^[a-z]{2,3}(-[a-z0-9]{2,8})?$/i;

/** `dubParams` as sent: shapes and meanings checked; the language pair is the service's to check. */
export function normaliseDubParams(raw: unknown): DubRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    bad('dubParams', 'dubParams must be an object {targetLang, sourceLang?, provider?}');
  const p = raw as Record<string, unknown>;
  const known = new Set([
    'targetLang',
    'sourceLang',
    'numSpeakers',
    'provider',
    'voiceId',
    'voices',
    'transcript',
    'basedOn',
    'segments',
  ]);
  for (const k of Object.keys(p))
    if (!known.has(k))
      bad(`dubParams.${k}`, `dubParams.${k} is not a dubbing parameter (${[...known].join(', ')})`);
  if (p.basedOn !== undefined && p.basedOn !== null) return redubParams(p);
  if (p.segments !== undefined && p.segments !== null)
    bad('dubParams.segments', 'dubParams.segments corrects an earlier dub: give dubParams.basedOn too');
  const target = p.targetLang;
  if (typeof target !== 'string' || !LANG.test(target.trim()))
    bad('dubParams.targetLang', 'dubParams.targetLang must be a language code such as "es"');
  let source: string | null = null;
  if (p.sourceLang !== undefined && p.sourceLang !== null) {
    if (typeof p.sourceLang !== 'string')
      bad('dubParams.sourceLang', 'dubParams.sourceLang must be a string');
    const s = p.sourceLang.trim().toLowerCase();
    if (s !== 'auto' && !LANG.test(s))
      bad('dubParams.sourceLang', 'dubParams.sourceLang must be "auto" or a language code such as "en"');
    source = s === 'auto' ? null : s;
  }
  // Deprecated and ignored (speakers are told apart by voice), but still a number when sent.
  if (p.numSpeakers !== undefined && p.numSpeakers !== null) {
    const n = p.numSpeakers;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 32)
      bad('dubParams.numSpeakers', 'dubParams.numSpeakers must be an integer from 0 to 32 (it is ignored)');
  }
  let provider: TranslationProviderName = 'local';
  if (p.provider !== undefined && p.provider !== null) {
    const name = typeof p.provider === 'string' ? p.provider.trim().toLowerCase() : '';
    if (!(TRANSLATION_PROVIDERS as readonly string[]).includes(name))
      throw new AppError('dubbing_language_unsupported', {
        field: 'dubParams.provider',
        message: `dubParams.provider must be one of ${TRANSLATION_PROVIDERS.join(', ')}.`,
        details: { supported: { providers: [...TRANSLATION_PROVIDERS] } },
      });
    provider = name as TranslationProviderName;
  }
  let voiceId: string | null = null;
  if (p.voiceId !== undefined && p.voiceId !== null) {
    if (typeof p.voiceId !== 'string' || p.voiceId.trim() === '' || p.voiceId.length > 200)
      bad('dubParams.voiceId', 'dubParams.voiceId must be the id of a voice (GET /v2/voices)');
    voiceId = p.voiceId.trim();
  }
  const voices = speakerVoices(p.voices);
  if (voices && voiceId)
    bad(
      'dubParams.voices',
      'give dubParams.voiceId (one voice for all) or dubParams.voices (per speaker), not both',
    );
  let transcript: string | null = null;
  if (p.transcript !== undefined && p.transcript !== null) {
    if (typeof p.transcript !== 'string')
      bad('dubParams.transcript', 'dubParams.transcript must be a string');
    const t = p.transcript.trim();
    if (t.length > MAX_DUB_TRANSCRIPT_CHARS)
      bad(
        'dubParams.transcript',
        `dubParams.transcript is longer than ${MAX_DUB_TRANSCRIPT_CHARS} characters`,
      );
    if (!/[\p{L}\p{N}]/u.test(t)) bad('dubParams.transcript', 'dubParams.transcript holds no words');
    transcript = t;
  }
  return {
    targetLang: target.trim().toLowerCase(),
    sourceLang: source,
    provider,
    voiceId,
    ...(voices ? { voices } : {}),
    transcript,
  };
}

/**
 * A re-dub's parameters: the earlier dub and the corrections. What the earlier dub decided (languages,
 * provider, voice, transcript) is kept, so only `targetLang` may be repeated (checked against it).
 */
function redubParams(p: Record<string, unknown>): DubRequest {
  for (const k of Object.keys(p))
    if (!['basedOn', 'segments', 'voices', 'targetLang'].includes(k) && p[k] !== undefined && p[k] !== null)
      bad(`dubParams.${k}`, `dubParams.${k} cannot be changed by a re-dub: the earlier dub's is kept`);
  if (typeof p.basedOn !== 'string' || p.basedOn.trim() === '' || p.basedOn.length > 100)
    bad('dubParams.basedOn', 'dubParams.basedOn must be the id of a completed dubbed generation');
  let target = '';
  if (p.targetLang !== undefined && p.targetLang !== null) {
    if (typeof p.targetLang !== 'string' || !LANG.test(p.targetLang.trim()))
      bad('dubParams.targetLang', 'dubParams.targetLang must be a language code such as "es"');
    target = p.targetLang.trim().toLowerCase();
  }
  const voices = speakerVoices(p.voices);
  // A voice change alone re-speaks that speaker's segments: corrections are then optional.
  const segments =
    voices && (p.segments === undefined || p.segments === null) ? [] : segmentEdits(p.segments);
  return {
    // Empty until the earlier dub is read at submit (its language then, or a refusal).
    targetLang: target,
    sourceLang: null,
    provider: 'local',
    voiceId: null,
    transcript: null,
    basedOn: { generationId: p.basedOn.trim(), segments, ...(voices ? { voices } : {}) },
  };
}

const EDIT_KEYS = ['id', 'translatedText', 'startMs', 'endMs'];

/** `dubParams.segments`: one correction per segment id, each changing its text, its span or both. */
function segmentEdits(raw: unknown): DubSegmentEdit[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_REDUB_EDITS)
    bad(
      'dubParams.segments',
      `dubParams.segments must list 1 to ${MAX_REDUB_EDITS} segment corrections {id, translatedText?, startMs?, endMs?} (or give dubParams.voices)`,
    );
  const seen = new Set<string>();
  return raw.map((item: unknown, i): DubSegmentEdit => {
    const f = `dubParams.segments[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      bad(f, `${f} must be an object {id, translatedText?, startMs?, endMs?}`);
    const e = item as Record<string, unknown>;
    for (const k of Object.keys(e))
      if (!EDIT_KEYS.includes(k))
        bad(`${f}.${k}`, `${f}.${k} is not a segment field (${EDIT_KEYS.join(', ')})`);
    if (typeof e.id !== 'string' || e.id.trim() === '' || e.id.length > 100)
      bad(`${f}.id`, `${f}.id must be a segment id of the earlier dub's transcript`);
    const id = e.id.trim();
    if (seen.has(id)) bad(`${f}.id`, `segment ${id} is corrected twice`);
    seen.add(id);
    const out: DubSegmentEdit = { id };
    if (e.translatedText !== undefined && e.translatedText !== null) {
      const t = typeof e.translatedText === 'string' ? e.translatedText.trim() : '';
      if (!/[\p{L}\p{N}]/u.test(t)) bad(`${f}.translatedText`, `${f}.translatedText holds no words`);
      if (t.length > MAX_SEGMENT_TEXT_CHARS)
        bad(`${f}.translatedText`, `${f}.translatedText is longer than ${MAX_SEGMENT_TEXT_CHARS} characters`);
      out.translatedText = t;
    }
    const hasStart = e.startMs !== undefined && e.startMs !== null;
    const hasEnd = e.endMs !== undefined && e.endMs !== null;
    if (hasStart !== hasEnd)
      bad(`${f}.${hasStart ? 'endMs' : 'startMs'}`, `${f}: give startMs and endMs together`);
    if (hasStart) {
      const ms = (k: 'startMs' | 'endMs'): number => {
        const v = e[k];
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 86_400_000)
          bad(`${f}.${k}`, `${f}.${k} must be milliseconds from the start of the video`);
        return Math.round(v);
      };
      out.startMs = ms('startMs');
      out.endMs = ms('endMs');
      if (out.endMs <= out.startMs) bad(`${f}.endMs`, `${f}.endMs must be after startMs`);
    }
    if (out.translatedText === undefined && out.startMs === undefined)
      bad(f, `${f} changes nothing: give translatedText, or startMs and endMs`);
    return out;
  });
}

/**
 * The source language a dub reports (its transcript, the source subtitles' file name): the one asked
 * for, else the one the recognizer heard (a recognition server detects it; only a code counts, not a
 * provider's own name for it), else English (what the local recognizer hears).
 */
export function dubSourceLang(asked: string | null, detected: string | null): string {
  if (asked) return asked;
  const heard = detected?.trim().toLowerCase() ?? '';
  return LANG.test(heard) ? heard : 'en';
}

/**
 * Whether a voice speaks a language, by its labels (`languages`: a comma-separated list, else
 * `language`): the code itself, or a regional form of it (`pt-BR` speaks `pt`).
 */
export function voiceSpeaks(labels: Readonly<Record<string, string>> | undefined, language: string): boolean {
  const lang = language.toLowerCase();
  return (labels?.languages ?? labels?.language ?? '')
    .split(',')
    .map((l) => l.trim().toLowerCase())
    .some((l) => l === lang || l.split('-')[0] === lang);
}

/** A word of the source transcript, times in ms of the source. */
export interface SourceWord {
  text: string;
  startMs: number;
  endMs: number;
  speaker: string | null;
  confidence?: number;
}

/** A stretch of one speaker's speech that is translated and placed as one sentence. */
export interface SourceSentence {
  id: string;
  startMs: number;
  endMs: number;
  speaker: string;
  text: string;
  /** Mean word confidence where the recognizer gave one; null otherwise (a given transcript). */
  confidence: number | null;
}

/**
 * The transcript's segments (already split at pauses and sentence ends) split again wherever the
 * speaker changes: a sentence is always one person's, so that it gets one voice.
 */
export function sentencesOf(segments: readonly (readonly SourceWord[])[]): SourceSentence[] {
  const out: SourceSentence[] = [];
  const push = (words: SourceWord[]) => {
    if (words.length === 0) return;
    const conf = words.filter((w) => typeof w.confidence === 'number').map((w) => w.confidence as number);
    out.push({
      id: `s${out.length + 1}`,
      startMs: words[0].startMs,
      endMs: Math.max(...words.map((w) => w.endMs)),
      speaker: words[0].speaker ?? 'speaker_1',
      text: words.map((w) => w.text).join(' '),
      confidence: conf.length
        ? Math.round((conf.reduce((a, b) => a + b, 0) / conf.length) * 1000) / 1000
        : null,
    });
  };
  for (const seg of segments) {
    let run: SourceWord[] = [];
    for (const w of seg) {
      if (run.length > 0 && (w.speaker ?? 'speaker_1') !== (run[0].speaker ?? 'speaker_1')) {
        push(run);
        run = [];
      }
      run.push(w);
    }
    push(run);
  }
  return out;
}

/** A dubbed segment as the transcript endpoint shows it. Times in ms of the output. */
export interface DubSegment {
  id: string;
  /** The source speech span. */
  startMs: number;
  endMs: number;
  speaker: string;
  sourceText: string;
  translatedText: string;
  /** Where the dubbed speech sits (starts with the source; may run into the pause after). */
  dubStartMs: number;
  dubEndMs: number;
  /** Output length / synthesized length of the translated speech (1: untouched). */
  stretch: number;
  /** The dubbed speech ends before the next segment starts. */
  fits: boolean;
  /** Mean recognition confidence of the source words (null when the transcript was given). */
  confidence: number | null;
}

/** One speaker's target-language voice. */
export interface DubVoice {
  speaker: string;
  provider: string;
  voiceId: string;
  name: string;
  /** Pitch and timbre moved toward the speaker's own (local voices). */
  matched: boolean;
}

/** What a completed dub stores on its generation (generations.dub) and GET …/transcript returns. */
export interface DubRecord {
  sourceLang: string;
  targetLang: string;
  provider: TranslationProviderName;
  /** Local routes: direct, or a pivot (through Spanish) of lower quality. */
  route: { via: string | null; quality: string } | null;
  /** Where the source words came from. */
  transcriptSource: 'recognized' | 'given';
  voices: DubVoice[];
  segments: DubSegment[];
  /** A re-dub: the dub it was made from, and the ids of the segments spoken anew (the rest reused). */
  basedOn?: { generationId: string; regenerated: string[] };
  /** What a re-dub reuses (server-side only: never in the transcript). */
  kept?: DubKept;
  /**
   * The dubbed speech's words and phones (lower-case ARPAbet-like mouth classes, `sil` for pauses) in
   * ms of the output: the synthesizer's own times, which shape the mouth.
   */
  timeline?: {
    words: { text: string; startMs: number; endMs: number }[];
    phonemes: { phone: string; startMs: number; endMs: number; word?: number }[];
  };
}

/** A voice profile as the local synthesizer applies it (src/speech/types.ts VoiceProfile). */
export interface DubVoiceProfile {
  pitchMedianHz: number;
  pitchQ10Hz: number;
  pitchQ90Hz: number;
  formantsHz: [number, number, number];
  ltasDb: number[];
  ltasBandsHz: number[];
  baseVoice: string;
}

/** One segment's fitted audio as stored, and its words and phones in the record's timeline. */
export interface KeptClip {
  id: string;
  /** Storage key of its fitted WAV (an output of the generation's job: deleted with it). */
  key: string;
  /** [from, to) indexes into timeline.words and timeline.phonemes. */
  words: [number, number];
  phonemes: [number, number];
}

/** What a re-dub of this dub reuses: each segment's fitted audio, and each speaker's voice. */
export interface DubKept {
  clips: KeptClip[];
  /** The provider voice each speaker spoke with, and the profile applied (null: the voice as it is). */
  speakers: { speaker: string; providerVoiceId: string; profile: DubVoiceProfile | null }[];
}

/** The transcript as clients see it: without what only a re-dub reads. */
export function publicDub(d: DubRecord): Omit<DubRecord, 'kept'> {
  const { kept: _kept, ...rest } = d;
  return rest;
}

/** The dub's figures for the quality report and the webhook. */
export function dubSummary(d: DubRecord): Record<string, unknown> {
  const stretched = d.segments.filter((s) => s.stretch !== 1);
  const conf = d.segments.map((s) => s.confidence).filter((c): c is number => c !== null);
  return {
    sourceLang: d.sourceLang,
    targetLang: d.targetLang,
    provider: d.provider,
    route: d.route,
    transcriptSource: d.transcriptSource,
    speakers: d.voices.length,
    voices: d.voices,
    segments: d.segments.length,
    ...(d.basedOn ? { basedOn: d.basedOn.generationId, regenerated: d.basedOn.regenerated } : {}),
    segmentsFitting: d.segments.filter((s) => s.fits).length,
    segmentsStretched: stretched.length,
    stretchMin: d.segments.length ? Math.min(...d.segments.map((s) => s.stretch)) : 1,
    stretchMax: d.segments.length ? Math.max(...d.segments.map((s) => s.stretch)) : 1,
    meanConfidence: conf.length
      ? Math.round((conf.reduce((a, b) => a + b, 0) / conf.length) * 1000) / 1000
      : null,
  };
}

export type SubtitleFormat = 'srt' | 'vtt';
export type SubtitleLanguage = 'source' | 'target';

function stamp(ms: number, sep: ',' | '.'): string {
  const t = Math.max(0, Math.round(ms));
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor((t % 3_600_000) / 60_000);
  const s = Math.floor((t % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(t % 1000, 3)}`;
}

/** Lines of at most `width` characters, broken at spaces (a longer word keeps its own line). */
export function wrapCaption(text: string, width = 42): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * Subtitles of a dub: the source text on the source spans, or the translation on the spans where the
 * dubbed speech is heard. Cues never overlap (a cue ends where the next begins at the latest).
 */
export function renderSubtitles(d: DubRecord, format: SubtitleFormat, lang: SubtitleLanguage): string {
  const sep = format === 'srt' ? ',' : '.';
  const cues = d.segments
    .map((s) => ({
      start: lang === 'source' ? s.startMs : s.dubStartMs,
      end: lang === 'source' ? s.endMs : s.dubEndMs,
      text: (lang === 'source' ? s.sourceText : s.translatedText).replace(/-->/g, '->'),
    }))
    .filter((c) => c.text.trim() !== '' && c.end > c.start)
    .sort((a, b) => a.start - b.start);
  const blocks = cues.map((c, i) => {
    const end = i + 1 < cues.length ? Math.min(c.end, cues[i + 1].start) : c.end;
    const time = `${stamp(c.start, sep)} --> ${stamp(Math.max(end, c.start + 1), sep)}`;
    // WebVTT reads `<` as a tag and `&` as a character reference: a translation's own are escaped.
    const lines = wrapCaption(c.text).map((l) =>
      format === 'vtt' ? l.replace(/&/g, '&amp;').replace(/</g, '&lt;') : l,
    );
    const body = lines.join('\n');
    return format === 'srt' ? `${i + 1}\n${time}\n${body}\n` : `${time}\n${body}\n`;
  });
  return (format === 'vtt' ? 'WEBVTT\n\n' : '') + blocks.join('\n');
}
