// POST /v2/generate with dialogueEdit: a change and a removal rendered end to end (picture retimed onto
// the preview's clock, only the slots redrawn, the preview as the sound), every refusal before anything
// is stored, and POST /v2/analyze/cost quoting the same body.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { uploadAssetFile } from '../helpers/multipart.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import { probeMedia } from '../../src/media/probe.js';
import { fetchSigned, postGenerate, postGenerateForm, waitTerminal } from './generations-support.js';
import {
  correlation,
  envelope,
  frameAt,
  psnr,
  recognize,
  worstBlockPsnr,
} from './dialogue-render-support.js';
import { frameDifference, grayFrames } from '../../src/media/section-motion.js';

const run = promisify(execFile);

interface Source {
  path: string;
  id: string;
  url: string;
  fps: number;
  /** The height at width W. */
  height: number;
}

const SCRIPT = 'Bob bought a blue map by the big boat, and the boat was very blue.';
const W = 320;

describe(`dialogue render (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;
  let plain: TestOrg;
  let dir: string;
  let bg: Background;
  let source: Source;
  let words: any[];
  /** A real recording (face_2.mp4) whose picture ends 39 ms before its container does. */
  let real: Source & { words: any[] };
  let otherVideo: { id: string; url: string };

  before(async () => {
    t = await createTestServices();
    const flags = ['segment_lipsync', 'section_expansion'];
    org = await createOrgWithKey(t.services, { flags });
    other = await createOrgWithKey(t.services, { flags });
    plain = await createOrgWithKey(t.services);
    dir = await mkdtemp(join(tmpdir(), 'dialogue-render-'));
    const speech = await new LocalSynthesisProvider().synthesize({
      text: SCRIPT,
      providerVoiceId: 'slt-hts',
      settings: {},
      workDir: dir,
    });
    words = speech.timeline.words.map((w, i) => ({ id: `w${i + 1}`, ...w, speakerId: 'speaker_1' }));
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
    const p = await probeMedia(path);
    source = {
      path,
      ...(await uploadAssetFile(t.app, org.owner.headers, path)),
      fps: p.video!.fps!,
      height: p.video!.height,
    };
    otherVideo = await uploadAssetFile(t.app, org.owner.headers, fixture('media/face_1.mp4'));
    const realPath = fixture('media/face_2.mp4');
    const realWav = join(dir, 'real.wav');
    await run('ffmpeg', ['-v', 'error', '-y', '-i', realPath, '-ac', '1', '-ar', '16000', realWav]);
    const rp = await probeMedia(realPath);
    real = {
      path: realPath,
      ...(await uploadAssetFile(t.app, org.owner.headers, realPath)),
      fps: rp.video!.fps!,
      height: Math.round((W * rp.video!.height) / rp.video!.width),
      words: (await recognize(realWav)).map((w) => ({ ...w, speakerId: 'speaker_1' })),
    };
    bg = startBackground(t.services, { kinds: ['dialogue_edit', 'generation'] });
  });
  after(async () => {
    await bg?.stop();
    await t.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (who: TestOrg, method: string, url: string, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: who.owner.headers, payload: payload as object });
  const ids = (...texts: string[]) =>
    texts.map(
      (x) => words.find((w) => w.text.toLowerCase() === x && !w.used && (w.used = true))!.id as string,
    );
  const assertError = (
    res: { statusCode: number; body: string; json(): any },
    status: number,
    code: string,
  ) => {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(res.json().errorCode, code, res.body);
    return res.json();
  };

  async function preview(edits: unknown[], from = { words, url: source.url }): Promise<any> {
    words.forEach((w) => delete w.used);
    const transcript = { segments: [{ id: 's1', words: from.words.map(({ used: _u, ...w }) => w) }] };
    const res = await call(org, 'POST', '/v2/dialogue-edits', {
      transcript,
      edits,
      sourceVideoUrl: from.url,
    });
    assert.equal(res.statusCode, 201, res.body);
    for (;;) {
      const v = (await call(org, 'GET', `/v2/dialogue-edits/${res.json().id}`)).json();
      if (['COMPLETED', 'COMPLETED_PARTIAL', 'FAILED'].includes(v.status)) return v;
      await t.services.bus.waitForChange(v.id, 1000);
    }
  }

  const body = (id: string, video: Record<string, string> = { url: source.url }) => ({
    model: 'lipsync-2',
    input: [{ type: 'video', ...video }],
    dialogueEdit: { id },
  });

  /**
   * Output frame -> source time outside the slots (null near a slot): untouched stretches keep their
   * source length, and each slot ends in whole frames where the preview says it ends.
   */
  function sourceTime(slots: any[], outFrame: number, fps: number): number | null {
    const f = (ms: number) => Math.round((ms * fps) / 1000);
    let shift = 0;
    for (const s of slots) {
      if (outFrame < f(s.outputStartMs - 150)) break;
      if (outFrame < f(s.outputStartMs + s.outputDurationMs + 150)) return null;
      shift = f(s.sourceStartMs + s.sourceDurationMs) - f(s.outputStartMs + s.outputDurationMs);
    }
    return ((outFrame + shift + 0.5) * 1000) / fps;
  }

  async function renderAndCheck(
    edit: any,
    video: Record<string, string>,
    src: Source = source,
    form = false,
  ) {
    const b = body(edit.id, video);
    // As multipart (fields only), the edit must survive the form's handling as it does JSON's.
    const res = form
      ? await postGenerateForm(t.app, org.owner.headers, [
          { name: 'model', value: b.model },
          { name: 'input', value: JSON.stringify(b.input) },
          { name: 'dialogueEdit', value: JSON.stringify(b.dialogueEdit) },
        ])
      : await postGenerate(t.app, org.owner.headers, b);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().input, [
      { type: 'video', ...video },
      { type: 'dialogueEdit', dialogueEdit: { id: edit.id } },
    ]);
    const g = await waitTerminal(t.app, org.owner.headers, res.json().id, 300_000);
    assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
    const out = join(dir, `out-${edit.id}.mp4`);
    await writeFile(out, (await fetchSigned(t.app, g.outputUrl)).rawPayload);
    const p = await probeMedia(out);
    const frames = p.video!.frameCount!;
    // The preview's length within one frame (docs/dialogue-editing.md).
    assert.ok(
      Math.abs(frames / p.video!.fps! - edit.previewDurationMs / 1000) <= 1 / p.video!.fps! + 1e-6,
      `${frames} frames for a preview of ${edit.previewDurationMs} ms`,
    );
    // Outside the slots: the source's picture (PSNR > 35 dB), at a few points on both sides of each slot.
    const slots = [...edit.resultSlots].sort((a, b) => a.outputStartMs - b.outputStartMs);
    const fps = p.video!.fps!;
    let compared = 0;
    for (const part of [0.1, 0.3, 0.5, 0.7, 0.9]) {
      const outFrame = Math.floor((part * edit.previewDurationMs * fps) / 1000);
      const at = sourceTime(slots, outFrame, fps);
      if (at === null) continue;
      const [a, b] = await Promise.all([
        frameAt(out, (outFrame + 0.5) / fps, W, src.height),
        frameAt(src.path, at / 1000, W, src.height),
      ]);
      assert.ok(psnr(a, b, W) > 35, `at frame ${outFrame} (source ${at} ms): ${psnr(a, b, W).toFixed(1)} dB`);
      // That frame, not a neighbour: no further from it than from the source's frames just before and
      // after (a perceptual hash flips a bit on real footage after one more encode).
      for (const d of [-1, 1]) {
        const n = await frameAt(src.path, Math.max(0, at / 1000 + d / fps), W, src.height);
        assert.ok(
          psnr(a, b, W) >= psnr(a, n, W) - 0.1,
          `frame ${outFrame} is closer to the source's ${d > 0 ? 'next' : 'previous'} frame`,
        );
      }
      compared++;
    }
    assert.ok(compared >= 2, 'frames compared outside the slots');
    // The sound is the preview's.
    const wav = join(dir, `preview-${edit.id}.wav`);
    await writeFile(wav, (await fetchSigned(t.app, edit.previewAudioUrl)).rawPayload);
    const outEnv = await envelope(out);
    const c = correlation(outEnv, await envelope(wav));
    const withSource = correlation(outEnv, await envelope(src.path));
    // Closer to the preview than to the source's own soundtrack (which differs at the slots).
    assert.ok(c > 0.9 && c > withSource, `loudness envelope correlation ${c} (source ${withSource})`);
    // No visible jump (docs/dialogue-editing.md): across each slot, its edges and the frames a dissolve
    // borrows (120 ms a side), no frame-to-frame difference is above the source's own largest; across a
    // removal (a cut) not above 1.5 x its 90th percentile either, a typical step of the footage. Dropped
    // frames were about 2 x, a hard cut 5 x or more (64-pixel gray frames, mean absolute difference).
    // A change's steps also include the newly drawn mouth.
    const jumps = async (path: string) => {
      const f = await grayFrames(path, String(fps), { start: 0, end: 1e6 }, { width: W, height: src.height });
      return f.slice(1).map((x, i) => frameDifference(f[i], x));
    };
    const [outJumps, srcJumps] = await Promise.all([jumps(out), jumps(src.path)]);
    const sourceMax = Math.max(...srcJumps);
    const typical = [...srcJumps].sort((a, b) => a - b)[Math.floor(0.9 * (srcJumps.length - 1))];
    const borrowed = Math.round((120 * fps) / 1000);
    for (const s of slots) {
      const from = Math.max(0, Math.round((s.outputStartMs * fps) / 1000) - 1 - borrowed);
      const to = Math.round(((s.outputStartMs + s.outputDurationMs) * fps) / 1000) + borrowed;
      const inside = Math.max(...outJumps.slice(from, to + 1));
      const cut = s.kind === 'remove';
      assert.ok(
        inside <= (cut ? Math.min(sourceMax, 1.5 * typical) : sourceMax),
        `largest step across the slot ${inside.toFixed(2)}; source: largest ${sourceMax.toFixed(2)}, ` +
          `90th percentile ${typical.toFixed(2)}`,
      );
    }
    return { out, slots };
  }

  test('a change: rendered on the preview clock, only the slot redrawn, the preview as sound', async () => {
    const [map] = ids('map');
    const edit = await preview([{ kind: 'change', wordId: map, replacement: 'boat' }]);
    assert.ok(['COMPLETED', 'COMPLETED_PARTIAL'].includes(edit.status), JSON.stringify(edit.error));
    const { out, slots } = await renderAndCheck(edit, { url: source.url });
    // Inside the slot the mouth is redrawn: the frame differs from the source's frame there.
    const s = slots[0];
    const mid = s.outputStartMs + s.outputDurationMs / 2;
    const srcMid = s.sourceStartMs + (s.sourceDurationMs * (mid - s.outputStartMs)) / s.outputDurationMs;
    const [a, b] = await Promise.all([
      frameAt(out, mid / 1000, W, source.height),
      frameAt(source.path, srcMid / 1000, W, source.height),
    ]);
    // The redrawn mouth is a local change: the worst 32x32 block, not the whole frame, shows it.
    const mouth = worstBlockPsnr(a, b, W);
    assert.ok(mouth < 28, `inside the slot: worst block ${mouth.toFixed(1)} dB`);
  });

  test('a removal, by assetId as multipart: shorter output, untouched picture around it', async () => {
    const edit = await preview([{ kind: 'remove', wordIds: ids('very') }]);
    assert.ok(['COMPLETED', 'COMPLETED_PARTIAL'].includes(edit.status), JSON.stringify(edit.error));
    await renderAndCheck(edit, { assetId: source.id }, source, true);
  });

  test("a removal before a pause in a real recording: the preview's length, no jump at the cut", async () => {
    // "ruffle go to" (pocketsphinx): 790 ms of speech before a pause, of which a 200 ms breath stays.
    const at = real.words.findIndex((w, i) => w.text === 'ruffle' && real.words[i + 1]?.text === 'go');
    assert.ok(at >= 0, real.words.map((w) => w.text).join(' '));
    const removed = real.words.slice(at, at + 3);
    const edit = await preview([{ kind: 'remove', wordIds: removed.map((w) => w.id) }], real);
    assert.ok(['COMPLETED', 'COMPLETED_PARTIAL'].includes(edit.status), JSON.stringify(edit.error));
    const [slot] = edit.resultSlots;
    assert.ok(slot.sourceDurationMs - slot.outputDurationMs > 600, JSON.stringify(slot));
    await renderAndCheck(edit, { assetId: real.id }, real);
  });

  test('refusals: 400 for the request shape, 422 for the edit; nothing stored', async () => {
    const count = async () => (await call(org, 'GET', '/v2/generations')).json().length;
    const before = await count();
    const edit = await preview([{ kind: 'remove', wordIds: ids('blue') }]);
    const ok = body(edit.id);
    const shape: [unknown, string][] = [
      [{ ...ok, input: [...ok.input, { type: 'audio', url: source.url }] }, 'input[1]'],
      [
        { ...ok, input: [{ type: 'text', provider: { name: 'local', voiceId: 'x', script: 'hi' } }] },
        'input[0]',
      ],
      [{ ...ok, input: [] }, 'input'],
      [{ ...ok, segments: [{ startTime: 0, endTime: 1 }] }, 'segments'],
      [{ ...ok, dubParams: { targetLang: 'de' } }, 'dubParams'],
      [{ ...ok, dialogueEdit: {} }, 'dialogueEdit.id'],
    ];
    for (const [b, field] of shape) {
      const e = assertError(await postGenerate(t.app, org.owner.headers, b), 400, 'invalid_request');
      assert.equal(e.field, field, JSON.stringify(b));
    }
    const form = await postGenerateForm(t.app, org.owner.headers, [
      { name: 'model', value: 'lipsync-2' },
      { name: 'dialogueEdit', value: JSON.stringify({ id: edit.id }) },
      { name: 'video', file: source.path, type: 'video/mp4' },
    ]);
    assert.equal(assertError(form, 400, 'invalid_request').field, 'video');

    const gen = (who: TestOrg, b: unknown) => postGenerate(t.app, who.owner.headers, b);
    assertError(await gen(org, body('9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d')), 422, 'dialogue_edit_not_found');
    assertError(await gen(other, body(edit.id)), 422, 'dialogue_edit_not_found');
    assertError(await gen(plain, body(edit.id)), 422, 'dialogue_edit_retime_required');
    assertError(await gen(org, body(edit.id, { url: otherVideo.url })), 422, 'dialogue_edit_source_mismatch');
    assertError(
      await gen(org, body(edit.id, { assetId: otherVideo.id })),
      422,
      'dialogue_edit_source_mismatch',
    );
    assertError(
      await gen(org, body(edit.id, { url: 'https://example.com/talk.mp4' })),
      422,
      'dialogue_edit_source_mismatch',
    );

    // A preview not finished yet (stored as the job would leave it while running).
    const rec = (await t.services.store.dialogueEdits.find(org.organization.id, edit.id))!;
    const pending = {
      ...rec,
      id: '0b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      status: 'PROCESSING' as const,
      previewKey: null,
      result: null,
    };
    await t.services.store.dialogueEdits.insert(pending);
    assertError(await gen(org, body(pending.id)), 422, 'dialogue_edit_not_ready');

    // A removal of most of a sentence: too much picture to drop; the same again fails the same way.
    const long = await preview([
      { kind: 'remove', wordIds: ids('by', 'the', 'big', 'boat', 'and', 'the', 'boat') },
    ]);
    assert.ok(['COMPLETED', 'COMPLETED_PARTIAL'].includes(long.status), JSON.stringify(long.error));
    const slot = long.resultSlots[0];
    for (let i = 0; i < 2; i++) {
      const e = assertError(await gen(org, body(long.id)), 422, 'dialogue_edit_removal_too_large');
      assert.deepEqual(e.dialogueEditSection, {
        slotIndex: 0,
        sourceStartMs: slot.sourceStartMs,
        sourceDurationMs: slot.sourceDurationMs,
      });
    }
    assert.equal(await count(), before, 'no generation for a refused request');
  });

  test('POST /v2/analyze/cost quotes the same body at the preview length', async () => {
    const edit = await preview([{ kind: 'remove', wordIds: ids('blue') }]);
    const res = await call(org, 'POST', '/v2/analyze/cost', body(edit.id));
    assert.equal(res.statusCode, 200, res.body);
    const [e] = res.json();
    assert.ok(Math.abs(e.duration - edit.previewDurationMs / 1000) < 1.5 / source.fps, JSON.stringify(e));
    assert.ok(Math.abs(e.fps - source.fps) < 0.05, String(e.fps));
    assertError(
      await call(plain, 'POST', '/v2/analyze/cost', body(edit.id)),
      422,
      'dialogue_edit_retime_required',
    );
    assertError(
      await call(org, 'POST', '/v2/analyze/cost', body(edit.id, { url: otherVideo.url })),
      422,
      'dialogue_edit_source_mismatch',
    );
  });
});
