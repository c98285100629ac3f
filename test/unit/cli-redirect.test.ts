// The CLI's API client never follows a redirect: the API key (x-api-key) would go along to the
// Location's server. Two real local HTTP servers: the named one redirects to the other.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { client } from '../../src/cli/http.js';
import { ClientError } from '../../src/cli/client-error.js';

let named: Server;
let other: Server;
const seenByOther: IncomingHttpHeaders[] = [];
const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

before(async () => {
  other = createServer((req, res) => {
    seenByOther.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  other.listen(0, '127.0.0.1');
  await once(other, 'listening');
  named = createServer((req, res) => {
    res.writeHead(req.url === '/same' ? 301 : 307, {
      location: req.url === '/same' ? '/v2/voices' : `${url(other)}/v2/voices?token=secret`,
    });
    res.end();
  });
  named.listen(0, '127.0.0.1');
  await once(named, 'listening');
});
after(() => {
  named.close();
  other.close();
});

test('a redirect to another server is an error naming its origin; that server never sees the key', async () => {
  const api = client(url(named), 'lsk_secret_key');
  await assert.rejects(api('POST', '/v2/voices', { a: 1 }), (err: unknown) => {
    assert.ok(err instanceof ClientError);
    assert.match(err.message, /redirects \(HTTP 307\)/);
    assert.ok(err.message.includes(url(other)), err.message);
    assert.ok(!err.message.includes('token=secret'), 'only the origin is shown');
    return true;
  });
  assert.equal(seenByOther.length, 0);
});

test('a same-origin redirect is refused too', async () => {
  await assert.rejects(client(url(named), 'k')('GET', '/same'), /redirects \(HTTP 301\)/);
  assert.equal(seenByOther.length, 0);
});
