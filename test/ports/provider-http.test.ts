import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { callProvider, obj, ProviderUnreachable, str } from '../../src/ports/provider-http.js';
import { freePort } from '../helpers/app.js';

/**
 * The calls to Sunap's own providers (src/ports/provider-http.ts): what an answer becomes, and
 * what "no answer" says. The live adapters (test/live/adapters) use it against the providers'
 * fakes; here each outcome is one call to a local server.
 */
describe('provider calls', () => {
  let server: Server;
  let base: string;
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/json') res.writeHead(201, { 'content-type': 'application/json' }).end('{"a":1,"b":"x"}');
      else if (req.url === '/text') res.writeHead(502).end('<html>bad gateway</html>');
      else if (req.url === '/empty') res.writeHead(204).end();
      else if (req.url === '/moved') res.writeHead(302, { location: '/json' }).end();
      else if (req.url?.startsWith('/slow')) setTimeout(() => res.end('{}'), 2000);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const get = (path: string, timeoutMs = 1000) => callProvider(`${base}${path}`, { method: 'GET', headers: {}, timeoutMs });

  test('a JSON answer is parsed; any other or an empty one is null; the status is kept', async () => {
    assert.deepEqual(await get('/json'), { status: 201, body: { a: 1, b: 'x' } });
    assert.deepEqual(await get('/text'), { status: 502, body: null });
    assert.deepEqual(await get('/empty'), { status: 204, body: null });
  });

  test('a redirect is not followed: its status is the answer', async () => {
    assert.equal((await get('/moved')).status, 302);
  });

  test('no answer within the time limit: ProviderUnreachable, naming the call without its query', async () => {
    const err = await get('/slow?secret=1', 100).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof ProviderUnreachable);
    assert.equal(err.name, 'ProviderUnreachable');
    assert.equal(err.message, `GET ${base}/slow: no answer within 100 ms`);
  });

  test('a refused connection: ProviderUnreachable with the system\'s code', async () => {
    const port = await freePort();
    const err = await callProvider(`http://127.0.0.1:${port}/v1/x?k=v`, { method: 'POST', headers: {}, body: '{}', timeoutMs: 1000 }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof ProviderUnreachable);
    assert.equal(err.message, `POST http://127.0.0.1:${port}/v1/x: ECONNREFUSED`);
  });
});

describe('reading a provider\'s JSON', () => {
  test('str: a string as it is, a number as digits, anything else empty', () => {
    const body = { s: 'DONE', n: 42, z: 0, b: true, o: { x: 1 }, nul: null };
    assert.equal(str(body, 's'), 'DONE');
    assert.equal(str(body, 'n'), '42');
    assert.equal(str(body, 'z'), '0');
    for (const k of ['b', 'o', 'nul', 'missing']) assert.equal(str(body, k), '', k);
  });
  test('str: a body that is not an object gives empty, even where the value has the key', () => {
    assert.equal(str(null, 'x'), '');
    assert.equal(str(undefined, 'x'), '');
    assert.equal(str('abc', 'length'), '');
    assert.equal(str(7, 'x'), '');
  });
  test('obj: an object as it is; an array, a primitive or null is null; so is any non-object body', () => {
    const inner = { k: 1 };
    const body = { o: inner, a: [1], s: 's', nul: null };
    assert.equal(obj(body, 'o'), inner);
    for (const k of ['a', 's', 'nul', 'missing']) assert.equal(obj(body, k), null, k);
    assert.equal(obj(null, 'o'), null);
    assert.equal(obj('abc', 'length'), null);
    assert.equal(obj(['x'], '0'), null);
  });
});
