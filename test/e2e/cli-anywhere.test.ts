// `lipsync` used from any folder, as an installed command is: `login` saves the server and key in the
// user's config file (0600) for later commands, `generation get|list|wait|download` read generations
// through the API, an upload of a file this key sent before is reused by its SHA-256, and operator
// commands refuse to leave a new empty database in a folder that has none.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { probeMedia } from '../../src/media/probe.js';
import { fixture } from '../helpers/paths.js';
import {
  createDeployment,
  freePort,
  runCli,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { api, cliOrg, createGeneration, uploadOverHttp, type E2eOrg } from './generations-support.js';
import { startWorker } from './worker-processes.js';

const run = promisify(execFile);
const ffmpeg = (args: string[]) => run('ffmpeg', ['-v', 'error', '-y', ...args]);

const oneLineJson = (stdout: string): any => {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, stdout);
  return JSON.parse(lines[0]!);
};

describe('lipsync from another folder: login, generations, reused uploads', { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let org: E2eOrg;
  let dir: string;
  /** Where the client commands run: no checkout, no data folder. */
  let elsewhere: string;
  let face: string;
  let speech: string;
  let nofaces: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-cli-anywhere-'));
    elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    face = join(dir, 'face.mp4');
    speech = join(dir, 'speech.wav');
    nofaces = join(dir, 'nofaces.mp4');
    await Promise.all([
      ffmpeg(['-i', fixture('media/face_3.mp4'), '-t', '1', '-vf', 'scale=160:160', '-c:a', 'aac', face]),
      ffmpeg(['-i', fixture('media/speech_short.wav'), '-t', '1', speech]),
      ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25', '-t', '1', nofaces]),
    ]);
    dep = await createDeployment();
    // No worker in the server: a generation stays PENDING until a test starts one (withWorker).
    server = await startServer({ env: { ...dep.env, LIPSYNC_ROLE: 'api' } });
    org = await cliOrg(dep.env);
  });
  after(async () => {
    await server?.stop();
    await dep?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function withWorker<T>(fn: () => Promise<T>): Promise<T> {
    const worker = startWorker('cli-anywhere', { ...dep.env }, ['--kinds', 'generation']);
    try {
      await worker.ready();
      return await fn();
    } finally {
      await worker.stop();
    }
  }

  /** A client command in `elsewhere`, with nothing but what `env` gives (no deployment variables). */
  const client = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, { cwd: elsewhere, env, timeoutMs: 120_000 });
  const asServerAndKey = () => ({ LIPSYNC_SERVER: server.url, LIPSYNC_API_KEY: org.key });

  test('login saves server and key 0600 in a 0700 folder; later commands elsewhere use them; logout removes them', async () => {
    const configHome = join(dir, 'config-home');
    const file = join(configHome, 'lipsync', 'config.json');
    const env = { XDG_CONFIG_HOME: configHome };

    const refused = await client(['login', '--server', server.url, '--key', 'sk_lipsync_not_a_key'], env);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /401/);
    assert.equal(existsSync(file), false, 'a key the server refuses is not saved');

    const saved = await client(['login', '--server', `${server.url}/`, '--key', org.key, '--json'], env);
    assert.equal(saved.code, 0, saved.stderr);
    assert.deepEqual(oneLineJson(saved.stdout), { server: server.url, configFile: file });
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await stat(join(configHome, 'lipsync'))).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { server: server.url, key: org.key });

    // No flag, no variable: the saved login, from a folder that is not the checkout.
    const listed = await client(['generation', 'list', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(Array.isArray(oneLineJson(listed.stdout).items));

    // Flags come first, then the environment, then the saved login.
    const flag = await client(['generation', 'list', '--key', 'sk_lipsync_not_a_key'], env);
    assert.equal(flag.code, 1);
    assert.match(flag.stderr, /401/);
    const fromEnv = await client(['generation', 'list'], { ...env, LIPSYNC_API_KEY: 'sk_lipsync_not_a_key' });
    assert.equal(fromEnv.code, 1);
    assert.match(fromEnv.stderr, /401/);
    // The saved key goes to the saved server only.
    const other = `http://127.0.0.1:${await freePort()}`;
    const elsewhereServer = await client(['generation', 'list', '--server', other], env);
    assert.equal(elsewhereServer.code, 2, elsewhereServer.stderr);
    assert.match(elsewhereServer.stderr, /API key is needed for/);

    const out = await client(['logout', '--json'], env);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(oneLineJson(out.stdout), { removed: true, configFile: file });
    assert.equal(existsSync(file), false);
    const loggedOut = await client(['generation', 'list'], env);
    assert.equal(loggedOut.code, 2);
    assert.match(loggedOut.stderr, /API key is needed/);
    assert.match((await client(['logout'], env)).stdout, /not logged in/);
  });

  test('generation get, wait (exit 3 still running, 0 completed, 1 failed), download and list with pages', async () => {
    const env = asServerAndKey();
    const video = await uploadOverHttp(server, org, face);
    const audio = await uploadOverHttp(server, org, speech);
    const blank = await uploadOverHttp(server, org, nofaces);
    const input = (v: string) => ({
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: v },
        { type: 'audio', assetId: audio },
      ],
    });
    const good = await createGeneration(server, org, input(video));
    const bad = await createGeneration(server, org, input(blank));

    const got = await client(['generation', 'get', good, '--json'], env);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(oneLineJson(got.stdout).id, good);
    assert.equal(oneLineJson(got.stdout).status, 'PENDING');
    const pretty = await client(['generation', 'get', good], env);
    assert.equal(JSON.parse(pretty.stdout).id, good, 'without --json: the same object, indented');

    const pending = await client(['generation', 'wait', good, '--timeout', '1', '--json'], env);
    assert.equal(pending.code, 3, pending.stderr);
    assert.equal(oneLineJson(pending.stdout).status, 'PENDING');
    assert.match(pending.stderr, /still PENDING/);

    await withWorker(async () => {
      const done = await client(['generation', 'wait', good, '--json'], env);
      assert.equal(done.code, 0, done.stderr);
      assert.equal(oneLineJson(done.stdout).status, 'COMPLETED');
      const failed = await client(['generation', 'wait', bad], env);
      assert.equal(failed.code, 1, failed.stdout + failed.stderr);
      assert.match(failed.stdout, new RegExp(`^${bad}  FAILED  generation_no_face_detected`));
      assert.match(failed.stderr, /ended FAILED/);
    });

    const saved = await client(['generation', 'download', good, '--out', 'dubbed.mp4', '--json'], env);
    assert.equal(saved.code, 0, saved.stderr);
    assert.deepEqual(oneLineJson(saved.stdout), { id: good, output: 'dubbed.mp4' });
    const probe = await probeMedia(join(elsewhere, 'dubbed.mp4'));
    assert.ok(probe.video && probe.audio, 'the output video, with its sound');
    const byId = await client(['generation', 'download', good], env);
    assert.equal(byId.code, 0, byId.stderr);
    assert.ok((await stat(join(elsewhere, `${good}.mp4`))).size > 0);
    const none = await client(['generation', 'download', bad], env);
    assert.equal(none.code, 1, none.stderr);

    const quality = await client(['generation', 'get', good, '--quality', '--json'], env);
    assert.equal(oneLineJson(quality.stdout).quality.framesWithFace, 25);

    // Pages of one, newest first: the cursor of a full page leads to the next one.
    const first = oneLineJson((await client(['generation', 'list', '--limit', '1', '--json'], env)).stdout);
    assert.equal(first.items.length, 1);
    assert.equal(first.nextCursor, first.items[0].id);
    const second = oneLineJson(
      (await client(['generation', 'list', '--limit', '1', '--cursor', first.nextCursor, '--json'], env))
        .stdout,
    );
    assert.equal(second.items.length, 1);
    assert.notEqual(second.items[0].id, first.items[0].id);
    assert.ok(second.items[0].createdAt <= first.items[0].createdAt);
    const all = oneLineJson((await client(['generation', 'list', '--all', '--json'], env)).stdout);
    assert.equal(all.nextCursor, null);
    const ids = all.items.map((g: { id: string }) => g.id);
    assert.ok(ids.includes(good) && ids.includes(bad), ids.join(','));
    const failedOnly = oneLineJson(
      (await client(['generation', 'list', '--status', 'FAILED', '--all', '--json'], env)).stdout,
    );
    assert.ok(failedOnly.items.every((g: { status: string }) => g.status === 'FAILED'));
    assert.ok(failedOnly.items.some((g: { id: string }) => g.id === bad));
    const text = await client(['generation', 'list', '--limit', '1'], env);
    assert.match(text.stdout, /more: lipsync generation list --limit 1 --cursor /);
  });

  test('a file this key uploaded before is reused by its SHA-256: the second generate makes no new asset', async () => {
    // A key of its own, so that other tests' uploads do not count.
    const own = await cliOrg(dep.env);
    const env = { LIPSYNC_SERVER: server.url, LIPSYNC_API_KEY: own.key };
    const assets = async () => {
      const r = await api(server, own, 'GET', '/v2/assets?limit=100');
      assert.equal(r.status, 200, r.text);
      return (r.json.items as { id: string }[]).map((a) => a.id).sort();
    };
    await withWorker(async () => {
      const once = await client(['generate', '--video', face, '--audio', speech, '--out', 'one.mp4'], env);
      assert.equal(once.code, 0, once.stderr);
      const after1 = await assets();
      assert.equal(after1.length, 2, 'the video and the audio');
      const twice = await client(['generate', '--video', face, '--audio', speech, '--out', 'two.mp4'], env);
      assert.equal(twice.code, 0, twice.stderr);
      assert.deepEqual(await assets(), after1, 'no new asset: both files were found by their hash');
    });
  });
});

describe('operator commands in a folder without a database', { timeout: 120_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-cli-nodb-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('refuse to create one unless asked (--create); an existing one is used as before', async () => {
    const empty = join(dir, 'empty');
    await mkdir(empty);
    for (const args of [['org', 'list', '--json'], ['migrate', '--json'], ['serve']]) {
      const r = await runCli(args, { cwd: empty, env: { PORT: String(await freePort()) } });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /no database here \(data\/lipsync\.sqlite does not exist\)/);
      assert.match(r.stderr, /--create/);
      assert.equal(existsSync(join(empty, 'data')), false, `${args.join(' ')} created nothing`);
    }
    const created = await runCli(['org', 'create', '--name', 'Here', '--create', '--json'], { cwd: empty });
    assert.equal(created.code, 0, created.stderr);
    assert.ok(existsSync(join(empty, 'data', 'lipsync.sqlite')));
    const listed = await runCli(['org', 'list', '--json'], { cwd: empty });
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      oneLineJson(listed.stdout).organizations.map((o: { name: string }) => o.name),
      ['Here'],
    );
    // An explicit data folder is a request to use (and create) that one.
    const explicit = join(dir, 'explicit');
    const r = await runCli(['org', 'list', '--json'], { cwd: empty, env: { LIPSYNC_DATA_DIR: explicit } });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(explicit, 'lipsync.sqlite')));
  });
});
