// Generation rows written straight to the store, for tests of what reads them.
import { randomUUID } from 'node:crypto';
import type { GenerationRecord } from '../../src/store/generations.js';

/** A FAILED generation of the organization (no output), with `over` applied. */
export function generationRecord(
  organizationId: string,
  over: Partial<GenerationRecord> = {},
): GenerationRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    organizationId,
    projectId: null,
    apiKeyId: null,
    model: 'lipsync-2',
    status: 'FAILED',
    source: 'api',
    input: [{ type: 'video', url: 'https://example.com/face.mp4' }],
    resolvedInput: {},
    options: { sync_mode: 'cut_off' },
    segments: null,
    webhookUrl: null,
    outputFileName: null,
    outputFormat: 'mp4',
    outputKey: null,
    watermarkedKey: null,
    outputUrl: null,
    outputDuration: null,
    progress: 0,
    error: 'for the test',
    errorCode: 'internal_error',
    quality: null,
    dub: null,
    dubAudioKey: null,
    stillKey: null,
    startedAt: null,
    finishedAt: now,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
    ...over,
  };
}

/** A COMPLETED generation with an output, as a worker leaves it. */
export function completedGenerationRecord(organizationId: string): GenerationRecord {
  const id = randomUUID();
  return generationRecord(organizationId, {
    id,
    status: 'COMPLETED',
    outputKey: `outputs/${organizationId}/${id}.mp4`,
    outputDuration: 5,
    progress: 100,
    error: null,
    errorCode: null,
    startedAt: new Date().toISOString(),
  });
}
