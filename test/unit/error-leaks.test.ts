// The scanner that the suites run over client-visible errors (test/helpers/error-leaks.ts): it finds
// each kind of leak, and the error catalogue itself holds none.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogue } from '../../src/domain/errors.js';
import { errorBodyLeaks } from '../helpers/error-leaks.js';

describe('error body leak scanner', () => {
  test('finds paths, tool names and stderr in any string of the body', () => {
    const leaks = (message: string, paths: string[] = []) => errorBodyLeaks({ message }, paths).length > 0;
    assert.ok(leaks('Not media (/tmp/lipsync-x/upload-1).'));
    assert.ok(leaks('Could not read /srv/lipsync/data/blobs/a.mp4'));
    assert.ok(leaks('Stored under data/x', ['data/x']));
    assert.ok(leaks('Upload a file that ffprobe can read.'));
    assert.ok(leaks('FFmpeg failed.'));
    assert.ok(leaks('upload-1: Invalid data found when processing input'));
    assert.ok(leaks('spawn x ENOENT'));
    assert.ok(leaks('failed\n    at run (file.js:1:2)'));
    assert.ok(leaks('TypeError: x is not a function'));
    assert.ok(leaks('the process exited with exit code 1'));
    assert.deepEqual(errorBodyLeaks({ message: 'ok', details: [{ hint: 'see /var/log/x' }] }).length, 1);
  });

  test('leaves plain sentences, URL paths and the docs URL alone', () => {
    const body = {
      message: 'The uploaded file is not a readable audio, video or image file: the file is empty.',
      suggestion: 'Send it to POST /v2/assets/upload as mp4, wav or png.',
      docsUrl: 'https://example.com/docs/tmp/errors',
    };
    assert.deepEqual(errorBodyLeaks(body), []);
  });

  test('the catalogue holds no leaks', () => {
    const found = catalogue().flatMap((e) => errorBodyLeaks(e).map((f) => `${e.code}: ${f}`));
    assert.deepEqual(found, []);
  });
});
