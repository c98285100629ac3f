// The parts of a scaled deployment's operations that need no process: the shutdown and metrics
// listener settings, the drain's linked signals, the presence of remote workers (on a clock the test
// moves) and the run metrics of the worker port wrapper.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Drain } from '../../src/services/drain.js';
import { RemotePresence } from '../../src/jobs/remote-presence.js';
import { MeteredWorkerPort } from '../../src/jobs/metered-port.js';
import type { RunOutcome } from '../../src/metrics/metrics.js';
import type { ClaimedJob, FailResult, WorkerPort } from '../../src/jobs/port.js';
import { JobFailure } from '../../src/jobs/handler.js';
import type { JobRecord } from '../../src/store/jobs.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail(`loadConfig(${JSON.stringify(env)}) accepted a bad value`);
}

describe('shutdown and metrics listener settings', () => {
  test('defaults: a 5 s drain, a 25 s cap, no metrics listener', () => {
    const c = loadConfig({});
    assert.equal(c.shutdownDrainMs, 5000);
    assert.equal(c.shutdownTimeoutMs, 25_000);
    assert.equal(c.metricsPort, null);
    assert.equal(c.metricsHost, '0.0.0.0');
  });

  test('values are read, the metrics host follows HOST unless set', () => {
    const c = loadConfig({
      LIPSYNC_SHUTDOWN_DRAIN_SECONDS: '0',
      LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS: '3',
      LIPSYNC_METRICS_PORT: '9464',
      HOST: '10.0.0.5',
    });
    assert.equal(c.shutdownDrainMs, 0);
    assert.equal(c.shutdownTimeoutMs, 3000);
    assert.equal(c.metricsPort, 9464);
    assert.equal(c.metricsHost, '10.0.0.5');
    assert.equal(loadConfig({ LIPSYNC_METRICS_HOST: '127.0.0.1' }).metricsHost, '127.0.0.1');
  });

  test('bad values are refused, each named', () => {
    for (const [name, raw] of [
      ['LIPSYNC_SHUTDOWN_DRAIN_SECONDS', '-1'],
      ['LIPSYNC_SHUTDOWN_DRAIN_SECONDS', '2.5'],
      ['LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS', '0'],
      ['LIPSYNC_METRICS_PORT', '0'],
      ['LIPSYNC_METRICS_PORT', '70000'],
      ['LIPSYNC_METRICS_PORT', 'metrics'],
    ] as const) {
      const problems = problemsOf({ [name]: raw });
      assert.ok(
        problems.some((p) => p.startsWith(`${name}=`)),
        `${name}=${raw}: ${problems.join('; ')}`,
      );
    }
    const p = problemsOf({ LIPSYNC_SHUTDOWN_DRAIN_SECONDS: '30', LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS: '30' });
    assert.match(
      p.join('\n'),
      /LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS \(30\) must be more than LIPSYNC_SHUTDOWN_DRAIN_SECONDS \(30\)/,
    );
  });
});

describe('Drain', () => {
  test('a followed signal aborts when its own signal does or when the drain begins', () => {
    const drain = new Drain();
    const own = new AbortController();
    const a = drain.follow(own.signal);
    const b = drain.follow(new AbortController().signal);
    assert.equal(a.signal.aborted, false);
    own.abort();
    assert.equal(a.signal.aborted, true);
    assert.equal(b.signal.aborted, false);
    assert.equal(drain.draining, false);
    drain.begin();
    drain.begin(); // once
    assert.equal(drain.draining, true);
    assert.equal(b.signal.aborted, true);
    // Following once draining: aborted from the start.
    assert.equal(drain.follow(new AbortController().signal).signal.aborted, true);
    a.dispose();
    b.dispose();
  });

  test('dispose() unhooks the request from the drain', () => {
    const drain = new Drain();
    const own = new AbortController();
    const linked = drain.follow(own.signal);
    linked.dispose();
    drain.begin();
    own.abort();
    assert.equal(linked.signal.aborted, false);
  });
});

describe('RemotePresence', () => {
  test('a token counts within the window after its last call, or while a claim of it is open', () => {
    let now = 1_000_000;
    const p = new RemotePresence(30_000, () => now);
    assert.equal(p.connected(), 0);
    p.seen('wt_a');
    p.seen('wt_a');
    p.seen('wt_b');
    assert.equal(p.connected(), 2, 'by token, not by call');
    now += 30_001;
    assert.equal(p.connected(), 0, 'silent for longer than the window');

    const end1 = p.claimOpened('wt_a');
    const end2 = p.claimOpened('wt_a');
    now += 60_000; // claims longer than the window still count
    assert.equal(p.connected(), 1);
    end1();
    end1(); // once
    assert.equal(p.connected(), 1, 'one claim is still open');
    end2();
    assert.equal(p.connected(), 1, 'the claim just ended: heard from now');
    now += 30_001;
    assert.equal(p.connected(), 0);
  });
});

describe('MeteredWorkerPort', () => {
  const job = (id: string): JobRecord => ({ id, kind: 'generation' }) as unknown as JobRecord;

  function fakePort(answers: { complete?: boolean; fail?: FailResult; stopped?: boolean }): WorkerPort {
    let n = 0;
    return {
      claim: async () => ({ job: job(`job-${++n}`), token: `t${n}`, input: null }),
      heartbeat: async () => 'ok',
      complete: async () => answers.complete ?? true,
      fail: async () => answers.fail ?? 'failed',
      stopped: async () => answers.stopped ?? true,
      release: async () => undefined,
      discard: async () => undefined,
      files: () => {
        throw new Error('unused');
      },
      nextDueInMs: async () => null,
      onWork: () => () => undefined,
    };
  }

  test('each run is observed once, by kind and outcome, with its time from claim to end', async () => {
    const seen: [string, RunOutcome, number][] = [];
    let clock = 0;
    const metrics = { workerRun: (k: string, o: RunOutcome, s: number) => void seen.push([k, o, s]) };
    const failure = new JobFailure({ code: 'job_failed', message: 'm' }, 'transient');

    const ok = new MeteredWorkerPort(fakePort({}), metrics, () => clock);
    const c1 = (await ok.claim(['generation'], 'o', 1000)) as ClaimedJob;
    clock = 2500;
    assert.equal(await ok.complete(c1, {}), true);
    await ok.complete(c1, {}); // a retried write that went through already: not counted again
    const c2 = (await ok.claim(['generation'], 'o', 1000)) as ClaimedJob;
    clock = 3000;
    await ok.stopped(c2, 'timed_out', { code: 'x', message: 'y' });
    const c3 = (await ok.claim(['generation'], 'o', 1000)) as ClaimedJob;
    await ok.release(c3);
    const c4 = (await ok.claim(['generation'], 'o', 1000)) as ClaimedJob;
    await ok.discard(c4);

    const lost = new MeteredWorkerPort(
      fakePort({ complete: false, fail: 'retrying', stopped: false }),
      metrics,
      () => clock,
    );
    const d1 = (await lost.claim(['generation'], 'o', 1000)) as ClaimedJob;
    await lost.complete(d1, {});
    const d2 = (await lost.claim(['generation'], 'o', 1000)) as ClaimedJob;
    await lost.fail(d2, failure);
    const d3 = (await lost.claim(['generation'], 'o', 1000)) as ClaimedJob;
    await lost.stopped(d3, 'canceled', { code: 'x', message: 'y' });

    assert.deepEqual(seen, [
      ['generation', 'completed', 2.5],
      ['generation', 'timed_out', 0.5],
      ['generation', 'released', 0],
      ['generation', 'lost', 0],
      ['generation', 'lost', 0],
      ['generation', 'retrying', 0],
      ['generation', 'lost', 0],
    ]);
  });
});
