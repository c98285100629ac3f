// How well DTW alignment (src/speech/pico.ts) places phone boundaries, measured where both sides'
// times are known, before Pico voices were offered (docs/dubbing-voices.md, "Pico"):
//
//   known pairs   per language, espeak-ng's plan rendered by MBROLA voice A at rate 1 is mapped onto
//                 the same text by voice B (the other sex or database) at rate 1.25 with the pipeline's
//                 own code (reference stretched to the target's length, features, DTW, boundaries);
//                 the mapped boundaries are compared with B's own. All boundaries, and the start and
//                 end of each p/b/m closure.
//   Pico itself   each mapped 'p' not after a pause against the closure found in the Pico audio: the
//                 quietest 10 ms within 80 ms, from where the level falls below it + 15 dB to where it
//                 rises past that (a voiceless stop is near silent). Edges, middles, and how many
//                 closure middles lie inside the mapped p.
//
//   node --import tsx bench/pico-alignment.ts
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { phoneBoundaries, planEspeak, renderMbrola, type EspeakVoice } from '../src/speech/espeak.js';
import { mapBoundaries, readMonoWav, scalePho } from '../src/speech/pico.js';
import { LocalSynthesisProvider } from '../src/speech/local-provider.js';

const TEXTS: Record<string, string[]> = {
  es: [
    'Mi padre bebe mucho.',
    'Buenos días, ¿cómo estás? Hoy hace sol y la gente pasea por el parque.',
    'El tiempo pasa muy rápido cuando trabajamos en un proyecto bonito.',
    'Pedro compró pan, manzanas y un poco de queso en el mercado.',
    'Por favor, abre la puerta y mira quién viene a cenar esta noche.',
    'Las empresas pequeñas buscan personas que hablen varios idiomas.',
  ],
  it: [
    'Mio padre beve molto.',
    "Buongiorno, come stai? Oggi c'è il sole e tutti passeggiano nel parco.",
    'Il tempo passa molto in fretta quando lavoriamo a un bel progetto.',
    'Pietro ha comprato pane, mele e un po di formaggio al mercato.',
    'Per favore, apri la porta e guarda chi viene a cena stasera.',
    'Le piccole imprese cercano persone che parlino molte lingue.',
  ],
  fr: [
    'Mon père boit beaucoup.',
    "Bonjour, comment vas-tu? Aujourd'hui il fait beau et les gens se promènent au parc.",
    'Le temps passe très vite quand nous travaillons sur un beau projet.',
    'Pierre a acheté du pain, des pommes et un peu de fromage au marché.',
    "S'il te plaît, ouvre la porte et regarde qui vient dîner ce soir.",
    'Les petites entreprises cherchent des personnes qui parlent plusieurs langues.',
  ],
};

const PAIRS: Record<string, [EspeakVoice, EspeakVoice]> = {
  es: [
    { espeak: 'mb-es1', db: 'es1', languages: ['es'] },
    { espeak: 'mb-es2', db: 'es2', languages: ['es'] },
  ],
  it: [
    { espeak: 'mb-it3', db: 'it3', languages: ['it'] },
    { espeak: 'mb-it4', db: 'it4', languages: ['it'] },
  ],
  fr: [
    { espeak: 'mb-fr1', db: 'fr1', languages: ['fr'] },
    { espeak: 'mb-fr4', db: 'fr4', languages: ['fr'] },
  ],
};

const pct = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const fmt = (xs: number[]): string =>
  `${pct(xs, 0.5).toFixed(0)} / ${pct(xs, 0.9).toFixed(0)} ms (n=${xs.length})`;

async function knownPair(root: string, lang: string): Promise<{ all: number[]; closure: number[] }> {
  const [va, vb] = PAIRS[lang];
  const all: number[] = [];
  const closure: number[] = [];
  for (const [i, text] of TEXTS[lang].entries()) {
    const dir = join(root, `${lang}-${i}`);
    await mkdir(dir, { recursive: true });
    const a = { voice: va, workDir: dir, speed: 1 };
    const b = { voice: vb, workDir: dir, speed: 1.25 };
    const planA = await planEspeak(text, a, dir);
    const planB = await planEspeak(text, b, dir);
    const wavB = join(dir, 'b.wav');
    await renderMbrola(planB.phoText, b, dir, wavB);
    const target = await readMonoWav(wavB);
    const targetMs = (target.samples.length * 1000) / target.sampleRate;
    const trueB = phoneBoundaries(planB.phones, targetMs);
    const wavA = join(dir, 'a.wav');
    await renderMbrola(scalePho(planA.phoText, planA.phones, targetMs), a, dir, wavA);
    const ref = await readMonoWav(wavA);
    const mapped = mapBoundaries(
      phoneBoundaries(planA.phones, (ref.samples.length * 1000) / ref.sampleRate),
      ref,
      target,
    );
    if (planA.phones.length !== planB.phones.length) {
      console.log(
        `${lang} sentence ${i}: phone counts differ (${planA.phones.length}, ${planB.phones.length}), skipped`,
      );
      continue;
    }
    for (let k = 1; k < trueB.length - 1; k++) all.push(Math.abs(mapped[k] - trueB[k]));
    planB.phones.forEach((p, k) => {
      if (!['p', 'b', 'm'].includes(p.phone)) return;
      closure.push(Math.abs(mapped[k] - trueB[k]), Math.abs(mapped[k + 1] - trueB[k + 1]));
    });
  }
  return { all, closure };
}

/** Pico's own 'p' closures: the mapped closure's middle against the quietest 30 ms near it. */
async function picoClosures(
  root: string,
  lang: string,
): Promise<{ edges: number[]; middles: number[]; inside: number }> {
  const provider = new LocalSynthesisProvider();
  const edges: number[] = [];
  const middles: number[] = [];
  let inside = 0;
  for (const [i, text] of TEXTS[lang].entries()) {
    const workDir = join(root, `pico-${lang}-${i}`);
    await mkdir(workDir, { recursive: true });
    const r = await provider.synthesize({ text, providerVoiceId: `pico-${lang}`, settings: {}, workDir });
    const { samples, sampleRate } = await readMonoWav(r.audioPath);
    // Level (dB) of the 10 ms from `ms`.
    const level = (ms: number): number => {
      const a = Math.max(0, Math.round((ms * sampleRate) / 1000));
      const b = Math.min(samples.length, a + Math.round(0.01 * sampleRate));
      let s = 1e-10;
      for (let k = a; k < b; k++) s += samples[k] * samples[k];
      return 10 * Math.log10(s / Math.max(1, b - a));
    };
    for (const p of r.timeline.phonemes) {
      if (p.phone !== 'p' || p.startMs < 20) continue;
      const mid = (p.startMs + p.endMs) / 2;
      // The quietest 10 ms within 80 ms; the closure runs from where the level fell below it + 15 dB
      // (the vowel before stops) to where it rises past that again (the release).
      let q = mid;
      for (let t = mid - 80; t <= mid + 80; t += 2) if (level(t - 5) < level(q - 5)) q = t;
      const edge = level(q - 5) + 15;
      let start = q;
      let end = q;
      while (start > q - 150 && level(start - 7) <= edge) start -= 2;
      while (end < q + 150 && level(end - 3) <= edge) end += 2;
      edges.push(Math.abs(start - p.startMs), Math.abs(end - p.endMs));
      const closure = (start + end) / 2;
      middles.push(Math.abs(closure - mid));
      if (closure >= p.startMs - 20 && closure <= p.endMs + 20) inside++;
    }
  }
  return { edges, middles, inside };
}

const root = await mkdtemp(join(tmpdir(), 'pico-bench-'));
try {
  console.log('language | all boundaries median / p90 | p/b/m closure edges median / p90');
  for (const lang of Object.keys(TEXTS)) {
    const r = await knownPair(root, lang);
    console.log(`${lang} | ${fmt(r.all)} | ${fmt(r.closure)}`);
  }
  console.log('\nPico, non-initial p: mapped span against the acoustic closure (median / p90), and');
  console.log('how many closure middles lie inside the mapped p (20 ms tolerance):');
  console.log('language | edges | middles | inside');
  for (const lang of ['es', 'it', 'fr']) {
    const e = await picoClosures(root, lang);
    console.log(`${lang} | ${fmt(e.edges)} | ${fmt(e.middles)} | ${e.inside} of ${e.middles.length}`);
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
