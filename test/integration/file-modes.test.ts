// The data folder is private to the service's user whatever the umask: the SQLite file, the generated
// signing secret, stored blobs and their side files are 0600; the folders holding them, the upload temp
// folder included, are 0700. Run under umask 000, where defaults would be 0666 and 0777.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const mode = (p: string) => statSync(p).mode & 0o777;

/** Every file and folder under dir. */
async function walk(dir: string): Promise<{ files: string[]; dirs: string[] }> {
  const out = { files: [] as string[], dirs: [] as string[] };
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      out.dirs.push(p);
      const sub = await walk(p);
      out.files.push(...sub.files);
      out.dirs.push(...sub.dirs);
    } else if (e.isFile()) out.files.push(p);
  }
  return out;
}

describe(`data files are private (${DB})`, { timeout: 120_000 }, () => {
  let outer: string;
  let dataDir: string;
  let umask: number;
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    outer = await mkdtemp(join(tmpdir(), 'lipsync-modes-'));
    dataDir = join(outer, 'data', 'lipsync'); // not there yet: the service creates it
    umask = process.umask(0o000);
    t = await createTestServices({
      env: {
        LIPSYNC_DATA_DIR: dataDir,
        LIPSYNC_SIGNING_SECRET: '', // generated into the data folder
        LIPSYNC_RATE_LIMIT_ENABLED: 'false',
      },
    });
    org = await createOrgWithKey(t.services);
    const { payload, headers } = await encodeForm([{ name: 'file', file: fixture('media/hello.wav') }]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...org.owner.headers, ...headers },
      payload,
    });
    assert.equal(res.statusCode, 201, res.body);
  });
  after(async () => {
    process.umask(umask);
    await t?.cleanup();
    await rm(outer, { recursive: true, force: true });
  });

  test('the data folder and the folders created for it are 0700', () => {
    assert.equal(mode(dataDir), 0o700);
    assert.equal(mode(dirname(dataDir)), 0o700);
  });

  test('the SQLite file, its journal files and the signing secret are 0600', () => {
    assert.equal(mode(join(dataDir, 'signing-secret')), 0o600);
    if (DB !== 'sqlite') return;
    const db = join(dataDir, 'lipsync.sqlite');
    assert.equal(mode(db), 0o600);
    for (const extra of [`${db}-wal`, `${db}-shm`])
      if (existsSync(extra)) assert.equal(mode(extra), 0o600, extra);
  });

  test('blobs, their side files and every folder under the data folder', async () => {
    const { files, dirs } = await walk(dataDir);
    const blobs = files.filter((f) => relative(dataDir, f).startsWith(join('blobs', 'assets')));
    assert.equal(blobs.length, 1, files.join('\n'));
    assert.ok(
      files.some((f) => relative(dataDir, f).startsWith(join('blobs', '.meta'))),
      'the content-type side file exists',
    );
    assert.ok(dirs.includes(join(dataDir, 'tmp')), 'the upload temp folder exists');
    for (const f of files) assert.equal(mode(f), 0o600, relative(dataDir, f));
    for (const d of dirs) assert.equal(mode(d), 0o700, relative(dataDir, d));
  });
});
