// The re-dub stage (docs/dubbing.md, "Re-dubbing segments"; ADR 24): an earlier dub with some
// segments corrected. No recognition, speakers, translation or voice choice: the corrected segments
// are spoken again by their speaker's stored voice and profile and fitted again; every other
// segment's fitted audio is the earlier dub's stored file, byte for byte, where it was. Then the mix,
// as in a dub. Like dubSpeech it sees no database (the earlier dub comes with the job's input).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { appendKeptTimeline, checkEdits, replanRedub, respoken, type RedubBase } from '../domain/redub.js';
import type { DubRequest, DubVoice } from '../domain/dub.js';
import { mixDub } from '../media/dub-mix.js';
import type { SpeechTimeline } from '../speech/types.js';
import {
  fitSpoken,
  givenVoice,
  speakSentence,
  synthesizerFor,
  timed,
  type DubOutput,
  type DubTools,
  type DubVoiceChoice,
  type SpeakingVoice,
  type SpokenSentence,
  type StageClip,
} from './dub.js';

export interface RedubInput {
  /** The video (the earlier dub's), with its soundtrack. */
  sourcePath: string;
  durationMs: number;
  request: DubRequest;
  /** The earlier dub, read when the job was claimed. */
  base: RedubBase;
  /** The dub's chosen voice (the earlier dub's), resolved at claim time; null: local voices. */
  voice: DubVoiceChoice | null;
  /** The earlier dub's per-speaker voices with the changes (basedOn.voices), resolved at claim time. */
  voices?: Readonly<Record<string, DubVoiceChoice>>;
  /** Copies a stored file of the earlier dub (a segment's fitted WAV) to a local path. */
  fetch(key: string, path: string): Promise<void>;
  workDir: string;
  signal: AbortSignal;
  onProgress(fraction: number): void;
}

export async function redubSpeech(input: RedubInput, tools: DubTools): Promise<DubOutput> {
  const { base, signal } = input;
  const ask = input.request.basedOn;
  if (!ask) throw new Error('redubSpeech needs dubParams.basedOn');
  const times: Record<string, number> = {};
  // Checked again against the record read at claim time: that is the one reused. A speaker given
  // another voice has all their segments spoken again.
  const revoiced = Object.keys(ask.voices ?? {});
  const edits = respoken(base, checkEdits(base, ask.segments, input.durationMs), revoiced);
  const dir = join(input.workDir, 'dub');
  await mkdir(dir, { recursive: true });
  const { voices, newVoices } = await redubVoices(input, tools, revoiced);

  const spoken = new Map<string, SpokenSentence>();
  const plain: string[] = [];
  for (const [i, s] of base.segments.entries()) {
    const e = edits.get(s.id);
    if (!e) continue;
    signal.throwIfAborted();
    const voice = voices(s.speaker);
    const sdir = join(dir, `sentence-${i + 1}`);
    await mkdir(sdir, { recursive: true });
    const r = await timed(times, 'synthesis', () =>
      speakSentence(voice.synthesizer, voice, {
        text: e.translatedText ?? s.translatedText,
        language: base.targetLang,
        apiKey: voice.apiKey,
        workDir: sdir,
        signal,
        timeoutMs: tools.synthesisTimeoutMs,
      }),
    );
    if (r.plain) plain.push(s.id);
    spoken.set(s.id, { path: r.audioPath, durationMs: r.durationMs, timeline: r.timeline });
    input.onProgress((0.6 * spoken.size) / edits.size);
  }

  const speechMs = new Map([...spoken].map(([id, r]) => [id, r.durationMs]));
  const { segments, plans } = replanRedub(base, edits, speechMs, input.durationMs);
  const timeline: SpeechTimeline = { words: [], phonemes: [] };
  const clips: StageClip[] = [];
  for (const [i, s] of segments.entries()) {
    const path = join(dir, `sentence-${i + 1}`, 'fitted.wav');
    await mkdir(join(dir, `sentence-${i + 1}`), { recursive: true });
    const [w0, p0] = [timeline.words.length, timeline.phonemes.length];
    const again = spoken.get(s.id);
    if (again) await timed(times, 'timing', () => fitSpoken(again, plans[i], path, timeline, signal));
    else {
      const k = base.kept.clips[i];
      if (k.id !== s.id) throw new Error(`the earlier dub's clip ${i} is ${k.id}, not ${s.id}`);
      await input.fetch(k.key, path);
      appendKeptTimeline(timeline, base.timeline, k);
    }
    clips.push({
      id: s.id,
      path,
      words: [w0, timeline.words.length],
      phonemes: [p0, timeline.phonemes.length],
    });
  }
  input.onProgress(0.8);

  const audioPath = join(dir, 'dub.wav');
  await timed(times, 'mix', () =>
    mixDub(
      {
        sourcePath: input.sourcePath,
        speechSpans: segments.map((s) => ({ startMs: s.startMs, endMs: s.endMs })),
        clips: clips.map((c, i) => ({ path: c.path, startMs: plans[i].startMs })),
        outPath: audioPath,
        minDurationMs: input.durationMs,
      },
      { workDir: dir, signal },
    ),
  );
  input.onProgress(1);

  return {
    audioPath,
    timeline,
    stageSeconds: times,
    notes: [
      `re-dub of ${ask.generationId}: ${edits.size} of ${segments.length} segment(s) spoken again`,
      ...(revoiced.length ? [`another voice for ${revoiced.join(', ')}`] : []),
      ...(plain.length
        ? [`${plain.length} sentence(s) kept the plain voice: its pitch could not be moved to the speaker's`]
        : []),
    ],
    clips,
    speakers: base.kept.speakers.map((k) => {
      const v = newVoices.get(k.speaker);
      return v ? { speaker: k.speaker, providerVoiceId: v.providerVoiceId, profile: v.profile } : k;
    }),
    record: {
      sourceLang: base.sourceLang,
      targetLang: base.targetLang,
      provider: base.provider,
      route: base.route,
      transcriptSource: base.transcriptSource,
      voices: base.voices.map((v): DubVoice => newVoices.get(v.speaker)?.voice ?? v),
      segments,
      basedOn: {
        generationId: ask.generationId,
        regenerated: segments.filter((s) => edits.has(s.id)).map((s) => s.id),
      },
      timeline,
    },
  };
}

/**
 * Who speaks a re-spoken segment: a speaker given another voice speaks with it (a local clone's
 * profile on a local voice of the language, as in a dub); every other speaker with the voice and
 * profile the earlier dub kept, through the synthesizer of the voice they were given (theirs, the
 * one for all, else the local one).
 */
async function redubVoices(
  input: RedubInput,
  tools: DubTools,
  revoiced: readonly string[],
): Promise<{ voices: (speaker: string) => SpeakingVoice; newVoices: Map<string, SpeakingVoice> }> {
  const newVoices = new Map<string, SpeakingVoice>();
  for (const speaker of revoiced) {
    const choice = input.voices?.[speaker];
    if (!choice) throw new Error(`no voice was resolved for ${speaker}`);
    const [v] = (
      await givenVoice(choice, [{ speaker }], input.base.targetLang, tools.synthesizer, input.signal)
    ).values();
    newVoices.set(speaker, { ...v, synthesizer: synthesizerFor(tools, choice), apiKey: choice.apiKey });
  }
  const kept = new Map(input.base.kept.speakers.map((v) => [v.speaker, v]));
  const voices = (speaker: string): SpeakingVoice => {
    const fresh = newVoices.get(speaker);
    if (fresh) return fresh;
    const k = kept.get(speaker);
    const shown = input.base.voices.find((v) => v.speaker === speaker);
    if (!k || !shown) throw new Error(`the earlier dub kept no voice for ${speaker}`);
    const choice = input.voices?.[speaker] ?? input.voice;
    return {
      voice: shown,
      providerVoiceId: k.providerVoiceId,
      profile: k.profile,
      synthesizer: synthesizerFor(tools, choice),
      apiKey: choice?.apiKey ?? null,
    };
  };
  return { voices, newVoices };
}
