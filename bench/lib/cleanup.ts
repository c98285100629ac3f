// Every benchmark ends by itself and leaves nothing behind: child processes, temp folders and
// PostgreSQL schemas are registered here and released on success, failure, Ctrl-C or time-out.

type Task = () => Promise<void>;
const tasks: { label: string; fn: Task }[] = [];

/** Registers a clean-up step (run last-in first-out); returns a function that unregisters it. */
export function onCleanup(label: string, fn: Task): () => void {
  const entry = { label, fn };
  tasks.push(entry);
  return () => {
    const i = tasks.indexOf(entry);
    if (i >= 0) tasks.splice(i, 1);
  };
}

let running: Promise<void> | null = null;
export function runCleanups(): Promise<void> {
  running ??= (async () => {
    while (tasks.length > 0) {
      const t = tasks.pop() as { label: string; fn: Task };
      try {
        await t.fn();
      } catch (err) {
        console.error(`clean-up "${t.label}" failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
    running = null;
  })();
  return running;
}

/**
 * Runs a benchmark's main function with clean-up on every exit path and a hard time limit, then
 * exits the process (so that nothing left behind keeps it alive).
 */
export async function runMain(
  name: string,
  fn: () => Promise<void>,
  opts: { maxMs: number },
): Promise<never> {
  let code = 0;
  const bail = (why: string, exitCode: number) => {
    console.error(`\n${name}: ${why}; cleaning up`);
    void runCleanups().finally(() => process.exit(exitCode));
  };
  process.once('SIGINT', () => bail('interrupted', 130));
  process.once('SIGTERM', () => bail('terminated', 143));
  const limit = setTimeout(
    () => bail(`stopped after the time limit of ${Math.round(opts.maxMs / 1000)} s`, 1),
    opts.maxMs,
  );
  limit.unref();
  try {
    await fn();
  } catch (err) {
    console.error(`\n${name} failed: ${(err as Error)?.stack ?? String(err)}`);
    code = 1;
  } finally {
    clearTimeout(limit);
    await runCleanups();
  }
  process.exit(code);
}
