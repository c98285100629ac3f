// A synthetic scene for the mouth-warp tests: a colourful rgb24 texture with fine detail (so any
// resampling shows) and a frontal face's landmarks laid out from the mesh's canonical layout.
import { meshLayout, MESH_POINTS } from '../../src/engines/cpu/face-models.js';

export function texturedPicture(width: number, height: number): Buffer {
  const img = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      img[i] = 128 + 100 * Math.sin(x / 7) * Math.cos(y / 11);
      img[i + 1] = 128 + 90 * Math.sin((x + y) / 5);
      img[i + 2] = (x * 3 + y * 5) % 256;
    }
  }
  return img;
}

/** A frontal face filling most of a 320x320 picture (lips closed). */
export function facePoints(): Float32Array {
  const { uv } = meshLayout();
  const p = new Float32Array(MESH_POINTS * 2);
  for (let i = 0; i < MESH_POINTS; i++) {
    p[2 * i] = 40 + uv[i][0] * 240;
    p[2 * i + 1] = 10 + uv[i][1] * 250;
  }
  return p;
}
