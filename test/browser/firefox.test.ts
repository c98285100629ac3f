// test-database: none
// The studio's bundle runs in Firefox too. playwright-core cannot drive Debian's Firefox ESR here (its
// WebDriver BiDi lacks a command Playwright sends for every new page), so this is a smoke test:
// headless Firefox opens the studio, and the page's script runs far enough to ask the server for the
// session, which only the bundle does. The Chromium tests exercise the pages themselves.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createDeployment,
  MissingTestDependency,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';

const FIREFOX = process.env.LIPSYNC_TEST_FIREFOX || '/usr/bin/firefox-esr';

describe('studio in Firefox', { timeout: 120_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let dir: string;
  before(async () => {
    if (!existsSync(FIREFOX))
      throw new MissingTestDependency(
        `Firefox is not at ${FIREFOX}: run scripts/install-system-packages.sh --with-browser (or set LIPSYNC_TEST_FIREFOX)`,
      );
    dep = await createDeployment();
    server = await startServer({ env: { ...dep.env } });
    dir = await mkdtemp(join(tmpdir(), 'lipsync-firefox-'));
  });
  after(async () => {
    await server?.stop();
    await dep?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('headless Firefox loads the studio and its script asks for the session', async () => {
    const shot = join(dir, 'studio.png');
    const profile = join(dir, 'profile');
    await mkdir(profile);
    const since = server.stdout().length;
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        FIREFOX,
        [
          '--headless',
          '--no-remote',
          '--profile',
          profile,
          '--screenshot',
          shot,
          '--window-size=1200,800',
          `${server.url}/`,
        ],
        { stdio: 'ignore', env: { ...process.env, HOME: dir, MOZ_CRASHREPORTER_DISABLE: '1' } },
      );
      child.on('error', reject);
      child.on('exit', resolve);
    });
    assert.equal(code, 0);
    assert.ok((await stat(shot)).size > 0, 'no screenshot');
    const requested = [
      ...server
        .stdout()
        .slice(since)
        .matchAll(/"method":"GET","url":"([^"]+)"/g),
    ].map((m) => m[1]);
    for (const url of ['/', '/studio/app.js', '/studio/app.css', '/api/auth/session'])
      assert.ok(requested.includes(url), `Firefox did not request ${url}: ${requested.join(', ')}`);
  });
});
