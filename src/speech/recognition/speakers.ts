// A speaker-count estimate from voice features of the speech: the transcript's words are grouped
// into pieces of a few seconds (a turn change needs no pause to be seen), each piece is measured by
// Praat (pitch median, MFCC means), and the pieces are clustered bottom-up (average linkage) until
// the closest clusters are further apart than a threshold calibrated on the fixtures
// (docs/transcription.md). Pieces with too little voiced speech to measure follow their neighbours.
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runPraat } from '../praat.js';

/** The words a speaker estimate needs (transcript words: absolute times in the source). */
export interface SpeakerWord {
  id: string;
  startMs: number;
  endMs: number;
}

export interface SpeakerOptions {
  workDir: string;
  signal?: AbortSignal;
  /** Where `wavPath` starts in the source (the window's startMs): word times minus this. */
  offsetMs?: number;
  /** Clusters further apart than this stay apart (default SPEAKER_THRESHOLD). */
  threshold?: number;
  /** Target length of a measured piece of speech (default 3000 ms). */
  pieceMs?: number;
}

export interface SpeakerEstimate {
  speakerCount: number;
  /** 'speaker_1', ... per word id, numbered in order of first appearance. */
  speakerByWordId: Record<string, string>;
}

/** Calibrated on the fixtures: see docs/transcription.md, "Speaker estimate". */
export const SPEAKER_THRESHOLD = 1.25;
/** Feature scales: one unit of distance is this much pitch (semitones) or MFCC change (RMS). */
const PITCH_SCALE_ST = 6;
const MFCC_SCALE = 30;
const MIN_VOICED_FRAMES = 40;

const FEATURE_SCRIPT = `form features
  sentence wav
  sentence pieces
endform
s = Read from file: wav$
t = Read Table from tab-separated file: pieces$
n = Get number of rows
for i to n
  selectObject: t
  a = Get value: i, "start"
  b = Get value: i, "end"
  selectObject: s
  part = Extract part: a, b, "rectangular", 1, "no"
  pitch = To Pitch: 0, 60, 500
  nv = Count voiced frames
  med = Get quantile: 0, 0, 0.5, "Hertz"
  selectObject: part
  mf = To MFCC: 12, 0.015, 0.005, 100, 100, 0
  tor = To TableOfReal: "no"
  line$ = string$(nv) + " " + fixed$(med, 3)
  for c to 12
    m = Get column mean (index): c
    line$ = line$ + " " + fixed$(m, 4)
  endfor
  appendInfoLine: line$
  removeObject: part, pitch, mf, tor
endfor
`;

export interface PieceFeatures {
  voicedFrames: number;
  pitchSt: number;
  mfcc: number[];
}

/** Consecutive words grouped into pieces of about pieceMs, never across a segment boundary. */
export function speechPieces(
  segments: readonly { words: readonly SpeakerWord[] }[],
  pieceMs: number,
): SpeakerWord[][] {
  const pieces: SpeakerWord[][] = [];
  for (const s of segments) {
    let cur: SpeakerWord[] = [];
    for (const w of s.words) {
      if (cur.length > 0 && w.endMs - cur[0].startMs > pieceMs) {
        pieces.push(cur);
        cur = [];
      }
      cur.push(w);
    }
    // A short tail joins its piece rather than being measured alone.
    if (
      cur.length > 0 &&
      pieces.length > 0 &&
      cur.at(-1)!.endMs - cur[0].startMs < pieceMs / 3 &&
      s.words[0] !== cur[0]
    )
      pieces[pieces.length - 1].push(...cur);
    else if (cur.length > 0) pieces.push(cur);
  }
  return pieces;
}

export function featureDistance(a: PieceFeatures, b: PieceFeatures): number {
  const dp = (a.pitchSt - b.pitchSt) / PITCH_SCALE_ST;
  const dm = Math.sqrt(a.mfcc.reduce((n, x, i) => n + (x - b.mfcc[i]) ** 2, 0) / a.mfcc.length) / MFCC_SCALE;
  return Math.sqrt(dp * dp + dm * dm);
}

/** Average-linkage clustering: a cluster label per item, stopping at `threshold`. */
export function clusterFeatures(items: readonly PieceFeatures[], threshold: number): number[] {
  const d = items.map((a) => items.map((b) => featureDistance(a, b)));
  let clusters = items.map((_, i) => [i]);
  for (;;) {
    let best = Infinity;
    let pair: [number, number] = [-1, -1];
    for (let i = 0; i < clusters.length; i++)
      for (let j = i + 1; j < clusters.length; j++) {
        let sum = 0;
        for (const x of clusters[i]) for (const y of clusters[j]) sum += d[x][y];
        const avg = sum / (clusters[i].length * clusters[j].length);
        if (avg < best) [best, pair] = [avg, [i, j]];
      }
    if (pair[0] < 0 || best > threshold) break;
    clusters[pair[0]] = clusters[pair[0]].concat(clusters[pair[1]]);
    clusters = clusters.filter((_, k) => k !== pair[1]);
  }
  const label = new Array<number>(items.length).fill(0);
  clusters.forEach((c, k) => c.forEach((i) => (label[i] = k)));
  return label;
}

/** Praat's measurements of each piece of `wavPath` ([startMs, endMs) relative to the file). */
export async function measurePieces(
  wavPath: string,
  spans: readonly [number, number][],
  opts: { workDir: string; signal?: AbortSignal },
): Promise<PieceFeatures[]> {
  const table = join(opts.workDir, `speaker-pieces-${randomUUID()}.tsv`);
  const rows = spans.map(([a, b]) => `${(Math.max(0, a) / 1000).toFixed(3)}\t${(b / 1000).toFixed(3)}`);
  await writeFile(table, `start\tend\n${rows.join('\n')}\n`);
  const out = await runPraat(FEATURE_SCRIPT, [wavPath, table], {
    ...opts,
    timeoutMs: 60_000 + spans.length * 2000,
  });
  const lines = out.trim().split(/\r?\n/).filter(Boolean);
  return lines.map((l) => {
    const [nv, med, ...mfcc] = l.trim().split(/\s+/).map(Number);
    const voiced = Number.isFinite(nv) && Number.isFinite(med) && med > 0;
    return { voicedFrames: voiced ? nv : 0, pitchSt: voiced ? 12 * Math.log2(med / 100) : 0, mfcc };
  });
}

/** How many people speak in the transcript's segments, and which of them says each word. */
export async function estimateSpeakers(
  wavPath: string,
  segments: readonly { words: readonly SpeakerWord[] }[],
  opts: SpeakerOptions,
): Promise<SpeakerEstimate> {
  const offset = opts.offsetMs ?? 0;
  const pieces = speechPieces(segments, opts.pieceMs ?? 3000);
  if (pieces.length === 0) return { speakerCount: 0, speakerByWordId: {} };
  const spans = pieces.map((p): [number, number] => [p[0].startMs - offset, p.at(-1)!.endMs - offset]);
  const feats = await measurePieces(wavPath, spans, opts);
  const usable = feats
    .map((f, i) => i)
    .filter((i) => feats[i].voicedFrames >= MIN_VOICED_FRAMES && feats[i].mfcc.every(Number.isFinite));
  const labels = clusterFeatures(
    usable.map((i) => feats[i]),
    opts.threshold ?? SPEAKER_THRESHOLD,
  );
  // Every piece takes the cluster of the nearest measurable piece in time (itself when measurable).
  const pieceLabel = pieces.map((_, i) => {
    if (usable.length === 0) return 0;
    let best = 0;
    usable.forEach((u, k) => {
      if (Math.abs(u - i) < Math.abs(usable[best] - i)) best = k;
    });
    return labels[best];
  });
  const names = new Map<number, string>();
  const speakerByWordId: Record<string, string> = {};
  pieces.forEach((p, i) => {
    if (!names.has(pieceLabel[i])) names.set(pieceLabel[i], `speaker_${names.size + 1}`);
    for (const w of p) speakerByWordId[w.id] = names.get(pieceLabel[i])!;
  });
  return { speakerCount: names.size, speakerByWordId };
}
