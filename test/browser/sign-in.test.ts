// Signing in to the studio in Chromium: the first-start link makes the owner, who lands signed in;
// signing out; a wrong password shows the catalogue's words; signing in by a code from the log.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOwnerAccount, screenshot, signIn, startStudio, type Studio } from './support.js';

describe('studio: signing in', { timeout: 180_000 }, () => {
  let studio: Studio;
  const email = 'owner@example.com';
  const password = 'owner password 1';

  before(async () => {
    studio = await startStudio();
  });
  after(async () => {
    await studio?.close();
  });

  test('the first-start link makes the owner account and opens the studio signed in', async () => {
    const { page, errors } = await studio.newPage();
    await createOwnerAccount(page, studio.setupLink, email, password);
    await assert.doesNotReject(page.getByText(`${email} ·`).waitFor());
    assert.match((await page.getByText(`${email} ·`).textContent()) ?? '', /\(owner\)/);
    // the session cookie is http-only: the page's script cannot read it
    assert.equal(await page.evaluate('document.cookie'), '');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // signed out everywhere: a reload stays on the sign-in page
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.deepEqual(errors, []);
  });

  test('a wrong password is refused in plain words; the right one signs in', async () => {
    const { page, errors } = await studio.newPage();
    await page.goto('/');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    assert.doesNotMatch(text, /\b401\b|undefined|\[object/, text);
    assert.ok(text.length > 10, text);
    await screenshot(page, 'sign-in');
    await signIn(page, email, password);
    // A hand-mangled link still shows the studio, with the API's answer in words.
    await page.goto('/#/generations/%E0');
    await page.getByRole('navigation', { name: 'Studio' }).waitFor();
    await page.getByRole('alert').waitFor();
    assert.deepEqual(errors, []);
  });

  test('signing in with a code written to the server log (no SMTP configured)', async () => {
    const { page, errors } = await studio.newPage();
    await page.goto('/');
    await page.getByRole('button', { name: /code by email/ }).click();
    await page.getByLabel('Email').fill(email);
    const before = studio.server.stdout().length;
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.getByLabel('Code').waitFor();
    await page.getByLabel('Code').fill(await codeFromLog(before));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('navigation', { name: 'Studio' }).waitFor();
    assert.deepEqual(errors, []);
  });

  test('a new account: sign-up, the code confirms the address, then a draft organization waits', async () => {
    const { page, errors } = await studio.newPage();
    await page.goto('/');
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('Name').fill('New Person');
    await page.getByLabel('Email').fill('new.person@example.com');
    await page.getByLabel(/Password/).fill('new person password');
    const before = studio.server.stdout().length;
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Code').fill(await codeFromLog(before));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('navigation', { name: 'Studio' }).waitFor();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /waiting for the operator/);
    assert.deepEqual(errors, []);
  });

  /** The next one-time code the server wrote to its log after `from` (no SMTP is configured). */
  async function codeFromLog(from: number): Promise<string> {
    for (;;) {
      const code = /one-time code for[^\n]*?(\d{6})/.exec(studio.server.stdout().slice(from))?.[1];
      if (code) return code;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});
