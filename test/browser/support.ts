// The studio in a real browser: one server per test file (its own deployment), Debian's Chromium
// driven by playwright-core (nothing downloaded), and the first-start link the server prints.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import {
  createDeployment,
  firstStartKey,
  MissingTestDependency,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';

export const CHROMIUM = process.env.LIPSYNC_TEST_CHROMIUM || '/usr/bin/chromium';

export interface Studio {
  readonly dep: TestDeployment;
  readonly server: TestServer;
  readonly browser: Browser;
  /** The first-start link (`/setup#token`) that makes the owner account. */
  readonly setupLink: string;
  /** The owner API key printed on first start. */
  readonly ownerKey: string;
  /** A new browser context (its own cookies) and page; page errors fail the test at close. */
  newPage(): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  close(): Promise<void>;
}

export async function startStudio(opts: { env?: Record<string, string> } = {}): Promise<Studio> {
  if (!existsSync(CHROMIUM)) {
    throw new MissingTestDependency(
      `Chromium is not at ${CHROMIUM}: run scripts/install-system-packages.sh --with-browser (or set LIPSYNC_TEST_CHROMIUM)`,
    );
  }
  const dep = await createDeployment({ env: opts.env });
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await startServer({ env: { ...dep.env } });
    const out = server.stdout();
    const line = out.split('\n').find((l) => l.includes(`${server!.url}/setup#`));
    assert.ok(line, `no first-start link in:\n${out}`);
    const ownerKey = firstStartKey(out);
    assert.ok(ownerKey, 'no owner key printed');
    // Root in a container: Chromium's sandbox needs user namespaces it may not have.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    const contexts: BrowserContext[] = [];
    const s = server;
    const b = browser;
    return {
      dep,
      server: s,
      browser: b,
      setupLink: line.trim().slice(line.trim().indexOf('http')),
      ownerKey,
      async newPage() {
        const context = await b.newContext({ baseURL: s.url, viewport: { width: 1366, height: 800 } });
        contexts.push(context);
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        return { context, page, errors };
      },
      async close() {
        for (const c of contexts) await c.close().catch(() => undefined);
        await b.close().catch(() => undefined);
        await s.stop();
        await dep.cleanup();
      },
    };
  } catch (err) {
    await browser?.close().catch(() => undefined);
    await server?.stop();
    await dep.cleanup();
    throw err;
  }
}

/** Opens the first-start link and makes the owner account; the page lands signed in on the studio. */
export async function createOwnerAccount(page: Page, setupLink: string, email: string, password: string) {
  await page.goto(setupLink);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name').fill('Owner');
  await page.getByLabel(/Password/).fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await page.getByRole('navigation', { name: 'Studio' }).waitFor();
}

/** Signs in on the studio's page with email and password. */
export async function signIn(page: Page, email: string, password: string) {
  await page.goto('/');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Studio' }).waitFor();
}

/**
 * With LIPSYNC_STUDIO_SCREENSHOTS=<folder>, saves a JPEG of the page there (how docs/images is made:
 * docs/studio.md); otherwise does nothing.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.LIPSYNC_STUDIO_SCREENSHOTS;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  // JPEG: the pages hold video frames, which PNG stores at several times the size.
  await page.screenshot({ path: join(dir, `${name}.jpg`), type: 'jpeg', quality: 72 });
}

/** Shows the generation page's side-by-side compare, waits until both videos have loaded their
 * metadata, and returns the two captions (source first). */
export async function sideBySideCaptions(page: Page): Promise<string[]> {
  await page.getByLabel('Side by side').check({ timeout: 60_000 });
  for (const label of ['Result video', 'Source video'])
    await page.waitForFunction(
      (l) =>
        ((
          (
            globalThis as unknown as { document: { querySelector(s: string): unknown } }
          ).document.querySelector(`video[aria-label="${l}"]`) as { readyState: number } | null
        )?.readyState ?? 0) >= 1,
      label,
    );
  return page.locator('[data-compare=side] figcaption').allTextContents();
}
