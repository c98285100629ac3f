// `lipsync generate` against a real server: local files are uploaded, the generation is followed
// with a progress bar on stderr, the output is downloaded and the engine's report summarised; a
// failed generation exits 1 with its error code; bad usage exits 2 without contacting anyone.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { probeMedia } from '../../src/media/probe.js';
import { fixture } from '../helpers/paths.js';
import {
  createDeployment,
  runCli,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { cliOrg, type E2eOrg } from './generations-support.js';

const run = promisify(execFile);
const ffmpeg = (args: string[]) => run('ffmpeg', ['-v', 'error', '-y', ...args]);

describe('lipsync generate', { timeout: 180_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let org: E2eOrg;
  let dir: string;
  let face: string;
  let speech: string;
  let nofaces: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-cli-generate-'));
    face = join(dir, 'face.mp4');
    speech = join(dir, 'speech.wav');
    nofaces = join(dir, 'nofaces.mp4');
    await Promise.all([
      ffmpeg(['-i', fixture('media/face_3.mp4'), '-t', '2', '-vf', 'scale=320:320', '-c:a', 'aac', face]),
      ffmpeg(['-i', fixture('media/speech_short.wav'), '-t', '2', speech]),
      ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25', '-t', '1', nofaces]),
    ]);
    dep = await createDeployment({
      env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn', LIPSYNC_ARTICULATION_RECOGNIZE: '1' },
    });
    server = await startServer({ env: { ...dep.env } });
    org = await cliOrg(dep.env);
  });
  after(async () => {
    await server?.stop();
    await dep?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cli = (args: string[]) =>
    runCli(['generate', '--server', server.url, '--poll', '0.2', ...args], {
      env: { ...dep.env, LIPSYNC_API_KEY: org.key },
      timeoutMs: 120_000,
    });

  test('uploads, shows progress, downloads the output and prints the quality summary', async () => {
    const out = join(dir, 'out.mp4');
    const r = await cli(['--video', face, '--audio', speech, '--active-speaker', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    // Not a terminal: the bar is printed as lines, ending at 100 %.
    const bars = r.stderr.split('\n').filter((l) => l.startsWith('['));
    assert.ok(bars.length >= 2, r.stderr);
    assert.match(bars[bars.length - 1], /\] 100% completed [0-9a-f-]{36}$/);
    assert.equal(r.stdout.split('\n')[0], out);
    assert.match(r.stdout, /engine cpu, face in 50\/50 frames/);
    assert.match(r.stdout, /active speaker: single-face, 1 face\(s\)/);
    // Recorded speech without transcript: its words are recognized; the summary says what shaped the mouth.
    assert.match(r.stdout, /mouth shapes from (recognition|model) \d+%/);
    const probe = await probeMedia(out);
    assert.ok(probe.video && probe.audio, 'the output has picture and sound');
    assert.ok(Math.abs((probe.durationSeconds ?? 0) - 2) < 0.1, String(probe.durationSeconds));

    // Review notes on that result: pinned to moments within its 2 s, listed by moment, resolved, deleted.
    const id = /completed ([0-9a-f-]{36})$/.exec(bars[bars.length - 1])![1];
    const notes = (args: string[]) =>
      runCli(['notes', ...args, '--server', server.url], { env: { ...dep.env, LIPSYNC_API_KEY: org.key } });
    const late = await notes(['add', id, '--at', '1.5', 'Lips', 'late', '--json']);
    assert.equal(late.code, 0, late.stderr);
    const lateId = JSON.parse(late.stdout).id;
    assert.equal((await notes(['add', id, '--at', '0.25', 'Blink'])).code, 0);
    const beyond = await notes(['add', id, '--at', '3', 'After the end']);
    assert.equal(beyond.code, 1);
    assert.match(beyond.stderr, /HTTP 400 invalid_request: atMs must be within the output \(0 to \d+ ms\)/);
    assert.equal((await notes(['resolve', id, lateId])).code, 0);
    const list = await notes([id]);
    assert.equal(list.code, 0, list.stderr);
    const rows = list.stdout.trim().split('\n').slice(1);
    assert.deepEqual(
      rows.map((r) => r.split(/ {2,}/)).map((c) => [c[1], c[2], c[4]]),
      [
        ['0:00.250', 'open', 'Blink'],
        ['0:01.500', 'resolved', 'Lips late'],
      ],
    );
    assert.equal((await notes(['delete', id, lateId])).code, 0);
    const left = JSON.parse((await notes([id, '--json'])).stdout).items;
    assert.deepEqual(
      left.map((n: { text: string }) => n.text),
      ['Blink'],
    );
  });

  test('--json prints one object with the output path and the quality report', async () => {
    const out = join(dir, 'json.mp4');
    // A transcript that is not what the recording says: the server notes it and falls back.
    const wrong = 'Seventeen yellow giraffes juggle xylophones under the northern lights.';
    const r = await cli([
      '--video',
      face,
      '--audio',
      speech,
      '--transcript',
      wrong,
      '--temperature',
      '0.8',
      '--out',
      out,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout);
    const j = JSON.parse(lines[0]);
    assert.equal(j.status, 'COMPLETED');
    assert.equal(j.output, out);
    assert.equal(j.quality.framesWithFace, 50);
    assert.equal(j.quality.lipMotionGenerated, true);
    assert.notEqual(j.quality.articulation.primary, 'alignment');
    assert.match(j.quality.articulation.notes.join(' '), /transcript/);
    assert.ok((await stat(out)).size > 0);
    assert.ok(!r.stderr.includes('['), 'no progress bar with --json');
  });

  test('--preview-at renders one second from that moment and downloads its still beside it', async () => {
    const out = join(dir, 'preview.mp4');
    const r = await cli(['--video', face, '--audio', speech, '--preview-at', '0.6', '--out', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout.trim());
    assert.equal(j.output, out);
    assert.equal(j.still, join(dir, 'preview.jpg'));
    // 25 frames (from frame 15 of the 2 s output), each with the face redrawn.
    assert.equal(j.quality.framesTotal, 25);
    assert.equal(j.quality.framesWithFace, 25);
    const clip = await probeMedia(out);
    assert.ok(Math.abs((clip.durationSeconds ?? 0) - 1) < 0.1, String(clip.durationSeconds));
    const still = await probeMedia(j.still);
    assert.equal(still.kind, 'IMAGE');
    assert.deepEqual([still.video?.width, still.video?.height], [320, 320]);
    const late = await cli(['--video', face, '--audio', speech, '--preview-at', 'soon']);
    assert.equal(late.code, 2);
    assert.match(late.stderr, /--preview-at must be/);
  });

  test('a failed generation exits 1 with its error code', async () => {
    const r = await cli(['--video', nofaces, '--audio', speech, '--json']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout.trim());
    assert.equal(j.status, 'FAILED');
    assert.equal(j.errorCode, 'generation_no_face_detected');
    assert.equal(j.quality.framesWithFace, 0);
  });

  test('bad usage and a bad key are refused clearly', async () => {
    const both = await cli(['--video', face, '--image', face, '--audio', speech]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /exactly one of --video and --image/);
    const badOptions = await cli(['--video', face, '--audio', speech, '--options', '[1]']);
    assert.equal(badOptions.code, 2);
    assert.match(badOptions.stderr, /--options must be a JSON object/);
    const stray = await cli(['--video', face, '--text', 'Hi.', '--voice', 'slt-hts', '--transcript', 'Hi.']);
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /--transcript goes with --audio/);
    const missing = await cli(['--video', join(dir, 'missing.mp4'), '--audio', speech]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read .*missing\.mp4/);
    const badKey = await runCli(['generate', '--server', server.url, '--video', face, '--audio', speech], {
      env: { ...dep.env, LIPSYNC_API_KEY: 'sk_lipsync_not_a_key' },
    });
    assert.equal(badKey.code, 1);
    assert.match(badKey.stderr, /HTTP 401/);
  });
});
