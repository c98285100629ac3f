// Dubbing in Chromium: a short English clip is uploaded on the "Dub a video" page and dubbed into
// Spanish offline (the words given, Apertium, the local voices); the generation page links to the
// dubbing editor, where one segment's translation is corrected and only it is regenerated. The API
// (owner key) then shows that segment's audio changed while every other segment's audio is the same
// bytes, and the editor's target-language subtitle link serves the corrected words. Then the speaker
// is given another voice (picked, heard) and regenerated: their segments are spoken by it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { englishSpeech, sourceVideo } from '../e2e/dubbing-support.js';
import { createOwnerAccount, screenshot, sideBySideCaptions, startStudio, type Studio } from './support.js';

const SCRIPT = 'Hello world. Good morning.';
const NEW_TEXT = 'Buenas tardes, amigos.';

describe('studio: dubbing', { timeout: 900_000 }, () => {
  let studio: Studio;
  let page: Page;
  let errors: string[];
  let dir: string;

  const call = async (path: string) => {
    const res = await fetch(`${studio.server.url}${path}`, { headers: { 'x-api-key': studio.ownerKey } });
    const text = await res.text();
    assert.ok(res.ok, `GET ${path}: ${res.status} ${text}`);
    return text;
  };
  /** Long-polls a generation until it ends; it must have completed. */
  const completed = async (id: string) => {
    const until = Date.now() + 300_000;
    for (;;) {
      const g = JSON.parse(await call(`/v2/generate/${id}?wait=true&timeout=10`));
      if (!['PENDING', 'PROCESSING'].includes(g.status)) {
        assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${studio.server.stdout().slice(-3000)}`);
        return;
      }
      assert.ok(Date.now() < until, `generation ${id} still ${g.status}`);
    }
  };
  /** The sha256 of one segment's fitted speech, through its signed URL. */
  const segmentSha = async (id: string, segment: string) => {
    const url = await call(`/v2/generations/${id}/dub/segments/${segment}/audio`);
    const file = await fetch(url.trim());
    assert.equal(file.status, 200);
    return createHash('sha256')
      .update(Buffer.from(await file.arrayBuffer()))
      .digest('hex');
  };
  const generationOfPage = async () => {
    await page.waitForURL((u) => /^#\/generations\/[^/]+$/.test(u.hash), { timeout: 30_000 });
    return decodeURIComponent(new URL(page.url()).hash.slice('#/generations/'.length));
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-studio-dub-'));
    studio = await startStudio({ env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn' } });
    ({ page, errors } = await studio.newPage());
    await createOwnerAccount(page, studio.setupLink, 'owner@example.com', 'a long password 123');
  });
  after(async () => {
    await studio?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('dub from the page, correct one segment, regenerate only it, download the subtitles', async () => {
    const owner = { id: '', key: studio.ownerKey, headers: { 'x-api-key': studio.ownerKey } };
    const speech = await englishSpeech(studio.server, owner, dir, 'hello', SCRIPT, 500);
    const clip = await sourceVideo(dir, 'hello.mp4', [speech], 5);

    await page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name: 'Dub' }).click();
    await page.getByRole('heading', { name: 'Dub a video' }).waitFor();
    await page.getByLabel('Choose a video file').setInputFiles(clip);
    await page.getByText('hello.mp4 is ready.').waitFor({ timeout: 60_000 });
    const into = page.getByLabel('Dub into');
    await into.selectOption('es');
    // Pivot routes (two translations) are marked as such, where this server has any from English.
    const local = JSON.parse(await call('/v2/dubbing/languages')).providers.find(
      (p: { provider: string }) => p.provider === 'local',
    );
    const pivots = (local.pairs as { from: string; quality: string }[]).filter(
      (r) => r.from === 'en' && r.quality === 'pivot',
    ).length;
    const marked = (await into.locator('option').allTextContents()).filter((o) => /lower quality/.test(o));
    assert.equal(marked.length, pivots, marked.join('; '));
    // Only voices that can speak Spanish are offered (English-only local voices are not); one is heard.
    const voices = JSON.parse(await call('/v2/voices')) as { id: string; labels?: Record<string, string> }[];
    const speaks = (v: { labels?: Record<string, string> }) => {
      const langs = v.labels?.languages ?? v.labels?.language;
      return !langs || langs.split(',').some((l) => l.trim().toLowerCase().split('-')[0] === 'es');
    };
    const voice = page.getByLabel('Voice that speaks the dub');
    const values = await voice.locator('option').evaluateAll((os) => os.map((o) => o.getAttribute('value')));
    const offered = [...new Set(values.filter((v): v is string => !!v))].sort();
    assert.deepEqual(offered, [...new Set(voices.filter(speaks).map((v) => v.id))].sort());
    assert.ok(
      voices.some((v) => !speaks(v)),
      'some voice is left out',
    );
    await voice.selectOption(offered[0]!);
    await page.getByRole('button', { name: /^Listen to / }).click();
    await page.getByLabel(/^Sample of /).waitFor({ timeout: 60_000 });
    // The dub itself lets each speaker get the voice nearest their own.
    await voice.selectOption('');
    await page.getByLabel(/The words spoken/).fill(SCRIPT);
    await page.getByRole('button', { name: 'Dub the video' }).click();
    const first = await generationOfPage();
    await completed(first);

    await page.getByRole('link', { name: 'Open the dubbing editor' }).click({ timeout: 60_000 });
    await page.getByRole('heading', { name: 'Dubbing editor' }).waitFor();
    const before = JSON.parse(await call(`/v2/generations/${first}/transcript`));
    const ids: string[] = before.segments.map((s: { id: string }) => s.id);
    assert.ok(ids.length >= 2, JSON.stringify(before));
    const edited = ids[1]!;
    // Each speaker has a lane; a block focuses its segment's translation.
    await page.getByRole('button', { name: new RegExp(`^Segment ${edited},`) }).click();
    const box = page.getByLabel(`Translation of ${edited}`);
    const focusedId = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document
          .activeElement?.id,
    );
    assert.equal(focusedId, `dub-text-${edited}`);
    await page.getByRole('button', { name: `Listen to ${ids[0]}` }).click();
    await page.getByLabel(`Dubbed speech of ${ids[0]}`).waitFor();
    await box.fill(NEW_TEXT);
    await page.getByText(`1 segment changed: ${edited}.`).waitFor();
    await screenshot(page, 'dubbing-editor');
    await page.getByRole('button', { name: 'Regenerate changed segments' }).click();
    const second = await generationOfPage();
    assert.notEqual(second, first);
    await completed(second);

    const after = JSON.parse(await call(`/v2/generations/${second}/transcript`));
    assert.deepEqual(after.basedOn, { generationId: first, regenerated: [edited] });
    for (const id of ids) {
      const [a, b] = [await segmentSha(first, id), await segmentSha(second, id)];
      if (id === edited) assert.notEqual(a, b, `${id} is spoken again`);
      else assert.equal(a, b, `${id} keeps its audio byte for byte`);
    }

    await page.getByRole('link', { name: 'Open the dubbing editor' }).click({ timeout: 60_000 });
    await page.getByLabel(`Translation of ${edited}`).waitFor();
    assert.equal(await page.getByLabel(`Translation of ${edited}`).inputValue(), NEW_TEXT);
    const link = page.getByRole('link', { name: 'Dubbed language (SRT)' });
    const srt = await page
      .context()
      .request.get(new URL((await link.getAttribute('href'))!, page.url()).href);
    assert.equal(srt.status(), 200, await srt.text());
    assert.match((await srt.text()).replace(/\s+/g, ' '), new RegExp(NEW_TEXT.replace(/[.,]/g, '\\$&')));
    const source = page.getByRole('link', { name: 'Original language (VTT)' });
    const vtt = await page
      .context()
      .request.get(new URL((await source.getAttribute('href'))!, page.url()).href);
    assert.match(await vtt.text(), /^WEBVTT/);
    assert.match(await vtt.text(), /Hello world/i);
    assert.ok(await page.getByRole('link', { name: 'Download the dubbed video' }).getAttribute('href'));

    // Another voice for the speaker, from the target language's voices: heard, then regenerated;
    // all that speaker's segments are spoken again by it.
    const was = after.voices[0] as { speaker: string; voiceId: string };
    const picker = page.getByRole('combobox', { name: `Voice of ${was.speaker}` });
    const choices = await picker
      .locator('option')
      .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
    const other = choices.find((v) => v && v !== was.voiceId)!;
    assert.ok(other, JSON.stringify(choices));
    await picker.selectOption(other);
    const group = page.getByRole('group', { name: `Voice of ${was.speaker}` });
    await group.getByRole('button', { name: 'Listen to this voice' }).click();
    await page.getByLabel(`Voice of ${was.speaker}: sample`).waitFor({ timeout: 60_000 });
    await page.getByText(`Another voice for ${was.speaker}.`).waitFor();
    await page.getByRole('button', { name: 'Regenerate changed segments' }).click();
    const third = await generationOfPage();
    await completed(third);
    const revoiced = JSON.parse(await call(`/v2/generations/${third}/transcript`));
    assert.equal(revoiced.voices[0].voiceId, other, JSON.stringify(revoiced.voices));
    const theirs = after.segments.filter((s: { speaker: string }) => s.speaker === was.speaker);
    assert.deepEqual(revoiced.basedOn, {
      generationId: second,
      regenerated: theirs.map((s: { id: string }) => s.id),
    });
    // The re-dub's page compares it with the video it dubbed.
    assert.deepEqual(await sideBySideCaptions(page), ['Source', 'Dub']);
    assert.deepEqual(errors, []);
  });
});
