// The dialogue editor in Chromium: a talking-head clip whose speech is known (the local synthesizer's
// over a fixture face, as in the CLI dialogue e2e) is uploaded on #/edit and transcribed in the page;
// one word is retyped and two are removed, the preview is made and played, and the render is followed
// to a COMPLETED generation. The API (owner key) then shows the preview rendered holds exactly those edits.
// Then a word is corrected by hand (the next revision, used by the preview) and a removal too long to
// hide in the picture is refused at render, its words outlined beside the message.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { LocalSynthesisProvider } from '../../src/speech/local-provider.js';
import { fixture, runCli } from '../helpers/index.js';
import { createOwnerAccount, screenshot, sideBySideCaptions, startStudio, type Studio } from './support.js';

const run = promisify(execFile);
const SCRIPT = 'Bob bought a blue map by the big boat, and the boat was very blue.';

describe('studio: dialogue editor', { timeout: 900_000 }, () => {
  let studio: Studio;
  let page: Page;
  let errors: string[];
  let dir: string;
  let video: string;

  const call = async (path: string) => {
    const res = await fetch(`${studio.server.url}${path}`, { headers: { 'x-api-key': studio.ownerKey } });
    const text = await res.text();
    assert.ok(res.ok, `GET ${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-studio-dialogue-'));
    const speech = await new LocalSynthesisProvider().synthesize({
      text: SCRIPT,
      providerVoiceId: 'slt-hts',
      settings: {},
      workDir: dir,
    });
    video = join(dir, 'talk.mp4');
    await run('ffmpeg', [
      ...['-v', 'error', '-y', '-stream_loop', '-1', '-i', fixture('media/face_1.mp4')],
      ...['-i', speech.audioPath, '-map', '0:v:0', '-map', '1:a:0', '-shortest', '-vf', 'scale=320:-2'],
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-c:a', 'aac', video],
    ]);
    studio = await startStudio({ env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn' } });
    ({ page, errors } = await studio.newPage());
    await createOwnerAccount(page, studio.setupLink, 'owner@example.com', 'a long password 123');
    // Dialogue edits need the retiming flags (spec rule 6), which the operator turns on.
    const session = (await page.evaluate(async () => (await fetch('/api/auth/session')).json())) as {
      organization: { id: string };
    };
    const r = await runCli(
      ['org', 'update', session.organization.id, '--add-flags', 'segment_lipsync,section_expansion'],
      { env: studio.dep.env },
    );
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await studio?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('transcribe, retype one word and remove two, preview, render to a completed video', async () => {
    await page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Dialogue editor' }).waitFor();
    await page.getByLabel('Choose a video file').setInputFiles(video);
    await page.getByText('talk.mp4 is ready.').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Transcribe' }).click();
    const transcript = page.getByRole('group', { name: 'Transcript' });
    await transcript.getByRole('button').first().waitFor({ timeout: 120_000 });
    const words = transcript.getByRole('button');
    assert.ok((await words.count()) >= 8, await transcript.innerText());

    // Retype the third word; select the sixth and seventh with the keyboard and remove them.
    await words.nth(2).click();
    await page.getByLabel('New text for the selected word').fill('boat');
    await page.getByRole('button', { name: 'Change', exact: true }).click();
    await words.nth(5).click();
    await page.keyboard.press('Shift+ArrowRight');
    await page.getByText(/^2 words selected: /).waitFor();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByText('2 edits.').waitFor();

    await page.getByRole('button', { name: 'Preview the edit' }).click();
    const audio = page.getByLabel('Preview of the edited speech');
    await audio.waitFor({ timeout: 300_000 });
    await page.getByRole('button', { name: 'Play preview' }).click();
    await page.waitForFunction(
      () => {
        const a = (
          globalThis as unknown as { document: { querySelector(s: string): unknown } }
        ).document.querySelector('.dialogue-preview audio') as { currentTime: number } | null;
        return !!a && a.currentTime > 0;
      },
      undefined,
      { timeout: 30_000 },
    );
    // The shot shows the video, the timeline, the edited words and as much of the preview as fits.
    await page
      .getByLabel('Source video')
      .evaluate((v) => (v as unknown as { scrollIntoView(): void }).scrollIntoView());
    await screenshot(page, 'dialogue-editor');
    const wav = await page.context().request.get((await audio.getAttribute('src'))!);
    assert.equal(wav.status(), 200);
    assert.equal((await wav.body()).subarray(0, 4).toString('latin1'), 'RIFF');

    await page.getByRole('button', { name: 'Render the video' }).click();
    await page.waitForURL((u) => /^#\/generations\/[^/]+$/.test(u.hash), { timeout: 60_000 });
    const id = decodeURIComponent(new URL(page.url()).hash.slice('#/generations/'.length));
    const until = Date.now() + 600_000;
    let g: Record<string, unknown>;
    for (;;) {
      g = await call(`/v2/generate/${id}?wait=true&timeout=10`);
      if (!['PENDING', 'PROCESSING'].includes(g.status as string)) break;
      assert.ok(Date.now() < until, `generation ${id} still ${g.status}`);
    }
    assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${studio.server.stdout().slice(-3000)}`);

    // The preview rendered holds the edits made in the page, in source order.
    const item = (g.input as { type: string; dialogueEdit?: { id: string } }[]).find(
      (i) => i.type === 'dialogueEdit',
    );
    const editId = item?.dialogueEdit?.id;
    assert.ok(editId, JSON.stringify(g));
    const edit = await call(`/v2/dialogue-edits/${editId}`);
    const ids = edit.sourceTranscript.segments.flatMap((s: { words: { id: string }[] }) =>
      s.words.map((w) => w.id),
    );
    assert.deepEqual(edit.edits, [
      { kind: 'change', wordId: ids[2], replacement: 'boat' },
      { kind: 'remove', wordIds: [ids[5], ids[6]] },
    ]);
    assert.ok(['COMPLETED', 'COMPLETED_PARTIAL'].includes(edit.status), edit.status);

    // The page compares the edited video with its source.
    assert.deepEqual(await sideBySideCaptions(page), ['Source', 'Edit']);
    assert.deepEqual(errors, []);
  });

  test('correct a word, then a removal too long to render: refused words outlined, with the message', async () => {
    await page.goto(`${studio.server.url}/#/edit`);
    await page.getByRole('heading', { name: 'Dialogue editor' }).waitFor();
    await page.getByLabel('Choose a video file').setInputFiles(video);
    await page.getByText('talk.mp4 is ready.').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Transcribe' }).click();
    const words = page.getByRole('group', { name: 'Transcript' }).getByRole('button');
    await words.first().waitFor({ timeout: 120_000 });

    // What the recognizer heard first, corrected (in capitals, so that it differs): kept as recorded.
    await page.getByLabel(/^Correct the transcript/).check();
    await words.first().click();
    const heard = (await words.first().innerText()).trim();
    const said = heard.toUpperCase() === heard ? heard.toLowerCase() : heard.toUpperCase();
    await page.getByLabel('What was really said', { exact: true }).fill(said);
    await page.getByRole('button', { name: 'Save the correction' }).click();
    await page.getByText(/^1 word corrected \(revision \d+\)\.$/).waitFor({ timeout: 120_000 });
    assert.match(
      (await words.first().getAttribute('aria-label')) ?? '',
      new RegExp(`^${said} at .*, corrected$`),
    );

    // Back to editing: every word but the first and the last removed at once drops seconds of picture.
    await page.getByLabel(/^Edit the dialogue/).check();
    const n = await words.count();
    await words.nth(1).click();
    for (let i = 0; i < n - 3; i++) await page.keyboard.press('Shift+ArrowRight');
    await page.getByText(`${n - 2} words selected: `, { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('button', { name: 'Preview the edit' }).click();
    const edited = page.getByLabel('Edited transcript');
    await edited.waitFor({ timeout: 300_000 });
    assert.ok((await edited.innerText()).startsWith(said), await edited.innerText());

    await page.getByRole('button', { name: 'Render the video' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText(/^Slot \d+ removes \d+ ms of footage/).waitFor({ timeout: 60_000 });
    // The refused section's words are outlined and say so; they are the removed ones.
    const flagged = page.locator('.dialogue-word.flagged');
    assert.ok((await page.locator('.dialogue-word.remove.flagged').count()) >= n - 4);
    for (const label of await flagged.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label'))))
      assert.match(label ?? '', /, refused$/);
    assert.deepEqual(errors, []);
  });
});
