// Small statistics and formatting helpers shared by the benchmarks.
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The q-th quantile (0..1) of the values, nearest-rank on a sorted copy; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export interface Distribution {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function distribution(values: readonly number[]): Distribution {
  const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
  return {
    count: values.length,
    min: quantile(values, 0),
    p50: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    p99: quantile(values, 0.99),
    max: quantile(values, 1),
    mean,
  };
}

/** A number with a sensible number of digits for a table cell. */
export function num(v: number, digits?: number): string {
  if (!Number.isFinite(v)) return '-';
  const d = digits ?? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2);
  return v.toFixed(d);
}

export function ratio(v: number, base: number): string {
  if (!Number.isFinite(v) || !Number.isFinite(base) || base === 0) return '-';
  return `${(v / base).toFixed(2)}x`;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Prints rows as an aligned text table (first row is the header). */
export function printTable(
  rows: readonly (readonly string[])[],
  out: (line: string) => void = console.log,
): void {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  rows.forEach((r, n) => {
    out(
      '  ' +
        r
          .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
          .join('  ')
          .trimEnd(),
    );
    if (n === 0) out('  ' + widths.map((w) => '-'.repeat(w)).join('  '));
  });
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across local processes. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** One line about the machine and how busy it is (other work on it skews every figure). */
export function machineLine(): string {
  const [l1, l5, l15] = os.loadavg().map((v) => v.toFixed(2));
  return `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), load average ${l1} ${l5} ${l15}`;
}

// Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on every Linux Node runs on).
const CLOCK_TICKS = 100;

/**
 * CPU seconds of a process (Linux, from /proc): its own user + system time, and that of its children
 * that have exited and been waited for (the ffmpeg runs of a service process, or of this one); and the
 * minor page faults the process itself has taken (each costs 11-13 µs on the paravirtualized machine
 * of bench/results/2026-history.md). Null where /proc cannot be read.
 */
export function processCpuSeconds(
  pid: number | 'self',
): { own: number; children: number; minorFaults: number } | null {
  return readStat(pid);
}

function readStat(pid: number | 'self'): { own: number; children: number; minorFaults: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces) start after its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14-17 of the whole line, 12-15 after the name.
    const [utime, stime, cutime, cstime] = f.slice(11, 15).map(Number);
    // minflt is field 10 of the whole line.
    const minorFaults = Number(f[7]);
    return { own: (utime + stime) / CLOCK_TICKS, children: (cutime + cstime) / CLOCK_TICKS, minorFaults };
  } catch {
    return null;
  }
}
