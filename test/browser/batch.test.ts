// The studio's Batch page in Chromium: a folder of media and a CSV of 20 pairs become a batch (each
// file uploaded once, the JSONL built in the page), checked by a dry run before it may run, followed
// through the page's progress to the end, and its results file downloaded; a JSONL file with one bad
// line is refused by the dry run, which names that line, and cannot run. The passthrough engine keeps
// 20 generations quick on a loaded machine (the engine itself is tested elsewhere).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { fixture } from '../helpers/index.js';
import { createOwnerAccount, screenshot, signIn, startStudio, type Studio } from './support.js';

describe('studio: the Batch page', { timeout: 600_000 }, () => {
  let studio: Studio;
  let dir: string;
  const email = 'owner@example.com';
  const password = 'owner password 1';

  const apiGet = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${studio.server.url}${path}`, { headers: { 'x-api-key': studio.ownerKey } });
    const text = await res.text();
    assert.equal(res.status, 200, `${path}: ${text}`);
    return JSON.parse(text) as T;
  };
  const open = async () => {
    const { page, errors } = await studio.newPage();
    await signIn(page, email, password);
    await page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name: 'Batch' }).click();
    await page.getByRole('heading', { name: 'Batch', level: 1 }).waitFor();
    return { page, errors };
  };
  /**
   * What each POST /v2/batch of the page got: "VALIDATED" (a dry run), "created" (a batch) or the
   * refusal's code (the form's body is not visible to the test: the file goes as a blob).
   */
  const batchPosts = (page: Page) => {
    const answers: Promise<string>[] = [];
    page.on('response', (r) => {
      if (r.request().method() !== 'POST' || new URL(r.url()).pathname !== '/v2/batch') return;
      answers.push(
        r
          .json()
          .then((b: { status?: string; id?: string; errorCode?: string }) =>
            b.status === 'VALIDATED' ? 'VALIDATED' : b.id ? 'created' : String(b.errorCode),
          ),
      );
    });
    return () => Promise.all(answers);
  };

  before(async () => {
    studio = await startStudio({ env: { LIPSYNC_DEFAULT_ENGINE: 'passthrough' } });
    dir = await mkdtemp(join(tmpdir(), 'studio-batch-'));
    const { page, context } = await studio.newPage();
    await createOwnerAccount(page, studio.setupLink, email, password);
    await context.close();
  });
  after(async () => {
    await studio?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('20 pairs from a folder and a CSV: uploaded once, dry run first, run, live progress, results file', async () => {
    const media = join(dir, 'media');
    await mkdir(media);
    await copyFile(fixture('media/face_2.mp4'), join(media, 'face_2.mp4'));
    await copyFile(fixture('media/hello.wav'), join(media, 'hello.wav'));
    const csv = join(dir, 'pairs.csv');
    const rows = Array.from(
      { length: 20 },
      (_, i) => `face_2.mp4,hello.wav,clip-${String(i + 1).padStart(2, '0')}.mp4`,
    );
    await writeFile(csv, ['video,audio,outputFileName', ...rows].join('\n') + '\n');

    const { page, errors } = await open();
    const sent = batchPosts(page);
    await page.getByLabel('Choose a folder').setInputFiles(media);
    await page.getByText('2 files chosen').waitFor();
    // A CSV naming a file that is not in the folder shows the problem on its line, and cannot be sent.
    const broken = join(dir, 'broken.csv');
    await writeFile(broken, 'video,audio\nface_2.mp4,hello.wav\nface_2.mp4,missing.wav\n');
    await page.getByLabel('Choose the CSV of pairs').setInputFiles(broken);
    await page.getByText('CSV line 3: missing.wav is not among the chosen files.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Check the batch (dry run)' }).isDisabled(), true);

    await page.getByLabel('Choose the CSV of pairs').setInputFiles(csv);
    await page.getByRole('table').filter({ hasText: '20 pairs in the CSV' }).waitFor();
    assert.equal(await page.getByRole('table').first().locator('tbody tr').count(), 20);
    await page.getByLabel('When the video and the sound differ in length').selectOption('cut_off');
    const runButton = page.getByRole('button', { name: 'Run the batch' });
    assert.equal(await runButton.isDisabled(), true, 'no run before a dry run');

    await page.getByRole('button', { name: 'Check the batch (dry run)' }).click();
    const verdict = page.getByTestId('batch-verdict');
    await verdict.getByText(/All 20 records are valid/).waitFor({ timeout: 60_000 });
    assert.match((await verdict.textContent()) ?? '', /lipsync-2 × 20; 40 asset references resolved/);
    assert.deepEqual(await sent(), ['VALIDATED'], 'only a dry run so far');
    assert.equal((await apiGet<unknown[]>('/v2/batch')).length, 0, 'the dry run created nothing');
    // Each distinct file was uploaded once, however many pairs use it.
    const assets = await apiGet<{ items: { name: string }[] }>('/v2/assets?limit=100');
    assert.deepEqual(assets.items.map((a) => a.name).sort(), ['face_2.mp4', 'hello.wav']);

    await runButton.click();
    await page.waitForURL(/#\/batch\/[^/]+$/);
    assert.deepEqual(await sent(), ['VALIDATED', 'created']);
    const id = decodeURIComponent(new URL(page.url()).hash.split('/').pop()!);
    // The page's own progress: counts and the bar move until every record has ended.
    const counts = page.getByTestId('batch-counts');
    const bar = page.getByLabel('Records ended');
    const seen = new Set<string>();
    for (const end = Date.now() + 300_000; ;) {
      const text = (await counts.textContent()) ?? '';
      seen.add(await bar.evaluate((p: { value: number }) => String(p.value)));
      if (/^(COMPLETED|FAILED)/.test(text)) break;
      if (Date.now() > end) assert.fail(`the batch did not end: ${text}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.match(
      (await counts.textContent()) ?? '',
      /^COMPLETED: 20 of 20 done · 20 succeeded · 0 failed · 0 waiting/,
    );
    assert.equal(await bar.evaluate((p: { value: number; max: number }) => `${p.value}/${p.max}`), '20/20');
    assert.ok(seen.size >= 2, `the bar moved: ${[...seen].join(' ')}`);
    const batch = await apiGet<{ status: string }>(`/v2/batch/${id}`);
    assert.equal(batch.status, 'COMPLETED');

    // The results file, downloaded through the page's link: one line per record.
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download the results file' }).click();
    const file = await (await download).path();
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    assert.equal(lines.length, 20);
    const results = lines.map((l) => JSON.parse(l) as { request_id: string; status: string; line: number });
    assert.deepEqual(
      results.map((r) => r.status),
      Array(20).fill('COMPLETED'),
    );
    assert.deepEqual(
      results.map((r) => r.request_id),
      rows.map((_, i) => `csv-line-${i + 2}`),
    );
    const gens = await apiGet<{ outputFileName?: string | null }[]>(
      `/v2/generations?limit=100&source=batch:${id}`,
    );
    assert.deepEqual(gens.map((g) => g.outputFileName).sort(), rows.map((r) => r.split(',')[2]).sort());
    // The list shows it, ended, with its results.
    const list = page.getByRole('table').filter({ hasText: 'Batches, newest first' });
    await list.getByRole('row').filter({ hasText: id }).getByText('COMPLETED').waitFor();
    await page.evaluate('scrollTo(0, 0)');
    await screenshot(page, 'batch');
    assert.deepEqual(errors, []);
  });

  test('a JSONL file with one bad line: the dry run names that line in the catalogue’s words, and nothing can run', async () => {
    const assets = await apiGet<{ items: { id: string; name: string }[] }>('/v2/assets?limit=100');
    const video = assets.items.find((a) => a.name === 'face_2.mp4')!.id;
    const audio = assets.items.find((a) => a.name === 'hello.wav')!.id;
    const record = (i: number, audioId: string) =>
      JSON.stringify({
        request_id: `r-${i}`,
        endpoint: '/v2/generate',
        payload: {
          model: 'lipsync-2',
          input: [
            { type: 'video', assetId: video },
            { type: 'audio', assetId: audioId },
          ],
        },
      });
    // Line 7 names an asset this organization does not have.
    const text = Array.from({ length: 20 }, (_, i) => record(i + 1, i === 6 ? 'no-such-asset' : audio)).join(
      '\n',
    );
    const path = join(dir, 'one-bad-line.jsonl');
    await writeFile(path, text + '\n');

    const { page, errors } = await open();
    const sent = batchPosts(page);
    const before = (await apiGet<unknown[]>('/v2/batch')).length;
    await page.getByRole('radio', { name: 'A JSONL file' }).check();
    await page.getByLabel('Choose a JSONL file').setInputFiles(path);
    await page.getByRole('table').filter({ hasText: '20 records in the file' }).waitFor();
    await page.getByRole('button', { name: 'Check the batch (dry run)' }).click();
    const alert = page.getByTestId('batch-verdict').getByRole('alert');
    await alert.waitFor();
    const words = (await alert.textContent()) ?? '';
    assert.match(words, /^Line 7: /);
    assert.doesNotMatch(words, /undefined|\[object/);
    // One dry run, refused with a catalogue code; that entry's suggestion is shown with the message.
    const codes = await sent();
    assert.equal(codes.length, 1);
    const catalogue = await apiGet<{ code: string; suggestion: string }[]>('/v2/errors');
    const entry = catalogue.find((e) => e.code === codes[0]);
    assert.ok(entry, `a catalogue code: ${codes[0]}`);
    assert.ok(words.endsWith(entry.suggestion), `${words} ends with ${entry.suggestion}`);
    // That row is marked in the preview, for sight and for screen readers.
    const row = page.locator('tr.refused');
    assert.equal(await row.count(), 1);
    assert.match((await row.textContent()) ?? '', /^7 \(refused by the dry run\)r-7/);
    assert.equal(await page.getByRole('button', { name: 'Run the batch' }).isDisabled(), true);
    assert.equal((await apiGet<unknown[]>('/v2/batch')).length, before, 'nothing was created');
    assert.deepEqual(errors, []);
  });
});
