// test-database: none
// Other-language voices on the real engines (espeak-ng + mbrola): Spanish and Catalan with the
// synthesizer's own phone times (their sum is the WAV's length), words in order, lips shut at the
// bilabials of "mi padre bebe mucho", no sound dropped by a database for any offered language, and a
// rubberband stretch whose output is as long as planned; a SVOX Pico voice whose phone times come
// from DTW alignment shuts the lips where its own audio has the stop closure of each 'p'.
// A test skips only when its engine is missing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { fitSegment } from '../../src/domain/dub-timing.js';
import { mouthFromPhonemes } from '../../src/engines/cpu/phoneme-mouth.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { espeakDataDir } from '../../src/speech/espeak.js';
import { repairPho } from '../../src/speech/foreign-phones.js';
import { FOREIGN_VOICES, LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import { readMonoWav } from '../../src/speech/pico.js';
import { readWavInfo } from '../../src/speech/local-wav.js';
import { BILABIALS } from '../../src/speech/phones.js';
import { stretchWav } from '../../src/speech/stretch.js';
import { detectLocalEngines, MBROLA_ROOT, type LocalEngines } from '../../src/speech/tools.js';
import type { SynthesisResult } from '../../src/speech/types.js';

const SENTENCES: Record<string, string> = {
  'espeak-es2':
    'Mi padre bebe mucho. Buenos días, ¿cómo estás? Hoy hace sol y la gente juega en la calle con 25 niños.',
  'espeak-es1': 'Mi padre bebe mucho. Llueve en la ciudad y el viento sopla.',
  'espeak-ca':
    'El meu pare beu molt. Bon dia, com estàs? Avui fa sol i tothom és feliç; la gent juga al carrer amb xocolata.',
  'espeak-gl': 'O meu pai bebe moito. Bos días, como estás? Xogamos na rúa coa xente.',
  'espeak-eo':
    'Mia patro trinkas multe. Bonan tagon, kiel vi fartas? Ĉiuj ŝatas ĝardenon kaj ĥoron, ankaŭ ĵurnalon.',
  'espeak-hr':
    'Moj otac puno pije. Dobar dan, kako si? Danas je sunčano i svi su sretni; djeca se igraju na ulici.',
  'espeak-pt': 'O meu pai bebe muito. Bom dia, como estás? Hoje faz sol e toda a gente é feliz.',
  'espeak-pt-br': 'Meu pai bebe muito. Bom dia, como você está? Hoje faz sol e todo mundo é feliz.',
  'espeak-it3': "Mio padre beve molto. Buongiorno, come stai? Oggi c'è il sole e tutti sono felici.",
  'espeak-it4': 'Mio padre beve molto. La gente gioca in strada.',
  'espeak-fr1':
    "Mon père boit beaucoup. Bonjour, comment vas-tu? Aujourd'hui il fait beau et tout le monde est heureux.",
  'espeak-fr4': 'Mon père boit beaucoup. Les enfants jouent dans la rue.',
};

let root: string;
let engines: LocalEngines;
let n = 0;
const provider = new LocalSynthesisProvider();

async function synth(text: string, voice: string): Promise<SynthesisResult> {
  const workDir = join(root, `s${n++}`);
  await mkdir(workDir);
  return provider.synthesize({ text, providerVoiceId: voice, settings: {}, workDir });
}

function need(t: TestContext, db: string): boolean {
  const ok = engines.espeak?.mbrolaDbs.includes(db) ?? false;
  if (!ok) t.skip(`espeak-ng, mbrola or the MBROLA ${db} voice is not installed`);
  return ok;
}

function checkTimeline(r: SynthesisResult, words: number): void {
  const ph = r.timeline.phonemes;
  assert.equal(ph[0].startMs, 0);
  assert.ok(Math.abs(ph.at(-1)!.endMs - r.durationMs) <= 40, 'the phones cover the audio to within a frame');
  for (let i = 1; i < ph.length; i++)
    assert.equal(ph[i].startMs, ph[i - 1].endMs, 'phones follow each other');
  assert.equal(r.timeline.words.length, words);
  for (let i = 1; i < r.timeline.words.length; i++)
    assert.ok(r.timeline.words[i].startMs >= r.timeline.words[i - 1].endMs, 'words in order');
}

describe('espeak-ng + MBROLA voices', () => {
  before(async () => {
    root = await makeTempDir('espeak-test');
    engines = await detectLocalEngines();
  });
  after(async () => removeTempDir(root));

  it('speaks Spanish with its own phone times, and shuts the lips at p, b and m', async (t) => {
    if (!need(t, 'es2')) return;
    const r = await synth('Mi padre bebe mucho.', 'espeak-es2');
    checkTimeline(r, 4);
    assert.deepEqual(
      r.timeline.words.map((w) => w.text),
      ['Mi', 'padre', 'bebe', 'mucho'],
    );
    const ph = r.timeline.phonemes;
    assert.deepEqual(
      ph.filter((p) => BILABIALS.has(p.phone)).map((p) => p.phone),
      ['m', 'p', 'b', 'b', 'm'],
    );
    const fps = 25;
    const frames = Math.ceil((r.durationMs / 1000) * fps);
    const mouth = mouthFromPhonemes(ph, fps, frames, null);
    const at = (ms: number): number => mouth.open[Math.min(frames - 1, Math.floor((ms / 1000) * fps))];
    const vowels = ph
      .filter((p) => p.phone === 'aa' || p.phone === 'eh' || p.phone === 'ow')
      .map((p) => at((p.startMs + p.endMs) / 2));
    const open = Math.max(...vowels);
    assert.ok(open > 0.2, 'the vowels open the mouth');
    for (const p of ph.filter((x) => BILABIALS.has(x.phone)))
      assert.ok(at((p.startMs + p.endMs) / 2) <= 0.25 * open, `${p.phone} at ${p.startMs} ms is shut`);
  });

  it('speaks Catalan with its own phone times and words', async (t) => {
    if (!need(t, 'es2')) return;
    const r = await synth('El meu pare beu molt. Bon dia, com estàs?', 'espeak-ca');
    checkTimeline(r, 9);
    assert.equal(r.timeline.words[2].text, 'pare');
    const info = await readWavInfo(r.audioPath);
    // es2 is a 22,050 Hz database (es1, it3, fr1 and cr1 are 16 kHz): the WAV keeps the database's rate.
    assert.equal(info.sampleRate, 22050);
    assert.equal(r.sampleRate, 22050);
    assert.equal(info.durationMs, r.durationMs);
  });

  it('drops no sound in any offered language: mbrola knows every repaired phone pair', async (t) => {
    const data = await espeakDataDir().catch(() => null);
    if (!data) return t.skip('espeak-ng is not installed');
    const missing = FOREIGN_VOICES.filter((v) => !engines.espeak?.mbrolaDbs.includes(v.espeak!.db));
    if (missing.length === FOREIGN_VOICES.length) return t.skip('mbrola or its voices are not installed');
    if (missing.length > 0)
      t.diagnostic(`not checked, MBROLA voice missing: ${missing.map((v) => v.providerVoiceId).join(', ')}`);
    for (const v of FOREIGN_VOICES) {
      if (missing.includes(v)) continue;
      const text = SENTENCES[v.providerVoiceId];
      assert.ok(text, `a test sentence for ${v.providerVoiceId}`);
      const pho: { status: number | null; stdout: string } = spawnSync(
        'espeak-ng',
        ['--path', data, '-v', v.espeak!.espeak, '-q', '--pho'],
        {
          input: text,
          encoding: 'utf8',
        },
      );
      assert.equal(pho.status, 0);
      const file = join(root, `${v.providerVoiceId}.pho`);
      await writeFile(file, repairPho(pho.stdout, v.espeak!.db));
      const wav = join(root, `${v.providerVoiceId}.wav`);
      const run = spawnSync('mbrola', [join(MBROLA_ROOT, v.espeak!.db, v.espeak!.db), file, wav], {
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, `${v.providerVoiceId}: ${run.stderr}`);
      assert.doesNotMatch(run.stderr, /unknown|error/i, `${v.providerVoiceId}: ${run.stderr}`);
      const r = await synth(text, v.providerVoiceId);
      assert.ok(r.timeline.words.length >= 8, v.providerVoiceId);
      assert.ok(Math.abs(r.timeline.phonemes.at(-1)!.endMs - r.durationMs) <= 40);
    }
  });

  it("speaks Spanish with Pico, its phone times aligned: lips shut over the audio's own p closures", async (t) => {
    if (!engines.pico) return t.skip('pico2wave (libttspico-utils) is not installed');
    if (!need(t, 'es1')) return;
    const text = 'Mi padre bebe mucho. El tiempo pasa rápido y compramos pan.';
    const r = await synth(text, 'pico-es');
    assert.equal(r.sampleRate, 16000);
    checkTimeline(r, 11);
    assert.deepEqual(
      r.timeline.words.map((w) => w.text),
      ['Mi', 'padre', 'bebe', 'mucho', 'El', 'tiempo', 'pasa', 'rápido', 'y', 'compramos', 'pan'],
    );
    const ph = r.timeline.phonemes;
    assert.deepEqual(
      ph.filter((p) => BILABIALS.has(p.phone)).map((p) => p.phone),
      ['m', 'p', 'b', 'b', 'm', 'm', 'p', 'p', 'p', 'm', 'p', 'm', 'p'],
    );
    // Independently of the alignment: a voiceless stop is near silent during its closure. The
    // quietest 10 ms near each 'p' must fall inside the span the mouth keeps shut (20 ms tolerance).
    const { samples, sampleRate } = await readMonoWav(r.audioPath);
    const level = (ms: number): number => {
      const a = Math.max(0, Math.round((ms * sampleRate) / 1000));
      let s = 1e-10;
      for (let k = a; k < Math.min(samples.length, a + sampleRate / 100); k++) s += samples[k] ** 2;
      return s;
    };
    for (const p of ph.filter((x) => x.phone === 'p')) {
      const mid = (p.startMs + p.endMs) / 2;
      let quiet = mid;
      for (let ms = mid - 80; ms <= mid + 80; ms += 2) if (level(ms - 5) < level(quiet - 5)) quiet = ms;
      assert.ok(
        quiet >= p.startMs - 20 && quiet <= p.endMs + 20,
        `the closure at ${quiet} ms is within p ${p.startMs}-${p.endMs} ms`,
      );
    }
  });

  it('stretches a sentence with rubberband to the planned length', async (t) => {
    if (!need(t, 'es2')) return;
    if (spawnSync('rubberband', ['--version']).error) return t.skip('rubberband is not installed');
    const r = await synth('Mi padre bebe mucho y mi madre también.', 'espeak-es2');
    const plan = fitSegment({
      startMs: 0,
      endMs: Math.round(r.durationMs * 0.85),
      nextStartMs: r.durationMs * 2,
      speechMs: r.durationMs,
    });
    assert.ok(plan.stretch < 0.9 && plan.fits);
    const out = join(root, 'stretched.wav');
    const ms = await stretchWav(r.audioPath, out, plan.stretch);
    assert.ok(
      Math.abs(ms - (plan.endMs - plan.startMs)) <= 10,
      `${ms} ms against ${plan.endMs - plan.startMs} ms planned`,
    );
    assert.ok((await readFile(out)).length > 44);
  });
});
