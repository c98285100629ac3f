// The process-wide bound on local speech tool processes: more parallel POST /v2/tts than the pool
// (LIPSYNC_SPEECH_PROCESSES) and its queue (LIPSYNC_SPEECH_QUEUE) hold get a clean 503 with
// Retry-After, the rest succeed, and the real child processes of this process (read from /proc)
// never outnumber the pool; the gauges show in /metrics.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { speechProcesses } from '../../src/processes/pool.js';

const TOOLS = new Set(['festival', 'RHVoice-test', 'pocketsphinx_bat', 'pocketsphinx_con', 'praat']);

/** Speech tool processes whose parent is this process, from /proc/<pid>/stat (comm is 15 chars). */
async function speechChildren(): Promise<number> {
  let n = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const m = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
    if (m && Number(m[2]) === process.pid && TOOLS.has(m[1])) n++;
  }
  return n;
}

describe(`speech process pool (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    t = await createTestServices({
      env: {
        LIPSYNC_SPEECH_PROCESSES: '1',
        LIPSYNC_SPEECH_QUEUE: '1',
        LIPSYNC_SPEECH_QUEUE_WAIT_SECONDS: '600',
      },
    });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
  });
  after(async () => {
    await t.cleanup();
  });

  test('parallel syntheses beyond pool and queue: 503 with Retry-After, never more processes than the pool', async () => {
    const pool = speechProcesses();
    assert.equal(pool.size, 1);
    pool.resetPeak();
    let sampling = true;
    let seen = 0;
    const sampler = (async () => {
      while (sampling) {
        seen = Math.max(seen, await speechChildren());
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    const script = 'The quick brown fox jumps over the lazy dog while the band plays on. '.repeat(3);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.app.inject({
          method: 'POST',
          url: '/v2/tts',
          headers: org.owner.headers,
          payload: { script, voiceId: 'slt-hts', provider: 'local' },
        }),
      ),
    );
    sampling = false;
    await sampler;

    const ok = results.filter((r) => r.statusCode === 200);
    const busy = results.filter((r) => r.statusCode !== 200);
    assert.ok(ok.length >= 1, 'some syntheses succeed');
    assert.ok(busy.length >= 1, 'the ones beyond pool and queue are refused');
    for (const r of busy) {
      assert.equal(r.statusCode, 503, r.body);
      assert.match(String(r.headers['retry-after']), /^\d+$/);
      const b = r.json();
      assert.equal(b.errorCode, 'provider_service_unavailable');
      assert.equal(b.statusCode, 503);
      assert.ok(b.message && b.suggestion);
      assert.doesNotMatch(r.body, /\/tmp\/|festival|slot|queue|stderr/i);
    }
    assert.ok(seen >= 1, 'the sampler saw the synthesis process');
    assert.ok(seen <= 1, `${seen} speech processes ran at once with a pool of 1`);
    assert.equal(pool.peak, 1);
    assert.equal(pool.running, 0);
    assert.equal(pool.queued, 0);

    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^lipsync_speech_processes_running 0$/m);
    assert.match(metrics.body, /^lipsync_speech_processes_queued 0$/m);
  });
});
