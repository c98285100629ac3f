// Runs every benchmark, one after the other, each in its own process (so that one's sockets, child
// processes and memory never skew the next), and prints what each prints.
//
//   npm run bench                     all of them, full length
//   npm run bench -- --quick          a short run of each
//   npm run bench -- long-poll        only the named ones (options are passed on to each)
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each benchmark's script, and the options it always gets (before the ones given here). */
const SCRIPTS: Record<string, { script: string; args?: string[] }> = {
  'get-generation': { script: 'get-generation' },
  'long-poll': { script: 'long-poll' },
  'submit-overhead': { script: 'submit-overhead' },
  // Issue 30: GET /v2/generate/{id} while generations run in the same server.
  'get-during-jobs': { script: 'get-during-jobs' },
  // Issue 15's whole-generation targets: the CPU engine at 720p, and on the 1080x1920 HEVC clip.
  'generation-720p': { script: 'submit-overhead', args: ['--engine=cpu', '--size=1280x720'] },
  'generation-1080p': {
    script: 'submit-overhead',
    args: ['--engine=cpu', '--video=latentsync_demo1.mp4', '--audio=latentsync_demo1.wav'],
  },
  engine: { script: 'engine' },
  'engine-kernels': { script: 'engine-kernels' },
  queue: { script: 'queue' },
  speech: { script: 'speech' },
  'text-generation': { script: 'text-generation' },
  'dialogue-render': { script: 'dialogue-render' },
  batch: { script: 'batch' },
  'scale-out': { script: 'scale-out' },
};
const BENCHES = Object.keys(SCRIPTS);
const here = dirname(fileURLToPath(import.meta.url));

const argv = process.argv.slice(2);
const names = argv.filter((a) => !a.startsWith('-'));
const options = argv.filter((a) => a.startsWith('-'));
for (const n of names) {
  if (!BENCHES.includes(n)) {
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
    const { script, args = [] } = SCRIPTS[name];
    current = spawn(process.execPath, ['--import', 'tsx', join(here, `${script}.ts`), ...args, ...options], {
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
