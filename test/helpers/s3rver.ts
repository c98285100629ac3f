// A real S3-protocol server (s3rver) on a random port with the given buckets, for tests of the S3
// store. It runs in a child process because its list continuation tokens use DES, which Node's
// OpenSSL 3 offers only with the legacy provider.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from './paths.js';

/** s3rver's built-in account. */
export const S3RVER_ACCESS_KEY_ID = 'S3RVER';
export const S3RVER_SECRET_ACCESS_KEY = 'S3RVER';

export interface S3rver {
  readonly endpoint: string;
  /** The environment of a service that stores in `bucket` (path-style URLs). */
  env(bucket: string): Record<string, string>;
  stop(): Promise<void>;
}

const SERVER = `
const S3rver = require('s3rver');
const buckets = JSON.parse(process.argv[2]);
const server = new S3rver({
  address: '127.0.0.1', port: 0, directory: process.argv[1], silent: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
server.run().then(
  (a) => process.stdout.write(JSON.stringify({ port: a.port }) + '\\n'),
  (e) => { console.error(e); process.exit(1); },
);
`;

export async function startS3rver(buckets: readonly string[]): Promise<S3rver> {
  const dir = await mkdtemp(join(tmpdir(), 'lipsync-s3rver-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '-e', SERVER, join(dir, 'server'), JSON.stringify(buckets)],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  // Never outlive the test process (a file that fails before its cleanup, --test-force-exit).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const msg = JSON.parse(line) as { port?: number };
        if (msg.port !== undefined) resolve(msg.port);
      });
    });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    env: (bucket) => ({
      LIPSYNC_STORAGE: 's3',
      LIPSYNC_S3_ENDPOINT: endpoint,
      LIPSYNC_S3_BUCKET: bucket,
      LIPSYNC_S3_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID,
      LIPSYNC_S3_SECRET_ACCESS_KEY: S3RVER_SECRET_ACCESS_KEY,
      LIPSYNC_S3_FORCE_PATH_STYLE: 'true',
    }),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill();
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
