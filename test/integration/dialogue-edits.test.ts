// POST/GET /v2/dialogue-edits: the API-key rules (no window, both rollout flags), every refusal before
// a job exists, and the `dialogue_edit` job to a preview: a change (one word reused from elsewhere in
// the recording, one synthesized) and a removal, on a talking-head video whose speech has known word
// times (the local synthesizer's own), and EDIT_TOO_LONG. A transcription of that video corrected by
// hand (PATCH /v2/transcriptions/{id}): the refusals, the next revision re-timed where the word is
// really spoken, and a preview made from it that does not re-speak the corrected word.
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
import { JOB_CANCELED } from '../../src/domain/jobs.js';

const run = promisify(execFile);
const SCRIPT = 'Bob bought a blue map by the big boat, and the boat was very blue.';

describe(`dialogue edits (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let plain: TestOrg;
  let dir: string;
  let bg: Background;
  let video: { id: string; url: string };
  let transcript: { segments: { id: string; words: any[] }[] };
  let words: any[];
  let sourceMs: number;

  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services, { flags: ['segment_lipsync', 'section_expansion'] });
    plain = await createOrgWithKey(t.services);
    dir = await mkdtemp(join(tmpdir(), 'dialogue-edits-'));
    const speech = await new LocalSynthesisProvider().synthesize({
      text: SCRIPT,
      providerVoiceId: 'slt-hts',
      settings: {},
      workDir: dir,
    });
    words = speech.timeline.words.map((w, i) => ({
      id: `w${i + 1}`,
      text: w.text,
      startMs: w.startMs,
      endMs: w.endMs,
      speakerId: 'speaker_1',
    }));
    transcript = { segments: [{ id: 's1', words }] };
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
      ...[
        '-map',
        '0:v:0',
        '-map',
        '1:a:0',
        '-shortest',
        '-vf',
        'scale=320:-2',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
      ],
      ...['-c:a', 'aac', path],
    ]);
    sourceMs = Math.round(((await probeMedia(path)).durationSeconds as number) * 1000);
    video = await uploadAssetFile(t.app, org.owner.headers, path);
    bg = startBackground(t.services, { kinds: ['dialogue_edit', 'transcription'] });
  });
  after(async () => {
    await bg?.stop();
    await t.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (who: TestOrg, method: string, url: string, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: who.owner.headers, payload: payload as object });
  const idOf = (text: string, nth = 0) =>
    words.filter((w) => w.text.toLowerCase() === text)[nth].id as string;

  function assertError(res: { statusCode: number; body: string; json(): any }, status: number, code: string) {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(res.json().errorCode, code);
    return res.json();
  }

  async function finished(id: string): Promise<any> {
    for (;;) {
      const res = await call(org, 'GET', `/v2/dialogue-edits/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      const v = res.json();
      if (['COMPLETED', 'COMPLETED_PARTIAL', 'FAILED'].includes(v.status)) return v;
      assert.equal(res.headers['retry-after'], '3');
      await t.services.bus.waitForChange(id, 1000);
    }
  }

  test('a change and a removal: preview, slots, retimed transcript, a reused word', async () => {
    const edits = [
      { kind: 'change', wordId: idOf('map'), replacement: 'boat' },
      { kind: 'change', wordId: idOf('big'), replacement: 'green' },
      { kind: 'remove', wordIds: [idOf('very')] },
    ];
    const res = await call(org, 'POST', '/v2/dialogue-edits', {
      transcript,
      edits,
      sourceVideoUrl: video.url,
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.equal(created.status, 'PENDING');
    assert.deepEqual(created.edits, edits);
    assert.equal(created.segmentLipsyncEnabled, true);
    assert.equal(created.sectionExpansionEnabled, true);
    const done = await finished(created.id);
    assert.ok(['COMPLETED', 'COMPLETED_PARTIAL'].includes(done.status), JSON.stringify(done.error));
    assert.equal(done.resultSlots.length, 3);
    assert.deepEqual(done.resultSlots.map((s: any) => s.kind).sort(), ['change', 'change', 'remove']);
    const texts = done.resultTranscript.segments.flatMap((s: any) =>
      s.words.map((w: any) => w.text.toLowerCase()),
    );
    assert.ok(!texts.includes('map') && !texts.includes('very') && texts.includes('green'), texts.join(' '));
    assert.ok(
      done.reusedWords.some((r: any) => r.words.map((w: string) => w.toLowerCase()).includes('boat')),
    );
    // The preview is a WAV of the whole video, shorter by about the removed word.
    const u = new URL(done.previewAudioUrl);
    const wav = await t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
    assert.equal(wav.statusCode, 200);
    const file = join(dir, 'preview.wav');
    await writeFile(file, wav.rawPayload);
    const p = await probeMedia(file);
    assert.ok(Math.abs((p.durationSeconds as number) * 1000 - done.previewDurationMs) < 30);
    assert.ok(done.previewDurationMs < sourceMs, `${done.previewDurationMs} vs ${sourceMs}`);
    // "green" was synthesized in a voice measured from the source: the preview names it for reuse.
    assert.equal(done.voiceId, done.id);
    const again = await call(org, 'POST', '/v2/dialogue-edits', {
      transcript,
      edits: [{ kind: 'change', wordId: idOf('bob'), replacement: 'Rob' }],
      sourceVideoUrl: video.url,
      voiceId: done.voiceId,
    });
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.json().voiceId, done.id);
    await t.services.queue.cancel('dialogue_edit', again.json().id, JOB_CANCELED);
  });

  async function transcribed(id: string, min = 1): Promise<any> {
    for (;;) {
      const v = (await call(org, 'GET', `/v2/transcriptions/${id}`)).json();
      if (v.status === 'FAILED' || (v.status === 'COMPLETED' && v.revision >= min)) return v;
      await t.services.bus.waitForChange(id, 1000);
    }
  }

  test('a transcript corrected by hand: refusals, the next revision aligned, not re-spoken in a preview', async () => {
    const created = await call(org, 'POST', '/v2/transcriptions', { sourceVideoUrl: video.url });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    const first = await transcribed(id);
    assert.equal(first.status, 'COMPLETED', JSON.stringify(first.error));
    assert.equal(first.revision, 1);
    const heard = first.transcript.segments.flatMap((s: any) => s.words);
    // The word heard nearest the middle of "boat" (first), corrected to what the script says there.
    const truth = words.find((w) => w.text.toLowerCase() === 'boat')!;
    const mid = (w: any) => (w.startMs + w.endMs) / 2;
    const target = heard.reduce((a: any, b: any) =>
      Math.abs(mid(b) - mid(truth)) < Math.abs(mid(a) - mid(truth)) ? b : a,
    );
    const text = target.text === 'boat' ? 'Boat' : 'boat';
    const patch = (body: unknown) => call(org, 'PATCH', `/v2/transcriptions/${id}`, body);

    for (const body of [
      { revision: 1, words: [{ id: 'w999', text: 'boat' }] },
      { revision: 1, words: [{ id: target.id, text: '  ' }] },
      {
        revision: 1,
        words: [
          { id: target.id, text: 'boat' },
          { id: target.id, text: 'boat' },
        ],
      },
      { revision: 1, words: [] },
      { words: [{ id: target.id, text }] },
    ])
      assertError(await patch(body), 400, 'invalid_request');
    assertError(
      await patch({ revision: 2, words: [{ id: target.id, text }] }),
      409,
      'transcription_revision_conflict',
    );
    assertError(
      await call(org, 'PATCH', '/v2/transcriptions/9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', {
        revision: 1,
        words: [{ id: 'w1', text }],
      }),
      404,
      'transcription_not_found',
    );

    const res = await patch({ revision: 1, words: [{ id: target.id, text }] });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().revision, 1);
    assert.ok(['PENDING', 'PROCESSING'].includes(res.json().status));
    // While the correction runs, another one is refused; so is one of the old revision afterwards.
    assertError(
      await patch({ revision: 1, words: [{ id: target.id, text }] }),
      409,
      'transcription_not_completed',
    );
    const done = await transcribed(id, 2);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done.error));
    assert.equal(done.revision, 2);
    assert.equal(done.error, null);
    assertError(
      await patch({ revision: 1, words: [{ id: target.id, text: 'map' }] }),
      409,
      'transcription_revision_conflict',
    );
    const now = done.transcript.segments.flatMap((s: any) => s.words);
    assert.deepEqual(
      now.map((w: any) => w.id),
      heard.map((w: any) => w.id),
    );
    const fixed = now.find((w: any) => w.id === target.id);
    assert.equal(fixed.text, text);
    // Re-timed inside the source, where the script really says "boat" (the synthesizer's own times).
    assert.ok(
      fixed.startMs >= 0 && fixed.endMs > fixed.startMs && fixed.endMs <= done.sourceEndMs,
      JSON.stringify(fixed),
    );
    assert.ok(
      Math.abs(fixed.startMs - truth.startMs) < 250,
      `${JSON.stringify(fixed)} vs ${JSON.stringify(truth)}`,
    );
    for (const [i, w] of now.entries()) if (w.id !== target.id) assert.equal(w.text, heard[i].text);

    // A preview from the corrected revision: a removal elsewhere, the corrected word is source audio.
    const other =
      now.find((w: any) => w.endMs < fixed.startMs - 300) ??
      now.find((w: any) => w.startMs > fixed.endMs + 300);
    const edit = await call(org, 'POST', '/v2/dialogue-edits', {
      transcript: done.transcript,
      edits: [{ kind: 'remove', wordIds: [other.id] }],
      sourceVideoUrl: video.url,
    });
    assert.equal(edit.statusCode, 201, edit.body);
    const preview = await finished(edit.json().id);
    assert.ok(['COMPLETED', 'COMPLETED_PARTIAL'].includes(preview.status), JSON.stringify(preview.error));
    assert.deepEqual(
      preview.resultSlots.map((s: any) => s.kind),
      ['remove'],
    );
    // The preview's words (what a render aligns for the mouth) carry the corrected text.
    const result = preview.resultTranscript.segments.flatMap((s: any) => s.words.map((w: any) => w.text));
    assert.ok(result.includes(text), result.join(' '));
  });

  test('EDIT_TOO_LONG: a replacement far longer than its span fails the job with the span', async () => {
    const replacement =
      'an extraordinarily long and winding replacement that goes on and on for many seconds more than any listener would accept';
    const res = await call(org, 'POST', '/v2/dialogue-edits', {
      transcript,
      edits: [{ kind: 'change', wordId: idOf('a'), replacement }],
      sourceVideoUrl: video.url,
    });
    assert.equal(res.statusCode, 201, res.body);
    const done = await finished(res.json().id);
    assert.equal(done.status, 'FAILED');
    assert.equal(done.error.code, 'EDIT_TOO_LONG');
    assert.deepEqual(done.error.wordIds, [idOf('a')]);
    assert.ok(done.error.spanText);
  });

  test('refusals before any job exists', async () => {
    const ok = {
      transcript,
      edits: [{ kind: 'remove', wordIds: [idOf('very')] }],
      sourceVideoUrl: video.url,
    };
    const before = await t.services.store.db.kysely
      .selectFrom('dialogue_edits')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assertError(
      await call(org, 'POST', '/v2/dialogue-edits', { ...ok, startMs: 0 }),
      422,
      'dialogue_edit_unsupported',
    );
    assertError(await call(plain, 'POST', '/v2/dialogue-edits', ok), 422, 'dialogue_edit_retime_required');
    // Rollout flags that cannot be read are not guessed at: 503.
    const broken = await createOrgWithKey(t.services);
    await t.services.store.db.kysely
      .updateTable('organizations')
      .set({ flags: '{not a list' })
      .where('id', '=', broken.organization.id)
      .execute();
    const infra = assertError(
      await call(broken, 'POST', '/v2/dialogue-edits', ok),
      503,
      'generation_infra_service_unavailable',
    );
    assert.ok(infra.message);
    assertError(
      await call(org, 'POST', '/v2/dialogue-edits', { ...ok, sourceVideoUrl: 'https://example.com/x.mp4' }),
      422,
      'dialogue_edit_source_not_accessible',
    );
    const first = idOf('bob');
    const refusals: [unknown[], string][] = [
      [[], 'edits'],
      [[{ kind: 'change', wordId: 'nope', replacement: 'x' }], 'edits[0].wordId'],
      [[{ kind: 'change', wordId: first, replacement: '   ' }], 'edits[0].replacement'],
      [[{ kind: 'remove', wordIds: [first, idOf('a')] }], 'edits[0].wordIds'],
      [
        [
          { kind: 'change', wordId: first, replacement: 'Rob' },
          { kind: 'remove', wordIds: [first] },
        ],
        'edits[1]',
      ],
    ];
    for (const [edits, field] of refusals) {
      const b = assertError(
        await call(org, 'POST', '/v2/dialogue-edits', { ...ok, edits }),
        400,
        'invalid_request',
      );
      assert.ok(String(b.field).startsWith(field), `${b.field} for ${JSON.stringify(edits)}`);
    }
    const late = {
      segments: [{ id: 's1', words: [...words.slice(0, -1), { ...words.at(-1), endMs: sourceMs + 5000 }] }],
    };
    assertError(
      await call(org, 'POST', '/v2/dialogue-edits', { ...ok, transcript: late }),
      400,
      'invalid_request',
    );
    assertError(
      await call(org, 'POST', '/v2/dialogue-edits', {
        ...ok,
        voiceId: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      }),
      422,
      'voice_not_found',
    );
    assertError(
      await call(org, 'POST', '/v2/dialogue-edits', {
        ...ok,
        rerunOfJobId: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      }),
      400,
      'invalid_request',
    );
    const after = await t.services.store.db.kysely
      .selectFrom('dialogue_edits')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n), 'no job for a refused request');
    assertError(
      await call(plain, 'GET', '/v2/dialogue-edits/9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d'),
      404,
      'dialogue_edit_not_found',
    );
  });
});
