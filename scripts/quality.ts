// Measures a lip-synced video (see src/engines/cpu/quality.ts):
//   npm run quality -- OUTPUT.mp4 AUDIO [--reference INPUT.mp4] [--json]
// prints the sync score (mouth opening measured on OUTPUT against AUDIO's loudness per frame, best lag
// within +-3 frames) and, with --reference, the PSNR outside the lower face against INPUT.
import { parseArgs } from 'node:util';
import {
  loudnessPerFrame,
  measureMouth,
  psnrOutsideLowerFace,
  syncScore,
  videoFacts,
} from '../src/engines/cpu/quality.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { reference: { type: 'string' }, json: { type: 'boolean', default: false } },
});
if (positionals.length !== 2) {
  console.error('usage: npm run quality -- OUTPUT.mp4 AUDIO [--reference INPUT.mp4] [--json]');
  process.exit(2);
}
const [output, audio] = positionals;

const facts = await videoFacts(output);
const mouth = await measureMouth(output, facts);
const db = await loudnessPerFrame(audio, facts.fps, mouth.opening.length);
const sync = syncScore(mouth.opening, db);
const psnr = values.reference ? await psnrOutsideLowerFace(output, values.reference, mouth, facts) : null;

const fmt = (v: number, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : String(v));
if (values.json) {
  console.log(
    JSON.stringify({ output, audio, reference: values.reference ?? null, ...facts, sync, psnr }, null, 2),
  );
} else {
  console.log(
    `video          ${output} (${facts.width}x${facts.height}, ${facts.fps} fps, ${sync.frames} frames)`,
  );
  console.log(`face found     ${sync.framesWithFace} of ${sync.frames} frames`);
  console.log(`sync score     ${fmt(sync.score)} (best lag ${sync.lag} frames, within +-3)`);
  if (psnr) {
    console.log(
      `PSNR outside   ${fmt(psnr.psnr, 2)} dB outside the lower face (${psnr.frames} frames, ${(psnr.coverage * 100).toFixed(1)}% of pixels)`,
    );
  }
}
