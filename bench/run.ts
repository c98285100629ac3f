// Runs every benchmark, one after the other, each in its own process (so that one's sockets, child
// processes and memory never skew the next), and prints what each prints.
//
//   npm run bench                     all of them, full length
//   npm run bench -- --quick          a short run of each
//   npm run bench -- long-poll        only the named ones (options are passed on to each)
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'get-generation',
  'long-poll',
  'submit-overhead',
  'engine',
  'engine-kernels',
  'queue',
  'speech',
  'text-generation',
  'dialogue-render',
  'batch',
  'scale-out',
] as const;
const here = dirname(fileURLToPath(import.meta.url));

const argv = process.argv.slice(2);
const names = argv.filter((a) => !a.startsWith('-'));
const options = argv.filter((a) => a.startsWith('-'));
for (const n of names) {
  if (!(BENCHES as readonly string[]).includes(n)) {
    console.error(`unknown benchmark ${n}; known: ${BENCHES.join(', ')}`);
    process.exit(2);
  }
}
const selected = names.length ? BENCHES.filter((b) => names.includes(b)) : [...BENCHES];

let current: ReturnType<typeof spawn> | null = null;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    // The benchmark cleans up after itself on the signal; stop once it has.
    if (current) current.kill(sig);
    else process.exit(130);
  });
}

const failed: string[] = [];
const started = Date.now();
for (const name of selected) {
  console.log(`\n==================== ${name} ${options.join(' ')}`.trimEnd());
  const t0 = Date.now();
  const code = await new Promise<number | null>((resolve) => {
    current = spawn(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`), ...options], {
      stdio: 'inherit',
    });
    current.on('exit', (c, s) => resolve(c ?? (s ? 128 : 1)));
    current.on('error', () => resolve(1));
  });
  current = null;
  console.log(
    `==> ${name}: ${code === 0 ? 'done' : `FAILED (exit ${code})`} in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
  if (code !== 0) failed.push(name);
}
console.log(
  `\n${selected.length - failed.length} of ${selected.length} benchmarks ran in ${((Date.now() - started) / 1000).toFixed(0)} s${failed.length ? `; failed: ${failed.join(', ')}` : ''}`,
);
process.exit(failed.length ? 1 : 0);
