// `lipsync languages`, `lipsync dub` and `lipsync redub` against a real server: the languages catalogue
// as a table and as JSON; `dub`'s bad usage exits 2 before anything is sent; an API refusal exits 1
// with the API's error code; a whole dub writes the dubbed video and its subtitles, and a redub of one
// of its segments writes the corrected one.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fixture } from '../helpers/paths.js';
import { probeMedia } from '../../src/media/probe.js';
import {
  createDeployment,
  runCli,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { cliOrg, type E2eOrg } from './generations-support.js';

describe('lipsync languages and dub', { timeout: 400_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let org: E2eOrg;
  let dir: string;
  /** A talking face with its own soundtrack: what a dub starts from. */
  const face = fixture('media/face_5.mp4');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-cli-dub-'));
    dep = await createDeployment({ env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn' } });
    server = await startServer({ env: { ...dep.env } });
    org = await cliOrg(dep.env);
  });
  after(async () => {
    await server?.stop();
    await dep?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** An API command with the org's key from the environment, run in `dir` (default outputs land there). */
  const cli = (args: string[]) =>
    runCli([...args, '--server', server.url, ...(args[0] === 'dub' ? ['--poll', '0.2'] : [])], {
      env: { ...dep.env, LIPSYNC_API_KEY: org.key },
      timeoutMs: 120_000,
      cwd: dir,
    });

  test('languages prints each provider, its languages and the local routes with their quality', async () => {
    const r = await cli(['languages']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0], /^PROVIDER\s+AVAILABLE\s+SOURCES\s+TARGETS$/);
    const local = lines.find((l) => l.startsWith('local '));
    assert.match(local ?? '', /^local\s+yes\s+\S*en\S*\s+\S*es\S*$/, r.stdout);
    assert.match(lines.find((l) => l.startsWith('deepl ')) ?? '', /^deepl\s+no\s/, r.stdout);
    assert.ok(lines.includes('local routes:'), r.stdout);
    assert.ok(
      lines.some((l) => /^en -> es\s+direct\s*$/.test(l)),
      r.stdout,
    );
    assert.ok(
      lines.some((l) => /^en -> pt\s+pivot via es\s+.*lower quality/.test(l)),
      r.stdout,
    );
  });

  test('languages --provider --json prints the API answer for that provider', async () => {
    const j = await runCliJson(['languages', '--provider', 'local', '--server', server.url], {
      env: { ...dep.env, LIPSYNC_API_KEY: org.key },
    });
    assert.deepEqual(
      j.providers.map((p: { provider: string }) => p.provider),
      ['local'],
    );
    const [local] = j.providers;
    assert.equal(local.available, true);
    assert.ok(local.targets.some((l: { code: string }) => l.code === 'es'));
    const es = local.pairs.find((p: { from: string; to: string }) => p.from === 'en' && p.to === 'es');
    assert.equal(es.quality, 'direct');

    const bad = await cli(['languages', '--provider', 'google']);
    assert.equal(bad.code, 2, bad.stderr);
  });

  test('dub usage errors exit 2 and send nothing', async () => {
    const noTarget = await cli(['dub', face]);
    assert.equal(noTarget.code, 2, noTarget.stderr);
    assert.match(noTarget.stderr, /^lipsync: dub needs --to LANG/m);

    const badSubs = await cli(['dub', face, '--to', 'es', '--subtitles', join(dir, 'subs.txt')]);
    assert.equal(badSubs.code, 2, badSubs.stderr);
    assert.match(badSubs.stderr, /--subtitles must name a \.srt or \.vtt file/);

    const noWait = await cli(['dub', face, '--to', 'es', '--no-wait', '--out', join(dir, 'x.mp4')]);
    assert.equal(noWait.code, 2, noWait.stderr);
    assert.match(noWait.stderr, /drop --no-wait/);

    const badProvider = await cli(['dub', face, '--to', 'es', '--provider', 'google']);
    assert.equal(badProvider.code, 2, badProvider.stderr);

    // Nothing was created (nor uploaded).
    const list = await runCliJson(['generation', 'list', '--server', server.url], {
      env: { ...dep.env, LIPSYNC_API_KEY: org.key },
    });
    assert.deepEqual(list.items, []);
    assert.deepEqual(await readdir(dir), []);
  });

  test('a target language the provider lacks exits 1 with dubbing_language_unsupported', async () => {
    const r = await cli(['dub', face, '--to', 'ja']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /^lipsync: creating the dub: HTTP 422 dubbing_language_unsupported: /m);

    const j = await cli(['dub', face, '--to', 'ja', '--provider', 'local', '--json']);
    assert.equal(j.code, 1, j.stderr);
    const body = JSON.parse(j.stdout);
    assert.equal(body.status, 422);
    assert.equal(body.errorCode, 'dubbing_language_unsupported');
    assert.match(body.error, /HTTP 422 dubbing_language_unsupported/);
    assert.deepEqual(await readdir(dir), [], 'no output file is left behind');
  });

  test('dub: uploads, follows the job, writes the dubbed video and its subtitles', async () => {
    // Its own organization and folder: the tests above expect nothing created in theirs.
    const own = await cliOrg(dep.env);
    const outDir = await mkdtemp(join(tmpdir(), 'lipsync-cli-dub-out-'));
    try {
      const r = await runCli(
        [
          ...['dub', face, '--to', 'es', '--out', join(outDir, 'dubbed.mp4')],
          ...['--voice', 'speaker_1=espeak-es1'],
          ...[
            '--subtitles',
            join(outDir, 'dubbed.es.vtt'),
            '--server',
            server.url,
            '--poll',
            '0.2',
            '--json',
          ],
        ],
        { env: { ...dep.env, LIPSYNC_API_KEY: own.key }, timeoutMs: 170_000, cwd: outDir },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual((await readdir(outDir)).sort(), ['dubbed.es.vtt', 'dubbed.mp4']);
      const probe = await probeMedia(join(outDir, 'dubbed.mp4'));
      assert.ok(probe.video && probe.audio, 'a video with the dubbed sound');
      const vtt = await readFile(join(outDir, 'dubbed.es.vtt'), 'utf8');
      assert.match(vtt, /^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n\S/);
      const dubbed = JSON.parse(r.stdout) as {
        id: string;
        dub: { segments: { id: string; speaker: string }[]; voices: { speaker: string; voiceId: string }[] };
      };
      const first = dubbed.dub.segments[0]!.id;
      const voiceOf = (d: { voices: { speaker: string; voiceId: string }[] }, speaker: string) =>
        d.voices.find((v) => v.speaker === speaker)?.voiceId;
      assert.equal(voiceOf(dubbed.dub, 'speaker_1'), 'espeak-es1', JSON.stringify(dubbed.dub.voices));

      // redub: one segment corrected and speaker_1 given another voice; only those are spoken again.
      const redub = (args: string[]) =>
        runCli(['redub', dubbed.id, ...args, '--server', server.url, '--poll', '0.2'], {
          env: { ...dep.env, LIPSYNC_API_KEY: own.key },
          timeoutMs: 170_000,
          cwd: outDir,
        });
      for (const bad of [
        [],
        ['--segment', 'no-equals-sign'],
        ['--span', `${first}=3-1`],
        ['--voice', 'espeak-es2'],
      ]) {
        const u = await redub(bad);
        assert.equal(u.code, 2, `${bad.join(' ')}: ${u.stderr}`);
      }
      const again = await redub([
        ...['--segment', `${first}=Hola a todos.`, '--voice', 'speaker_1=espeak-es2'],
        ...['--out', 'fixed.mp4', '--json'],
      ]);
      assert.equal(again.code, 0, again.stderr);
      const fixed = JSON.parse(again.stdout) as {
        output: string;
        dub: {
          basedOn: { generationId: string; regenerated: string[] };
          segments: { id: string; translatedText: string }[];
          voices: { speaker: string; voiceId: string }[];
        };
      };
      const respoken = dubbed.dub.segments
        .filter((s) => s.id === first || s.speaker === 'speaker_1')
        .map((s) => s.id);
      assert.deepEqual(fixed.dub.basedOn, { generationId: dubbed.id, regenerated: respoken });
      assert.equal(voiceOf(fixed.dub, 'speaker_1'), 'espeak-es2');
      assert.equal(fixed.dub.segments.find((s) => s.id === first)?.translatedText, 'Hola a todos.');
      assert.ok((await probeMedia(join(outDir, 'fixed.mp4'))).video, 'the corrected video was written');
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });
});
