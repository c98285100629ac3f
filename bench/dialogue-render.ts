// A dialogue-edit render against a plain generation of the same clip and length, in one run, and the
// visible jump of the retime with frames held or dropped evenly vs where the picture moves least.
//
//   plain          the talking clip + the preview's WAV as an uploaded audio input (same length)
//   dialogue edit  the same clip with dialogueEdit: retimed onto the preview's clock, slots redrawn
//
// Both go through the API and the in-process worker (the cpu engine) of one test service, sqlite.
// Printed: medians of the job time (startedAt -> finishedAt) and the edit's as a ratio of the plain
// one, paired per run. Then, per edit, the largest frame-to-frame difference (64-pixel gray, mean
// absolute) inside the slots of the retimed picture, even vs motion-aware, against the source's own.
//
//   node --import tsx bench/dialogue-render.ts [--quick] [--runs=N]
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { machineLine, median, num, printTable } from './lib/stats.js';
import { createOrgWithKey, createTestServices, fixture, type TestOrg } from '../test/helpers/index.js';
import { uploadAssetFile } from '../test/helpers/multipart.js';
import { fetchSigned, postGenerate, waitTerminal } from '../test/integration/generations-support.js';
import { startBackground } from '../src/app/runtime.js';
import { LocalSynthesisProvider } from '../src/speech/local-provider.js';
import { probeMedia } from '../src/media/probe.js';
import { frameDifference, grayFrames } from '../src/media/section-motion.js';
import { renderEditedVideo } from '../src/pipeline/dialogue-render.js';

const run = promisify(execFile);
const args = parseArgs();
const RUNS = intOption(args, 'runs', args.quick ? 1 : 3);
const SCRIPT = 'Bob bought a blue map by the big boat, and the boat was very blue.';
const W = 320;

/** Frame-to-frame differences of a whole video at `fps`. */
async function jumps(path: string, fps: number, size: { width: number; height: number }) {
  const f = await grayFrames(path, String(fps), { start: 0, end: 1e6 }, size);
  return f.slice(1).map((x, i) => frameDifference(f[i], x));
}

await runMain(
  'dialogue-render',
  async () => {
    console.log('# A dialogue-edit render against a plain generation of the same clip and length');
    console.log(machineLine());
    const dir = await mkdtemp(join(tmpdir(), 'lipsync-bench-'));
    onCleanup(`temp folder ${dir}`, () => rm(dir, { recursive: true, force: true }));
    const t = await createTestServices({ database: 'sqlite' });
    onCleanup('test services', () => t.cleanup());
    const org: TestOrg = await createOrgWithKey(t.services, {
      flags: ['segment_lipsync', 'section_expansion'],
    });
    const speech = await new LocalSynthesisProvider().synthesize({
      text: SCRIPT,
      providerVoiceId: 'slt-hts',
      settings: {},
      workDir: dir,
    });
    const words = speech.timeline.words.map((w, i) => ({ id: `w${i + 1}`, ...w, speakerId: 'speaker_1' }));
    const path = join(dir, 'talk.mp4');
    await run('ffmpeg', [
      ...[
        '-v',
        'error',
        '-y',
        '-stream_loop',
        '-1',
        '-i',
        fixture('media/face_1.mp4'),
        '-i',
        speech.audioPath,
      ],
      ...['-map', '0:v:0', '-map', '1:a:0', '-shortest', '-vf', `scale=${W}:-2`, '-c:v', 'libx264'],
      ...['-preset', 'veryfast', '-crf', '16', '-c:a', 'aac', path],
    ]);
    const probe = await probeMedia(path);
    const fps = probe.video!.fps!;
    const size = { width: probe.video!.width, height: probe.video!.height };
    const asset = await uploadAssetFile(t.app, org.owner.headers, path);
    const bg = startBackground(t.services, { kinds: ['dialogue_edit', 'generation'] });
    onCleanup('workers', () => bg.stop());
    const call = (method: string, url: string, payload?: unknown) =>
      t.app.inject({ method: method as 'GET', url, headers: org.owner.headers, payload: payload as object });
    const id = (text: string) => words.find((w) => w.text.toLowerCase() === text)!.id;

    async function preview(label: string, edits: unknown[]) {
      const transcript = { segments: [{ id: 's1', words }] };
      const res = await call('POST', '/v2/dialogue-edits', { transcript, edits, sourceVideoUrl: asset.url });
      if (res.statusCode !== 201) throw new Error(`preview answered ${res.statusCode}: ${res.body}`);
      for (;;) {
        const v = (await call('GET', `/v2/dialogue-edits/${res.json().id}`)).json();
        if (v.status === 'FAILED') throw new Error(`preview failed: ${JSON.stringify(v.error)}`);
        if (v.status.startsWith('COMPLETED')) {
          const wav = join(dir, `${v.id}.wav`);
          await writeFile(wav, (await fetchSigned(t.app, v.previewAudioUrl)).rawPayload);
          return { label, edit: v, audio: await uploadAssetFile(t.app, org.owner.headers, wav) };
        }
        await t.services.bus.waitForChange(v.id, 1000);
      }
    }

    async function jobMs(body: unknown): Promise<number> {
      const res = await postGenerate(t.app, org.owner.headers, body);
      if (res.statusCode !== 201) throw new Error(`generate answered ${res.statusCode}: ${res.body}`);
      const g = await waitTerminal(t.app, org.owner.headers, res.json().id, 300_000);
      if (g.status !== 'COMPLETED') throw new Error(`generation ended ${g.status}`);
      const rec = (await t.services.store.generations.find(res.json().id))!;
      return Date.parse(rec.finishedAt!) - Date.parse(rec.startedAt!);
    }

    const edits = [
      await preview('change "map" -> "boat"', [{ kind: 'change', wordId: id('map'), replacement: 'boat' }]),
      await preview('remove "very"', [{ kind: 'remove', wordIds: [id('very')] }]),
    ];
    const video = { type: 'video', assetId: asset.id };
    const rows: string[][] = [['', 'plain job ms', 'dialogue edit job ms', 'x plain (paired)']];
    for (const { label, edit, audio } of edits) {
      const plainBody = { model: 'lipsync-2', input: [video, { type: 'audio', assetId: audio.id }] };
      const editBody = { model: 'lipsync-2', input: [video], dialogueEdit: { id: edit.id } };
      await jobMs(plainBody);
      await jobMs(editBody);
      const p: number[] = [];
      const e: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        p.push(await jobMs(plainBody));
        e.push(await jobMs(editBody));
      }
      const paired = median(e.map((x, i) => x / p[i]));
      rows.push([label, num(median(p), 0), num(median(e), 0), `${paired.toFixed(2)}x`]);
    }
    console.log(`\nJob times, medians of ${RUNS} run(s) after one warm-up of each`);
    printTable(rows);

    const sourceMax = Math.max(...(await jumps(path, fps, size)));
    const jumpRows: string[][] = [['', 'even', 'motion-aware', 'source largest']];
    for (const { label, edit } of edits) {
      const cells: string[] = [];
      for (const motionAware of [false, true]) {
        const sub = join(dir, `${edit.id}-${motionAware}`);
        await rm(sub, { recursive: true, force: true });
        await run('mkdir', ['-p', sub]);
        const r = await renderEditedVideo({ path, probe }, { ...edit, slots: edit.resultSlots }, sub, {
          motionAware,
        });
        const j = await jumps(r.path, fps, size);
        const inside = edit.resultSlots.map((s: any) => {
          const from = Math.max(0, Math.round((s.outputStartMs * fps) / 1000) - 1);
          const to = Math.round(((s.outputStartMs + s.outputDurationMs) * fps) / 1000);
          return Math.max(...j.slice(from, to + 1));
        });
        cells.push(`${num(Math.max(...inside), 2)} (${(Math.max(...inside) / sourceMax).toFixed(2)}x)`);
      }
      jumpRows.push([label, ...cells, num(sourceMax, 2)]);
    }
    console.log(
      '\nLargest frame-to-frame difference inside the slots of the retimed picture (x source largest)',
    );
    printTable(jumpRows);
    await bg.stop();
  },
  { maxMs: 15 * 60_000 },
);
