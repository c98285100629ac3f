// The transcript as word buttons (the accessible way in: Tab, arrows, Shift+arrows, Shift+click) above a
// timeline that places each word by its times over the soundtrack's waveform (a mouse's way to seek).
import { useEffect, useRef } from 'preact/hooks';
import type { DialogueOperation, TranscriptWord } from '../types.js';

export interface Selection {
  /** Indexes into the word list, anchor first (Shift extends from it). */
  anchor: number;
  focus: number;
}

export const selectedRange = (s: Selection | null): [number, number] | null =>
  s ? [Math.min(s.anchor, s.focus), Math.max(s.anchor, s.focus)] : null;

/** The edit touching each word id, for display. */
export function editsByWord(ops: DialogueOperation[]): Map<string, DialogueOperation> {
  const m = new Map<string, DialogueOperation>();
  for (const op of ops) {
    if (op.kind === 'change') m.set(op.wordId, op);
    else for (const id of op.wordIds) m.set(id, op);
  }
  return m;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

interface WordsProps {
  words: TranscriptWord[];
  ops: DialogueOperation[];
  selection: Selection | null;
  onSelect: (s: Selection) => void;
  /** Words the server named in a refusal. */
  flagged: Set<string>;
  /** Words corrected by hand in this session (what was really said: not edits). */
  corrected?: Set<string>;
}

export function TranscriptWords({ words, ops, selection, onSelect, flagged, corrected }: WordsProps) {
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const byWord = editsByWord(ops);
  const range = selectedRange(selection);

  const choose = (i: number, extend: boolean) => {
    onSelect(extend && selection ? { anchor: selection.anchor, focus: i } : { anchor: i, focus: i });
    refs.current[i]?.focus();
  };
  const onKey = (e: KeyboardEvent, i: number) => {
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!step) return;
    e.preventDefault();
    const next = Math.max(0, Math.min(words.length - 1, i + step));
    if (e.shiftKey) choose(next, true);
    else refs.current[next]?.focus();
  };

  return (
    <div class="dialogue-words" role="group" aria-label="Transcript">
      {words.map((w, i) => {
        const op = byWord.get(w.id);
        const selected = !!range && i >= range[0] && i <= range[1];
        const shown = op?.kind === 'change' ? op.replacement : w.text;
        const state =
          (op?.kind === 'remove' ? ', removed' : op ? `, changed from ${w.text}` : '') +
          (corrected?.has(w.id) ? ', corrected' : '') +
          (flagged.has(w.id) ? ', refused' : '');
        return (
          <button
            key={w.id}
            type="button"
            ref={(el) => {
              refs.current[i] = el;
            }}
            class={`dialogue-word${op ? ` ${op.kind}` : ''}${flagged.has(w.id) ? ' flagged' : ''}${corrected?.has(w.id) ? ' corrected' : ''}`}
            aria-pressed={selected}
            aria-label={`${shown} at ${seconds(w.startMs)}${state}`}
            onClick={(e) => choose(i, e.shiftKey)}
            onKeyDown={(e) => onKey(e, i)}
          >
            {op?.kind === 'change' ? (
              <>
                <del>{w.text}</del> <ins>{op.replacement}</ins>
              </>
            ) : (
              w.text
            )}
          </button>
        );
      })}
    </div>
  );
}

interface TimelineProps {
  words: TranscriptWord[];
  durationMs: number;
  ops: DialogueOperation[];
  selection: Selection | null;
  window: { startMs: number | null; endMs: number | null };
  /** Decoded soundtrack peaks (0..1), or null while decoding or where the browser cannot. */
  peaks: Float32Array | null;
  playheadMs: number;
  onSeek: (ms: number) => void;
  onSelect: (s: Selection) => void;
}

/** A mouse's view of the same words; hidden from screen readers, which have the buttons above. */
export function Timeline(p: TimelineProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const byWord = editsByWord(p.ops);
  const range = selectedRange(p.selection);
  const pct = (ms: number) => `${(100 * Math.max(0, Math.min(ms, p.durationMs))) / p.durationMs}%`;

  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext('2d');
    if (!c || !ctx) return;
    c.width = c.clientWidth * devicePixelRatio;
    c.height = c.clientHeight * devicePixelRatio;
    ctx.clearRect(0, 0, c.width, c.height);
    if (!p.peaks) return;
    ctx.fillStyle = getComputedStyle(c).color;
    const mid = c.height / 2;
    for (let x = 0; x < c.width; x++) {
      const v = p.peaks[Math.floor((x / c.width) * p.peaks.length)] ?? 0;
      ctx.fillRect(x, mid - v * mid, 1, Math.max(1, 2 * v * mid));
    }
  }, [p.peaks]);

  const seek = (e: MouseEvent) => {
    const box = (e.currentTarget as HTMLElement).getBoundingClientRect();
    p.onSeek(((e.clientX - box.left) / box.width) * p.durationMs);
  };
  const { startMs, endMs } = p.window;

  return (
    <div class="dialogue-timeline" aria-hidden="true" onClick={seek}>
      <canvas ref={canvas} />
      {startMs !== null || endMs !== null ? (
        <div
          class="dialogue-window"
          style={{ left: pct(startMs ?? 0), right: `calc(100% - ${pct(endMs ?? p.durationMs)})` }}
        />
      ) : null}
      {p.words.map((w, i) => (
        <div
          key={w.id}
          class={`dialogue-block${byWord.get(w.id) ? ` ${byWord.get(w.id)!.kind}` : ''}${
            range && i >= range[0] && i <= range[1] ? ' selected' : ''
          }`}
          style={{ left: pct(w.startMs), width: pct(w.endMs - w.startMs) }}
          title={w.text}
          onClick={(e) => {
            e.stopPropagation();
            p.onSelect(
              e.shiftKey && p.selection ? { anchor: p.selection.anchor, focus: i } : { anchor: i, focus: i },
            );
            p.onSeek(w.startMs);
          }}
        >
          {w.text}
        </div>
      ))}
      <div class="dialogue-playhead" style={{ left: pct(p.playheadMs) }} />
    </div>
  );
}

/** Peaks of a media file's soundtrack, decoded by the browser; null where it cannot decode it. */
export async function decodePeaks(url: string, buckets = 2000): Promise<Float32Array | null> {
  try {
    const data = await (await fetch(url)).arrayBuffer();
    const ctx = new OfflineAudioContext(1, 1, 8000);
    const audio = await ctx.decodeAudioData(data);
    const ch = audio.getChannelData(0);
    const peaks = new Float32Array(buckets);
    const per = Math.max(1, Math.floor(ch.length / buckets));
    for (let b = 0; b < buckets; b++) {
      let m = 0;
      for (let i = b * per; i < Math.min(ch.length, (b + 1) * per); i++) m = Math.max(m, Math.abs(ch[i]!));
      peaks[b] = m;
    }
    return peaks;
  } catch {
    // A waveform is a convenience: a codec the browser lacks leaves the words on a plain track.
    return null;
  }
}
