// Calibrating the realism meters (src/engines/cpu/meters.ts, docs/engine.md "Meters") on the fixture
// faces: each real clip as recorded (with its own speech: what a real face scores), then today's
// engine driving the same clip with foreign speech (the local synthesizer's sentence after a 0.7 s
// pause, as scripts/articulation-eval.ts does), measured by `npm run quality`'s meters against the
// clip, next to what the engine's own report says.
//   node --import tsx bench/meters-calibration.ts [--clips face_1,face_3] [--seconds 4.9] [--json]
// Also the engine on one frame of the clip held still for the same time (the frame of its first two
// seconds with the mouth most shut: a portrait whose mouth was never seen open, so the interior is all
// synthesised).
// Closure in silence: the opening above the clip's shut level (5th percentile) over the frames outside
// the voice-activity segments of the speech the mouth should follow.
// Needs the fixtures (LIPSYNC_FIXTURES_DIR or ../shared/fixtures).
import { parseArgs } from 'node:util';
import { measureMeters, measureMouth, type VideoMeters } from '../src/engines/cpu/quality.js';
import { join } from 'node:path';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { probeMedia } from '../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';
import { detectSpeech } from '../src/speech/vad.js';
import { fixture } from '../test/helpers/paths.js';
import { driveEngine, recordingWithLead } from '../test/helpers/engine-drive.js';

const CLIPS = [
  'face_1',
  'face_2',
  'face_3',
  'face_4',
  'face_5',
  'wda_speaker_a',
  'wda_speaker_b',
  'latentsync_demo1',
];
const SENTENCE = 'Bob bought a map. Pam ate pie by the blue boat. We see two cool moons.';

const { values } = parseArgs({
  options: {
    clips: { type: 'string', default: CLIPS.join(',') },
    seconds: { type: 'string', default: '4.9' },
    json: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);

async function closureInSilence(
  video: string,
  speechOf: string,
  fps: number,
  frames: number,
): Promise<number> {
  const { opening } = await measureMouth(video, undefined, frames);
  const segments = (await detectSpeech(speechOf)).segments;
  const finite = opening.filter(Number.isFinite).sort((a, b) => a - b);
  const shut = finite[Math.floor(0.05 * (finite.length - 1))] ?? 0;
  let sum = 0;
  let n = 0;
  opening.forEach((o, i) => {
    const ms = (i / fps) * 1000;
    if (!Number.isFinite(o) || segments.some((s) => ms >= s.startMs && ms < s.endMs)) return;
    sum += Math.max(0, o - shut);
    n++;
  });
  return n > 0 ? sum / n : NaN;
}

interface Row {
  clip: string;
  real: VideoMeters;
  realSilence: number;
  engine: VideoMeters;
  engineSilence: number;
  report: unknown;
  still: VideoMeters;
  stillReport: unknown;
}

const dir = await makeTempDir('meters-calibration');
const rec = await recordingWithLead(SENTENCE, 700, dir);
const rows: Row[] = [];
try {
  for (const clip of values.clips.split(',')) {
    const video = fixture(`media/${clip}.mp4`);
    const v = (await probeMedia(video)).video!;
    const fps = clip === 'face_1' ? 30 : Math.round(v.fps ?? 25);
    const frames = Math.floor(seconds * fps);
    const facts = { width: v.width, height: v.height, fps, durationSeconds: seconds };
    const real = await measureMeters(video, null, facts, frames);
    const realSilence = await closureInSilence(video, video, fps, frames);
    const { out, report } = await driveEngine({
      video,
      width: v.width,
      height: v.height,
      fps,
      seconds,
      audio: rec.path,
      dir,
      name: clip,
      videoFilter: `fps=${fps}`,
    });
    const engine = await measureMeters(out, video, facts, frames);
    const engineSilence = await closureInSilence(out, rec.path, fps, frames);
    const stillVideo = join(dir, `${clip}-still.mp4`);
    // The frame of the first two seconds with the mouth most shut.
    const first = (await measureMouth(video, facts, 2 * fps)).opening;
    const shut = first.reduce((k, o, i) => (Number.isFinite(o) && !(o >= first[k]) ? i : k), 0);
    await runFfmpeg([
      '-y',
      '-i',
      video,
      '-vf',
      `fps=${fps},select=eq(n\\,${shut})`,
      '-frames:v',
      '1',
      '-f',
      'image2',
      '-c:v',
      'png',
      join(dir, 'still.png'),
    ]);
    await runFfmpeg([
      '-loop',
      '1',
      '-i',
      join(dir, 'still.png'),
      '-t',
      String(seconds),
      '-r',
      String(fps),
      '-pix_fmt',
      'yuv420p',
      '-c:v',
      'libx264',
      '-crf',
      '16',
      stillVideo,
    ]);
    const stillRun = await driveEngine({
      video: stillVideo,
      width: v.width,
      height: v.height,
      fps,
      seconds,
      audio: rec.path,
      dir,
      name: `${clip}-still-out`,
    });
    const still = await measureMeters(stillRun.out, stillVideo, facts, frames);
    const row = {
      clip,
      real,
      realSilence,
      engine,
      engineSilence,
      report: report.meters,
      still,
      stillReport: stillRun.report.meters,
    };
    rows.push(row);
    if (!values.json) {
      const f = (x: number | null | undefined, d = 3) =>
        x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(d);
      const e = engine.output;
      console.log(
        `${clip.padEnd(17)} real: seam ${f(real.output.seam)} jitter ${f(real.output.jitter, 2)} dark ${f(real.output.darkHoleShare, 2)} of ${real.output.openFrames} silence ${f(realSilence)}` +
          ` | engine: seam ${f(e.seam)} (x${f(engine.seamVsSource, 2)}) jitter ${f(e.jitter, 2)} (x${f(engine.jitterVsSource, 2)}) dark ${f(e.darkHoleShare, 2)} of ${e.openFrames} silence ${f(engineSilence)}` +
          ` | still: dark ${f(still.output.darkHoleShare, 2)} of ${still.output.openFrames} jitter ${f(still.output.jitter, 2)}` +
          ` | report ${JSON.stringify(report.meters)}`,
      );
    }
  }
} finally {
  await removeTempDir(dir);
}
if (values.json) console.log(JSON.stringify({ sentence: SENTENCE, seconds, rows }, null, 2));
