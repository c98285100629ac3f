// Comparing raw rgb24 frames in engine tests.

/** Mean absolute difference of two rgb24 frames of `width` pixels per row, over the columns [x0, x1). */
export function meanDiff(a: Buffer, b: Buffer, width: number, x0 = 0, x1 = width): number {
  let s = 0;
  let n = 0;
  const rows = a.length / 3 / width;
  for (let y = 0; y < rows; y++) {
    for (let i = (y * width + x0) * 3; i < (y * width + x1) * 3; i++) {
      s += Math.abs(a[i] - b[i]);
      n++;
    }
  }
  return s / n;
}
