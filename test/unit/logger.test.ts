// Log lines never carry credentials: API keys and authorization headers are censored by path, URL
// signatures and URL userinfo are blanked wherever they appear in a line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, redactSecrets } from '../../src/logger.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, logger: createLogger('info', stream) };
}

describe('logger redaction', () => {
  test('API key, authorization and cookie headers are censored', () => {
    const { lines, logger } = capture();
    const headers = {
      'x-api-key': 'sk_lipsync_SECRETKEY',
      authorization: 'Bearer TOKEN123',
      cookie: 's=COOKIE9',
    };
    logger.info({ req: { headers } }, 'request');
    logger.info({ headers }, 'plain headers');
    logger.child({ reqId: 'r1' }).info({ request: { headers } }, 'child');
    const text = lines.join('\n');
    for (const secret of ['SECRETKEY', 'TOKEN123', 'COOKIE9']) assert.doesNotMatch(text, new RegExp(secret));
    assert.equal(lines.length, 3);
    assert.match(lines[0], /\[redacted\]/);
  });

  test('voice-provider keys are censored at the top level and one level down, errors included', () => {
    const { lines, logger } = capture();
    const err = Object.assign(new Error('provider refused'), { apiKey: 'xi-ERRKEY' });
    logger.info({ apiKey: 'xi-TOPKEY', provider: { name: 'elevenlabs', apiKey: 'xi-NESTEDKEY' } }, 'voices');
    logger.warn({ err }, 'failed');
    const text = lines.join('\n');
    for (const secret of ['TOPKEY', 'NESTEDKEY', 'ERRKEY']) assert.doesNotMatch(text, new RegExp(secret));
    const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, any>);
    assert.equal(first?.provider.name, 'elevenlabs', 'the rest of the object stays');
    assert.equal(first?.provider.apiKey, '[redacted]');
    assert.equal(second?.err.message, 'provider refused', 'the error keeps its message');
    assert.match(String(second?.err.stack), /provider refused/);
    assert.equal(second?.err.type, 'Error');
    assert.equal(err.apiKey, 'xi-ERRKEY', 'the logged object itself is not changed');
  });

  test('signed URL query values are blanked in every field and message, child loggers included', () => {
    const { lines, logger } = capture();
    const url = '/v2/files/assets/o/a.wav?expires=1900000000&sig=0123456789abcdef0123456789abcdef&name=a.wav';
    logger.info({ req: { method: 'GET', url } }, 'incoming request');
    logger.child({ reqId: 'r2' }).warn(`could not read http://h.test${url}`);
    logger.error(
      {
        err: new Error(
          'GET https://bucket.s3.test/k?X-Amz-Credential=AKIAXYZ&X-Amz-Signature=feedface01 failed',
        ),
      },
      'fetch failed',
    );
    const text = lines.join('\n');
    assert.doesNotMatch(text, /0123456789abcdef/);
    assert.doesNotMatch(text, /AKIAXYZ|feedface01/);
    assert.match(lines[0], /sig=\[redacted\]&name=a\.wav/);
    assert.match(lines[0], /expires=1900000000/);
  });

  test('credentials in URLs are blanked, the host stays', () => {
    const { lines, logger } = capture();
    logger.warn(
      { url: 'https://bob:hunter2@media.test/clip.mp4' },
      'fetching https://alice:pw0rd@cdn.test/x',
    );
    const text = lines.join('\n');
    assert.doesNotMatch(text, /hunter2|pw0rd|bob:|alice:/);
    assert.match(text, /https:\/\/\[redacted\]@media\.test\/clip\.mp4/);
  });

  test('redactSecrets leaves ordinary text alone', () => {
    const plain = '{"msg":"ok","url":"/v2/generations?limit=10&ids=a,b","email":"a@b.test"}';
    assert.equal(redactSecrets(plain), plain);
  });
});
