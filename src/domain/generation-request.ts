// Pure rules for a Create Generation request: which inputs, which model, which options, which
// segments. The schema checks shapes; this checks meaning. No I/O.
import { AppError } from './errors.js';
import { findModel } from './models.js';
import { normaliseTtsRequest, type TtsRequest } from './tts.js';
import type { DialogueRender } from './dialogue-render.js';
import { normaliseDubParams, type DubRequest } from './dub.js';
import { normalisePreview, type PreviewRequest } from './preview.js';

export const SYNC_MODES = ['bounce', 'loop', 'cut_off', 'silence', 'remap'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

export interface InputItem {
  type: string;
  url?: string;
  assetId?: string;
  refId?: string;
  segments_secs?: number[][];
  segments_frames?: number[][];
  provider?: unknown;
  transcript?: unknown;
}

export interface GenerationRequestBody {
  model: string;
  input?: InputItem[];
  options?: Record<string, unknown> | null;
  segments?: unknown[] | null;
  dubParams?: unknown;
  webhookUrl?: string | null;
  outputFileName?: string | null;
  projectId?: string | null;
  dialogueEdit?: unknown;
}

export interface MediaRef {
  /** Where the client put it, for error fields: input[0] */
  field: string;
  url?: string;
  assetId?: string;
  refId?: string;
  /** Audio inputs: the words spoken, as the client gave them (trimmed). */
  transcript?: string;
  /**
   * Set by the service, never from the request: a blob of the organization's own that the server
   * names (a re-dub's video, stored with the earlier generation), used as it is.
   */
  storedKey?: string;
}

/** The longest transcript an audio input may carry, characters. */
export const MAX_TRANSCRIPT_CHARS = 20_000;

/** A segment in seconds (or frames, converted once the video's fps is known). */
export interface SegmentSpec {
  unit: 'seconds' | 'frames';
  start: number;
  end: number;
  audioStart?: number;
  audioEnd?: number;
}

export interface ActiveSpeakerHint {
  autoDetect: boolean;
  frameNumber?: number;
  coordinates?: [number, number];
  boundingBoxes?: (number[] | null)[];
}

export interface NormalisedOptions {
  pads: [number, number, number, number] | null;
  speedup: 1 | 2 | 3 | 4;
  temperature: number;
  outputFormat: 'mp4' | 'mov';
  syncMode: SyncMode;
  fps: number | null;
  outputResolution: [number, number] | null;
  activeSpeaker: ActiveSpeakerHint | null;
  /** Render only one second of the output (domain/preview.ts); absent for a full run. */
  preview?: PreviewRequest;
}

/** A text input: speech synthesized at submit time, then used as the audio input. */
export interface TextDriver {
  field: string;
  refId?: string;
  request: TtsRequest;
  /** The provider object as the client sent it (shown back in the generation's input). */
  provider: Record<string, unknown>;
}

export interface NormalisedRequest {
  model: string;
  video: MediaRef | null;
  image: MediaRef | null;
  /** With a text input: no url or assetId until the speech is synthesized (assetId then). */
  audio: MediaRef;
  text: TextDriver | null;
  options: NormalisedOptions;
  segments: SegmentSpec[];
  webhookUrl: string | null;
  outputFileName: string | null;
  projectId: string | null;
  /**
   * Rendering a dialogue-edit preview: `id` from the request; the rest filled in by the service once
   * the preview is found (its WAV then is the audio input).
   */
  dialogueEdit?: ({ id: string } & Partial<Omit<DialogueRender, 'id'>>) | null;
  /** A dub (`dubParams`): the video's own speech is translated, spoken anew and lip-synced. */
  dub?: DubRequest | null;
}

function bad(field: string, message: string): never {
  throw new AppError('invalid_request', { field, message });
}

function segErr(field: string, message: string): never {
  throw new AppError('generation_segments_invalid', { field, message });
}

function finite(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function pair(v: unknown, field: string): [number, number] {
  if (!Array.isArray(v) || v.length !== 2 || !finite(v[0]) || !finite(v[1]))
    segErr(field, `${field} must be [start, end]`);
  return [v[0], v[1]];
}

export function normaliseOptions(
  raw: Record<string, unknown> | null | undefined,
  model: string,
): NormalisedOptions {
  const o = raw ?? {};
  const pads = o.pads as number[] | undefined;
  if (
    pads !== undefined &&
    (!Array.isArray(pads) || pads.length !== 4 || !pads.every((p) => finite(p) && p >= 0 && p <= 1000))
  ) {
    bad('options.pads', 'options.pads must be 4 numbers from 0 to 1000');
  }
  const speedup = (o.speedup ?? 1) as number;
  if (![1, 2, 3, 4].includes(speedup)) bad('options.speedup', 'options.speedup must be 1, 2, 3 or 4');
  const temperature = (o.temperature ?? 0.5) as number;
  if (!finite(temperature) || temperature < 0 || temperature > 1)
    bad('options.temperature', 'options.temperature must be from 0 to 1');
  const outputFormat = (o.output_format ?? 'mp4') as string;
  if (outputFormat !== 'mp4' && outputFormat !== 'mov')
    bad('options.output_format', 'options.output_format must be mp4 or mov');
  const syncMode = (o.sync_mode ?? 'cut_off') as string;
  if (!(SYNC_MODES as readonly string[]).includes(syncMode)) {
    bad('options.sync_mode', `options.sync_mode must be one of ${SYNC_MODES.join(', ')}`);
  }
  const fps = o.fps === undefined || o.fps === null ? null : (o.fps as number);
  if (fps !== null && (!finite(fps) || fps < 1 || fps > 120))
    bad('options.fps', 'options.fps must be from 1 to 120');
  const res = o.output_resolution as number[] | undefined | null;
  if (
    res !== undefined &&
    res !== null &&
    (!Array.isArray(res) ||
      res.length !== 2 ||
      !res.every((n) => Number.isInteger(n) && n >= 16 && n <= 7680))
  ) {
    bad(
      'options.output_resolution',
      'options.output_resolution must be [width, height], integers from 16 to 7680',
    );
  }

  let activeSpeaker: ActiveSpeakerHint | null = null;
  const asd = o.active_speaker_detection as Record<string, unknown> | undefined;
  if (asd !== undefined && asd !== null) {
    if (typeof asd !== 'object') bad('options.active_speaker_detection', 'must be an object');
    const coords = asd.coordinates as number[] | undefined;
    if (coords !== undefined && (!Array.isArray(coords) || coords.length !== 2 || !coords.every(finite))) {
      bad('options.active_speaker_detection.coordinates', 'coordinates must be [x, y]');
    }
    const boxes = asd.bounding_boxes as unknown[] | undefined;
    if (
      boxes !== undefined &&
      (!Array.isArray(boxes) ||
        !boxes.every(
          (b) => b === null || b === undefined || (Array.isArray(b) && b.length === 4 && b.every(finite)),
        ))
    ) {
      bad(
        'options.active_speaker_detection.bounding_boxes',
        'bounding_boxes must be per-frame [x1, y1, x2, y2] or null',
      );
    }
    const frameNumber = asd.frame_number as number | undefined;
    if (frameNumber !== undefined && (!Number.isInteger(frameNumber) || frameNumber < 0)) {
      bad('options.active_speaker_detection.frame_number', 'frame_number must be a non-negative integer');
    }
    activeSpeaker = {
      autoDetect: asd.auto_detect === true || o.active_speaker === true,
      frameNumber,
      coordinates: coords as [number, number] | undefined,
      boundingBoxes: boxes as (number[] | null)[] | undefined,
    };
  } else if (o.active_speaker === true) {
    activeSpeaker = { autoDetect: true };
  }

  const preview = normalisePreview(o.preview);
  const m = findModel(model);
  return {
    pads: (pads as [number, number, number, number] | undefined) ?? null,
    speedup: speedup as 1 | 2 | 3 | 4,
    // temperature only applies to the lipsync-2 family (spec); others use the neutral value.
    temperature: m?.family === 'lipsync-2' || m?.family === 'sync-3' ? temperature : 0.5,
    outputFormat: outputFormat as 'mp4' | 'mov',
    syncMode: syncMode as SyncMode,
    fps,
    outputResolution: (res as [number, number] | null | undefined) ?? null,
    activeSpeaker,
    ...(preview ? { preview } : {}),
  };
}

function normaliseSegments(
  body: GenerationRequestBody,
  audio: MediaRef,
  video: MediaRef | null,
  videoItem: InputItem | undefined,
): SegmentSpec[] {
  const out: SegmentSpec[] = [];
  /** Where each segment came from, for error fields (segments[i] or input[k].segments_secs[i]). */
  const fields: string[] = [];
  (body.segments ?? []).forEach((raw, i) => {
    const f = `segments[${i}]`;
    fields.push(f);
    if (Array.isArray(raw)) {
      const [start, end] = pair(raw, f);
      out.push({ unit: 'seconds', start, end });
      return;
    }
    const s = raw as {
      startTime?: unknown;
      endTime?: unknown;
      audioInput?: { refId?: unknown; startTime?: unknown; endTime?: unknown };
    };
    if (!s || typeof s !== 'object' || !finite(s.startTime) || !finite(s.endTime))
      segErr(f, `${f} needs numeric startTime and endTime`);
    const ai = s.audioInput;
    if (ai !== undefined) {
      if (typeof ai !== 'object' || ai === null) segErr(`${f}.audioInput`, 'audioInput must be an object');
      if (ai.refId !== undefined && ai.refId !== audio.refId) {
        segErr(`${f}.audioInput.refId`, `refId ${JSON.stringify(ai.refId)} does not match an audio input`);
      }
      if (ai.startTime !== undefined && !finite(ai.startTime))
        segErr(`${f}.audioInput.startTime`, 'must be a number');
      if (ai.endTime !== undefined && !finite(ai.endTime))
        segErr(`${f}.audioInput.endTime`, 'must be a number');
    }
    out.push({
      unit: 'seconds',
      start: s.startTime as number,
      end: s.endTime as number,
      audioStart: ai?.startTime as number | undefined,
      audioEnd: ai?.endTime as number | undefined,
    });
  });
  const vf = video?.field ?? 'input';
  if (videoItem?.segments_secs)
    videoItem.segments_secs.forEach((p, i) => {
      const f = `${vf}.segments_secs[${i}]`;
      const [start, end] = pair(p, f);
      fields.push(f);
      out.push({ unit: 'seconds', start, end });
    });
  if (videoItem?.segments_frames)
    videoItem.segments_frames.forEach((p, i) => {
      const f = `${vf}.segments_frames[${i}]`;
      const [start, end] = pair(p, f);
      if (!Number.isInteger(start) || !Number.isInteger(end)) segErr(f, 'frames must be integers');
      fields.push(f);
      out.push({ unit: 'frames', start, end });
    });
  if (out.length > 100) segErr('segments', 'at most 100 segments');
  out.forEach((s, i) => {
    const f = fields[i];
    if (s.start < 0 || s.end <= s.start) segErr(f, `${f} needs 0 <= start < end`);
    if (s.audioStart !== undefined && s.audioStart < 0) segErr(`${f}.audioInput.startTime`, 'must be >= 0');
    if (s.audioStart !== undefined && s.audioEnd !== undefined && s.audioEnd <= s.audioStart) {
      segErr(`${f}.audioInput`, 'audio endTime must be after startTime');
    }
  });
  // Seconds and frames can only be compared once the video's fps is known (the conform plan checks
  // them together); here each unit is checked on its own, so nothing between two segments hides an overlap.
  for (const unit of ['seconds', 'frames'] as const) {
    const sorted = out.filter((s) => s.unit === unit).sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i].start < sorted[i - 1].end) segErr('segments', 'segments must not overlap');
    }
  }
  return out;
}

/** An audio input's transcript: trimmed text with at least one letter or digit, or absent. */
function transcriptOf(item: InputItem, index: number): { transcript?: string } {
  const field = `input[${index}].transcript`;
  if (item.transcript === undefined || item.transcript === null) return {};
  if (typeof item.transcript !== 'string') bad(field, `${field} must be a string`);
  const text = item.transcript.trim();
  if (text.length > MAX_TRANSCRIPT_CHARS)
    bad(field, `${field} is longer than ${MAX_TRANSCRIPT_CHARS} characters`);
  if (!/[\p{L}\p{N}]/u.test(text)) bad(field, `${field} holds no words`);
  return { transcript: text };
}

function mediaRef(item: InputItem, index: number): MediaRef {
  const field = `input[${index}]`;
  const hasUrl = typeof item.url === 'string' && item.url !== '';
  const hasAsset = typeof item.assetId === 'string' && item.assetId !== '';
  if (hasUrl === hasAsset) bad(field, `${field} needs exactly one of url or assetId`);
  if (hasUrl) {
    let u: URL;
    try {
      u = new URL(item.url as string);
    } catch {
      bad(`${field}.url`, `${field}.url is not a valid URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      bad(`${field}.url`, `${field}.url must be http or https`);
  }
  return {
    field,
    url: hasUrl ? item.url : undefined,
    assetId: hasAsset ? item.assetId : undefined,
    refId: item.refId,
  };
}

export function normaliseGenerationRequest(body: GenerationRequestBody): NormalisedRequest {
  const model = findModel(body.model);
  if (!model)
    throw new AppError('unsupported_model', {
      field: 'model',
      message: `Model ${JSON.stringify(body.model)} is not supported.`,
    });
  const dialogue = body.dialogueEdit !== undefined && body.dialogueEdit !== null;
  const dubbed = body.dubParams !== undefined && body.dubParams !== null;
  const preview = body.options?.preview;
  if ((dialogue || dubbed) && preview !== undefined && preview !== null)
    bad(
      'options.preview',
      `options.preview cannot be combined with ${dialogue ? 'dialogueEdit' : 'dubParams'}`,
    );
  if (dialogue) return dialogueRequest(body, model.id);
  if (dubbed) return dubRequest(body, model.id);
  const items = body.input ?? [];
  if (!Array.isArray(items) || items.length === 0)
    bad('input', 'input needs one video (or image) input and one audio input');
  let video: MediaRef | null = null;
  let image: MediaRef | null = null;
  let audio: MediaRef | null = null;
  let text: TextDriver | null = null;
  let videoItem: InputItem | undefined;
  items.forEach((item, i) => {
    if (item.transcript !== undefined && item.type !== 'audio')
      bad(`input[${i}].transcript`, `input[${i}].transcript is allowed on audio inputs only`);
    switch (item.type) {
      case 'video':
        if (video) bad(`input[${i}]`, 'only one video input is allowed');
        video = mediaRef(item, i);
        videoItem = item;
        break;
      case 'image':
        if (image) bad(`input[${i}]`, 'only one image input is allowed');
        image = mediaRef(item, i);
        break;
      case 'audio':
        if (audio) bad(`input[${i}]`, 'send one audio or text input');
        audio = { ...mediaRef(item, i), ...transcriptOf(item, i) };
        break;
      case 'text': {
        if (audio) bad(`input[${i}]`, 'send one audio or text input');
        const field = `input[${i}]`;
        const p = item.provider;
        if (!p || typeof p !== 'object' || Array.isArray(p))
          bad(`${field}.provider`, `${field}.provider must be an object {name, voiceId, script}`);
        if (item.url !== undefined || item.assetId !== undefined)
          bad(field, `${field} is a text input: it takes provider, not url or assetId`);
        const provider = p as Record<string, unknown>;
        text = {
          field,
          refId: item.refId,
          request: normaliseTtsRequest(provider, { prefix: `${field}.provider.`, providerField: 'name' }),
          provider,
        };
        audio = { field, refId: item.refId };
        break;
      }
      default:
        bad(`input[${i}].type`, `input[${i}].type must be video, image, audio or text`);
    }
  });
  if (image && !model.acceptsImage) {
    throw new AppError('unsupported_model', {
      field: 'model',
      message: `Model ${model.id} does not accept image inputs; use sync-3.`,
    });
  }
  if (image && video) bad('input', 'send either a video or an image input, not both');
  if (!image && !video) bad('input', 'a video (or, with sync-3, an image) input is required');
  if (!audio) bad('input', 'an audio or text input is required');
  const a = audio as MediaRef;
  const segments = normaliseSegments(body, a, video, videoItem);
  if (image && segments.length > 0) segErr('segments', 'segments need a video input');

  return {
    model: model.id,
    video,
    image,
    audio: a,
    text,
    options: normaliseOptions(body.options, model.id),
    segments,
    ...commonFields(body),
    dialogueEdit: null,
  };
}

function commonFields(body: GenerationRequestBody) {
  const fileName = body.outputFileName?.trim() || null;
  if (fileName !== null && (fileName.length > 200 || /[/\\\0]/.test(fileName))) {
    bad('outputFileName', 'outputFileName must be a plain file name of at most 200 characters');
  }
  if (body.webhookUrl) {
    try {
      const u = new URL(body.webhookUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    } catch {
      bad('webhookUrl', 'webhookUrl must be an http or https URL');
    }
  }
  return { webhookUrl: body.webhookUrl || null, outputFileName: fileName, projectId: body.projectId || null };
}

/**
 * Spec rule 1: with dialogueEdit, exactly one video input from the edit's source and nothing else that
 * drives or places audio (the preview is the audio; its slots are the segments).
 */
function dialogueRequest(body: GenerationRequestBody, model: string): NormalisedRequest {
  const d = body.dialogueEdit as { id?: unknown };
  if (typeof d !== 'object' || Array.isArray(d) || typeof d.id !== 'string' || d.id === '')
    bad('dialogueEdit.id', 'dialogueEdit must be {"id": "<dialogue edit id>"}');
  if (body.dubParams !== undefined && body.dubParams !== null)
    bad('dubParams', 'dubParams cannot be combined with dialogueEdit');
  if (Array.isArray(body.segments) && body.segments.length > 0)
    bad('segments', 'segments cannot be combined with dialogueEdit: the preview places the new speech');
  const items = body.input ?? [];
  if (!Array.isArray(items) || items.length === 0)
    bad('input', 'with dialogueEdit, input needs exactly one video input (url or assetId)');
  items.forEach((item, i) => {
    if (item.type !== 'video')
      bad(`input[${i}]`, 'with dialogueEdit, send only the video input: the preview is the audio');
    if (i > 0) bad(`input[${i}]`, 'with dialogueEdit, send exactly one video input');
    if (item.segments_secs !== undefined || item.segments_frames !== undefined)
      bad(`input[${i}]`, 'segments cannot be combined with dialogueEdit');
  });
  return {
    model,
    video: mediaRef(items[0], 0),
    image: null,
    audio: { field: 'dialogueEdit' },
    text: null,
    options: normaliseOptions(body.options, model),
    segments: [],
    ...commonFields(body),
    dialogueEdit: { id: d.id as string },
  };
}

/**
 * A dub: one video input whose own speech is dubbed; audio inputs are ignored (the public API's
 * rule), and nothing else may drive or place audio.
 */
function dubRequest(body: GenerationRequestBody, model: string): NormalisedRequest {
  const dub = normaliseDubParams(body.dubParams);
  if (Array.isArray(body.segments) && body.segments.length > 0)
    bad('segments', 'segments cannot be combined with dubParams: the dub places the new speech');
  const items = body.input ?? [];
  if (dub.basedOn) {
    // A re-dub speaks over the earlier dub's own video (its segments are timed on it): the service
    // names that video's stored blob at submit.
    if (Array.isArray(items) && items.length > 0)
      bad('input', 'a re-dub (dubParams.basedOn) uses the video of the earlier dub: leave input out');
    const earlier: MediaRef = { field: 'dubParams.basedOn' };
    return { ...dubShape(body, model, earlier), dub };
  }
  if (!Array.isArray(items) || items.length === 0)
    bad('input', 'with dubParams, input needs one video input (url or assetId)');
  let video: MediaRef | null = null;
  items.forEach((item, i) => {
    if (item.type === 'audio') return;
    if (item.type !== 'video')
      bad(`input[${i}].type`, 'with dubParams, send one video input: its own speech is dubbed');
    if (video) bad(`input[${i}]`, 'only one video input is allowed');
    if (item.segments_secs !== undefined || item.segments_frames !== undefined)
      bad(`input[${i}]`, 'segments cannot be combined with dubParams');
    video = mediaRef(item, i);
  });
  if (!video) bad('input', 'with dubParams, input needs one video input (url or assetId)');
  return { ...dubShape(body, model, video as MediaRef), dub };
}

function dubShape(body: GenerationRequestBody, model: string, v: MediaRef): NormalisedRequest {
  return {
    model,
    video: v,
    image: null,
    // The video's own soundtrack is the source speech; the job replaces it with the dub.
    audio: { ...v },
    text: null,
    options: normaliseOptions(body.options, model),
    segments: [],
    ...commonFields(body),
    dialogueEdit: null,
  };
}
