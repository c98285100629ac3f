// The CPU lip-sync engine: finds the face and its lips in every frame (face-tracker), turns the
// conformed audio into mouth shapes over time (audio-mouth, or phoneme-mouth when the job carries the
// speech's phoneme timeline), and re-draws the mouth region of each
// frame toward that shape (mouth-rig + mouth-warp). Streaming: one frame in, one frame out, nothing
// held but a few per-frame numbers. Frames without a face, and frames outside the active spans, pass
// through untouched; the mouth closes in silence.
//
// Settings (engine registry): maxOpening (0.2..0.9, default 0.5: the widest opening as a fraction of
// the mouth's width), searchEvery (frames between detector runs while no face is tracked, default 3),
// detectSize (longest side given to the detector, default 512), trackerThread (false: track faces on
// the calling thread instead of a worker thread), interpolateLandmarks (false: FaceMesh on every frame,
// not only on every other one while the face holds still), meshRuntime ("tfjs": FaceMesh on the tfjs
// WASM backend instead of onnxruntime, for the detector too).
import {
  wantsSpeakerScan,
  type EngineJob,
  type EngineReport,
  type EngineRun,
  type LipsyncEngine,
} from '../engine.js';
import { analyseAudio, warmAudioAnalysis } from './audio-features.js';
import type { MouthTrack } from './audio-mouth.js';
import { PHONEME_SHAPE_RANGE } from './phoneme-mouth.js';
import { planMouth } from './articulated-mouth.js';
import { faceModels, meshLayout, type FaceModels } from './face-models.js';
import type { FaceTrackerOptions } from './face-tracker.js';
import { mouthDown, OUTER_LIP_POLYGON } from './landmarks.js';
import { LipRefiner } from './lip-refine.js';
import { MouthRig, buildTopology, type MouthParams, type Pads } from './mouth-rig.js';
import { MouthInterior, warpInPlace } from './mouth-warp.js';
import { warpYuvInPlace } from './mouth-warp-yuv.js';
import { prefetch } from './prefetch.js';
import { changeWeights } from './active-speaker.js';
import { planSpeaker, type SpeakerPlan, type SpeakerReport } from './speaker-scan.js';
import { trackInProcess, trackInWorker, warmTrackers, type TrackerStats } from './tracker-thread.js';
import { pearson } from './stats.js';
import {
  MeterStream,
  compareMeters,
  cropFrame,
  outlinePoints,
  regionOutlineLoop,
  type FrameView,
} from './meters.js';
import { clamped, yuvToRgb, type Rect } from './yuv.js';
import type { PixelFormat } from '../../media/frames.js';

/** Frames of at least this many pixels travel as yuv420p (see CpuEngine.pixelFormatFor). */
const YUV_MIN_PIXELS = 1280 * 720;

/**
 * The realism meters (meters.ts) run on one pair of consecutive frames in this many (the setting
 * `meterEvery`; 0 turns them off): on every frame they would cost about N % of a 720p job
 * (docs/engine.md, "Meters").
 */
const METER_EVERY = 6;

/** Frames over which the re-drawn mouth fades in and out at the edges of active spans. */
const SPAN_RAMP_FRAMES = 4;

function num(
  settings: Readonly<Record<string, unknown>>,
  key: string,
  lo: number,
  hi: number,
): number | undefined {
  const v = settings[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
  return Math.min(hi, Math.max(lo, v));
}

/**
 * What lip refinement and the interior's learning read: the lips' box and 0.4 eye distances around it
 * (refinement searches up to 0.3 from the lips).
 */
function lipsRegion(points: Float32Array, scale: number): Rect {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const i of OUTER_LIP_POLYGON) {
    x0 = Math.min(x0, points[2 * i]);
    x1 = Math.max(x1, points[2 * i]);
    y0 = Math.min(y0, points[2 * i + 1]);
    y1 = Math.max(y1, points[2 * i + 1]);
  }
  const m = 0.4 * scale + 2;
  return { x0: x0 - m, y0: y0 - m, x1: x1 + m, y1: y1 + m };
}

/** Weight (0..1) of the re-drawn mouth per frame: 1 inside the active spans, ramping at their edges. */
export function spanWeights(
  spans: EngineJob['activeSpans'],
  fps: number,
  frames: number,
): Float32Array | null {
  if (!spans) return null;
  const inside = new Uint8Array(frames);
  for (const s of spans) {
    const a = Math.max(0, Math.round(s.start * fps));
    const b = Math.min(frames, Math.round(s.end * fps));
    for (let t = a; t < b; t++) inside[t] = 1;
  }
  // Distance (frames) to the nearest outside frame, both ways.
  const w = new Float32Array(frames);
  let d = 0;
  for (let t = 0; t < frames; t++) {
    d = inside[t] ? d + 1 : 0;
    w[t] = d;
  }
  d = 0;
  for (let t = frames - 1; t >= 0; t--) {
    d = inside[t] ? d + 1 : 0;
    w[t] = Math.min(1, Math.min(w[t], d) / SPAN_RAMP_FRAMES);
  }
  return w;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export class CpuEngine implements LipsyncEngine {
  readonly id = 'cpu';
  readonly passthrough = false;

  /**
   * yuv420p from 1280x720 up: ffmpeg's colour conversions of large frames cost more than converting
   * the face's region here; below that, where a face fills much of the frame, they cost less
   * (bench/results/2026-history.md, "Engine speed: second pass"). The setting `pixelFormat` forces one.
   */
  pixelFormatFor(width: number, height: number, settings: Readonly<Record<string, unknown>>): PixelFormat {
    const forced = settings.pixelFormat;
    if (forced === 'rgb24' || forced === 'yuv420p') return forced;
    return width * height >= YUV_MIN_PIXELS ? 'yuv420p' : 'rgb24';
  }

  /**
   * A tracking thread per job that may run at once, models loaded and kept loaded (not closed after a
   * minute idle), the mesh's layout for the rig, and the soundtrack analysis run once (while the
   * threads load).
   */
  async warmUp(opts: { readonly jobsAtOnce: number }): Promise<void> {
    meshLayout();
    await Promise.all([warmTrackers(opts.jobsAtOnce), warmAudioAnalysis()]);
  }

  start(job: EngineJob): EngineRun {
    const { width, height, fps } = job;
    let framesTotal = 0;
    let framesWithFace = 0;
    let framesRedrawn = 0;
    const sizes: number[] = [];
    const rendered: number[] = [];
    const loudness: number[] = [];
    const warnings: string[] = [];
    let mouth: MouthTrack | null = null;
    let trackerStats: TrackerStats | null = null;
    let speaker: SpeakerReport | null = null;
    let done = false;
    let usesPhonemes = false;
    let wideShapes = false;
    let phonemeShare: number | null = null;
    const meterEvery = Math.round(num(job.settings, 'meterEvery', 0, 1000) ?? METER_EVERY);
    const outMeters = new MeterStream();
    const srcMeters = new MeterStream();
    let meterMs = 0;

    /** The mouth's plan (the soundtrack's features and what is said) and, if asked for, the speaker's. */
    async function mouthAndSpeakerPlan(models: FaceModels | null) {
      const audio = await analyseAudio(job.audioPath, fps, job.frameCount);
      // A phoneme timeline shapes the mouth per sound where it can be trusted; the audio's level still
      // scales the jaw, and voice activity (when known) decides where there is speech at all.
      const planned = planMouth({
        audio,
        fps,
        frames: job.frameCount,
        temperature: job.options.temperature,
        phonemes: job.phonemes,
        phonemeSpans: job.phonemeSpans,
        phonemesAligned: job.phonemesAligned,
        speech: job.speech,
        visemes: job.visemes,
      });
      mouth = planned.track;
      usesPhonemes = planned.usesPhonemes;
      wideShapes = planned.wideShapes;
      phonemeShare = planned.phonemeShare;
      if (!mouth.hasSpeech) warnings.push('the audio holds no speech: the mouth stays closed');
      const weights = spanWeights(job.activeSpans, fps, job.frameCount);
      // active_speaker: look at the whole video first and pick the face that speaks in each stretch.
      const plan = models && wantsSpeakerScan(job.options) ? await planSpeaker(models, job) : null;
      speaker = plan?.report ?? null;
      // At a change of speaker the old face's mouth fades back to its own and the new one's fades in.
      const handover = plan ? changeWeights(plan.changes, job.frameCount) : null;
      return { audio, weights, plan, handover };
    }

    async function* frames(): AsyncGenerator<Buffer> {
      // The main thread needs the models only to track in-process or to find the speaker.
      const inThread = job.settings.trackerThread === false;
      const scanning = wantsSpeakerScan(job.options);
      const models = inThread || scanning ? await faceModels() : null;
      const layout = meshLayout();
      const stats: TrackerStats = { detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 };
      trackerStats = stats;
      const track = (plan: SpeakerPlan | null) => {
        const trackerOptions: FaceTrackerOptions = {
          fps,
          activeSpeaker: job.options.activeSpeaker,
          speakerBoxes: plan?.boxes ?? null,
          searchEvery: num(job.settings, 'searchEvery', 1, 100),
          pixelFormat: job.pixelFormat,
          detectSize: num(job.settings, 'detectSize', 128, 4096),
          interpolate: job.settings.interpolateLandmarks !== false,
          meshRuntime: job.settings.meshRuntime === 'tfjs' ? 'tfjs' : 'onnx',
        };
        const source = prefetch(job.frames, 2);
        return models && inThread
          ? trackInProcess(models, source, width, height, trackerOptions, stats)
          : trackInWorker(source, width, height, trackerOptions, stats);
      };
      const { audio, weights, plan, handover } = await mouthAndSpeakerPlan(models);
      const tracked = track(plan);
      const pads = (job.options.pads ?? null) as Pads | null;
      let rig: MouthRig | null = null;
      const interior = new MouthInterior();
      const refiner = new LipRefiner();
      const closed: MouthParams = { open: 0, width: 0, round: 0 };
      // Source pixels of the re-drawn region (the frame itself is re-drawn in place).
      let scratch: Uint8Array | null = null;
      // yuv420p frames: an rgb24 canvas of the frame's size, valid only where the face is.
      const canvas = job.pixelFormat === 'yuv420p' ? new Uint8Array(width * height * 3) : null;
      let targetCanvas: Uint8Array | null = null;
      let outline: number[] | null = null;
      const format = job.pixelFormat === 'yuv420p' ? 'yuv420p' : 'rgb24';
      const view = (data: Uint8Array): FrameView => ({ data, width, height, format });
      // The frame before a metered one (source and output, with their landmarks), for the jitter.
      let before: {
        t: number;
        src: FrameView;
        out: FrameView;
        srcPts: Float32Array;
        outPts: Float32Array;
      } | null = null;

      for await (const { frame, obs } of tracked) {
        if (job.signal.aborted) throw job.signal.reason ?? new Error('aborted');
        const t = framesTotal++;
        if (!obs) {
          yield frame;
          continue;
        }
        framesWithFace++;
        sizes.push(obs.size);
        if (!rig) {
          // The region's top reaches `pads[0]` pixels higher (in the canonical face layout).
          const topUv = pads ? Math.min(0.05, (pads[0] / Math.max(1, obs.box[3])) * 0.93) : 0;
          rig = new MouthRig(buildTopology(layout.triangulation, layout.uv, topUv), {
            fps,
            pads,
            maxOpening: num(job.settings, 'maxOpening', 0.2, 0.9),
            // Rounded and spread lips from phonemes or the viseme model are deliberate: a wider range of widths.
            shapeRange: wideShapes ? PHONEME_SHAPE_RANGE : undefined,
          });
        }
        if (obs.fresh) {
          rig.reset();
          refiner.reset();
        }
        // The pixels the engine reads and draws on: the frame itself (rgb24), or the face's part of it
        // converted into the canvas (yuv420p; the rest of the frame is never converted).
        let image: Uint8Array = frame;
        if (canvas) {
          yuvToRgb(frame, width, height, clamped(canvas), lipsRegion(obs.points, obs.scale));
          image = canvas;
        }
        const points = refiner.refine(image, width, height, obs.points, mouthDown(obs.points), obs.scale);
        const weight =
          (weights ? (t < weights.length ? weights[t] : 0) : 1) *
          (handover && t < handover.length ? handover[t] : 1);
        const params: MouthParams =
          mouth && t < mouth.open.length
            ? { open: mouth.open[t], width: mouth.width[t], round: mouth.round[t] }
            : closed;
        const geometry = rig.deform(points, params, weight);
        interior.observe(image, width, height, points, geometry.sourceGap, geometry.scale);
        const metered = meterEvery > 0 && t % meterEvery === 0;
        const beforeMetered = meterEvery > 0 && (t + 1) % meterEvery === 0;
        // What the meters keep of the source before it is re-drawn in place: on a metered frame the
        // region and the rings around its edge, on the frame before it the mouth (for the jitter).
        const c0 = performance.now();
        let keep: Rect | null = null;
        if (metered) {
          const [x0, y0, x1, y1] = geometry.bounds;
          const m = 0.35 * geometry.scale + 4;
          keep = { x0: x0 - m, y0: y0 - m, x1: x1 + m, y1: y1 + m };
        } else if (beforeMetered) {
          const a = lipsRegion(points, geometry.scale);
          const b = lipsRegion(geometry.dst, geometry.scale);
          keep = {
            x0: Math.min(a.x0, b.x0),
            y0: Math.min(a.y0, b.y0),
            x1: Math.max(a.x1, b.x1),
            y1: Math.max(a.y1, b.y1),
          };
        }
        const source = keep && cropFrame(view(frame), keep.x0, keep.y0, keep.x1, keep.y1);
        meterMs += performance.now() - c0;
        if (weight > 0) {
          scratch ??= new Uint8Array(frame.length);
          if (canvas) {
            // Plane by plane; only the opening is painted in rgb (on the canvas and a second one).
            targetCanvas ??= new Uint8Array(canvas.length);
            warpYuvInPlace(frame, scratch, width, height, geometry, interior.look(), {
              source: canvas,
              target: targetCanvas,
            });
          } else {
            warpInPlace(frame, scratch, width, height, geometry, interior.look());
          }
          framesRedrawn++;
          if (t < audio.db.length) {
            rendered.push(geometry.targetGap / geometry.scale);
            loudness.push(audio.db[t]);
          }
        }
        if (source && keep) {
          // The output's landmarks: the source's, moved where the rig moved them.
          const outPts = geometry.dst.slice(0, points.length);
          const m0 = performance.now();
          if (metered) {
            outline ??= regionOutlineLoop(rig.topology);
            const ring = outlinePoints(outline, geometry.src);
            const prev = before && before.t === t - 1 ? before : null;
            srcMeters.add(source, points, ring, prev && { frame: prev.src, points: prev.srcPts });
            outMeters.add(view(frame), outPts, ring, prev && { frame: prev.out, points: prev.outPts });
          }
          before = beforeMetered
            ? {
                t,
                src: source,
                out: weight > 0 ? cropFrame(view(frame), keep.x0, keep.y0, keep.x1, keep.y1) : source,
                srcPts: Float32Array.from(points),
                outPts,
              }
            : null;
          meterMs += performance.now() - m0;
        }
        yield frame;
      }
      done = true;
    }

    const id = this.id;
    return {
      // Read-ahead on both sides: the decoder runs while a frame is processed, and the next frame is
      // processed while the encoder takes the last one.
      frames: prefetch(frames(), 2),
      report(): EngineReport {
        const agreement = rendered.length > 2 ? pearson(rendered, loudness) : null;
        const w = [...warnings];
        if (framesTotal > 0 && framesWithFace < framesTotal * 0.5 && framesWithFace > 0) {
          w.push(`a face was found in only ${framesWithFace} of ${framesTotal} frames`);
        }
        if (speaker && speaker.method !== 'single-face') {
          w.push(
            speaker.method === 'audio-visual'
              ? `several faces: the one whose mouth follows the video's own speech was animated (${speaker.switches} change(s) of speaker)`
              : `several faces and no speech on the video's own soundtrack: the face whose mouth moves most (else the largest) was animated (${speaker.switches} change(s) of speaker)`,
          );
        } else if (trackerStats && trackerStats.multiFaceFrames > 0) {
          w.push(
            job.options.activeSpeaker && !speaker
              ? 'several faces: followed the active-speaker hint'
              : 'several faces: the largest one was animated',
          );
        }
        if (!done && framesTotal > 0) w.push('the frame stream ended early');
        return {
          engine: id,
          framesTotal,
          framesWithFace,
          framesRedrawn,
          lipMotionGenerated: framesRedrawn > 0 && (mouth?.hasSpeech ?? false),
          mouthDriver: usesPhonemes ? 'phonemes' : 'audio',
          ...(phonemeShare !== null ? { phonemeShare } : {}),
          silenceFrom: job.speech ? 'voice-activity' : 'loudness',
          lipShapesOutsidePhonemes: job.visemes ? 'viseme-model' : 'acoustic',
          medianFaceSize: median(sizes),
          mouthAudioCorrelation:
            agreement === null || Number.isNaN(agreement) ? null : Math.round(agreement * 1000) / 1000,
          speechLevelDb: mouth ? Math.round(mouth.speechLevelDb * 10) / 10 : null,
          detections: trackerStats?.detections ?? 0,
          // Frames whose landmarks were interpolated instead of measured by FaceMesh (a still face).
          landmarksInterpolated: trackerStats?.interpolated ?? 0,
          // What ran FaceMesh: onnxruntime, or tfjs where asked for or where onnxruntime failed to load.
          meshRuntime: trackerStats?.meshRuntime ?? null,
          // The frames' format through the pipes (see pixelFormatFor).
          pixelFormat: job.pixelFormat ?? 'rgb24',
          ...(speaker ? { activeSpeaker: speaker } : {}),
          // Seam, jitter and dark holes of the output next to the source's own (meters.ts).
          meters:
            meterEvery > 0
              ? {
                  everyFrames: meterEvery,
                  ...compareMeters(outMeters.summary(), srcMeters.summary()),
                  // Time spent measuring (the copies of the frames included).
                  ms: Math.round(meterMs),
                }
              : null,
          warnings: w,
        };
      },
    };
  }
}
