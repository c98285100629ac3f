// The NUL guard's quick check (issue 15): it may only ever say "clean" for values findNul finds clean,
// and through a real app a NUL anywhere is still a 400 naming the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { plainlyFreeOfNul, registerNulGuard } from '../../../src/http/nul-guard.js';
import { findNul } from '../../../src/domain/nul.js';
import { sendError } from '../../../src/http/error-body.js';

const inherited = Object.create({ inheritedKey: 'a\u0000b' }) as Record<string, unknown>;
inherited.own = 'fine';
const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { id: 'x', n: 1 });

const values: unknown[] = [
  undefined,
  null,
  '',
  'plain',
  'a\u0000b',
  0,
  true,
  Buffer.from('a\u0000b'),
  {},
  { id: '6f1c4d1e-0000-4000-8000-000000000000' },
  { wait: true, timeout: 5, include: 'progress' },
  { a: 'x\u0000' },
  { 'k\u0000': 'v' },
  { nested: { deep: 'x\u0000' } },
  { nested: { deep: 'fine' } },
  { list: ['a', 'b\u0000'] },
  ['a', 'b'],
  ['a\u0000'],
  { nothing: null, buf: Buffer.from('\u0000') },
  inherited,
  nullProto,
];

test('plainlyFreeOfNul says "clean" only where findNul finds nothing', () => {
  for (const v of values) {
    if (plainlyFreeOfNul(v)) assert.equal(findNul(v), null, `value ${String(JSON.stringify(v))}`);
  }
});

test('flat objects of primitives without NUL are clean at a glance; anything nested is looked at', () => {
  assert.equal(plainlyFreeOfNul({ id: 'abc' }), true);
  assert.equal(plainlyFreeOfNul(nullProto), true);
  assert.equal(plainlyFreeOfNul(undefined), true);
  assert.equal(plainlyFreeOfNul({ a: 'x\u0000' }), false);
  assert.equal(plainlyFreeOfNul({ 'k\u0000': 'v' }), false);
  assert.equal(plainlyFreeOfNul({ nested: { deep: 'fine' } }), false);
  assert.equal(plainlyFreeOfNul(['a']), false);
  // Inherited properties are not the value's own: findNul does not look at them either.
  assert.equal(plainlyFreeOfNul(inherited), true);
  assert.equal(findNul(inherited), null);
});

test('through an app: NUL in a path parameter, the query or a nested body field is refused by name', async () => {
  const app = Fastify();
  app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
  registerNulGuard(app);
  app.get('/p/:id', async (request) => ({ ok: true, params: request.params }));
  app.post('/b', async () => ({ ok: true }));
  try {
    const ok = await app.inject({ method: 'GET', url: '/p/abc?x=1' });
    assert.equal(ok.statusCode, 200);
    const inPath = await app.inject({ method: 'GET', url: '/p/a%00b' });
    assert.equal(inPath.statusCode, 400, inPath.body);
    assert.equal(inPath.json().errorCode, 'invalid_request');
    assert.match(inPath.json().message, /^id must not contain the NUL character/);
    const inQuery = await app.inject({ method: 'GET', url: '/p/abc?include=a%00' });
    assert.equal(inQuery.statusCode, 400);
    assert.match(inQuery.json().message, /^include must not contain/);
    const inBody = await app.inject({
      method: 'POST',
      url: '/b',
      payload: { options: { a: ['x', 'y\u0000'] } },
    });
    assert.equal(inBody.statusCode, 400);
    assert.match(inBody.json().message, /^options\.a\[1\] must not contain/);
    const cleanBody = await app.inject({ method: 'POST', url: '/b', payload: { options: { a: ['x'] } } });
    assert.equal(cleanBody.statusCode, 200);
  } finally {
    await app.close();
  }
});
