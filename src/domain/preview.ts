// A preview generation (options.preview): one chosen second of the output a full run would make,
// rendered as a short clip with a still of its first frame, so that a user can check the face, crop
// and mouth before paying for the whole video. Pure rules: the request field and the window.
import { AppError } from './errors.js';

/** How long a preview clip is (shorter where the output ends sooner). */
export const PREVIEW_MS = 1000;

export interface PreviewRequest {
  /** Where the clip starts, ms on the full output's clock. */
  atMs: number;
}

/** The frames of the full output that the preview renders. */
export interface PreviewWindow {
  /** Index of the first frame (the still) in the full output. */
  firstFrame: number;
  frameCount: number;
  startSeconds: number;
  durationSeconds: number;
}

/** `options.preview` as sent: absent or null → no preview; else `{ atMs }`, an integer >= 0. */
export function normalisePreview(raw: unknown): PreviewRequest | null {
  if (raw === undefined || raw === null) return null;
  const at = (raw as { atMs?: unknown }).atMs;
  if (
    typeof raw !== 'object' ||
    Array.isArray(raw) ||
    typeof at !== 'number' ||
    !Number.isInteger(at) ||
    at < 0
  )
    throw new AppError('invalid_request', {
      field: 'options.preview.atMs',
      message: 'options.preview must be {"atMs": <milliseconds from the output start, an integer >= 0>}',
    });
  return { atMs: at };
}

/**
 * The window of the full output (`totalFrames` at `fps`) a preview at `atMs` renders: from the frame
 * shown at atMs for PREVIEW_MS, cut at the output's end. A moment at or past the end is refused.
 */
export function previewWindow(atMs: number, totalFrames: number, fps: number): PreviewWindow {
  // The frame on screen at atMs (a microsecond of slack for times written from frame numbers).
  const firstFrame = Math.floor((atMs / 1000) * fps + 1e-3);
  if (firstFrame >= totalFrames)
    throw new AppError('generation_preview_out_of_range', {
      field: 'options.preview.atMs',
      message: `options.preview.atMs is ${atMs} ms; the output lasts ${Math.round((totalFrames / fps) * 1000)} ms.`,
    });
  const frameCount = Math.min(Math.max(1, Math.round((PREVIEW_MS / 1000) * fps)), totalFrames - firstFrame);
  return {
    firstFrame,
    frameCount,
    startSeconds: firstFrame / fps,
    durationSeconds: frameCount / fps,
  };
}
