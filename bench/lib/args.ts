// Command-line options shared by the benchmarks.

export interface BenchArgs {
  /** A short run: fewer rounds, shorter loads, smaller counts. */
  quick: boolean;
  /** Skip PostgreSQL even when it is reachable. */
  noPostgres: boolean;
  /** Extra `--name=value` options. */
  values: Record<string, string>;
}

export function parseArgs(argv: readonly string[] = process.argv.slice(2)): BenchArgs {
  const values: Record<string, string> = {};
  let quick = false;
  let noPostgres = false;
  for (const a of argv) {
    if (a === '--quick') quick = true;
    else if (a === '--no-postgres') noPostgres = true;
    else if (/^--[a-z-]+=/.test(a)) {
      const [k, ...rest] = a.slice(2).split('=');
      values[k] = rest.join('=');
    } else if (a === '--help' || a === '-h') {
      console.log(
        'options: --quick (short run), --no-postgres (SQLite only), --name=value (see bench/results/2026-history.md)',
      );
      process.exit(0);
    } else {
      console.error(`unknown option ${a}`);
      process.exit(2);
    }
  }
  return { quick, noPostgres, values };
}

/** An integer `--name=N` option, or the default. */
export function intOption(args: BenchArgs, name: string, def: number): number {
  const raw = args.values[name];
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--${name} must be a positive integer, got ${raw}`);
    process.exit(2);
  }
  return n;
}
