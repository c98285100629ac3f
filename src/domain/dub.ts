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
   * Set at submit, never by the client: the provider voiceId was found at and the voice's name (the
   * claim then asks that provider only).
   */
  chosenVoice?: { provider: ProviderName; name: string };
  /** Extension: the words spoken in the source, when known (recognition then only times them). */
  transcript: string | null;
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
  const known = new Set(['targetLang', 'sourceLang', 'numSpeakers', 'provider', 'voiceId', 'transcript']);
  for (const k of Object.keys(p))
    if (!known.has(k))
      bad(`dubParams.${k}`, `dubParams.${k} is not a dubbing parameter (${[...known].join(', ')})`);
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
    transcript,
  };
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
  /**
   * The dubbed speech's words and phones (lower-case ARPAbet-like mouth classes, `sil` for pauses) in
   * ms of the output: the synthesizer's own times, which shape the mouth.
   */
  timeline?: {
    words: { text: string; startMs: number; endMs: number }[];
    phonemes: { phone: string; startMs: number; endMs: number; word?: number }[];
  };
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
