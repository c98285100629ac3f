// The One-Euro filter (Casiez, Roussel, Vogel 2012): a low-pass whose cutoff rises with speed, so a
// still face is steady and a moving one is followed without visible lag. Vectorised over a fixed set
// of values (e.g. all landmark coordinates) that share the same timing.

export interface OneEuroParams {
  /** Cutoff (Hz) at rest: lower = steadier, more lag on slow drifts. */
  minCutoff: number;
  /** How much the cutoff rises per unit of speed (units of the values per second). */
  beta: number;
  /** Cutoff (Hz) of the speed estimate. */
  dCutoff: number;
}

function alpha(cutoff: number, dt: number): number {
  const tau = 1 / (2 * Math.PI * cutoff);
  return 1 / (1 + tau / dt);
}

export class OneEuroFilter {
  private x: Float64Array | null = null;
  private dx: Float64Array;

  constructor(
    readonly size: number,
    private readonly params: OneEuroParams,
  ) {
    this.dx = new Float64Array(size);
  }

  reset(): void {
    this.x = null;
    this.dx.fill(0);
  }

  /**
   * Filters one sample in place (values is overwritten with the filtered values). `scale` divides
   * speeds before they meet `beta`, so one parameter set works at any face size.
   */
  filter(values: Float32Array | Float64Array, dt: number, scale = 1): void {
    const n = this.size;
    if (!this.x) {
      this.x = Float64Array.from(values.subarray(0, n));
      this.dx.fill(0);
      return;
    }
    const { minCutoff, beta, dCutoff } = this.params;
    const ad = alpha(dCutoff, dt);
    const prev = this.x;
    for (let i = 0; i < n; i++) {
      const d = (values[i] - prev[i]) / dt;
      const ed = this.dx[i] + ad * (d - this.dx[i]);
      this.dx[i] = ed;
      const cutoff = minCutoff + (beta * Math.abs(ed)) / scale;
      const a = alpha(cutoff, dt);
      const v = prev[i] + a * (values[i] - prev[i]);
      prev[i] = v;
      values[i] = v;
    }
  }
}
