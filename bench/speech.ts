// Real-time factor (processing time / audio duration; lower is faster) of the local synthesis provider
// per installed voice, and of forced alignment alone (on festival renderings, whose native word times
// also give the aligner's accuracy).
//
//   node --import tsx bench/speech.ts [--quick] [--rounds=N]
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { alignTranscript } from '../src/speech/align.js';
import { LocalSynthesisProvider } from '../src/speech/local-provider.js';
import { detectLocalEngines } from '../src/speech/tools.js';
import { makeTempDir, removeTempDir } from '../src/media/tempdir.js';
import { intOption, parseArgs } from './lib/args.js';

const args = parseArgs();
const rounds = intOption(args, 'rounds', args.quick ? 1 : 3);

// Harvard sentences (lists 1 and 2): about 560 characters, several engine calls per text.
const TEXT = [
  'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.',
  'It is easy to tell the depth of a well. These days a chicken leg is a rare dish.',
  'Rice is often served in round bowls. The juice of lemons makes fine punch.',
  'The box was thrown beside the parked truck. The hogs were fed chopped corn and garbage.',
  'Four hours of steady work faced us. A large size in stockings is hard to sell.',
  'The boy was there when the sun rose. A rod is used to catch pink salmon.',
  'The source of the huge river is the clear spring. Kick the ball straight and follow through.',
].join(' ');

const root = await makeTempDir('bench-speech');
process.on('SIGINT', () => void removeTempDir(root).then(() => process.exit(130)));
process.on('SIGTERM', () => void removeTempDir(root).then(() => process.exit(143)));
const provider = new LocalSynthesisProvider();
let n = 0;
const dir = async (): Promise<string> => {
  const d = join(root, `r${n++}`);
  await mkdir(d);
  return d;
};

try {
  const engines = await detectLocalEngines();
  const voices = await provider.listVoices({});
  console.log(`# local speech: ${TEXT.length} characters, ${rounds} round(s); best of the rounds`);
  console.log('voice            audio s  time s    RTF   (RHVoice time includes its alignment)');
  for (const v of voices) {
    let best = Infinity;
    let audioMs = 0;
    for (let r = 0; r < rounds; r++) {
      const workDir = await dir();
      const t0 = performance.now();
      const res = await provider.synthesize({
        text: TEXT,
        providerVoiceId: v.providerVoiceId,
        settings: {},
        workDir,
      });
      best = Math.min(best, performance.now() - t0);
      audioMs = res.durationMs;
    }
    console.log(
      `${v.providerVoiceId.padEnd(15)} ${(audioMs / 1000).toFixed(1).padStart(7)} ${(best / 1000).toFixed(2).padStart(7)} ${(best / audioMs).toFixed(3).padStart(6)}`,
    );
  }

  if (engines.festival && engines.pocketsphinx && engines.ffmpeg) {
    const ref = await provider.synthesize({
      text: TEXT,
      providerVoiceId: 'slt-hts',
      settings: {},
      workDir: await dir(),
    });
    // One warm-up so the dictionary load (once per process) is not counted.
    await alignTranscript(ref.audioPath, 'The birch canoe.', { workDir: await dir() }).catch(() => undefined);
    let best = Infinity;
    let errors: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      const a = await alignTranscript(ref.audioPath, TEXT, { workDir: await dir() });
      best = Math.min(best, performance.now() - t0);
      errors = ref.timeline.words
        .map((w, i) => Math.abs(w.startMs - a.words[i].startMs))
        .sort((x, y) => x - y);
    }
    const q = (p: number): number => errors[Math.min(errors.length - 1, Math.floor(errors.length * p))];
    const within = errors.filter((e) => e <= 50).length / errors.length;
    console.log(
      `\n# forced alignment, one call on the ${(ref.durationMs / 1000).toFixed(1)} s festival rendering (${errors.length} words)`,
    );
    console.log(
      `time ${(best / 1000).toFixed(2)} s, RTF ${(best / ref.durationMs).toFixed(3)}; word-start error against festival's own times: median ${q(0.5)} ms, p90 ${q(0.9)} ms, ${(within * 100).toFixed(0)} % within 50 ms`,
    );
  } else {
    console.log('\n# forced alignment: skipped (festival, pocketsphinx_batch or ffmpeg missing)');
  }
} finally {
  await removeTempDir(root);
}
