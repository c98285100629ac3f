// Small statistics shared by the engine's report and the quality measure.

/** Pearson correlation of two equally long series (NaN when either is constant or too short). */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const n = Math.min(x.length, y.length);
  if (n < 2) return NaN;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const a = x[i] - mx;
    const b = y[i] - my;
    sxy += a * b;
    sxx += a * a;
    syy += b * b;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : NaN;
}

/**
 * The best Pearson correlation of `x[i]` with `y[i + lag]` for lags in [-maxLag, maxLag], skipping
 * pairs where either value is not finite. Returns the correlation and its lag.
 */
export function bestLagCorrelation(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  maxLag: number,
): { r: number; lag: number } {
  let best = { r: NaN, lag: 0 };
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < x.length; i++) {
      const j = i + lag;
      if (j < 0 || j >= y.length || !Number.isFinite(x[i]) || !Number.isFinite(y[j])) continue;
      a.push(x[i]);
      b.push(y[j]);
    }
    const r = pearson(a, b);
    if (Number.isFinite(r) && (!Number.isFinite(best.r) || r > best.r)) best = { r, lag };
  }
  return best;
}
