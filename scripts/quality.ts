// Measures a lip-synced video (see src/engines/cpu/quality.ts):
//   npm run quality -- OUTPUT.mp4 AUDIO [--reference INPUT.mp4] [--phonemes TIMELINE.json] [--json]
// prints the sync score (mouth opening measured on OUTPUT against AUDIO's loudness per frame, best lag
// within +-3 frames) and, with --reference, the PSNR outside the lower face against INPUT.
// --phonemes: the phoneme timeline of AUDIO (ms from OUTPUT's first frame; a SpeechTimeline
// `{ "phonemes": [{ "phone": "b", "startMs": 175, "endMs": 220 }, ...] }` or the bare list): adds the
// mouth shapes per sound (src/engines/cpu/phoneme-quality.ts): opening at p/b/m over the opening at
// open vowels (aa ae ah aw ay), width at rounded vowels (uw ow w uh) over spread ones (iy ih ey), and
// the sync score over the frames without lip sounds (p b m f v: there the lips close whatever the
// loudness, which the plain sync score counts against them), and closure in silence: the opening above
// the shut level at the middle of each pause (`sil`).
// Always: the realism meters (src/engines/cpu/meters.ts: seam at the edge of the re-drawn region,
// mouth jitter, dark-hole frames), with --reference also the reference's own and the ratios.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  atSounds,
  parsePhonemes,
  phonemeShapes,
  syncOutsideLipSounds,
} from '../src/engines/cpu/phoneme-quality.js';
import {
  loudnessPerFrame,
  measureMeters,
  measureMouth,
  psnrOutsideLowerFace,
  syncScore,
  videoFacts,
} from '../src/engines/cpu/quality.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    reference: { type: 'string' },
    phonemes: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
if (positionals.length !== 2) {
  console.error(
    'usage: npm run quality -- OUTPUT.mp4 AUDIO [--reference INPUT.mp4] [--phonemes TIMELINE.json] [--json]',
  );
  process.exit(2);
}
const [output, audio] = positionals;

const facts = await videoFacts(output);
const mouth = await measureMouth(output, facts);
const db = await loudnessPerFrame(audio, facts.fps, mouth.opening.length);
const sync = syncScore(mouth.opening, db);
const psnr = values.reference ? await psnrOutsideLowerFace(output, values.reference, mouth, facts) : null;
const phonemes = values.phonemes ? parsePhonemes(JSON.parse(await readFile(values.phonemes, 'utf8'))) : null;
const shapes = phonemes ? phonemeShapes(mouth, phonemes, facts.fps) : null;
const syncOutside = phonemes ? syncOutsideLipSounds(mouth.opening, db, phonemes, facts.fps) : null;
const closureInSilence =
  phonemes && shapes ? atSounds(mouth.opening, phonemes, ['sil'], facts.fps, shapes.shutLevel) : null;
const meters = await measureMeters(output, values.reference ?? null, facts);

const fmt = (v: number, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : String(v));
if (values.json) {
  console.log(
    JSON.stringify(
      {
        output,
        audio,
        reference: values.reference ?? null,
        ...facts,
        sync,
        psnr,
        phonemes: shapes && { ...shapes, syncOutsideLipSounds: syncOutside, closureInSilence },
        meters,
      },
      null,
      2,
    ),
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
  if (shapes && syncOutside) {
    console.log(
      `sync outside   ${fmt(syncOutside.score)} over the ${syncOutside.frames} frames without p/b/m/f/v (best lag ${syncOutside.lag})`,
    );
    const { bilabial, openVowel, rounded, spread } = shapes;
    console.log(
      `p/b/m opening  ${fmt(shapes.openRatio)} of the open-vowel opening (${fmt(bilabial.mean)} at ${bilabial.count} p/b/m, ${fmt(openVowel.mean)} at ${openVowel.count} open vowels, above the shut level ${fmt(shapes.shutLevel)})`,
    );
    console.log(
      `rounded width  ${fmt(shapes.widthRatio)} of the spread width (${fmt(rounded.mean)} at ${rounded.count} rounded, ${fmt(spread.mean)} at ${spread.count} spread)`,
    );
    if (closureInSilence) {
      console.log(
        `silence        ${fmt(closureInSilence.mean)} opening above the shut level in ${closureInSilence.count} pauses`,
      );
    }
  }
  const m = meters.output;
  const vs = (x: number | null) => (x === null ? '' : ` (${fmt(x, 2)} of the reference's)`);
  const or = (x: number | null, d = 3) => (x === null ? 'n/a' : fmt(x, d));
  console.log(
    `seam           ${or(m.seam)} (step at the region's edge over the step around it)${vs(meters.seamVsSource)}`,
  );
  console.log(
    `jitter         ${or(m.jitter, 2)} levels over ${m.jitterPairs} frame pairs${vs(meters.jitterVsSource)}`,
  );
  console.log(
    `dark holes     ${or(m.darkHoleShare)} of ${m.openFrames} open-mouth frames` +
      (meters.source ? ` (reference ${or(meters.source.darkHoleShare)} of ${meters.source.openFrames})` : ''),
  );
}
