// Each kind's resource status for each state of its job: what the job system writes onto the row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JOB_STATUSES } from '../../../src/domain/jobs.js';
import { generationStatusOf } from '../../../src/domain/generation-status.js';
import { ttsJobStatusOf } from '../../../src/domain/tts.js';
import { transcriptionStatusOf } from '../../../src/domain/transcriptions.js';
import { dialogueEditStatusOf } from '../../../src/domain/dialogue-edits.js';

const table = (f: (s: (typeof JOB_STATUSES)[number]) => string) =>
  Object.fromEntries(JOB_STATUSES.map((s) => [s, f(s)]));

test('a generation names every job state', () => {
  assert.deepEqual(table(generationStatusOf), {
    queued: 'PENDING',
    running: 'PROCESSING',
    completed: 'COMPLETED',
    failed: 'FAILED',
    canceled: 'CANCELED',
    timed_out: 'TIMED_OUT',
  });
});

test('a TTS job and a transcription report a cancel or a timeout as a failure', () => {
  const ended = { failed: 'FAILED', canceled: 'FAILED', timed_out: 'FAILED' };
  assert.deepEqual(table(ttsJobStatusOf), {
    queued: 'PENDING',
    running: 'PROCESSING',
    completed: 'SUCCESS',
    ...ended,
  });
  assert.deepEqual(table(transcriptionStatusOf), {
    queued: 'PENDING',
    running: 'PROCESSING',
    completed: 'COMPLETED',
    ...ended,
  });
});

test('a dialogue edit whose preview left edits unapplied is COMPLETED_PARTIAL', () => {
  assert.deepEqual(
    table((s) => dialogueEditStatusOf(s)),
    {
      queued: 'PENDING',
      running: 'PROCESSING',
      completed: 'COMPLETED',
      failed: 'FAILED',
      canceled: 'FAILED',
      timed_out: 'FAILED',
    },
  );
  assert.equal(dialogueEditStatusOf('completed', true), 'COMPLETED_PARTIAL');
});
