// Which processes are alive on this machine, from /proc (Linux): tests check that a child was stopped
// by looking for it, not by timing how soon a call returned.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Pids of live `command` processes whose arguments include `argument` (an exited process that is not
 * yet reaped has no arguments, so it is not counted).
 */
export function runningProcesses(command: string, argument: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // ended while we looked
    }
    if (argv.length > 0 && basename(argv[0]) === command && argv.slice(1).some((a) => a.includes(argument))) {
      pids.push(Number(name));
    }
  }
  return pids;
}
