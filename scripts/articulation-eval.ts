// Articulation from recordings, measured on the fixture faces (docs/engine.md, "Articulation from any
// recording"):
//   node --import tsx scripts/articulation-eval.ts [--clips face_1,face_3] [--sentence A|B]
//        [--conditions loudness,text,alignment,recognition,noisy-loudness,noisy-vad] [--noise music] [--json]
//        [--engine-settings '{"interpolateLandmarks":false}']
// A sentence is synthesized by the local provider (festival's own phone times are the truth), then
// played as a plain recording: nothing of the timeline goes to the engine unless the condition says so.
//   loudness        the mouth from loudness alone (no voice activity, no phonemes): the old path;
//   text            the synthesizer's own phones (a text input);
//   alignment       the recording + its transcript, forced-aligned;
//   recognition     the recording alone: words recognized, then aligned;
//   noisy-loudness  the recording mixed with noise at 10 dB SNR, loudness alone;
//   noisy-vad       the same mix, with voice activity and the transcript (the new path);
//   model           the recording alone, lips from the learned viseme model (no recognition);
//   recognition+model  recognized words where confident, the viseme model elsewhere;
//   vad             the recording alone, voice activity and acoustic shapes (no model, no words);
//   noisy-vad-only  the noisy mix, voice activity only; noisy-model: the noisy mix with the model.
// --model F picks the viseme model (default: the shipped models/articulation-v1.onnx); --voice V the
// local voice that speaks the sentence (slt-hts; rhvoice-clb, which no shipped model was trained on).
// Each drives the first 4.9 s of the clip (decoder -> engine -> encoder); the meter measures the mouth
// at every sound of the true timeline. Needs the fixtures (LIPSYNC_FIXTURES_DIR or ../shared/fixtures).
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  atSounds,
  middleFrame,
  phonemeShapes,
  syncOutsideLipSounds,
} from '../src/engines/cpu/phoneme-quality.js';
import {
  loudnessPerFrame,
  measureMouth,
  psnrOutsideLowerFace,
  syncScore,
} from '../src/engines/cpu/quality.js';
import { probeMedia } from '../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';
import { articulate, type Articulation } from '../src/speech/articulation.js';
import { alignTranscript } from '../src/speech/align.js';
import { LocalRecognitionProvider } from '../src/speech/recognition/local.js';
import type { TimedPhoneme } from '../src/speech/types.js';
import { detectSpeech } from '../src/speech/vad.js';
import { loadVisemeModel } from '../src/speech/viseme-model.js';
import { fixture } from '../test/helpers/paths.js';
import { driveEngine, recordingWithLead } from '../test/helpers/engine-drive.js';
import { brownNoise, mixAtSnr, musicNoise, pinkNoise, readMono, writeWav16 } from '../test/helpers/noise.js';

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
const SENTENCES: Record<string, string> = {
  A: 'Bob bought a map. Pam ate pie by the blue boat. We see two cool moons.',
  B: 'My mom keeps a blue boat by the beach. We made soup with peas and beans.',
};
const SECONDS = 4.9;
const ALL = ['loudness', 'text', 'alignment', 'recognition', 'noisy-loudness', 'noisy-vad'];

const { values } = parseArgs({
  options: {
    clips: { type: 'string', default: CLIPS.join(',') },
    sentence: { type: 'string', default: 'A' },
    conditions: { type: 'string', default: ALL.join(',') },
    noise: { type: 'string', default: 'music' },
    snr: { type: 'string', default: '10' },
    model: { type: 'string', default: 'models/articulation-v1.onnx' },
    voice: { type: 'string', default: 'slt-hts' },
    json: { type: 'boolean', default: false },
    // Per p, b, m of the true timeline: the opening above the clip's shut level at its middle frame.
    detail: { type: 'boolean', default: false },
    // Engine settings as JSON, e.g. '{"interpolateLandmarks":false}' (to compare a setting's effect).
    'engine-settings': { type: 'string', default: '{}' },
  },
});
const engineSettings = JSON.parse(values['engine-settings']) as Record<string, unknown>;

const dir = await makeTempDir('articulation-eval');
const text = SENTENCES[values.sentence] ?? values.sentence;
// The recording starts with a pause of LEAD_MS, so closure in pauses is measured in noise too.
const LEAD_MS = 700;
const rec = await recordingWithLead(text, LEAD_MS, dir, values.voice);
const { truth: timeline, samples: clean16, path: clean } = rec;
const truth: TimedPhoneme[] = timeline.phonemes;
const noiseOf: Record<string, (n: number) => Float32Array> = {
  music: (n) => musicNoise(n, 16000, 7),
  pink: (n) => pinkNoise(n, 7),
  brown: (n) => brownNoise(n, 7),
};
const noisy = join(dir, 'noisy.wav');
await writeWav16(
  noisy,
  mixAtSnr(clean16, (noiseOf[values.noise] ?? noiseOf.music)(clean16.length), Number(values.snr)),
  16000,
);

const visemeModel = await loadVisemeModel(values.model);
const tools = {
  detectSpeech: async (p: string) => (await detectSpeech(p)).segments,
  recognizer: new LocalRecognitionProvider(),
  align: alignTranscript,
};

async function articulation(condition: string): Promise<Articulation | null> {
  const durationMs = Math.round(clean16.length / 16);
  switch (condition) {
    case 'text':
      return articulate({ audioPath: clean, durationMs, timeline, workDir: dir }, tools);
    case 'alignment':
      return articulate({ audioPath: clean, durationMs, transcript: text, workDir: dir }, tools);
    case 'recognition':
      return articulate({ audioPath: clean, durationMs, workDir: dir }, tools);
    case 'vad':
    case 'model':
      return articulate({ audioPath: clean, durationMs, workDir: dir }, { ...tools, recognizer: null });
    case 'recognition+model':
      return articulate({ audioPath: clean, durationMs, workDir: dir }, tools);
    case 'noisy-vad-only':
    case 'noisy-model':
      return articulate({ audioPath: noisy, durationMs, workDir: dir }, { ...tools, recognizer: null });
    case 'noisy-vad':
      return articulate({ audioPath: noisy, durationMs, transcript: text, workDir: dir }, tools);
    default:
      return null;
  }
}

interface Row {
  clip: string;
  condition: string;
  pbm: number;
  rounded: number;
  sync: number;
  syncOutside: number;
  lag: number;
  psnr: number;
  pauses: number;
  primary: string;
  phonemeShare: unknown;
  ms: Articulation['timings'] | null;
}

const rows: Row[] = [];
for (const clip of values.clips.split(',')) {
  const video = fixture(`media/${clip}.mp4`);
  const probe = await probeMedia(video);
  const v = probe.video!;
  const fps = clip === 'face_1' ? 30 : Math.round(v.fps ?? 25);
  for (const condition of values.conditions.split(',')) {
    const audio = condition.startsWith('noisy') ? noisy : clean;
    const a = await articulation(condition);
    const visemes = condition.endsWith('model')
      ? await visemeModel.run(await readMono(audio, 16000), 16000)
      : null;
    const { out, report } = await driveEngine({
      video,
      width: v.width,
      height: v.height,
      fps,
      seconds: SECONDS,
      audio,
      dir,
      name: `${clip}-${condition}`,
      videoFilter: `fps=${fps}`,
      articulation: a,
      visemes,
      settings: engineSettings,
    });
    const measured = await measureMouth(out);
    // Sync against the clean speech: what the mouth should follow, whatever the background.
    const db = await loudnessPerFrame(clean, fps, measured.opening.length);
    const shapes = phonemeShapes(measured, truth, fps);
    const row: Row = {
      clip,
      condition,
      pbm: shapes.openRatio,
      rounded: shapes.widthRatio,
      sync: syncScore(measured.opening, db).score,
      syncOutside: syncOutsideLipSounds(measured.opening, db, truth, fps).score,
      lag: syncScore(measured.opening, db).lag,
      psnr: (await psnrOutsideLowerFace(out, video, measured)).psnr,
      pauses: atSounds(measured.opening, truth, ['sil'], fps, shapes.shutLevel).mean,
      primary: a?.primary ?? 'acoustic',
      phonemeShare: report.phonemeShare ?? null,
      ms: a?.timings ?? null,
    };
    rows.push(row);
    if (values.detail && !values.json) {
      const at = truth
        .filter((ph) => ['p', 'b', 'm'].includes(ph.phone.toLowerCase()))
        .map((ph) => {
          const o = measured.opening[middleFrame(ph, fps)] ?? NaN;
          return `${ph.phone}@${ph.startMs}:${(o - shapes.shutLevel).toFixed(3)}`;
        });
      console.log(`  p/b/m above shut: ${at.join(' ')}`);
    }
    if (!values.json) {
      const f = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
      console.log(
        `${clip.padEnd(17)} ${condition.padEnd(15)} p/b/m ${f(row.pbm)}  rounded ${f(row.rounded)}  sync ${f(row.sync)} (lag ${row.lag}, outside lip sounds ${f(row.syncOutside)})  ` +
          `PSNR ${row.psnr.toFixed(1)}  pauses ${f(row.pauses)}  ${row.primary} ${String(row.phonemeShare)} ${JSON.stringify(row.ms)}`,
      );
    }
  }
}
if (values.json)
  console.log(JSON.stringify({ sentence: text, noise: values.noise, snr: values.snr, rows }, null, 2));
await removeTempDir(dir);
