// test-database: none
// Child processes started by src/processes/spawn.ts: output, exit status, folder and environment,
// stdin (a buffer may be reused after 'drain'), kill, start failures.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { spawnChild, type Child } from '../../src/processes/spawn.js';

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error: NodeJS.ErrnoException | null;
}

function collect(child: Child): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  let error: NodeJS.ErrnoException | null = null;
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.on('error', (err) => (error = err));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, error }));
  });
}

/** Alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const pids = (child: Child) => (child as Child & { pid?: number }).pid;

describe('spawnChild', () => {
  it('relays output and the exit status', async () => {
    const ran = await collect(
      spawnChild('sh', ['-c', 'echo out; echo err >&2; exit 3'], { stdout: 'pipe', stderr: 'pipe' }),
    );
    assert.deepEqual(ran, { code: 3, signal: null, stdout: 'out\n', stderr: 'err\n', error: null });
  });

  it('runs in the given folder with the current environment', async () => {
    process.env.LIPSYNC_SPAWN_TEST_VALUE = 'seen';
    try {
      const ran = await collect(
        spawnChild('sh', ['-c', 'pwd; echo "$LIPSYNC_SPAWN_TEST_VALUE"'], { cwd: '/', stdout: 'pipe' }),
      );
      assert.equal(ran.stdout, '/\nseen\n');
    } finally {
      delete process.env.LIPSYNC_SPAWN_TEST_VALUE;
    }
  });

  it('takes stdin, and a buffer written may be reused once the pipe has drained', async () => {
    const child = spawnChild('sha256sum', [], { stdin: 'pipe', stdout: 'pipe' });
    const result = collect(child);
    const stdin = child.stdin;
    assert.ok(stdin);
    const buffer = Buffer.alloc(4 << 20, 'a');
    const expected = createHash('sha256').update(buffer);
    if (!stdin.write(buffer)) await once(stdin, 'drain');
    buffer.fill('b');
    expected.update(buffer);
    stdin.end(buffer);
    const ran = await result;
    assert.equal(ran.code, 0);
    assert.equal(ran.stdout.split(' ')[0], expected.digest('hex'));
  });

  it('reports a program that cannot start as an error, then a close', async () => {
    const ran = await collect(spawnChild('lipsync-no-such-program', []));
    assert.equal(ran.error?.code, 'ENOENT');
  });

  it('kills on request and settles started before it does', async () => {
    const child = spawnChild('sleep', ['300']);
    const ran = collect(child);
    await child.started;
    assert.ok(running(pids(child) ?? -1));
    child.kill('SIGKILL');
    const { code, signal } = await ran;
    assert.deepEqual({ code, signal }, { code: null, signal: 'SIGKILL' });
  });

  it('fails a write once the child has gone, as on a closed pipe', async () => {
    const child = spawnChild('true', [], { stdin: 'pipe' });
    await collect(child);
    const stdin = child.stdin;
    assert.ok(stdin);
    stdin.on('error', () => undefined);
    const err = await new Promise<Error | null | undefined>((resolve) =>
      stdin.write(Buffer.alloc(1 << 20), resolve),
    );
    assert.ok(err, 'the write fails');
  });
});
