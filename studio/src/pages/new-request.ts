// What the New page sends: the generation request built from the form, the quote to ask for, and
// where a field the server names shows its error. Pure: no state, no I/O.
import type { FaceChoice } from '../components/face-picker.js';
import type { VoiceSettings } from '../components/voice-picker.js';
import type { Asset } from '../types.js';
import type { Quote } from './new-estimate.js';
import { segmentsBody, type Segment, type SyncMode } from './new-options.js';

export type Workflow = 'recording' | 'script' | 'photo';

export const WORKFLOWS: { id: Workflow; title: string; line: string }[] = [
  {
    id: 'recording',
    title: 'Lip-sync a video to a recording',
    line: 'A video of someone speaking and a sound recording: their lips follow the recording.',
  },
  {
    id: 'script',
    title: 'Make a video say a script',
    line: 'A video and a text you type: a voice reads it and the lips follow.',
  },
  {
    id: 'photo',
    title: 'Animate a photo',
    line: 'A portrait photo and a recording or a script: the face speaks.',
  },
];

/** Where a field named by the server shows its error on this form. */
export type Slot =
  | 'visual'
  | 'audio'
  | 'script'
  | 'voice'
  | 'voiceSettings'
  | 'model'
  | 'syncMode'
  | 'segments'
  | 'face'
  | 'project';

export function slotOf(field: string | undefined, text: boolean): Slot | null {
  if (!field) return null;
  if (field.startsWith('segments') || /^input\[0\]\.segments/.test(field)) return 'segments';
  if (field.startsWith('input[0]')) return 'visual';
  if (field.startsWith('input[1].provider.script')) return 'script';
  if (/^input\[1\]\.provider\.(speed|stability|similarityBoost)/.test(field)) return 'voiceSettings';
  if (field.startsWith('input[1].provider')) return 'voice';
  if (field.startsWith('input[1]')) return text ? 'script' : 'audio';
  if (field === 'input') return 'visual';
  if (field === 'model') return 'model';
  if (field.startsWith('options.sync_mode')) return 'syncMode';
  if (field.startsWith('options.active_speaker')) return 'face';
  if (field === 'projectId') return 'project';
  return null;
}

/** A v4 UUID; crypto.randomUUID exists only on https or localhost pages. */
export function uuid(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface FormState {
  workflow: Workflow | null;
  visual: Asset | null;
  audio: Asset | null;
  /** A script read by a voice drives the speech (else the recording). */
  text: boolean;
  script: string;
  voice: VoiceSettings;
  model: string;
  syncMode: SyncMode;
  segments: Segment[] | null;
  face: FaceChoice | null;
  projectId: string;
}

/**
 * POST /v2/generate's body, or null while an input is missing. Without `frameOf` the face is left out
 * (for the quote: it does not change the price).
 */
export function buildRequest(
  f: FormState,
  frameOf: ((seconds: number) => number | null) | null,
): Record<string, unknown> | null {
  if (!f.workflow || !f.visual) return null;
  const photo = f.workflow === 'photo';
  const { voice } = f;
  const speech = f.text
    ? f.script.trim() && voice.voiceId
      ? {
          type: 'text',
          provider: {
            ...(voice.provider ? { name: voice.provider } : {}),
            voiceId: voice.voiceId,
            script: f.script,
            speed: voice.speed,
            ...(voice.stability === null ? {} : { stability: voice.stability }),
          },
        }
      : null
    : f.audio
      ? { type: 'audio', assetId: f.audio.id }
      : null;
  if (!speech) return null;
  // A still picture becomes a video as long as the speech: no sync mode, parts or face to choose.
  const options: Record<string, unknown> = {};
  if (!photo) options.sync_mode = f.syncMode;
  if (!photo && f.face && frameOf) {
    const frame = frameOf(f.face.seconds);
    options.active_speaker_detection = {
      ...(frame === null ? {} : { frame_number: frame }),
      coordinates: [f.face.x, f.face.y],
    };
  }
  const parts = !photo && f.segments ? segmentsBody(f.segments) : [];
  return {
    model: f.model,
    input: [{ type: photo ? 'image' : 'video', assetId: f.visual.id }, speech],
    options,
    ...(parts.length ? { segments: parts } : {}),
    ...(f.projectId ? { projectId: f.projectId } : {}),
  };
}

/**
 * The quote to ask for. A recording: the whole request, priced from its media. A script has no
 * length until it is spoken: the video's length bounds the result where the sync mode cuts at the
 * video (or is the result's length, with parts or silence); otherwise no price can be given yet.
 */
export function quoteFor(f: FormState, frameOf: (seconds: number) => number | null): Quote {
  if (!buildRequest(f, frameOf) || !f.visual) return null;
  if (!f.text) return { kind: 'exact', body: buildRequest(f, null)! };
  const seconds = f.visual.durationSeconds;
  if (f.workflow === 'photo' || typeof seconds !== 'number')
    return {
      kind: 'unknown',
      why: 'The cost is known once the script is spoken: it depends on how long the speech lasts.',
    };
  if (f.segments || f.syncMode === 'silence') return { kind: 'length', model: f.model, seconds };
  if (f.syncMode === 'cut_off') return { kind: 'upTo', model: f.model, seconds };
  return {
    kind: 'unknown',
    why: 'The cost is known once the script is spoken: with this length setting the result lasts as long as the speech.',
  };
}
