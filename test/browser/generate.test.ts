// The studio's New page in Chromium: a video dropped and a recording chosen are uploaded with
// progress, priced, generated once (even on a double click) and completed; earlier uploads reused
// from the library; the face chosen by clicking a paused frame reaches the options; a script read by
// a chosen voice, heard first.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { fixture } from '../helpers/index.js';
import { createOwnerAccount, screenshot, signIn, startStudio, type Studio } from './support.js';

/** The few members of a <video> the page-side callbacks use (the tests compile without the DOM library). */
interface Video {
  readyState: number;
  videoWidth: number;
  videoHeight: number;
  clientWidth: number;
  clientHeight: number;
  currentTime: number;
  muted: boolean;
  pause(): void;
  play(): Promise<void>;
  addEventListener(type: string, listener: () => void, options?: { once: boolean }): void;
}

interface Gen {
  id: string;
  status: string;
  input: { type: string; assetId?: string; provider?: Record<string, unknown> }[];
  options: Record<string, unknown> | null;
  error: string | null;
}

describe('studio: the New page', { timeout: 600_000 }, () => {
  let studio: Studio;
  const email = 'owner@example.com';
  const password = 'owner password 1';

  const apiGet = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${studio.server.url}${path}`, { headers: { 'x-api-key': studio.ownerKey } });
    const text = await res.text();
    assert.equal(res.status, 200, `${path}: ${text}`);
    return JSON.parse(text) as T;
  };
  /** Long-polls the API until the generation ends. */
  const finished = async (id: string): Promise<Gen> => {
    for (;;) {
      const g = await apiGet<Gen>(`/v2/generate/${id}?wait=true&timeout=10`);
      if (!['PENDING', 'PROCESSING'].includes(g.status)) return g;
    }
  };
  const generationOf = async (page: Page): Promise<string> => {
    await page.waitForURL(/#\/generations\/[^/]+$/, { timeout: 60_000 });
    return decodeURIComponent(new URL(page.url()).hash.split('/').pop()!);
  };
  const open = async (workflow: string) => {
    const { page, errors } = await studio.newPage();
    await signIn(page, email, password);
    await page.getByRole('radio', { name: workflow }).check();
    return { page, errors };
  };
  /** Polls (the page's content policy forbids the string predicates of waitForFunction). */
  const until = async (check: () => Promise<boolean>, what: string) => {
    for (const end = Date.now() + 30_000; !(await check());) {
      if (Date.now() > end) assert.fail(`timed out waiting until ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** Waits until the quote says this, failing with what it says instead. */
  const estimateSays = async (page: Page, re: RegExp): Promise<string> => {
    const box = page.getByTestId('estimate');
    let text = '';
    for (const until = Date.now() + 30_000; Date.now() < until;) {
      text = (await box.textContent()) ?? '';
      if (re.test(text)) return text;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.fail(`the estimate says: ${text}; ${(await page.locator('.estimate').textContent()) ?? ''}`);
  };
  /**
   * Pauses the chosen video at `seconds`, presses "Choose the face" and clicks where video pixel
   * (x, y) is shown (the element may be scaled and letterboxed); answers the scale.
   */
  const chooseFace = async (page: Page, seconds: number, x: number, y: number) => {
    const player = page.getByLabel('The chosen video');
    await until(async () => (await player.evaluate((v: Video) => v.readyState)) >= 2, 'the video loads');
    await player.evaluate(
      (v: Video, t: number) =>
        new Promise<void>((resolve) => {
          v.addEventListener('seeked', () => resolve(), { once: true });
          v.pause();
          v.currentTime = t;
        }),
      seconds,
    );
    await page.getByRole('button', { name: 'Choose the face on this frame' }).click();
    const spot = await player.evaluate(
      (v: Video, [px, py]: number[]) => {
        const s = Math.min(v.clientWidth / v.videoWidth, v.clientHeight / v.videoHeight);
        return {
          x: (v.clientWidth - v.videoWidth * s) / 2 + px! * s,
          y: (v.clientHeight - v.videoHeight * s) / 2 + py! * s,
          scale: s,
        };
      },
      [x, y],
    );
    await page.getByRole('application').click({ position: { x: spot.x, y: spot.y } });
    return spot;
  };
  /** Opens the library of a slot and picks an earlier upload by name. */
  const reuse = async (page: Page, noun: string, name: string) => {
    await page.getByRole('button', { name: `Pick an earlier ${noun}` }).click();
    await page
      .getByRole('list', { name: `Earlier ${noun}s` })
      .getByRole('button', { name })
      .first()
      .click();
    await page.getByText(`${name} is ready.`).waitFor();
  };

  before(async () => {
    studio = await startStudio();
    const { page, context } = await studio.newPage();
    await createOwnerAccount(page, studio.setupLink, email, password);
    await context.close();
  });
  after(async () => {
    await studio?.close();
  });

  test('lip-sync a video to a recording: drop, choose, upload with progress, price, generate once, complete', async () => {
    const { page, errors } = await open('Lip-sync a video to a recording');
    const form = page.getByRole('form', { name: 'Lip-sync a video to a recording' });
    await form.waitFor();
    // Every value a progress bar shows, sampled each frame (an upload on this machine is quick).
    // A string: tsx would wrap named functions in a helper the page does not have.
    await page.evaluate(`{
      const seen = (window.seen = []);
      const tick = () => {
        for (const p of document.querySelectorAll('progress')) seen.push(p.value);
        requestAnimationFrame(tick);
      };
      tick();
    }`);

    const traffic: string[] = [];
    page.on('request', (r) => traffic.push(`${r.method()} ${new URL(r.url()).pathname}`));
    // The video, dropped on its zone as a browser drop does it.
    const video = (await readFile(fixture('media/face_2.mp4'))).toString('base64');
    const dataTransfer = await page.evaluateHandle(`(() => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(video)}), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'face_2.mp4', { type: 'video/mp4' }));
      return dt;
    })()`);
    const zone = page.getByTestId('media-video-drop');
    await zone.dispatchEvent('dragover', { dataTransfer });
    await zone.dispatchEvent('drop', { dataTransfer });
    // The recording, by the file button.
    await page.getByLabel('Choose a recording file').setInputFiles(fixture('media/hello.wav'));
    await page.getByText('face_2.mp4 is ready.').waitFor();
    await page.getByText('hello.wav is ready.').waitFor();
    // On local storage the direct way works: announce, PUT to this server, register.
    if (studio.dep.storage === 'local') {
      assert.equal(traffic.filter((t) => t === 'POST /v2/assets/upload').length, 2, traffic.join('\n'));
      assert.equal(traffic.filter((t) => t.startsWith('PUT /')).length, 2, traffic.join('\n'));
      assert.equal(traffic.filter((t) => t === 'POST /v2/assets').length, 2, traffic.join('\n'));
    }
    const seen = await page.evaluate<number[]>('window.seen');
    assert.ok(seen.length > 0, 'a progress bar was shown');
    assert.equal(Math.max(...seen), 100, `the progress reached 100 %: ${seen.join(' ')}`);
    assert.equal(await page.locator('progress').count(), 0, 'no progress bar is left');
    await page.getByText('5.0 s, 844×844').waitFor();

    // The quote, in words: the default keeps the shorter of the two (the 2.8 s recording).
    const words = await estimateSays(page, /Estimated cost/);
    assert.match(words, /about 2\.8 seconds: 7\d frames at 25 frames a second\. Estimated cost: \$0\.\d\d/);
    await page.getByRole('radio', { name: /Keep the whole video/ }).check();
    await estimateSays(page, /about 5\.0 seconds: 12\d frames/);
    await page.getByRole('radio', { name: /Stop at the shorter one/ }).check();
    await estimateSays(page, /about 2\.8 seconds/);
    await page.evaluate('scrollTo(0, 0)');
    await screenshot(page, 'new-generation');

    // A double click starts one generation.
    const before = await apiGet<unknown[]>('/v2/generations?limit=100');
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/v2/generate')
        posts.push(r.headers()['idempotency-key'] ?? '');
    });
    await page.getByRole('button', { name: 'Generate' }).dblclick();
    const id = await generationOf(page);
    const after = await apiGet<{ id: string }[]>('/v2/generations?limit=100');
    assert.equal(after.length, before.length + 1, 'one generation for a double click');
    assert.equal(posts.length, 1);
    assert.match(posts[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const g = await finished(id);
    assert.equal(g.status, 'COMPLETED', g.error ?? '');
    assert.equal(g.input[0]!.type, 'video');
    assert.equal(g.input[1]!.type, 'audio');
    assert.equal(g.options?.sync_mode, 'cut_off');
    await page.getByText('COMPLETED').waitFor({ timeout: 30_000 });
    assert.deepEqual(errors, []);
  });

  test('a second generation reuses the earlier uploads from the library: nothing is uploaded again', async () => {
    const { page, errors } = await open('Lip-sync a video to a recording');
    const uploads: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/v2/assets/upload')) uploads.push(r.url());
    });
    await reuse(page, 'video', 'face_2.mp4');
    await reuse(page, 'recording', 'hello.wav');
    await estimateSays(page, /Estimated cost/);
    await page.getByRole('button', { name: 'Generate' }).click();
    const id = await generationOf(page);
    const assets = await apiGet<{ items: { id: string; name: string }[] }>('/v2/assets?limit=100');
    const byName = (n: string) => assets.items.filter((a) => a.name === n);
    assert.equal(byName('face_2.mp4').length, 1, 'the video was stored once');
    assert.equal(byName('hello.wav').length, 1, 'the recording was stored once');
    const g = await apiGet<Gen>(`/v2/generate/${id}`);
    assert.equal(g.input[0]!.assetId, byName('face_2.mp4')[0]!.id);
    assert.equal(g.input[1]!.assetId, byName('hello.wav')[0]!.id);
    assert.deepEqual(uploads, []);
    assert.deepEqual(errors, []);
  });

  test('the face clicked on a paused frame is sent in the video’s pixels with its frame number', async () => {
    const { page, errors } = await open('Lip-sync a video to a recording');
    await reuse(page, 'video', 'face_2.mp4');
    await reuse(page, 'recording', 'hello.wav');
    // The frame rate comes with the quote (it is the video's).
    await estimateSays(page, /at 25 frames a second/);
    const spot = await chooseFace(page, 1.2, 422, 300);
    await page.getByText(/Face chosen at \d+, \d+ \(pixels\) on frame 30\./).waitFor();
    // By keyboard: the marker starts in the middle, 40 % down; arrows move it, Enter chooses.
    await page.getByRole('button', { name: 'Choose the face on this frame' }).click();
    const chooser = page.getByRole('application');
    await chooser.press('ArrowRight');
    await chooser.press('Enter');
    await page.getByText(/Face chosen at 439, 338 \(pixels\) on frame 30\./).waitFor();
    await page.getByRole('button', { name: 'Choose the face on this frame' }).click();
    await chooser.click({ position: { x: spot.x, y: spot.y } });
    await page.getByText(/Face chosen at \d+, \d+ \(pixels\) on frame 30\./).waitFor();
    const post = page.waitForRequest(
      (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v2/generate',
    );
    await page.getByRole('button', { name: 'Generate' }).click();
    const sent = (await post).postDataJSON() as { options: Record<string, unknown> };
    const id = await generationOf(page);
    const asd = sent.options.active_speaker_detection as { frame_number: number; coordinates: number[] };
    assert.equal(asd.frame_number, 30);
    // One screen pixel is at most 1/scale video pixels.
    const slack = Math.ceil(1 / spot.scale) + 1;
    assert.ok(Math.abs(asd.coordinates[0]! - 422) <= slack, `${asd.coordinates}`);
    assert.ok(Math.abs(asd.coordinates[1]! - 300) <= slack, `${asd.coordinates}`);
    // The server took the hint (its view of the options shows only that a speaker was chosen).
    const g = await apiGet<Gen>(`/v2/generate/${id}`);
    assert.equal(g.options?.active_speaker, true);
    assert.deepEqual(errors, []);
  });

  test('make a video say a script: pick a voice, listen to it, generate, complete', async () => {
    const { page, errors } = await open('Make a video say a script');
    await reuse(page, 'video', 'face_2.mp4');
    await page
      .getByRole('textbox', { name: 'Script' })
      .fill('Hello there. This studio makes the video say what you type.');
    const select = page.getByLabel('Voice that reads the script');
    await until(
      async () => (await select.isEnabled()) && (await select.locator('option').count()) > 0,
      'the voices are listed',
    );
    const voices = await apiGet<{ id: string; restriction?: unknown }[]>('/v2/voices');
    const usable = voices.filter((v) => !v.restriction);
    assert.ok(usable.length > 0, 'the server lists a voice');
    const voice = usable[usable.length > 1 ? 1 : 0]!.id;
    await select.selectOption(voice);
    // The speed slider, by keyboard: four steps of 0.05 up.
    const speed = page.getByRole('slider', { name: 'Speed' });
    for (let i = 0; i < 4; i++) await speed.press('ArrowRight');
    assert.equal(await speed.inputValue(), '1.2');
    await page.locator('output', { hasText: '1.20' }).waitFor();

    const tts = page.waitForResponse((r) => new URL(r.url()).pathname === '/v2/tts');
    await page.getByRole('button', { name: 'Listen to this voice' }).click();
    const res = await tts;
    assert.equal(res.status(), 200);
    const asked = res.request().postDataJSON() as Record<string, unknown>;
    assert.equal(asked.voiceId, voice);
    assert.equal(asked.script, 'Hello there.');
    assert.equal(asked.speed, 1.2);
    const audio = page.getByLabel('Voice sample');
    await audio.waitFor();
    assert.equal(await audio.getAttribute('src'), ((await res.json()) as { url: string }).url);
    // The browser could load the sample (a failed load shows an error instead).
    await until(
      async () => (await audio.evaluate((a: { readyState: number }) => a.readyState)) >= 1,
      'the sample loads',
    );

    await estimateSays(page, /at most 5\.0 seconds/);
    // No quote from the media here: the frame rate is seen while the video plays for a moment.
    await page.getByLabel('The chosen video').evaluate(async (v: Video) => {
      v.muted = true;
      await v.play();
      await new Promise((r) => setTimeout(r, 1000));
      v.pause();
    });
    await chooseFace(page, 2, 422, 300);
    await page.getByText(/Face chosen at \d+, \d+ \(pixels\) on frame 50\./).waitFor();
    const post = page.waitForRequest(
      (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v2/generate',
    );
    await page.getByRole('button', { name: 'Generate' }).click();
    const sent = (await post).postDataJSON() as { options: Record<string, unknown> };
    assert.equal((sent.options.active_speaker_detection as { frame_number: number }).frame_number, 50);
    const id = await generationOf(page);
    const g = await finished(id);
    assert.equal(g.status, 'COMPLETED', g.error ?? '');
    assert.equal(g.input[1]!.type, 'text');
    assert.equal(g.input[1]!.provider!.voiceId, voice);
    assert.equal(g.input[1]!.provider!.speed, 1.2);
    assert.deepEqual(errors, []);
  });

  test('animate a photo (sync-3): where the browser cannot PUT to the storage, the file goes as a form', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'studio-photo-'));
    try {
      // A still of the video as the portrait.
      const photo = join(dir, 'portrait.png');
      execFileSync('ffmpeg', [
        '-v',
        'error',
        '-ss',
        '1',
        '-i',
        fixture('media/face_2.mp4'),
        '-frames:v',
        '1',
        photo,
      ]);
      const { page, errors } = await open('Animate a photo');
      // A bucket that refuses the page's cross-origin PUT looks like this to the page: no answer.
      await page.route(
        (u) => !u.pathname.startsWith('/v2/assets') && !u.pathname.startsWith('/studio'),
        (route) => (route.request().method() === 'PUT' ? route.abort('failed') : route.fallback()),
      );
      const forms: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST' && new URL(r.url()).pathname === '/v2/assets/upload')
          forms.push(r.headers()['content-type'] ?? '');
      });
      await page.getByLabel('Choose a photo file').setInputFiles(photo);
      await page.getByText('portrait.png is ready.').waitFor();
      assert.deepEqual(
        forms.map((t) => t.split(';')[0]),
        ['application/json', 'multipart/form-data'],
        'announced, then sent as a form',
      );
      await page.getByRole('img', { name: 'The chosen photo, portrait.png' }).waitFor();
      await page.getByRole('radio', { name: 'A recording', exact: true }).check();
      await reuse(page, 'recording', 'hello.wav');
      await estimateSays(page, /about 2\.8 seconds/);
      await page.getByRole('button', { name: 'Generate' }).click();
      const g = await finished(await generationOf(page));
      assert.equal(g.status, 'COMPLETED', g.error ?? '');
      const full = await apiGet<Gen & { model: string }>(`/v2/generate/${g.id}`);
      assert.equal(full.model, 'sync-3');
      assert.deepEqual(
        full.input.map((i) => i.type),
        ['image', 'audio'],
      );
      assert.deepEqual(errors, []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a refusal shows the catalogue’s words beside the field it names', async () => {
    const { page, errors } = await open('Make a video say a script');
    await reuse(page, 'video', 'face_2.mp4');
    // Over the spoken limit once numbers are spelled out: refused by the server, naming the script.
    await page.getByRole('textbox', { name: 'Script' }).fill('1234567890 '.repeat(450));
    await page.getByRole('button', { name: 'Generate' }).click();
    const alert = page.locator('.script').getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    assert.match(text, /script/i);
    assert.doesNotMatch(text, /undefined|\[object/);
    assert.match(page.url(), /#\/new\/script$/);
    assert.deepEqual(errors, []);
  });

  test('a preview second before a full run: from the paused frame, its still and clip, then the whole video', async () => {
    const { page, errors } = await open('Lip-sync a video to a recording');
    await page.getByLabel('Choose a video file').setInputFiles(fixture('media/face_2.mp4'));
    await page.getByLabel('Choose a recording file').setInputFiles(fixture('media/hello.wav'));
    await page.getByText('face_2.mp4 is ready.').waitFor();
    await page.getByText('hello.wav is ready.').waitFor();
    await estimateSays(page, /Estimated cost/);
    // The moment is the frame the video is paused on.
    const player = page.getByLabel('The chosen video');
    await until(async () => (await player.evaluate((v: Video) => v.readyState)) >= 2, 'the video loads');
    await player.evaluate(
      (v: Video) =>
        new Promise<void>((resolve) => {
          v.addEventListener('seeked', () => resolve(), { once: true });
          v.pause();
          v.currentTime = 1.2;
        }),
    );
    const from = page.getByRole('spinbutton', { name: 'From (seconds)' });
    await until(async () => (await from.inputValue()) === '1.20', 'the paused moment is the preview’s');
    const post = page.waitForRequest(
      (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v2/generate',
    );
    await page.getByRole('button', { name: 'Preview one second' }).click();
    const sent = (await post).postDataJSON() as { options: { preview: { atMs: number } } };
    assert.deepEqual(sent.options.preview, { atMs: 1200 });
    await page.getByText('Preview ready: one second from 1.20 s.').waitFor({ timeout: 120_000 });
    const still = page.getByRole('img', { name: 'The frame at 1.20 s, as the generation draws it' });
    await until(
      async () => (await still.evaluate((i: { naturalWidth: number }) => i.naturalWidth)) === 844,
      'the still loads at the video’s size',
    );
    const clip = page.getByLabel('The preview clip');
    await until(
      async () => (await clip.evaluate((v: Video & { duration: number }) => v.duration)) > 0.9,
      'the clip loads, about a second long',
    );
    assert.ok((await clip.evaluate((v: Video & { duration: number }) => v.duration)) < 1.2);

    // Then the whole video, as without a preview.
    await page.getByRole('button', { name: 'Generate' }).click();
    const g = await finished(await generationOf(page));
    assert.equal(g.status, 'COMPLETED', g.error ?? '');
    assert.equal(g.options?.preview, undefined);
    assert.deepEqual(errors, []);
  });
});
