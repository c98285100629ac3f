// History and results in Chromium: generations made through the API with the owner key are followed on
// their page until they end, compared with their source (side by side and wipe, frame stepping, slow
// playback), explained by their quality report and downloaded; one is canceled from its page; the history
// filters by status, project and search, and keeps the filters in the address.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Page } from 'playwright-core';
import { fixture } from '../helpers/paths.js';
import { createOwnerAccount, screenshot, startStudio, type Studio } from './support.js';

/** What the test reads in the page (its TypeScript has no DOM types; string predicates break on the CSP). */
interface Media {
  currentTime: number;
  playbackRate: number;
  readyState: number;
  style: { clipPath: string };
}
interface Win {
  document: {
    querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
    querySelector(selector: string): Media | null;
  };
  location: { hash: string };
}

describe('studio: history and results', { timeout: 600_000 }, () => {
  let studio: Studio;
  let page: Page;
  let errors: string[];
  let video: string;
  let audio: string;
  let projectId: string;
  let done: string;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${studio.server.url}${path}`, {
      method,
      headers: {
        'x-api-key': studio.ownerKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, any>;
  };
  const uploadFixture = async (name: string) => {
    const path = fixture(name);
    const fd = new FormData();
    fd.append('file', new Blob([await readFile(path)]), basename(path));
    const res = await fetch(`${studio.server.url}/v2/assets/upload`, {
      method: 'POST',
      headers: { 'x-api-key': studio.ownerKey },
      body: fd,
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    return (JSON.parse(text) as { id: string }).id;
  };
  const generate = async (extra: Record<string, unknown> = {}) =>
    String(
      (
        await call('POST', '/v2/generate', {
          model: 'lipsync-2',
          input: [
            { type: 'video', assetId: video },
            { type: 'audio', assetId: audio },
          ],
          options: { sync_mode: 'cut_off' },
          ...extra,
        })
      ).id,
    );
  /** Opens a studio address afresh (a goto that changes only the hash would not reload the page). */
  const open = async (hash: string) => {
    await page.goto('about:blank');
    await page.goto(`/#/${hash}`);
  };
  const rowsAre = (n: number) =>
    page.waitForFunction(
      (count) =>
        (globalThis as unknown as Win).document.querySelectorAll('table.history tbody tr').length === count,
      n,
    );
  /** Waits until the table's badges are these (or, with `each`, all say the one given). */
  const badgesAre = (want: string[], each = false) =>
    page.waitForFunction(
      ([w, e]) => {
        const found = (globalThis as unknown as Win).document.querySelectorAll('table.history tbody .badge');
        const got = Array.from(found, (b) => b.textContent);
        return e ? got.length > 0 && got.every((t) => t === w[0]) : JSON.stringify(got) === JSON.stringify(w);
      },
      [want, each] as const,
    );
  const hashHas = (text: string) =>
    page.waitForFunction((t) => (globalThis as unknown as Win).location.hash.includes(t), text);
  const statusOf = (p: Page) => p.getByRole('status', { name: 'Generation status' });
  const resultVideo = (p: Page) => p.getByLabel('Result video');
  const currentTime = (p: Page, label: string) =>
    p.getByLabel(label).evaluate((v) => (v as unknown as Media).currentTime);

  before(async () => {
    // One worker: a generation submitted behind others stays pending long enough to cancel it.
    studio = await startStudio({ env: { LIPSYNC_WORKER_CONCURRENCY: '1' } });
    video = await uploadFixture('media/face_2.mp4');
    audio = await uploadFixture('media/hello.wav');
    projectId = String((await call('POST', '/v2/projects', { name: 'Launch' })).id);
    ({ page, errors } = await studio.newPage());
    await createOwnerAccount(page, studio.setupLink, 'owner@example.com', 'owner password 1');
  });
  after(async () => {
    await studio?.close();
  });

  test('a generation page follows the generation until it completes', async () => {
    // made now, so that the page most likely meets it still running
    done = await generate({ projectId, outputFileName: 'launch-teaser' });
    await open(`generations/${done}`);
    await statusOf(page).waitFor();
    const first = (await statusOf(page).textContent()) ?? '';
    if (!/Completed/.test(first)) {
      // still running: the progress bar is there, with a Cancel button
      await page.getByRole('progressbar').waitFor();
      await page.getByRole('button', { name: 'Cancel generation' }).waitFor();
    }
    await statusOf(page).filter({ hasText: 'Completed' }).waitFor({ timeout: 240_000 });
    await resultVideo(page).waitFor();
    assert.equal(await page.getByRole('progressbar').count(), 0);
    assert.deepEqual(errors, []);
  });

  test('the result compares with its source: side by side, wipe, frame steps and slow playback', async () => {
    const g = await call('GET', `/v2/generate/${done}?include=quality`);
    const fps = typeof g.quality?.fps === 'number' ? (g.quality.fps as number) : 25;
    await open(`generations/${done}`);
    await resultVideo(page).waitFor();

    await page.getByLabel('Side by side').check();
    assert.equal(await page.locator('[data-compare=side] video').count(), 2);
    await page.getByLabel('Source video').waitFor();
    for (const label of ['Result video', 'Source video']) {
      await page.waitForFunction(
        (l) =>
          ((globalThis as unknown as Win).document.querySelector(`video[aria-label="${l}"]`)?.readyState ??
            0) >= 1,
        label,
      );
    }

    // one frame forward with the button and the key, one back with the key
    const t0 = await currentTime(page, 'Result video');
    await page.getByRole('button', { name: 'Next frame' }).click();
    const t1 = await currentTime(page, 'Result video');
    assert.ok(Math.abs(t1 - t0 - 1 / fps) < 1e-3, `stepped from ${t0} to ${t1} at ${fps} fps`);
    await page.keyboard.press('.');
    const t2 = await currentTime(page, 'Result video');
    assert.ok(Math.abs(t2 - t1 - 1 / fps) < 1e-3, `'.' stepped from ${t1} to ${t2}`);
    await page.keyboard.press(',');
    const t3 = await currentTime(page, 'Result video');
    assert.ok(Math.abs(t3 - t1) < 1e-3, `',' stepped from ${t2} to ${t3}`);
    // the source follows the result to the same moment
    await page.waitForFunction(
      (t) =>
        Math.abs(
          ((globalThis as unknown as Win).document.querySelector('video[aria-label="Source video"]')
            ?.currentTime ?? -1) - t,
        ) < 1e-3,
      t3,
    );

    // slow playback sets both videos' rate
    const rates = () =>
      page.locator('video').evaluateAll((vs) => vs.map((v) => (v as unknown as Media).playbackRate));
    await page.getByLabel('0.5×').check();
    assert.deepEqual(await rates(), [0.5, 0.5]);
    await page.getByLabel('0.25×').check();
    assert.deepEqual(await rates(), [0.25, 0.25]);

    // the wipe lays the result over the source; the slider moves the edge between them
    await page.getByLabel('Wipe', { exact: true }).check();
    assert.equal(await page.locator('[data-compare=wipe] video').count(), 2);
    const clip = () => resultVideo(page).evaluate((v) => (v as unknown as Media).style.clipPath);
    assert.match(await clip(), /50%/);
    await page.getByLabel(/Wipe position/).fill('20');
    assert.match(await clip(), /20%/);
    assert.deepEqual(await rates(), [0.25, 0.25], 'a new view keeps the speed');
    await page.getByRole('button', { name: 'Next frame' }).click();
    const w = await currentTime(page, 'Result video');
    assert.ok(w > 0, 'the wipe view steps too');
    await page
      .locator('.compare')
      .evaluate((e) => (e as unknown as { scrollIntoView(): void }).scrollIntoView());
    await screenshot(page, 'compare');
    assert.deepEqual(errors, []);
  });

  test('notes pinned to two moments: a marker seeks there, one is resolved', async () => {
    const g = await call('GET', `/v2/generate/${done}?include=quality`);
    const fps = typeof g.quality?.fps === 'number' ? (g.quality.fps as number) : 25;
    await open(`generations/${done}`);
    await page.waitForFunction(
      () =>
        ((globalThis as unknown as Win).document.querySelector('video[aria-label="Result video"]')
          ?.readyState ?? 0) >= 1,
    );
    const next = page.getByRole('button', { name: 'Next frame' });
    const markers = page.getByRole('button', { name: /^Go to the note at / });
    const note = async (frames: number, text: string, count: number) => {
      for (let i = 0; i < frames; i++) await next.click();
      await page.getByLabel(/^Note at /).fill(text);
      await page.getByRole('button', { name: 'Add note' }).click();
      await markers.nth(count - 1).waitFor();
    };
    await note(10, 'Lips open early', 1);
    await note(15, 'Blink looks stiff', 2);
    const list = await call('GET', `/v2/generations/${done}/notes`);
    assert.deepEqual(
      list.map((n: { atMs: number; text: string }) => [Math.round((n.atMs / 1000) * fps), n.text]),
      [
        [10, 'Lips open early'],
        [25, 'Blink looks stiff'],
      ],
    );

    // The first note's marker, from the keyboard, puts the player back at its moment.
    await page.getByRole('button', { name: /^Go to the note at .*: Lips open early$/ }).focus();
    await page.keyboard.press('Enter');
    const at = await currentTime(page, 'Result video');
    assert.ok(Math.abs(at - list[0].atMs / 1000) < 1e-3, `sought to ${at}`);

    await page
      .getByRole('button', { name: /^Resolve the note at / })
      .nth(1)
      .click();
    await page
      .getByRole('status')
      .filter({ hasText: / resolved\.$/ })
      .waitFor();
    const after = await call('GET', `/v2/generations/${done}/notes`);
    assert.deepEqual(
      after.map((n: { resolved: boolean }) => n.resolved),
      [false, true],
    );
    assert.equal(after[0].author, 'owner@example.com');
    assert.deepEqual(errors, []);
  });

  test('the quality report is told in sentences and the download link fetches the MP4', async () => {
    const g = await call('GET', `/v2/generate/${done}?include=quality`);
    await open(`generations/${done}`);
    const report = page.getByRole('region', { name: 'Quality report' });
    await report.getByRole('listitem').first().waitFor();
    const text = (await report.textContent()) ?? '';
    assert.match(
      text,
      new RegExp(`A face was found in ${g.quality.framesWithFace} of ${g.quality.framesTotal} frames`),
    );
    if (typeof g.quality.mouthAudioCorrelation === 'number') {
      assert.match(text, new RegExp(`Sync score ${g.quality.mouthAudioCorrelation.toFixed(2)}`));
    }
    assert.match(text, /No warnings\.|Warnings/);
    assert.doesNotMatch(text.replace(/All measurements[\s\S]*$/, ''), /undefined|NaN|\[object/);

    const link = page.getByRole('link', { name: /^Download / });
    await link.waitFor();
    assert.match((await link.textContent()) ?? '', /launch-teaser\.mp4/);
    const url = await link.getAttribute('href');
    assert.ok(url);
    const res = await fetch(new URL(url, studio.server.url));
    assert.equal(res.status, 200);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(bytes.subarray(4, 8).toString('latin1'), 'ftyp');
    assert.deepEqual(errors, []);
  });

  test('a pending generation is canceled from its page', async () => {
    // Two ahead of it on the one worker keep it pending.
    await generate();
    await generate();
    const id = await generate();
    await open(`generations/${id}`);
    await statusOf(page).filter({ hasText: 'Waiting to start' }).waitFor();
    await page.getByRole('progressbar', { name: /Waiting for a worker/ }).waitFor();
    await page.getByRole('button', { name: 'Cancel generation' }).click();
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await statusOf(page).filter({ hasText: 'Canceled' }).waitFor();
    assert.equal((await call('GET', `/v2/generate/${id}`)).status, 'CANCELED');
    // the catalogue's words for it, and a delete offered now that it has ended
    await page.getByRole('alert').waitFor();
    await page.getByRole('button', { name: 'Delete generation' }).waitFor();
    assert.deepEqual(errors, []);
  });

  test('the history filters by status, project and search, and a reload keeps the filters', async () => {
    const canceled = (await call('GET', '/v2/generations?status=CANCELED'))[0] as unknown as { id: string };
    await open('history');
    const rows = page.locator('table.history tbody tr');
    await rows.first().waitFor();
    assert.ok((await rows.count()) >= 4);

    await page.getByLabel('Status').selectOption('COMPLETED');
    await hashHas('status=COMPLETED');
    await badgesAre(['Completed'], true);
    await rows.filter({ hasText: 'launch-teaser' }).waitFor();

    await page.getByLabel('Status').selectOption('CANCELED');
    await badgesAre(['Canceled']);
    await page.getByRole('link', { name: new RegExp(canceled.id) }).waitFor();

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Project').selectOption({ label: 'Launch' });
    await hashHas(`project=${projectId}`);
    // Its one completed row (the table of the Canceled filter has one row too, until it reloads).
    await badgesAre(['Completed']);
    await rowsAre(1);
    assert.match((await rows.first().textContent()) ?? '', /launch-teaser/);
    assert.match((await rows.first().textContent()) ?? '', /Launch/);

    // a reload keeps the filter
    await page.reload();
    await rows.first().waitFor();
    assert.equal(await page.getByLabel('Project').inputValue(), projectId);
    assert.equal(await rows.count(), 1);

    // search by id among the loaded ones, kept in the address too
    await page.getByLabel('Project').selectOption('');
    await page.waitForFunction(
      () => (globalThis as unknown as Win).document.querySelectorAll('table.history tbody tr').length >= 4,
    );
    await page.getByLabel('Search by id or file name').fill(canceled.id.slice(0, 13));
    await rowsAre(1);
    await page.getByRole('link', { name: new RegExp(canceled.id) }).waitFor();
    await page.getByLabel('Search by id or file name').fill('teaser');
    await rowsAre(1);
    await rows.filter({ hasText: 'launch-teaser' }).waitFor();
    await hashHas('q=teaser');
    await page.getByLabel('Search by id or file name').fill('');
    await screenshot(page, 'history');

    // the projects view makes a project and links to its generations
    await page.getByRole('link', { name: 'Projects' }).click();
    await page.getByLabel('Project name').fill('Autumn');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('cell', { name: 'Autumn', exact: true }).waitFor();
    await page.getByRole('link', { name: 'See the generations of Launch' }).click();
    await rowsAre(1);
    assert.equal(await page.getByLabel('Project').inputValue(), projectId);
    assert.deepEqual(errors, []);
  });
});
