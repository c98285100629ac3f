// Runs active-speaker detection over a job's scene before the engine draws: scan every face, read
// the source's own loudness at the moment each output frame shows, choose the speaker per stretch.
import type { EngineJob } from '../engine.js';
import { analyseHops, HOP_SECONDS } from './audio-features.js';
import { chooseSpeakers, SpeakerScanner } from './active-speaker.js';
import type { FaceModels } from './face-models.js';
import type { Box } from './face-tracker.js';

export interface SpeakerReport {
  /** audio-visual: mouths against the video's own speech; mouth-motion: no soundtrack to compare with. */
  method: 'audio-visual' | 'mouth-motion' | 'single-face';
  /** Distinct faces followed during the scan. */
  faces: number;
  /** Frames in which two or more faces were seen at once. */
  multiFaceFrames: number;
  /** Changes of the chosen face over the video. */
  switches: number;
}

export interface SpeakerPlan {
  /** Per frame, the box of the face to animate; null when there is nobody to choose between. */
  boxes: (Box | undefined)[] | null;
  /** Frames where another face takes over. */
  changes: number[];
  report: SpeakerReport;
}

/** Loudness (dB) of the source at the moments the output frames show (NaN where they show none). */
export function sourceLevels(
  hopDb: Float32Array,
  frames: number,
  fps: number,
  timeAt: (frame: number) => number | null,
): Float32Array {
  const out = new Float32Array(frames).fill(NaN);
  const span = Math.max(1, Math.round(1 / fps / HOP_SECONDS));
  for (let t = 0; t < frames; t++) {
    const s = timeAt(t);
    if (s === null) continue;
    const a = Math.floor(s / HOP_SECONDS);
    let power = 0;
    let n = 0;
    for (let h = a; h < a + span && h < hopDb.length; h++) {
      power += Math.pow(10, hopDb[h] / 10);
      n++;
    }
    if (n > 0) out[t] = 10 * Math.log10(Math.max(power / n, 1e-12));
  }
  return out;
}

export async function planSpeaker(models: FaceModels, job: EngineJob): Promise<SpeakerPlan | null> {
  const scene = job.scene;
  if (!scene) return null;
  const scanner = new SpeakerScanner(models, scene.width, scene.height, job.frameCount, job.fps, {
    downscale: scene.downscale,
  });
  let n = 0;
  const step = Math.max(1, Math.round(job.frameCount / 50));
  for await (const frame of scene.frames()) {
    if (job.signal.aborted) throw job.signal.reason ?? new Error('aborted');
    await scanner.push(frame);
    if (++n % step === 0) job.onPrepassProgress?.(Math.min(1, n / job.frameCount));
  }
  job.onPrepassProgress?.(1);
  const scan = scanner.result();
  if (scan.multiFaceFrames === 0) {
    return {
      boxes: null,
      changes: [],
      report: { method: 'single-face', faces: scan.tracks.length, multiFaceFrames: 0, switches: 0 },
    };
  }
  const audioPath = await scene.sourceAudio();
  const levels = audioPath
    ? sourceLevels((await analyseHops(audioPath)).db, job.frameCount, job.fps, (t) => scene.sourceTimeAt(t))
    : null;
  const choice = chooseSpeakers(scan, { fps: job.fps, audioDb: levels });
  return {
    boxes: choice.boxes,
    changes: choice.changes,
    report: {
      method: choice.usedAudio ? 'audio-visual' : 'mouth-motion',
      faces: choice.faces,
      multiFaceFrames: scan.multiFaceFrames,
      switches: choice.switches,
    },
  };
}
