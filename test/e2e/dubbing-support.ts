// Source media for the dubbing end-to-end tests: English speech from the server's own text-to-speech,
// laid over a quiet background tone under a fixture face.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fixture } from '../helpers/paths.js';
import type { TestServer } from '../helpers/index.js';
import { api, type E2eOrg } from './generations-support.js';

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
  const tts = await api(server, org, 'POST', '/v2/tts', { script, voiceId: 'slt-hts' });
  assert.equal(tts.status, 200, tts.text);
  const raw = join(dir, `${name}-raw.wav`);
  await writeFile(raw, Buffer.from(await (await fetch(tts.json.url)).arrayBuffer()));
  const out = join(dir, `${name}.wav`);
  const shift = lower ? 'asetrate=16000*0.7,aresample=48000,' : 'aresample=48000,';
  await run('ffmpeg', ['-v', 'error', '-y', '-i', raw, '-af', `${shift}adelay=${atMs}|${atMs}`, out]);
  return out;
}
