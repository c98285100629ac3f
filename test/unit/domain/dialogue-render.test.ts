// Which previews can be rendered (rule 6, the removal limit) and the engine's spans for the slots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  activeSpansOf,
  assertRemovalsAbsorbable,
  assertRetimeAllowed,
  MAX_REMOVAL_DROP_MS,
  type RenderSlot,
} from '../../../src/domain/dialogue-render.js';
import { AppError } from '../../../src/domain/errors.js';
import { appErrorBody } from '../../../src/http/error-body.js';

const remove = (s: number, sd: number, od: number): RenderSlot => ({
  kind: 'remove',
  outputStartMs: s,
  outputDurationMs: od,
  sourceStartMs: s,
  sourceDurationMs: sd,
});

test('both rollout flags are needed; flags that cannot be read are 503', () => {
  assertRetimeAllowed({ flags: ['section_expansion', 'segment_lipsync'], flagsReadable: true });
  for (const flags of [[], ['segment_lipsync'], ['section_expansion']])
    assert.throws(
      () => assertRetimeAllowed({ flags, flagsReadable: true }),
      (e: unknown) => e instanceof AppError && e.code === 'dialogue_edit_retime_required',
    );
  assert.throws(
    () => assertRetimeAllowed({ flags: [], flagsReadable: false }),
    (e: unknown) =>
      e instanceof AppError && e.code === 'generation_infra_service_unavailable' && e.status === 503,
  );
});

test('a removal may drop at most MAX_REMOVAL_DROP_MS of picture; the body names the section', () => {
  assertRemovalsAbsorbable([remove(0, MAX_REMOVAL_DROP_MS + 200, 200)]);
  // A change may lengthen or shorten freely: only removals are limited.
  assertRemovalsAbsorbable([{ ...remove(0, 3000, 100), kind: 'change' }]);
  const slots = [remove(500, 400, 200), remove(3000, MAX_REMOVAL_DROP_MS + 201, 200)];
  let err: unknown;
  try {
    assertRemovalsAbsorbable(slots);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof AppError && err.code === 'dialogue_edit_removal_too_large');
  const body = appErrorBody(err);
  assert.equal(body.statusCode, 422);
  assert.deepEqual(body.dialogueEditSection, {
    slotIndex: 1,
    sourceStartMs: 3000,
    sourceDurationMs: MAX_REMOVAL_DROP_MS + 201,
  });
});

test('active spans: slots in output seconds with a margin, clamped to the video and merged', () => {
  const slots = [
    remove(100, 500, 300),
    remove(1000, 500, 200),
    remove(1250, 400, 100),
    remove(2900, 300, 200),
  ];
  assert.deepEqual(activeSpansOf(slots, 3000, 80), [
    { start: 0.02, end: 0.48 },
    { start: 0.92, end: 1.43 },
    { start: 2.82, end: 3 },
  ]);
});
