// The `transcription` job kind: the source's audio (its window) -> recognized words -> times refined by
// forced alignment -> the public transcript with a speaker per word. Failures a retry cannot fix are
// the documented job codes: NO_AUDIO_TRACK (a video without sound), SOURCE_TOO_LONG (over
// maxSourceSeconds), NO_AUDIO (nothing audible in the window). A hand correction (payload version 2)
// reopens the same job: the corrected words are re-timed by forced alignment, making the next revision.
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/index.js';
import type { Transcript } from '../store/transcriptions.js';
import { AppError } from '../domain/errors.js';
import {
  TRANSCRIPTION_CORRECTION_VERSION,
  transcriptionStatusOf,
  transcriptionWindowEnd,
  type WordCorrection,
} from '../domain/transcriptions.js';
import { JOB_CANCELED, JOB_TIMED_OUT } from '../domain/jobs.js';
import { makeTempDir, removeTempDir } from '../media/tempdir.js';
import { probeMedia } from '../media/probe.js';
import { runFfmpeg } from '../media/ffmpeg.js';
import { SpeechProviderError } from '../speech/types.js';
import { readWavInfo } from '../speech/local-wav.js';
import type { RecognitionProvider } from '../speech/recognition/types.js';
import { refineWordTimes } from '../speech/recognition/refine.js';
import { applySpeakers, buildTranscript, estimateSpeakers } from '../speech/recognition/transcript.js';
import { realignCorrected } from '../speech/recognition/correct.js';
import { JobFailure, type JobError, type JobHandler, type SettledResource } from '../jobs/handler.js';

import { TRANSCRIPTION_KIND } from '../domain/job-kinds.js';

export interface TranscriptionPayload {
  readonly transcriptionId: string;
  /** Version 2: words corrected by hand in `revision`. */
  readonly correction?: { readonly revision: number; readonly words: WordCorrection[] };
}

export interface TranscriptionRunInput {
  readonly transcriptionId: string;
  readonly sourceKey: string;
  readonly startMs: number;
  readonly endMs: number | null;
  readonly maxSourceSeconds: number | null;
  /** A correction: the transcript it corrects (with its speaker count) and the corrected words. */
  readonly correction?: {
    readonly revision: number;
    readonly transcript: Transcript;
    readonly speakerCount: number;
    readonly words: WordCorrection[];
  };
}

export interface TranscriptionResult {
  readonly transcript: Transcript;
  readonly speakerCount: number;
  readonly sourceEndMs: number;
  readonly revision: number;
}

/** Below this peak level (dBFS) the window holds nothing to transcribe. */
const SILENT_PEAK_DB = -50;

function fail(code: string, message: string): JobFailure {
  return new JobFailure({ code, message }, 'permanent');
}

function transcriptionError(e: JobError): JobError {
  switch (e.code) {
    case JOB_CANCELED.code:
      return { code: 'CANCELED', message: 'The transcription was canceled.' };
    case JOB_TIMED_OUT.code:
      return { code: 'TIMED_OUT', message: 'The transcription ran longer than the server allows.' };
    case 'job_failed':
    case 'worker_lost':
      return { code: 'INTERNAL_ERROR', message: 'Transcription failed because of an internal error.' };
    default:
      return e;
  }
}

/** The loudest sample of a 16-bit PCM WAV in dBFS, read in pieces (a window may last an hour). */
async function peakDb(wav: string): Promise<number> {
  const info = await readWavInfo(wav);
  let peak = 0;
  const stream = createReadStream(wav, { start: info.dataOffset, end: info.dataOffset + info.dataBytes - 1 });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (let i = 0; i + 1 < chunk.length; i += 2) {
      const v = Math.abs(chunk.readInt16LE(i));
      if (v > peak) peak = v;
    }
  }
  return peak > 0 ? 20 * Math.log10(peak / 32768) : -Infinity;
}

export function transcriptionHandler(deps: {
  store: Store;
  recognizer: () => RecognitionProvider;
}): JobHandler<TranscriptionPayload, TranscriptionRunInput, TranscriptionResult> {
  const { store } = deps;
  return {
    kind: TRANSCRIPTION_KIND,
    payloadVersion: TRANSCRIPTION_CORRECTION_VERSION,

    parsePayload(raw, version) {
      const p = raw as Partial<TranscriptionPayload> | null;
      const c = p?.correction;
      if (typeof p?.transcriptionId !== 'string' || (version !== 1 && version !== 2))
        throw new Error(`unreadable transcription payload (version ${version})`);
      if (version === 1) return { transcriptionId: p.transcriptionId };
      if (!c || !Number.isInteger(c.revision) || !Array.isArray(c.words))
        throw new Error('unreadable transcription correction payload');
      return { transcriptionId: p.transcriptionId, correction: { revision: c.revision, words: c.words } };
    },

    async prepare(_job, payload) {
      const t = await store.transcriptions.findAny(payload.transcriptionId);
      if (!t) throw fail('transcription_not_found', 'The transcription no longer exists.');
      const c = payload.correction;
      if (c && (!t.transcript || t.revision !== c.revision))
        throw fail('transcription_revision_conflict', 'The transcript changed before the correction ran.');
      return {
        transcriptionId: t.id,
        sourceKey: t.sourceKey,
        startMs: t.startMs,
        // A correction reads the window the transcription used.
        endMs: c ? (t.sourceEndMs ?? t.endMs) : t.endMs,
        maxSourceSeconds: c ? null : t.maxSourceSeconds,
        ...(c && t.transcript
          ? {
              correction: {
                revision: c.revision,
                transcript: t.transcript,
                speakerCount: t.speakerCount ?? 1,
                words: c.words,
              },
            }
          : {}),
      };
    },

    async run(input, ctx) {
      const dir = await makeTempDir('transcribe-', ctx.tempRoot);
      try {
        const source = join(dir, 'source');
        await ctx.files.download(input.sourceKey, source, ctx.signal);
        const probe = await probeMedia(source);
        if (!probe.audio) throw fail('NO_AUDIO_TRACK', 'The source has no audio track.');
        const sourceMs = Math.round((probe.durationSeconds ?? 0) * 1000);
        if (input.maxSourceSeconds !== null && sourceMs > input.maxSourceSeconds * 1000)
          throw fail(
            'SOURCE_TOO_LONG',
            `The source lasts ${Math.round(sourceMs / 1000)} s, over maxSourceSeconds.`,
          );
        const endMs = transcriptionWindowEnd(input.startMs, input.endMs, sourceMs);
        if (endMs <= input.startMs) throw fail('NO_AUDIO', 'The window holds no audio of the source.');
        ctx.progress(5);
        // The window as 16 kHz mono: what recognition, alignment and the speaker estimate all read.
        const wav = join(dir, 'window.wav');
        await runFfmpeg(
          [
            ...['-ss', (input.startMs / 1000).toFixed(3), '-t', ((endMs - input.startMs) / 1000).toFixed(3)],
            ...['-i', source, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', wav],
          ],
          { signal: ctx.signal },
        );
        if ((await peakDb(wav)) < SILENT_PEAK_DB) throw fail('NO_AUDIO', 'Nothing audible in the window.');
        ctx.progress(10);
        const c = input.correction;
        if (c) {
          const { transcript } = await realignCorrected(wav, c.transcript, c.words, {
            offsetMs: input.startMs,
            workDir: dir,
            signal: ctx.signal,
          });
          return { transcript, speakerCount: c.speakerCount, sourceEndMs: endMs, revision: c.revision + 1 };
        }
        const recognized = await deps.recognizer().transcribe(wav, { workDir: dir, signal: ctx.signal });
        if (recognized.words.length === 0) throw fail('NO_AUDIO', 'No speech was recognized in the window.');
        ctx.progress(60);
        const refined = await refineWordTimes(wav, recognized.words, { workDir: dir, signal: ctx.signal });
        ctx.progress(85);
        const transcript = buildTranscript(refined, { offsetMs: input.startMs });
        const speakers = await estimateSpeakers(wav, transcript.segments, {
          workDir: dir,
          signal: ctx.signal,
          offsetMs: input.startMs,
        });
        return {
          transcript: applySpeakers(transcript, speakers),
          speakerCount: Math.max(1, speakers.speakerCount),
          sourceEndMs: endMs,
          revision: 1,
        };
      } finally {
        await removeTempDir(dir);
      }
    },

    remote: {
      inputKeys: (input) => [input.sourceKey],
      outputKeys: () => [],
      maxOutputs: 0,
    },

    classify(err) {
      if (err instanceof SpeechProviderError) {
        // An outage of a recognition server may pass; anything else will not.
        const transient = err.reason === 'timeout' || err.reason === 'unavailable';
        return new JobFailure(
          {
            code: transient ? 'RECOGNITION_UNAVAILABLE' : 'RECOGNITION_FAILED',
            message: `The speech recognizer (${err.provider}) ${transient ? 'is unavailable' : 'could not transcribe the audio'}.`,
          },
          transient ? 'transient' : 'permanent',
          err,
        );
      }
      if (err instanceof AppError)
        return new JobFailure({ code: err.code, message: err.message }, 'permanent', err);
      return null;
    },

    mirror: {
      table: 'transcriptions',
      statusOf: transcriptionStatusOf,
      errorColumns: { code: 'error_code', message: 'error_message' },
      settled(outcome, job): SettledResource {
        if (outcome.status !== 'completed') {
          const error = transcriptionError(outcome.error);
          // A failed correction leaves the transcript as it was, still COMPLETED, with the reason.
          return job.payloadVersion === TRANSCRIPTION_CORRECTION_VERSION
            ? { status: 'COMPLETED', error }
            : { error };
        }
        const r = outcome.result;
        return {
          values: {
            transcript: JSON.stringify(r.transcript),
            speaker_count: r.speakerCount,
            source_end_ms: r.sourceEndMs,
            revision: r.revision,
          },
        };
      },
    },
  };
}
