// test-database: none
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { conform } from '../../src/media/conform.js';
import { probeMedia } from '../../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { findWatermarkFont, watermarkGeometry, watermarkVideo } from '../../src/media/watermark.js';
import { fileFrames, makeInputs, streams } from './media-support.js';

/** Mean absolute difference over a rectangle of two rgb24 frames. */
function regionDiff(
  a: Buffer,
  b: Buffer,
  width: number,
  x0: number,
  y0: number,
  w: number,
  h: number,
): number {
  let sum = 0;
  for (let y = y0; y < y0 + h; y++) {
    for (let x = x0; x < x0 + w; x++) {
      for (let c = 0; c < 3; c++) sum += Math.abs(a[(y * width + x) * 3 + c] - b[(y * width + x) * 3 + c]);
    }
  }
  return sum / (w * h * 3);
}

describe('watermark', () => {
  let dir: string;
  let source: string;
  const W = 320;
  const H = 240;
  before(async () => {
    dir = await makeTempDir('media-watermark');
    const inp = await makeInputs(dir);
    source = join(dir, 'source.mp4');
    await conform(
      {
        visual: { path: inp.clip, probe: await probeMedia(inp.clip) },
        audio: { path: inp.shortWav, probe: await probeMedia(inp.shortWav) },
        options: { outputResolution: [W, H] },
      },
      source,
    );
  });
  after(async () => {
    await removeTempDir(dir);
  });

  it('finds the Debian DejaVu font', async () => {
    assert.match((await findWatermarkFont()) ?? '', /DejaVuSans/);
    assert.equal(await findWatermarkFont(['/nonexistent/font.ttf']), null);
  });

  for (const font of ['found', 'none'] as const) {
    it(`marks the bottom-right corner only (${font === 'found' ? 'drawtext' : 'drawbox fallback'}), same size, timing and audio`, async () => {
      const out = join(dir, `wm-${font}.mp4`);
      const r = await watermarkVideo(source, out, {
        format: 'mp4',
        fontFile: font === 'found' ? undefined : null,
      });
      assert.equal(r.method, font === 'found' ? 'drawtext' : 'drawbox');
      const [a, b] = [await streams(source), await streams(out)];
      assert.ok(a.video && b.video && a.audio && b.audio);
      assert.deepEqual(
        [b.video.width, b.video.height, b.video.fps, b.video.frames],
        [a.video.width, a.video.height, a.video.fps, a.video.frames],
      );
      assert.ok(Math.abs(b.video.duration - a.video.duration) < 0.001);
      assert.equal(b.audio.codec, 'aac');
      assert.ok(Math.abs(b.audio.duration - a.audio.duration) < 0.001);
      const [orig, marked] = [await fileFrames(source, W, H), await fileFrames(out, W, H)];
      const g = watermarkGeometry(W, H);
      const corner = regionDiff(orig[5], marked[5], W, W - g.margin - 60, H - g.margin - 14, 60, 12);
      const clear = regionDiff(orig[5], marked[5], W, 0, 0, 100, 100);
      assert.ok(corner > 15, `corner changed by ${corner.toFixed(1)}`);
      assert.ok(clear < 3, `rest changed by ${clear.toFixed(1)}`);
    });
  }
});
