// The `dialogue_edit` job kind: the preview of a dialogue edit. The source's sound -> buildPreview
// (src/speech/dialogue: the original recording except the edited spans, reused or synthesized words in
// the speaker's voice, quiet-point joins) -> the preview WAV as an attempt output; the terminal
// transition stores the retimed transcript, the slots and the voice used.
import { join } from 'node:path';
import type { Store } from '../store/index.js';
import type { PreviewOutcome } from '../store/dialogue-edits.js';
import { JOB_CANCELED, JOB_TIMED_OUT } from '../domain/jobs.js';
import { dialogueEditStatusOf } from '../domain/dialogue-edits.js';
import { measuredPreviewResult } from '../domain/remote-outputs.js';
import { makeTempDir, removeTempDir } from '../media/tempdir.js';
import { probeMedia } from '../media/probe.js';
import { runFfmpeg } from '../media/ffmpeg.js';
import {
  buildPreview,
  EditTooLongError,
  type DialogueEdit,
  type SourceWord,
} from '../speech/dialogue/index.js';
import type { VoiceProfile } from '../speech/types.js';
import { JobFailure, type JobError, type JobHandler, type SettledResource } from '../jobs/handler.js';

import { DIALOGUE_EDIT_KIND } from '../domain/job-kinds.js';

export interface DialogueEditPayload {
  readonly dialogueEditId: string;
}

export interface DialogueEditRunInput {
  readonly dialogueEditId: string;
  readonly sourceKey: string;
  readonly words: SourceWord[];
  readonly edits: DialogueEdit[];
  readonly voiceProfile: VoiceProfile | null;
  /** The window a web session selected (0 and null: the whole recording). */
  readonly windowStartMs: number;
  readonly windowEndMs: number | null;
}

export interface DialogueEditResult {
  readonly previewKey: string;
  readonly previewDurationMs: number;
  readonly outcome: PreviewOutcome;
  readonly voiceProfile: VoiceProfile | null;
}

function previewError(e: JobError): JobError {
  switch (e.code) {
    case JOB_CANCELED.code:
      return { code: 'CANCELED', message: 'The preview was canceled.' };
    case JOB_TIMED_OUT.code:
      return { code: 'TIMED_OUT', message: 'The preview took longer than the server allows.' };
    case 'job_failed':
    case 'worker_lost':
      return { code: 'INTERNAL_ERROR', message: 'The preview failed because of an internal error.' };
    default:
      return e;
  }
}

export function dialogueEditHandler(deps: {
  store: Store;
}): JobHandler<DialogueEditPayload, DialogueEditRunInput, DialogueEditResult> {
  const { store } = deps;
  return {
    kind: DIALOGUE_EDIT_KIND,
    payloadVersion: 1,

    parsePayload(raw, version) {
      const p = raw as Partial<DialogueEditPayload> | null;
      if (version !== 1 || typeof p?.dialogueEditId !== 'string')
        throw new Error(`unreadable dialogue_edit payload (version ${version})`);
      return { dialogueEditId: p.dialogueEditId };
    },

    async prepare(_job, payload) {
      const d = await store.dialogueEdits.findAny(payload.dialogueEditId);
      if (!d)
        throw new JobFailure(
          { code: 'dialogue_edit_not_found', message: 'The dialogue edit no longer exists.' },
          'permanent',
        );
      return {
        dialogueEditId: d.id,
        sourceKey: d.sourceKey,
        words: d.sourceTranscript.segments.flatMap((s) =>
          s.words.map((w) => ({ id: w.id, text: w.text, startMs: w.startMs, endMs: w.endMs })),
        ),
        edits: d.edits,
        voiceProfile: d.voiceProfile,
        windowStartMs: d.startMs,
        windowEndMs: d.endMs,
      };
    },

    async run(input, ctx) {
      const dir = await makeTempDir('dialogue-', ctx.tempRoot);
      try {
        const source = join(dir, 'source');
        await ctx.files.download(input.sourceKey, source, ctx.signal);
        const probe = await probeMedia(source);
        if (!probe.audio)
          throw new JobFailure(
            { code: 'NO_AUDIO_TRACK', message: 'The source has no audio track.' },
            'permanent',
          );
        // The source's own sound at its own rate: what stays untouched outside the slots.
        const wav = join(dir, 'source.wav');
        await runFfmpeg(['-i', source, '-map', '0:a:0', '-vn', '-ac', '1', '-c:a', 'pcm_s16le', wav], {
          signal: ctx.signal,
        });
        ctx.progress(10);
        const preview = await buildPreview({
          sourceWav: wav,
          words: input.words,
          edits: input.edits,
          windowStartMs: input.windowStartMs,
          windowEndMs: input.windowEndMs ?? undefined,
          voice: input.voiceProfile ? { profile: input.voiceProfile } : null,
          workDir: dir,
          signal: ctx.signal,
        });
        ctx.progress(90);
        const previewKey = await ctx.files.upload('preview.wav', preview.previewWav, 'audio/wav');
        return {
          previewKey,
          previewDurationMs: preview.previewDurationMs,
          outcome: {
            resultWords: preview.resultWords,
            slots: preview.slots,
            partial: preview.partial,
            reused: preview.reused,
          },
          voiceProfile: preview.voiceProfile ?? input.voiceProfile,
        };
      } finally {
        await removeTempDir(dir);
      }
    },

    remote: {
      inputKeys: (input) => [input.sourceKey],
      outputKeys: (result) => [result.previewKey],
      maxOutputs: 1,
      measure: measuredPreviewResult,
    },

    classify(err) {
      if (err instanceof EditTooLongError)
        return new JobFailure(
          {
            code: 'EDIT_TOO_LONG',
            message: err.message,
            details: { spanText: err.spanText, wordIds: err.wordIds },
          },
          'permanent',
          err,
        );
      return null;
    },

    mirror: {
      table: 'dialogue_edits',
      statusOf: (s) => dialogueEditStatusOf(s),
      errorColumns: { code: 'error_code', message: 'error_message', details: 'error_details' },
      settled(outcome): SettledResource {
        if (outcome.status !== 'completed') return { error: previewError(outcome.error) };
        const r = outcome.result;
        return {
          status: dialogueEditStatusOf('completed', Boolean(r.outcome.partial)),
          values: {
            preview_key: r.previewKey,
            preview_duration_ms: r.previewDurationMs,
            result: JSON.stringify(r.outcome),
            voice_profile: r.voiceProfile ? JSON.stringify(r.voiceProfile) : null,
          },
        };
      },
    },
  };
}
