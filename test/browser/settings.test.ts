// The Settings page in Chromium: an API key shown once then only by its prefix, renamed and revoked
// (the revoked key gets 401 from the API); the webhook secret masked until shown; a member invited by
// email (the link from the server log: no SMTP), who joins in its own browser context and sees only
// its own keys and no member administration.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { createOwnerAccount, screenshot, startStudio, type Studio } from './support.js';

describe('studio: settings', { timeout: 240_000 }, () => {
  let studio: Studio;
  const ownerEmail = 'owner@example.com';
  const memberEmail = 'member@example.com';
  const password = 'a good password 1';

  before(async () => {
    studio = await startStudio();
  });
  after(async () => {
    await studio?.close();
  });

  const callWithKey = (key: string) =>
    fetch(`${studio.server.url}/v2/api-keys`, { headers: { 'x-api-key': key } }).then((r) => r.status);

  const openSettings = async (page: Page) => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  };

  async function createKey(page: Page, name: string, role = 'member'): Promise<string> {
    await page.getByLabel('Key name').fill(name);
    await page.getByLabel('Key role').selectOption(role);
    await page.getByRole('button', { name: 'Create key' }).click();
    const field = page.getByLabel('New API key');
    await field.waitFor();
    assert.ok(await field.evaluate((el) => el.matches(':focus')), 'the new key takes the focus');
    await page.getByText('you will not see it again').waitFor();
    const key = await field.inputValue();
    assert.match(key, /^sk_lipsync_/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await field.waitFor({ state: 'detached' });
    // Only the prefix stays on the page.
    assert.ok(!(await page.content()).includes(key), 'the whole key is gone from the page');
    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByText(`${key.slice(0, 17)}…`).waitFor();
    return key;
  }

  test('keys, webhook secret and an invited member who sees only its own keys', async () => {
    const { page: owner, errors } = await studio.newPage();
    await createOwnerAccount(owner, studio.setupLink, ownerEmail, password);
    await openSettings(owner);

    // A key: shown once, works, renamed in place, revoked after a confirmation, then refused.
    const key = await createKey(owner, 'CI key', 'admin');
    assert.equal(await callWithKey(key), 200);
    await owner.getByRole('button', { name: 'Rename CI key' }).click();
    const rename = owner.getByLabel('New name for CI key');
    await rename.fill('Render farm');
    await rename.press('Enter');
    await owner.getByRole('status').filter({ hasText: 'Key renamed to “Render farm”.' }).waitFor();
    // The keyboard user keeps its place: the focus is back on the row's Rename button.
    const renameAgain = owner.getByRole('button', { name: 'Rename Render farm' });
    await renameAgain.waitFor();
    assert.ok(await renameAgain.evaluate((el) => el.matches(':focus')));
    // Escape pressed before the next frame (a busy machine) still reaches the question: the focus
    // moves to it as it renders. A string: the root tsconfig has no DOM types, and tsx would wrap
    // named functions in a helper the page does not have.
    await owner.evaluate(`(async () => {
      document.querySelector('button[aria-label="Revoke Render farm"]').click();
      await new Promise((r) => setTimeout(r, 0));
      document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    })()`);
    const question = owner.getByText('Programs using it stop working at once.');
    await question.waitFor({ state: 'detached', timeout: 5000 });
    // Escape leaves a confirmation without revoking.
    await owner.getByRole('button', { name: 'Revoke Render farm' }).click();
    await owner.keyboard.press('Escape');
    await question.waitFor({ state: 'detached' });
    assert.equal(await callWithKey(key), 200);
    await owner.getByRole('button', { name: 'Revoke Render farm' }).click();
    await owner.getByText('Programs using it stop working at once.').waitFor();
    await owner.getByRole('button', { name: 'Revoke key' }).click();
    await owner.getByRole('status').filter({ hasText: 'Key “Render farm” revoked.' }).waitFor();
    await owner
      .getByRole('row')
      .filter({ hasText: 'Render farm' })
      .getByRole('cell', { name: 'revoked' })
      .waitFor();
    assert.equal(await callWithKey(key), 401);

    // The webhook secret: masked, then shown whole.
    const secret = owner.locator('code.secret');
    await secret.filter({ hasText: /^whsec_•+/ }).waitFor();
    await owner.getByRole('button', { name: 'Show secret' }).click();
    await secret.filter({ hasText: /^whsec_[\w-]{40,}$/ }).waitFor();

    // An invitation by email: without SMTP, the link is in the server log.
    const logFrom = studio.server.stdout().length;
    await owner.getByLabel('Email to invite').fill(memberEmail);
    await owner.getByLabel('Role of the invitee').selectOption('member');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await owner.getByRole('status').filter({ hasText: 'in the server log' }).waitFor();
    let link: string | undefined;
    const deadline = Date.now() + 10_000;
    while (!link && Date.now() < deadline) {
      link = /invitation for member@example\.com[^\n]*?(https?:\/\/[^\s"]+\/setup#[\w-]+)/.exec(
        studio.server.stdout().slice(logFrom),
      )?.[1];
      if (!link) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(link, 'the invitation link is in the server log');

    // The member, in a browser context of its own, makes its account and lands signed in.
    const { page: member, errors: memberErrors } = await studio.newPage();
    await member.goto(link);
    await member.getByLabel('Email').fill(memberEmail);
    await member.getByLabel('Name').fill('Mia Member');
    await member.getByLabel(/Password/).fill(password);
    await member.getByRole('button', { name: 'Create account' }).click();
    await member.waitForURL((u) => u.pathname === '/');
    await member.getByText(`${memberEmail} ·`).waitFor();
    assert.match((await member.getByText(`${memberEmail} ·`).textContent()) ?? '', /\(member\)/);

    // The owner sees the new member and makes a key after it joined.
    await owner.reload();
    await owner
      .getByRole('row')
      .filter({ hasText: memberEmail })
      .getByRole('cell', { name: 'Mia Member' })
      .waitFor();
    await createKey(owner, 'Owner deploy key', 'owner');

    // The member: only its own keys, no owner key, no member administration, no secret.
    await openSettings(member);
    await member.getByText('you see and manage only the keys you created').waitFor();
    await member.getByText('No keys yet.').waitFor();
    await createKey(member, 'Mia laptop');
    assert.equal(await member.getByText('Owner deploy key').count(), 0);
    assert.equal(await member.getByText('Render farm').count(), 0);
    assert.equal(await member.getByRole('row').filter({ hasText: 'Mia laptop' }).count(), 1);
    assert.equal(await member.getByLabel('Email to invite').count(), 0);
    assert.equal(await member.getByRole('button', { name: /^Remove / }).count(), 0);
    await member.getByText('Only admins and owners can see or rotate the webhook secret.').waitFor();
    assert.equal(await member.getByRole('row').filter({ hasText: ownerEmail }).count(), 0);
    // The role select offers nothing above the member's own role.
    assert.deepEqual(await member.getByLabel('Key role').locator('option').allTextContents(), ['member']);

    await owner.reload();
    await owner.getByRole('row').filter({ hasText: 'Mia laptop' }).waitFor();
    await owner.getByRole('heading', { name: 'Usage' }).waitFor();
    await owner.getByText('Generations at once').waitFor();
    await screenshot(owner, 'settings');
    assert.deepEqual(errors, []);
    assert.deepEqual(memberErrors, []);
  });
});
