// The speech commands of `lipsync` against a real server with the default local provider: voices,
// tts (now and as an asynchronous job), cloning, the operator's verify/block/unblock, provider keys,
// and `generate --text`. API failures exit 1 with the API's error code on stderr; bad usage exits 2.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { probeMedia } from '../../src/media/probe.js';
import {
  createDeployment,
  fixture,
  runCli,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { cliOrg, type E2eOrg } from './generations-support.js';

const run = promisify(execFile);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('lipsync speech commands', { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let org: E2eOrg;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-cli-speech-'));
    dep = await createDeployment({
      // Clones wait for the operator's consent check, so that `voice verify` has something to do.
      env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn', LIPSYNC_VOICE_CLONE_VERIFICATION: 'true' },
    });
    server = await startServer({ env: { ...dep.env } });
    org = await cliOrg(dep.env);
  });
  after(async () => {
    await server?.stop();
    await dep?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** An API command with the org's key from the environment, the way users run it. */
  const cli = (args: string[]) =>
    runCli([...args, '--server', server.url], {
      env: { ...dep.env, LIPSYNC_API_KEY: org.key },
      timeoutMs: 120_000,
    });
  /** An operator command: the database directly, no key. */
  const op = (args: string[]) => runCli(args, { env: { ...dep.env } });

  const seconds = async (file: string) => (await probeMedia(file)).durationSeconds ?? 0;

  /** Nothing that grants access is printed: no signed URL, no API key. */
  function assertNoSecrets(r: { stdout: string; stderr: string }) {
    const all = r.stdout + r.stderr;
    assert.doesNotMatch(all, /https?:\/\//, all);
    assert.ok(!all.includes(org.key), 'the API key is printed');
  }

  test('voices lists the local built-in voices as a table and as JSON', async () => {
    const r = await cli(['voices']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0], /^ID\s+PROVIDER\s+TYPE\s+NAME\s+RESTRICTION$/);
    assert.ok(
      lines.some((l) => /^slt-hts\s+local\s+builtin\s+.+\s+-$/.test(l)),
      r.stdout,
    );
    const j = JSON.parse((await cli(['voices', '--provider', 'local', '--json'])).stdout);
    const slt = j.voices.find((v: { id: string }) => v.id === 'slt-hts');
    assert.equal(slt.provider, 'local');
    assert.equal(slt.type, 'builtin');
  });

  test('tts writes a playable WAV and prints its id and duration, never the URL', async () => {
    const out = join(dir, 'hello.wav');
    const r = await cli(['tts', 'Hello there, this is a short test.', '--voice', 'slt-hts', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const [path, summary] = r.stdout.trim().split('\n');
    assert.equal(path, out);
    assert.match(summary, /^speech [0-9a-f-]{36}: [\d.]+ s, voice slt-hts$/);
    assertNoSecrets(r);
    const probe = await probeMedia(out);
    assert.ok(probe.audio, 'the file has an audio stream');
    assert.ok((probe.durationSeconds ?? 0) > 0.5, String(probe.durationSeconds));

    const jsonOut = join(dir, 'hello-json.wav');
    const j = await runCliJson(
      [
        'tts',
        'Slower now.',
        '--voice',
        'slt-hts',
        '--speed',
        '0.8',
        '--out',
        jsonOut,
        '--server',
        server.url,
      ],
      { env: { ...dep.env, LIPSYNC_API_KEY: org.key }, timeoutMs: 120_000 },
    );
    assert.match(j.id, UUID);
    assert.equal(j.assetId, j.id);
    assert.equal(j.output, jsonOut);
    assert.equal(j.url, undefined);
    assert.ok(Math.abs(j.duration - (await seconds(jsonOut))) < 0.05, `${j.duration}`);
  });

  test('tts --async needs the tts_async flag, then runs as a job with progress on stderr', async () => {
    const out = join(dir, 'async.wav');
    const refused = await cli(['tts', 'Later, please.', '--voice', 'slt-hts', '--out', out, '--async']);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /tts_async_unavailable/);

    await runCliJson(['org', 'update', org.id, '--flags', 'tts_async'], { env: { ...dep.env } });
    const r = await cli(['tts', 'Later, please.', '--voice', 'slt-hts', '--out', out, '--async']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^tts job [0-9a-f-]{36}: (pending|processing)/m);
    assert.match(r.stderr, /^tts job [0-9a-f-]{36}: success$/m);
    assert.equal(r.stdout.split('\n')[0], out);
    assertNoSecrets(r);
    assert.ok((await seconds(out)) > 0.5);
  });

  test('a cloned voice: verify, use, block, unblock, delete', async () => {
    const clone = await cli([
      'voice',
      'clone',
      '--name',
      'Demo speaker',
      '--sample',
      fixture('media/latentsync_demo1.wav'),
    ]);
    assert.equal(clone.code, 0, clone.stderr);
    const id = clone.stdout.split('\n')[0];
    assert.match(id, UUID);
    assert.match(clone.stdout, /restricted: voice_verification_required/);

    const out = join(dir, 'clone.wav');
    const say = () => cli(['tts', 'This is my cloned voice.', '--voice', id, '--out', out]);
    const unverified = await say();
    assert.equal(unverified.code, 1);
    assert.match(unverified.stderr, /voice_verification_required/);

    const v = await op(['voice', 'verify', id]);
    assert.equal(v.code, 0, v.stderr);
    const ok = await say();
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok((await seconds(out)) > 0.5);

    const b = await op(['voice', 'block', id, '--reason', 'complaint']);
    assert.equal(b.code, 0, b.stderr);
    const blocked = await say();
    assert.equal(blocked.code, 1);
    assert.match(blocked.stderr, /HTTP 422 voice_blocked/);
    const listed = await cli(['voices']);
    assert.ok(
      listed.stdout
        .split('\n')
        .some((l) => l.startsWith(id) && /cloned\s+Demo speaker\s+voice_blocked$/.test(l)),
      listed.stdout,
    );

    assert.equal((await op(['voice', 'unblock', id])).code, 0);
    const again = await say();
    assert.equal(again.code, 0, again.stderr);
    // Unblocking what is not blocked says so instead of pretending.
    const twice = await op(['voice', 'unblock', id]);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /is not blocked/);

    const del = await cli(['voice', 'delete', id]);
    assert.equal(del.code, 0, del.stderr);
    const gone = await say();
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /voice_not_found/);
    const builtin = await cli(['voice', 'delete', 'slt-hts']);
    assert.equal(builtin.code, 1);
    assert.match(builtin.stderr, /voice_not_deletable/);
  });

  test('API errors exit 1 with the error code; bad usage exits 2', async () => {
    const unknown = await cli(['tts', 'Hi.', '--voice', 'no-such-voice', '--out', join(dir, 'x.wav')]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /HTTP 422 voice_not_found/);
    const unknownJson = await cli(['tts', 'Hi.', '--voice', 'no-such-voice', '--json']);
    assert.equal(unknownJson.code, 1);
    assert.equal(JSON.parse(unknownJson.stdout).errorCode, 'voice_not_found');

    const missingVerify = await op(['voice', 'verify', '00000000-0000-4000-8000-000000000000']);
    assert.equal(missingVerify.code, 1);
    assert.match(missingVerify.stderr, /no cloned voice/);

    for (const args of [
      ['tts', 'Hi.', '--voice', 'slt-hts', '--stability', '3'],
      ['tts', 'Hi.', '--voice', 'slt-hts', '--provider', 'acme'],
      ['tts', 'Hi.'],
      ['voice', 'clone', '--name', 'x'],
    ]) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    }
    const noKey = await runCli(['voices', '--server', server.url], { env: { ...dep.env } });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /API key is needed/);
    const badKey = await runCli(['voices', '--server', server.url, '--key', 'sk_lipsync_not_a_key'], {
      env: { ...dep.env },
    });
    assert.equal(badKey.code, 1);
    assert.match(badKey.stderr, /HTTP 401/);
    assert.ok(!badKey.stderr.includes('sk_lipsync_not_a_key'));
  });

  test('org provider-key: local needs none, unconfigured providers are refused, keys never echoed', async () => {
    const secret = 'sk-test-provider-key-0123456789';
    const local = await op(['org', 'provider-key', org.id, 'local', '--key', secret]);
    assert.equal(local.code, 1);
    assert.match(local.stderr, /local provider needs no key/);
    const eleven = await runCli(
      ['org', 'provider-key', org.id, 'elevenlabs', '--key-from-env', 'MY_ELEVEN_KEY'],
      { env: { ...dep.env, MY_ELEVEN_KEY: secret } },
    );
    assert.equal(eleven.code, 1);
    assert.match(eleven.stderr, /elevenlabs voice provider is not configured/);
    for (const r of [local, eleven]) assert.ok(!(r.stdout + r.stderr).includes(secret));

    const none = await op(['org', 'provider-key', org.id, 'elevenlabs']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /exactly one of --key, --key-from-env and --remove/);
    const unset = await op(['org', 'provider-key', org.id, 'elevenlabs', '--key-from-env', 'NOT_SET_HERE']);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /NOT_SET_HERE is not set/);
    const missingOrg = await op([
      'org',
      'provider-key',
      '00000000-0000-4000-8000-000000000000',
      'openai',
      '--remove',
    ]);
    assert.equal(missingOrg.code, 1);
  });

  test('generate --text: exactly one of --audio and --text, then a real run', async () => {
    const face = join(dir, 'face.mp4');
    await run('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      fixture('media/face_1.mp4'),
      '-t',
      '2',
      '-vf',
      'scale=320:-2',
      face,
    ]);
    const gen = (args: string[]) => cli(['generate', '--poll', '0.2', '--video', face, ...args]);
    const both = await gen(['--audio', join(dir, 'hello.wav'), '--text', 'Hi.', '--voice', 'slt-hts']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /exactly one of --audio and --text/);
    const noVoice = await gen(['--text', 'Hi.']);
    assert.equal(noVoice.code, 2);
    assert.match(noVoice.stderr, /--text needs --voice/);
    const neither = await gen([]);
    assert.equal(neither.code, 2);
    const stray = await gen(['--audio', join(dir, 'hello.wav'), '--voice', 'slt-hts']);
    assert.equal(stray.code, 2);

    const out = join(dir, 'spoken.mp4');
    const r = await gen(['--text', 'Hello world, nice to meet you.', '--voice', 'slt-hts', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.split('\n')[0], out);
    const probe = await probeMedia(out);
    assert.ok(probe.video && probe.audio, 'the output has picture and sound');
    assert.ok((probe.durationSeconds ?? 0) > 0.5, String(probe.durationSeconds));

    const blocked = await gen(['--text', 'Hello.', '--voice', 'no-such-voice']);
    assert.equal(blocked.code, 1);
    assert.match(blocked.stderr, /voice_not_found/);
  });
});
