// The dubbing end-to-end tests' set-up: a real `lipsync serve` with one worker, and source media:
// English speech from the server's own text-to-speech, laid over a quiet background tone under a
// fixture face.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fixture } from '../helpers/paths.js';
import { createDeployment, startServer, type TestDeployment, type TestServer } from '../helpers/index.js';
import { api, cliOrg, uploadOverHttp, waitDone, type E2eOrg } from './generations-support.js';

const run = promisify(execFile);
export const FPS = 25;
export const TONE_HZ = 200;

/** A 400x400 face video whose soundtrack is the `speech` files over a quiet tone, `seconds` long. */
export async function sourceVideo(
  dir: string,
  name: string,
  speech: string[],
  seconds: number,
): Promise<string> {
  const out = join(dir, name);
  const inputs = speech.flatMap((s) => ['-i', s]);
  const placed = speech.map((_, i) => `[${i + 1}:a]aresample=48000,apad[s${i}]`).join(';');
  const mix = speech.map((_, i) => `[s${i}]`).join('');
  await run('ffmpeg', [
    ...['-v', 'error', '-y', '-stream_loop', '2', '-i', fixture('media/face_3.mp4'), ...inputs],
    ...['-f', 'lavfi', '-i', `sine=f=${TONE_HZ}:r=48000`],
    '-filter_complex',
    [
      ...(placed ? [placed] : []),
      `[${speech.length + 1}:a]volume=0.03[bg]`,
      `${mix}[bg]amix=inputs=${speech.length + 1}:duration=longest:normalize=0[a]`,
    ].join(';'),
    ...['-map', '0:v', '-map', '[a]', '-t', String(seconds), '-vf', `scale=400:400,fps=${FPS}`],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-pix_fmt', 'yuv420p', '-c:a', 'aac', out],
  ]);
  return out;
}

/**
 * English speech from the server's text-to-speech (slt-hts), delayed by `atMs`; `lower` plays it
 * slower and lower (pitch and formants down by 0.7), which the speaker clustering hears as another person.
 */
export async function englishSpeech(
  server: TestServer,
  org: E2eOrg,
  dir: string,
  name: string,
  script: string,
  atMs: number,
  lower = false,
): Promise<string> {
  // The local engine named: a deployment with a remote speech provider would otherwise default to it.
  const tts = await api(server, org, 'POST', '/v2/tts', { script, voiceId: 'slt-hts', provider: 'local' });
  assert.equal(tts.status, 200, tts.text);
  const raw = join(dir, `${name}-raw.wav`);
  await writeFile(raw, Buffer.from(await (await fetch(tts.json.url)).arrayBuffer()));
  const out = join(dir, `${name}.wav`);
  const shift = lower ? 'asetrate=16000*0.7,aresample=48000,' : 'aresample=48000,';
  await run('ffmpeg', ['-v', 'error', '-y', '-i', raw, '-af', `${shift}adelay=${atMs}|${atMs}`, out]);
  return out;
}

/** A dubbing test's server, its organization and a scratch folder. */
export interface DubServer {
  readonly dep: TestDeployment;
  readonly server: TestServer;
  readonly org: E2eOrg;
  readonly dir: string;
  /** Follows a generation to its end, asserting COMPLETED (with the server's log if not). */
  completed(id: string, timeoutMs?: number): Promise<any>;
  stop(): Promise<void>;
}

/** `lipsync serve` with one worker and private URLs allowed (the tests' own fakes), `env` on top. */
export async function startDubServer(name: string, env: Record<string, string> = {}): Promise<DubServer> {
  const dir = await mkdtemp(join(tmpdir(), `lipsync-${name}-`));
  const dep = await createDeployment({
    env: { LIPSYNC_WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn', LIPSYNC_ALLOW_PRIVATE_URLS: '1', ...env },
  });
  let server: TestServer | undefined;
  try {
    server = await startServer({ env: { ...dep.env } });
    const org = await cliOrg(dep.env);
    const s = server;
    return {
      dep,
      server: s,
      org,
      dir,
      async completed(id, timeoutMs = 300_000) {
        const done = await waitDone(s, org, id, timeoutMs);
        assert.equal(done.status, 'COMPLETED', `${JSON.stringify(done)}\n${s.stdout().slice(-3000)}`);
        return done;
      },
      async stop() {
        await s.stop();
        await dep.cleanup();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await server?.stop();
    await dep.cleanup();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** What the one-speaker source says (two sentences, so two segments). */
export const HELLO = 'Hello world. Good morning.';

/** The one-speaker source video (HELLO from 0.5 s), as a file; upload it or serve it by URL. */
export async function helloVideo(s: DubServer, seconds = 5): Promise<string> {
  const speech = await englishSpeech(s.server, s.org, s.dir, 'hello', HELLO, 500);
  return sourceVideo(s.dir, 'hello.mp4', [speech], seconds);
}

/** The same, uploaded: its asset id. */
export async function helloAsset(s: DubServer, seconds = 5): Promise<string> {
  return uploadOverHttp(s.server, s.org, await helloVideo(s, seconds));
}
