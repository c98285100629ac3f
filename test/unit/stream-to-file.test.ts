// streamToFile: a failed stream leaves no file behind, even when it fails before the file's own open
// completed (the race that left partial downloads in CI), and never removes a file it did not open.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { streamToFile } from '../../src/stream-to-file.js';

const failing = () =>
  new Readable({
    read() {
      this.destroy(new Error('source failed'));
    },
  });

describe('streamToFile', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stream-to-file-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('writes the transformed stream with the given mode', async () => {
    const p = join(dir, 'ok');
    const upper = new Transform({
      transform(chunk: Buffer, _e, cb) {
        cb(null, Buffer.from(chunk.toString().toUpperCase()));
      },
    });
    await streamToFile(Readable.from([Buffer.from('abc'), Buffer.from('def')]), [upper], p, { mode: 0o600 });
    assert.equal(readFileSync(p, 'utf8'), 'ABCDEF');
    assert.equal(statSync(p).mode & 0o077, 0);
    await rm(p);
  });

  test('a source failing before the file is open leaves nothing, not even later', async () => {
    const sub = await mkdtemp(join(dir, 'race-'));
    for (let i = 0; i < 400; i++) {
      await assert.rejects(streamToFile(failing(), [], join(sub, `f${i}`)), /source failed/);
    }
    // A file removed too early is created again by the open still in flight: give those a moment.
    await sleep(50);
    assert.deepEqual(await readdir(sub), []);
  });

  test('a failure mid-stream and an abort remove the partial file', async () => {
    const sub = await mkdtemp(join(dir, 'partial-'));
    const p = join(sub, 'partial');
    let n = 0;
    const src = new Readable({
      read() {
        if (++n > 3) this.destroy(new Error('cut'));
        else this.push(Buffer.alloc(1000, n));
      },
    });
    await assert.rejects(streamToFile(src, [], p), /cut/);
    assert.deepEqual(await readdir(sub), []);
    const ctl = new AbortController();
    const endless = new Readable({
      read() {
        this.push(Buffer.alloc(1000));
        if (!ctl.signal.aborted) ctl.abort();
      },
    });
    await assert.rejects(streamToFile(endless, [], p, { signal: ctl.signal }), { name: 'AbortError' });
    assert.deepEqual(await readdir(sub), []);
  });

  test("an 'x' open refused for an existing file leaves that file alone", async () => {
    const p = join(dir, 'existing');
    writeFileSync(p, 'keep me');
    await assert.rejects(streamToFile(Readable.from([Buffer.from('x')]), [], p, { flags: 'wx' }), {
      code: 'EEXIST',
    });
    assert.equal(readFileSync(p, 'utf8'), 'keep me');
    await rm(p);
  });
});
