import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../../src/config.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail(`loadConfig(${JSON.stringify(env)}) accepted a bad value`);
}

test('storage is local unless LIPSYNC_STORAGE=s3; S3 settings are then not read', () => {
  assert.deepEqual(loadConfig({}).storage, { kind: 'local' });
  assert.deepEqual(loadConfig({ LIPSYNC_STORAGE: '' }).storage, { kind: 'local' });
  assert.deepEqual(
    loadConfig({ LIPSYNC_STORAGE: 'local', LIPSYNC_S3_ENDPOINT: 'not a url', LIPSYNC_S3_BUCKET: 'b b' })
      .storage,
    { kind: 'local' },
  );
  assert.deepEqual(problemsOf({ LIPSYNC_STORAGE: 'gcs' }), ['LIPSYNC_STORAGE="gcs" must be local or s3']);
});

test('s3: every missing required variable is named at once', () => {
  assert.deepEqual(problemsOf({ LIPSYNC_STORAGE: 's3' }), [
    'LIPSYNC_S3_BUCKET is required with LIPSYNC_STORAGE=s3',
    'LIPSYNC_S3_ACCESS_KEY_ID is required with LIPSYNC_STORAGE=s3',
    'LIPSYNC_S3_SECRET_ACCESS_KEY is required with LIPSYNC_STORAGE=s3',
  ]);
  assert.deepEqual(
    problemsOf({ LIPSYNC_STORAGE: 's3', LIPSYNC_S3_BUCKET: 'media', LIPSYNC_S3_SECRET_ACCESS_KEY: SECRET }),
    ['LIPSYNC_S3_ACCESS_KEY_ID is required with LIPSYNC_STORAGE=s3'],
  );
});

test('s3: defaults, and the values given', () => {
  const base = {
    LIPSYNC_STORAGE: 's3',
    LIPSYNC_S3_BUCKET: 'lipsync-media',
    LIPSYNC_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
    LIPSYNC_S3_SECRET_ACCESS_KEY: SECRET,
  };
  assert.deepEqual(loadConfig(base).storage, {
    kind: 's3',
    endpoint: null,
    region: 'us-east-1',
    bucket: 'lipsync-media',
    accessKeyId: 'AKIAEXAMPLE',
    secretAccessKey: SECRET,
    forcePathStyle: false,
  });
  const c = loadConfig({
    ...base,
    LIPSYNC_S3_ENDPOINT: 'http://minio:9000/',
    LIPSYNC_S3_REGION: 'auto',
    LIPSYNC_S3_FORCE_PATH_STYLE: 'true',
  });
  assert.deepEqual(c.storage, {
    ...loadConfig(base).storage,
    endpoint: 'http://minio:9000',
    region: 'auto',
    forcePathStyle: true,
  });
  assert.ok(Object.isFrozen(c));
});

test('s3: bad values are named, and no message repeats the secret key', () => {
  const problems = problemsOf({
    LIPSYNC_STORAGE: 's3',
    LIPSYNC_S3_ENDPOINT: 'ftp://minio',
    LIPSYNC_S3_REGION: 'us east',
    LIPSYNC_S3_BUCKET: 'a/b',
    LIPSYNC_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
    LIPSYNC_S3_SECRET_ACCESS_KEY: SECRET,
    LIPSYNC_S3_FORCE_PATH_STYLE: 'maybe',
  });
  assert.deepEqual(problems, [
    'LIPSYNC_S3_ENDPOINT="ftp://minio" must be a URL with protocol http: or https:',
    'LIPSYNC_S3_REGION="us east" must be a region name such as us-east-1',
    'LIPSYNC_S3_BUCKET="a/b" is not a bucket name',
    'LIPSYNC_S3_FORCE_PATH_STYLE="maybe" must be a boolean (1/0, true/false)',
  ]);
  for (const p of problems) assert.ok(!p.includes(SECRET), p);
});
