import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { ConfigError, ENV_VARIABLES, loadConfig } from '../../src/config.js';
import { fixture } from '../helpers/paths.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail(`loadConfig(${JSON.stringify(env)}) accepted a bad value`);
}

describe('config defaults', () => {
  test('an empty environment gives the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.dataDir, resolve('./data'));
    assert.equal(c.databaseUrl, null);
    assert.equal(c.redisUrl, null);
    assert.equal(c.publicUrl, 'http://localhost:8080');
    assert.equal(c.role, 'all');
    assert.equal(c.logLevel, 'info');
    assert.equal(c.signingSecret, null);
    assert.equal(c.allowPrivateUrls, false);
    assert.equal(c.rateLimitDefaultPerMinute, 600);
    assert.equal(c.rateLimitEnabled, true);
    assert.equal(c.workerConcurrency, 1);
    assert.equal(c.bodyLimitBytes, 10 * 1024 * 1024);
    assert.equal(c.maxUploadBytes, 5 * 1024 ** 3);
    assert.equal(c.defaultEngine, 'cpu');
  });

  test('an empty value means the default, for every variable', () => {
    const empty = Object.fromEntries(Object.keys(ENV_VARIABLES).map((n) => [n, '']));
    assert.deepEqual(loadConfig(empty), loadConfig({}));
  });

  test('the config is frozen', () => {
    const c = loadConfig({});
    assert.ok(Object.isFrozen(c));
    assert.throws(() => {
      (c as { port: number }).port = 1;
    });
  });

  test('the environment is read only from the argument', () => {
    const before = process.env.PORT;
    process.env.PORT = 'not a port';
    try {
      assert.equal(loadConfig({ PORT: '9000' }).port, 9000);
    } finally {
      if (before === undefined) delete process.env.PORT;
      else process.env.PORT = before;
    }
  });
});

describe('config values', () => {
  test('good values are parsed', () => {
    const c = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      LIPSYNC_DATA_DIR: '/tmp/lipsync-x',
      DATABASE_URL: 'postgresql://u@db:5432/lipsync',
      REDIS_URL: 'rediss://cache:6380',
      LIPSYNC_PUBLIC_URL: 'https://lipsync.example.com///',
      LIPSYNC_ROLE: 'worker',
      LOG_LEVEL: 'debug',
      LIPSYNC_SIGNING_SECRET: 's'.repeat(32),
      LIPSYNC_ALLOW_PRIVATE_URLS: 'yes',
      LIPSYNC_RATE_LIMIT_PER_MINUTE: '3',
      LIPSYNC_RATE_LIMIT_ENABLED: 'off',
      LIPSYNC_WORKER_CONCURRENCY: '4',
      LIPSYNC_DEFAULT_ENGINE: 'passthrough',
    });
    assert.equal(c.port, 0);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.dataDir, '/tmp/lipsync-x');
    assert.equal(c.databaseUrl, 'postgresql://u@db:5432/lipsync');
    assert.equal(c.redisUrl, 'rediss://cache:6380');
    assert.equal(c.publicUrl, 'https://lipsync.example.com');
    assert.equal(c.role, 'worker');
    assert.equal(c.logLevel, 'debug');
    assert.equal(c.signingSecret, 's'.repeat(32));
    assert.equal(c.allowPrivateUrls, true);
    assert.equal(c.rateLimitDefaultPerMinute, 3);
    assert.equal(c.rateLimitEnabled, false);
    assert.equal(c.workerConcurrency, 4);
    assert.equal(c.defaultEngine, 'passthrough');
  });

  test('the public URL defaults to localhost on the configured port', () => {
    assert.equal(loadConfig({ PORT: '9123' }).publicUrl, 'http://localhost:9123');
  });

  test('every bad variable is listed at once, each by name', () => {
    const bad: Record<string, string> = {
      PORT: 'abc',
      DATABASE_URL: 'mysql://root@db/lipsync',
      REDIS_URL: 'http://cache:6379',
      LIPSYNC_PUBLIC_URL: 'ftp://example.com',
      LIPSYNC_ROLE: 'boss',
      LOG_LEVEL: 'loud',
      LIPSYNC_SIGNING_SECRET: 'short',
      LIPSYNC_ALLOW_PRIVATE_URLS: 'maybe',
      LIPSYNC_RATE_LIMIT_PER_MINUTE: '0',
      LIPSYNC_RATE_LIMIT_ENABLED: 'perhaps',
      LIPSYNC_WORKER_CONCURRENCY: '65',
      LIPSYNC_JSON_BODY_LIMIT_BYTES: '1.5',
      LIPSYNC_MAX_UPLOAD_BYTES: '-1',
      LIPSYNC_DEFAULT_ENGINE: 'gpu',
    };
    const problems = problemsOf(bad);
    assert.equal(problems.length, Object.keys(bad).length, problems.join('\n'));
    for (const name of Object.keys(bad)) {
      assert.equal(
        problems.filter((p) => p.startsWith(`${name}=`) || p.startsWith(`${name} `)).length,
        1,
        `${name} is not named exactly once in:\n${problems.join('\n')}`,
      );
    }
    try {
      loadConfig(bad);
    } catch (err) {
      for (const name of Object.keys(bad)) assert.match((err as Error).message, new RegExp(`\\b${name}\\b`));
    }
  });

  test('integers out of range or not integers are refused', () => {
    for (const port of ['-1', '65536', '80.5', '1e3', '0x50', 'abc', ' ']) {
      const p = problemsOf({ PORT: port });
      assert.equal(p.length, 1);
      assert.match(p[0], /^PORT=/);
    }
  });

  test('the signing secret must be long enough and is not echoed', () => {
    const p = problemsOf({ LIPSYNC_SIGNING_SECRET: 'hunter2-but-short' });
    assert.equal(p.length, 1);
    assert.doesNotMatch(p[0], /hunter2/);
  });
});

describe('config: HTTP timeouts', () => {
  const TIMEOUT_VARS = [
    'LIPSYNC_REQUEST_TIMEOUT_SECONDS',
    'LIPSYNC_HEADERS_TIMEOUT_SECONDS',
    'LIPSYNC_CONNECTION_TIMEOUT_SECONDS',
    'LIPSYNC_KEEP_ALIVE_TIMEOUT_SECONDS',
  ];

  test('defaults: 600 s to receive a request, 30 s for its headers, 600 s idle, 72 s keep-alive', () => {
    const c = loadConfig({});
    assert.equal(c.requestTimeoutMs, 600_000);
    assert.equal(c.headersTimeoutMs, 30_000);
    assert.equal(c.connectionTimeoutMs, 600_000);
    assert.equal(c.keepAliveTimeoutMs, 72_000);
    assert.deepEqual(loadConfig(Object.fromEntries(TIMEOUT_VARS.map((n) => [n, '']))), c);
  });

  test('values are seconds; a connection timeout of 0 turns it off', () => {
    const c = loadConfig({
      LIPSYNC_REQUEST_TIMEOUT_SECONDS: '120',
      LIPSYNC_HEADERS_TIMEOUT_SECONDS: '10',
      LIPSYNC_CONNECTION_TIMEOUT_SECONDS: '0',
      LIPSYNC_KEEP_ALIVE_TIMEOUT_SECONDS: '5',
    });
    assert.equal(c.requestTimeoutMs, 120_000);
    assert.equal(c.headersTimeoutMs, 10_000);
    assert.equal(c.connectionTimeoutMs, 0);
    assert.equal(c.keepAliveTimeoutMs, 5_000);
  });

  test('bad values are refused by name', () => {
    for (const name of TIMEOUT_VARS) {
      for (const raw of ['-1', 'soon', '1.5']) {
        const p = problemsOf({ [name]: raw });
        assert.equal(p.length, 1, p.join('\n'));
        assert.ok(p[0].startsWith(`${name}=`), p[0]);
      }
    }
    assert.match(
      problemsOf({ LIPSYNC_REQUEST_TIMEOUT_SECONDS: '0' })[0],
      /^LIPSYNC_REQUEST_TIMEOUT_SECONDS=/,
    );
  });

  test('the headers timeout may not exceed the request timeout', () => {
    const p = problemsOf({ LIPSYNC_REQUEST_TIMEOUT_SECONDS: '20', LIPSYNC_HEADERS_TIMEOUT_SECONDS: '30' });
    assert.equal(p.length, 1);
    assert.match(p[0], /^LIPSYNC_HEADERS_TIMEOUT_SECONDS .*LIPSYNC_REQUEST_TIMEOUT_SECONDS/);
  });

  test('the connection timeout outlasts a long-poll (10 s) and a media fetch', () => {
    assert.match(
      problemsOf({ LIPSYNC_CONNECTION_TIMEOUT_SECONDS: '10' }).join('\n'),
      /^LIPSYNC_CONNECTION_TIMEOUT_SECONDS .*long-poll/m,
    );
    assert.equal(
      loadConfig({ LIPSYNC_CONNECTION_TIMEOUT_SECONDS: '11', LIPSYNC_FETCH_TIMEOUT_SECONDS: '5' })
        .connectionTimeoutMs,
      11_000,
    );
    const p = problemsOf({ LIPSYNC_CONNECTION_TIMEOUT_SECONDS: '300', LIPSYNC_FETCH_TIMEOUT_SECONDS: '300' });
    assert.equal(p.length, 1);
    assert.match(p[0], /^LIPSYNC_CONNECTION_TIMEOUT_SECONDS .*LIPSYNC_FETCH_TIMEOUT_SECONDS/);
  });
});

describe('articulation config', () => {
  test('defaults: auto, recognition off, the shipped viseme model (found from the package)', () => {
    const c = loadConfig({ LIPSYNC_DATA_DIR: '/nonexistent-lipsync-data' });
    assert.deepEqual(c.speech.articulation, {
      mode: 'auto',
      recognize: false,
      visemeModel: { id: 'articulation-v1', path: resolve('models/articulation-v1.onnx') },
    });
    const on = loadConfig({
      LIPSYNC_DATA_DIR: '/nonexistent-lipsync-data',
      LIPSYNC_ARTICULATION_RECOGNIZE: '1',
    });
    assert.equal(on.speech.articulation.recognize, true);
    // With an OpenAI-compatible recognizer configured it is on unless turned off.
    const stt = {
      LIPSYNC_DATA_DIR: '/nonexistent-lipsync-data',
      LIPSYNC_OPENAI_STT_URL: 'http://stt.example:9000/',
    };
    assert.equal(loadConfig(stt).speech.articulation.recognize, true);
    assert.equal(
      loadConfig({ ...stt, LIPSYNC_ARTICULATION_RECOGNIZE: '0' }).speech.articulation.recognize,
      false,
    );
  });
  test('the cherry model is used from the models folder when chosen; chosen without it, or a bad mode, is refused', () => {
    const dir = fixture('models');
    const c = loadConfig({
      LIPSYNC_MODELS_DIR: dir,
      LIPSYNC_VISEME_MODEL: 'cherry',
      LIPSYNC_ARTICULATION: 'acoustic',
    });
    assert.deepEqual(c.speech.articulation.visemeModel, {
      id: 'cherry',
      path: resolve(dir, 'cherry-visemes.onnx'),
    });
    assert.equal(c.speech.articulation.mode, 'acoustic');
    // A folder without cherry's file is fine while the shipped model is the one used.
    assert.equal(
      loadConfig({ LIPSYNC_MODELS_DIR: '/nonexistent-models' }).speech.articulation.visemeModel?.id,
      'articulation-v1',
    );
    assert.match(
      problemsOf({ LIPSYNC_MODELS_DIR: '/nonexistent-models', LIPSYNC_VISEME_MODEL: 'cherry' })[0],
      /LIPSYNC_VISEME_MODEL=cherry needs cherry-visemes\.onnx/,
    );
    assert.equal(loadConfig({ LIPSYNC_VISEME_MODEL: 'none' }).speech.articulation.visemeModel, null);
    assert.match(problemsOf({ LIPSYNC_VISEME_MODEL: 'big' })[0], /LIPSYNC_VISEME_MODEL/);
    assert.match(problemsOf({ LIPSYNC_ARTICULATION: 'neural' })[0], /LIPSYNC_ARTICULATION/);
  });
});
