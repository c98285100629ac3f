// test-database: none
// Child processes started through the spawn helper (src/processes/spawn.ts): they behave as started
// directly (output, exit status, stdin, kill, start failures), stdin is the child's own pipe handed
// over (a buffer may be reused after 'drain'), and no child outlives its parent or a lost helper.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  closeSpawnHelper,
  spawnChild,
  spawnCounts,
  spawnHelperPid,
  useSpawnHelper,
  type Child,
} from '../../src/processes/spawn.js';
import { repoRoot } from '../helpers/paths.js';

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

async function untilGone(pid: number): Promise<void> {
  while (running(pid)) await new Promise((r) => setTimeout(r, 20));
}

const pids = (child: Child) => (child as Child & { pid?: number }).pid;

for (const mode of ['helper', 'direct'] as const) {
  describe(`spawnChild (${mode})`, () => {
    const on = mode === 'helper';
    after(() => useSpawnHelper(true));

    it('relays output and the exit status, and reports what it started', async () => {
      useSpawnHelper(on);
      const before = spawnCounts();
      const ran = await collect(
        spawnChild('sh', ['-c', 'echo out; echo err >&2; exit 3'], { stdout: 'pipe', stderr: 'pipe' }),
      );
      assert.deepEqual(ran, { code: 3, signal: null, stdout: 'out\n', stderr: 'err\n', error: null });
      const now = spawnCounts();
      assert.equal(now.started, before.started + 1);
      assert.equal(now.viaHelper, before.viaHelper + (on ? 1 : 0));
      if (on) assert.ok(spawnHelperPid());
    });

    it('runs in the given folder with the current environment', async () => {
      useSpawnHelper(on);
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
      useSpawnHelper(on);
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
      useSpawnHelper(on);
      const ran = await collect(spawnChild('lipsync-no-such-program', []));
      assert.equal(ran.error?.code, 'ENOENT');
    });

    it('kills on request and settles started before it does', async () => {
      useSpawnHelper(on);
      const child = spawnChild('sleep', ['300']);
      const ran = collect(child);
      await child.started;
      assert.ok(running(pids(child) ?? -1));
      child.kill('SIGKILL');
      const { code, signal } = await ran;
      assert.deepEqual({ code, signal }, { code: null, signal: 'SIGKILL' });
    });

    it('fails a write once the child has gone, as on a closed pipe', async () => {
      useSpawnHelper(on);
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
}

describe('the spawn helper', () => {
  it('kills its children when its parent is killed with SIGKILL', async () => {
    const module = pathToFileURL(join(repoRoot, 'src', 'processes', 'spawn.ts')).href;
    const script = `
      const { spawnChild, spawnHelperPid } = await import(${JSON.stringify(module)});
      const child = spawnChild('sleep', ['300']);
      await child.started;
      console.log(JSON.stringify({ helper: spawnHelperPid(), sleeper: child.pid }));
      setInterval(() => undefined, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(parent.stdout.setEncoding('utf8'), 'data')) as [string];
    const { helper, sleeper } = JSON.parse(line) as { helper: number; sleeper: number };
    assert.ok(running(helper) && running(sleeper));
    parent.kill('SIGKILL');
    await untilGone(sleeper);
    await untilGone(helper);
  });

  it('closes at a clean exit: the helper has exited when closeSpawnHelper settles, its children with it', async () => {
    useSpawnHelper(true);
    const child = spawnChild('sleep', ['300']);
    const ran = collect(child);
    await child.started;
    const helper = spawnHelperPid();
    const sleeper = pids(child);
    assert.ok(helper && sleeper);
    await closeSpawnHelper();
    assert.equal(running(helper), false, 'the helper is gone');
    assert.equal((await ran).signal, 'SIGKILL');
    await untilGone(sleeper);
    assert.equal(spawnHelperPid(), undefined);
  });

  it('fails the children of a helper that dies, and the next start forks a new one', async () => {
    useSpawnHelper(true);
    const child = spawnChild('sleep', ['300']);
    const ran = collect(child);
    await child.started;
    const first = spawnHelperPid();
    const sleeper = pids(child);
    assert.ok(first && sleeper);
    try {
      process.kill(first, 'SIGKILL');
      const r = await ran;
      assert.equal(r.error?.code, 'EHELPER');
      assert.equal(r.signal, 'SIGKILL');
    } finally {
      // A helper killed with SIGKILL could not take its children with it.
      process.kill(sleeper, 'SIGKILL');
    }
    const next = await collect(spawnChild('echo', ['again'], { stdout: 'pipe' }));
    assert.equal(next.stdout, 'again\n');
    assert.notEqual(spawnHelperPid(), first);
  });
});
