// Parses a single-range HTTP Range header (RFC 9110 section 14): bytes=a-b, bytes=a-, bytes=-n.
// A header we do not serve (another unit, several ranges, bad syntax) is ignored: the whole file is sent,
// which the RFC allows. A well-formed range that lies outside the file is unsatisfiable (416).
import type { ByteRange } from '../storage/blob-store.js';

export type RangeResult = { kind: 'none' } | { kind: 'range'; range: ByteRange } | { kind: 'unsatisfiable' };

const SINGLE_RANGE_RE = /^bytes=(\d*)-(\d*)$/;

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return { kind: 'none' };
  const m = SINGLE_RANGE_RE.exec(header.trim().replace(/\s+/g, ''));
  if (!m) return { kind: 'none' };
  const [, first, last] = m;
  if (first === '' && last === '') return { kind: 'none' };
  if (first === '') {
    // Suffix range: the last n bytes.
    const n = Number(last);
    if (!Number.isSafeInteger(n)) return { kind: 'none' };
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', range: { start: Math.max(0, size - n), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return { kind: 'none' };
  if (last !== '' && end < start) return { kind: 'none' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', range: { start, end: Math.min(end, size - 1) } };
}
