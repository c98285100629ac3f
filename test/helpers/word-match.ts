// Word-level comparison of a recognized word sequence with the truth (edit-distance alignment):
// which truth words were recognized exactly, for accuracy and for timing errors on those words.
export interface WordPair {
  truth: number;
  hyp: number;
}

const norm = (w: string) => w.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '');

/** Pairs of truth/hypothesis indexes whose words are equal, on a minimal edit-distance path. */
export function matchWords(truth: readonly string[], hyp: readonly string[]): WordPair[] {
  const t = truth.map(norm);
  const h = hyp.map(norm);
  const d = Array.from({ length: t.length + 1 }, (_, i) =>
    Array.from({ length: h.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= t.length; i++)
    for (let j = 1; j <= h.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (t[i - 1] === h[j - 1] ? 0 : 1));
  const pairs: WordPair[] = [];
  for (let i = t.length, j = h.length; i > 0 && j > 0;) {
    if (t[i - 1] === h[j - 1] && d[i][j] === d[i - 1][j - 1]) {
      pairs.push({ truth: i - 1, hyp: j - 1 });
      i--;
      j--;
    } else if (d[i][j] === d[i - 1][j - 1] + 1) {
      i--;
      j--;
    } else if (d[i][j] === d[i - 1][j] + 1) i--;
    else j--;
  }
  return pairs.reverse();
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
