import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assetName,
  contentTypeFor,
  decodeCursor,
  encodeCursor,
  parseTypesFilter,
  parseVisibility,
  sortParts,
  uploadRoomAfterSeconds,
} from '../../../src/domain/assets.js';

test('types filter: comma list, repeated values, JSON array, case-insensitive, deduplicated', () => {
  assert.equal(parseTypesFilter(undefined), undefined);
  assert.deepEqual(parseTypesFilter(['AUDIO,video']), ['AUDIO', 'VIDEO']);
  assert.deepEqual(parseTypesFilter(['["IMAGE","AUDIO"]']), ['IMAGE', 'AUDIO']);
  assert.deepEqual(parseTypesFilter(['AUDIO', 'AUDIO', 'image']), ['AUDIO', 'IMAGE']);
  assert.throws(() => parseTypesFilter(['AUDIO,TEXT']), { code: 'invalid_request' });
});

test('cursors round-trip and belong to one sort', () => {
  const c = encodeCursor({ sort: 'sizeAsc', value: 1234, id: 'abc' });
  assert.deepEqual(decodeCursor(c, 'sizeAsc'), { sort: 'sizeAsc', value: 1234, id: 'abc' });
  assert.throws(() => decodeCursor(c, 'sizeDesc'), { code: 'invalid_request' });
  assert.throws(() => decodeCursor('%%%', 'sizeAsc'), { code: 'invalid_request' });
  assert.throws(() => decodeCursor(Buffer.from('[1,2]').toString('base64url'), 'sizeAsc'), {
    code: 'invalid_request',
  });
});

test('sort names split into field and direction', () => {
  assert.deepEqual(sortParts('dateDesc'), { field: 'date', desc: true });
  assert.deepEqual(sortParts('nameAsc'), { field: 'name', desc: false });
  assert.deepEqual(sortParts('durationDesc'), { field: 'duration', desc: true });
});

test('visibility defaults to ORGANIZATION and accepts USER', () => {
  assert.equal(parseVisibility(undefined), 'ORGANIZATION');
  assert.equal(parseVisibility('user'), 'USER');
  assert.throws(() => parseVisibility('PRIVATE'), { code: 'invalid_request' });
});

test('names: given, else the file name without folders, else upload.<format>', () => {
  assert.equal(assetName(' My clip ', 'x.mp4', 'mp4'), 'My clip');
  assert.equal(assetName(undefined, 'C:\\videos\\take 1.mov', 'mov'), 'take 1.mov');
  assert.equal(assetName(undefined, null, 'wav'), 'upload.wav');
  assert.throws(() => assetName('  ', null, 'wav'), { code: 'invalid_request' });
});

test('content types follow format and kind', () => {
  assert.equal(contentTypeFor('mp4', 'VIDEO'), 'video/mp4');
  assert.equal(contentTypeFor('mp4', 'AUDIO'), 'audio/mp4');
  assert.equal(contentTypeFor('wav', 'AUDIO'), 'audio/wav');
  assert.equal(contentTypeFor('png', 'IMAGE'), 'image/png');
  assert.equal(contentTypeFor('strange', 'VIDEO'), 'application/octet-stream');
});

test('upload_limit_reached waits until enough open uploads have closed, not only the first', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(now + s * 1000).toISOString();
  // Given out of order: the walk goes by expiry (10 s: 100 bytes, 20 s: 50, 30 s: 400).
  const open = [
    { size: 400, expiresAt: at(30) },
    { size: 100, expiresAt: at(10) },
    { size: 50, expiresAt: at(20) },
  ];
  const grace = 5000;
  assert.equal(uploadRoomAfterSeconds(open, 100, grace, now), 15);
  assert.equal(uploadRoomAfterSeconds(open, 101, grace, now), 25);
  assert.equal(uploadRoomAfterSeconds(open, 151, grace, now), 35);
  // More than all of them free (a walk cut short): the last one's close.
  assert.equal(uploadRoomAfterSeconds(open, 10_000, grace, now), 35);
  assert.equal(uploadRoomAfterSeconds([], 1, grace, now), 0);
  // Closing already (a clock ahead of the walk): never negative.
  assert.equal(uploadRoomAfterSeconds([{ size: 9, expiresAt: at(-60) }], 1, grace, now), 0);
});
