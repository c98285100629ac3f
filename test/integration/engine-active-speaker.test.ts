// test-database: none
// Active-speaker detection on real media, through the same stages as the pipeline (prepareConform ->
// the engine with the conformed scene): two people taking turns, each with their own speech on the
// video's soundtrack, and the engine must re-draw the mouth of whoever speaks at the moment and leave
// the listener alone; without a soundtrack, the face whose mouth moves.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { normaliseOptions } from '../../src/domain/generation-request.js';
import type { EngineReport } from '../../src/engines/engine.js';
import { CpuEngine } from '../../src/engines/cpu/index.js';
import { conformedFrames, prepareConform } from '../../src/media/conform.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { probeMedia } from '../../src/media/probe.js';
import { conformedScene } from '../../src/media/scene.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { meanDiff } from '../helpers/frames.js';
import { fixture } from '../helpers/paths.js';

const FPS = 25;
const TURN = 3; // seconds each person speaks
const SIDE = 300;
const WIDTH = 2 * SIDE;
const FRAMES = 2 * TURN * FPS;
/** Frames either side of the change of speaker where either choice is accepted. */
const SLACK = 10;

describe('active-speaker detection on a two-person dialogue', { timeout: 240_000 }, () => {
  let dir: string;
  let dialogue: string;
  let silentDialogue: string;
  let speech: string;

  before(async () => {
    dir = await makeTempDir('engine-asd-test');
    dialogue = join(dir, 'dialogue.mp4');
    silentDialogue = join(dir, 'dialogue-silent.mp4');
    speech = join(dir, 'speech.wav');
    // Left: face_1 speaks for 3 s, then holds still and listens. Right: face_5 listens (held still)
    // for 3 s, then speaks. The soundtrack is face_1's speech, then face_5's.
    const turn = (input: number, start: boolean) =>
      `[${input}:v]trim=duration=${TURN},setpts=PTS-STARTPTS,fps=${FPS},scale=${SIDE}:${SIDE},setsar=1,` +
      `tpad=${start ? 'start' : 'stop'}_mode=clone:${start ? 'start' : 'stop'}_duration=${TURN}`;
    const voice = (input: number) =>
      `[${input}:a]atrim=duration=${TURN},asetpts=PTS-STARTPTS,aresample=48000,aformat=channel_layouts=stereo`;
    await runFfmpeg([
      '-i',
      fixture('media/face_1.mp4'),
      '-i',
      fixture('media/face_5.mp4'),
      '-filter_complex',
      `${turn(0, false)}[a];${turn(1, true)}[b];[a][b]hstack=inputs=2[v];${voice(0)}[x];${voice(1)}[y];[x][y]concat=n=2:v=0:a=1[s]`,
      '-map',
      '[v]',
      '-map',
      '[s]',
      '-t',
      String(2 * TURN),
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '16',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      dialogue,
    ]);
    await runFfmpeg(['-i', dialogue, '-an', '-c:v', 'copy', silentDialogue]);
    await runFfmpeg(['-i', fixture('media/speech_short.wav'), '-t', String(2 * TURN), speech]);
  });
  after(async () => {
    if (dir) await removeTempDir(dir);
  });

  /** The engine as the pipeline runs it, with active_speaker; the changed amount per frame and side. */
  async function run(video: string): Promise<{ left: number[]; right: number[]; report: EngineReport }> {
    const work = join(dir, `work-${Math.random().toString(36).slice(2)}`);
    const [vp, ap] = await Promise.all([probeMedia(video), probeMedia(speech)]);
    await mkdir(work);
    const prepared = await prepareConform(
      {
        visual: { path: video, probe: vp },
        audio: { path: speech, probe: ap },
        options: { syncMode: 'cut_off' },
      },
      work,
    );
    assert.equal(prepared.plan.frameCount, FRAMES);
    const engine = new CpuEngine().start({
      frames: conformedFrames(prepared),
      width: WIDTH,
      height: SIDE,
      fps: FPS,
      frameCount: FRAMES,
      audioPath: prepared.audioPath,
      activeSpans: null,
      options: normaliseOptions({ active_speaker: true }, 'lipsync-2'),
      settings: {},
      signal: new AbortController().signal,
      scene: conformedScene(prepared, { path: video, hasAudio: vp.audio !== null }, work),
    });
    const left: number[] = [];
    const right: number[] = [];
    const reference = conformedFrames(prepared)[Symbol.asyncIterator]();
    for await (const frame of engine.frames) {
      const ref = (await reference.next()).value as Buffer;
      left.push(meanDiff(frame, ref, WIDTH, 0, SIDE));
      right.push(meanDiff(frame, ref, WIDTH, SIDE, WIDTH));
    }
    await reference.return?.(undefined);
    return { left, right, report: engine.report() };
  }

  /** Frames of a range in which only `side` was re-drawn. */
  function onlyOneSide(
    r: { left: number[]; right: number[] },
    from: number,
    to: number,
    side: 'left' | 'right',
  ) {
    let ok = 0;
    for (let t = from; t < to; t++) {
      const mine = side === 'left' ? r.left[t] : r.right[t];
      const other = side === 'left' ? r.right[t] : r.left[t];
      if (mine > 0 && other === 0) ok++;
    }
    return ok / (to - from);
  }

  /**
   * The left face re-drawn alone in the first turn, the right one in the second. Within SLACK frames
   * of the change the choice may lag or lead (measured: one frame early); elsewhere it must be right.
   */
  function assertTurns(t: { diagnostic(s: string): void }, r: { left: number[]; right: number[] }) {
    const first = onlyOneSide(r, 0, TURN * FPS - SLACK, 'left');
    const second = onlyOneSide(r, TURN * FPS + SLACK, FRAMES, 'right');
    t.diagnostic(`left only in the first turn: ${first}, right only in the second: ${second}`);
    t.diagnostic(r.left.map((v, i) => (v > 0 ? 'L' : '') + (r.right[i] > 0 ? 'R' : '') || '-').join(''));
    assert.ok(first >= 0.95, `first turn: ${first}`);
    assert.ok(second >= 0.95, `second turn: ${second}`);
  }

  it("re-draws whoever speaks on the video's own soundtrack, switching once", async (t) => {
    const r = await run(dialogue);
    t.diagnostic(JSON.stringify(r.report.activeSpeaker));
    assert.deepEqual(r.report.activeSpeaker, {
      method: 'audio-visual',
      faces: 2,
      multiFaceFrames: FRAMES,
      switches: 1,
    });
    assert.equal(r.report.framesWithFace, FRAMES);
    assertTurns(t, r);
    // No jump at the change: the re-drawn mouth fades out on the old face and in on the new one, so
    // the two frames at the cut show both faces as they are (weights 0 there, 0.25 next to them).
    const lastLeft = r.left.findLastIndex((v) => v > 0);
    const firstRight = r.right.findIndex((v) => v > 0);
    t.diagnostic(`last left frame ${lastLeft}, first right frame ${firstRight}`);
    assert.equal(firstRight - lastLeft, 3, 'two untouched frames at the change');
    assert.equal(r.left[lastLeft + 1] + r.right[lastLeft + 1], 0);
    assert.equal(r.left[lastLeft + 2] + r.right[lastLeft + 2], 0);
  });

  it('without a soundtrack follows the mouth that moves', async (t) => {
    const r = await run(silentDialogue);
    t.diagnostic(JSON.stringify(r.report.activeSpeaker));
    assert.equal((r.report.activeSpeaker as { method: string }).method, 'mouth-motion');
    assertTurns(t, r);
  });
});
