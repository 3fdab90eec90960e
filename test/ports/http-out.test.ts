import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ANSWER_KEEP_BYTES, createHttpOut } from '../../src/ports/http-out.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * The outbound HTTP port on its own (docs/reference.md, "Callbacks" and "Webhooks"): what it
 * keeps of an answer, the headers it sends, its connection reuse, its total time limit, and the
 * targets it refuses before any request. The callers (test/jobs/outbound, test/robustness/hostile)
 * reach the same code through deliveries.
 */
describe('outbound HTTP port', () => {
  let server: Server;
  let base: string;
  const seen: { path: string; ua: string | undefined; port: number; body: string; headers: IncomingMessage['headers'] }[] = [];
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/ok': (_req, res) => res.end('ok'),
    '/big': (_req, res) => {
      // Three chunks, the first and second across the kept limit.
      res.write('a'.repeat(1500));
      res.write('b'.repeat(1500));
      res.end('c'.repeat(1500));
    },
    '/exact': (_req, res) => {
      res.write('x'.repeat(ANSWER_KEEP_BYTES));
      res.end('y'.repeat(10));
    },
    '/busy': (_req, res) => res.writeHead(503, { 'retry-after': '7' }).end('later'),
    '/cut': (_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('only part of it');
      setTimeout(() => res.socket?.destroy(), 20);
    },
    '/trickle': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 40);
      setTimeout(() => { clearInterval(timer); res.end(); }, 3000);
      res.on('close', () => clearInterval(timer));
    },
  };
  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ path: req.url!, ua: req.headers['user-agent'], port: req.socket.remotePort!, body: Buffer.concat(chunks).toString(), headers: req.headers });
        (routes[req.url!] ?? ((_q, r: ServerResponse) => r.writeHead(404).end()))(req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const out = createHttpOut({ allowPrivateTargets: true, timeoutMs: 2000 });

  test('an answer without Retry-After has no retryAfter at all; one with it keeps it as written', async () => {
    assert.deepEqual(await out.post(`${base}/ok`, Buffer.from('{}'), {}), { status: 200, body: 'ok' });
    assert.deepEqual(await out.post(`${base}/busy`, Buffer.from('{}'), {}), { status: 503, body: 'later', retryAfter: '7' });
  });

  test(`only the first ${ANSWER_KEEP_BYTES} bytes of an answer are kept, across chunks; the rest is read and dropped`, async () => {
    const big = await out.post(`${base}/big`, Buffer.from('{}'), {});
    assert.equal(big.body, 'a'.repeat(1500) + 'b'.repeat(ANSWER_KEEP_BYTES - 1500));
    const exact = await out.post(`${base}/exact`, Buffer.from('{}'), {});
    assert.equal(exact.body, 'x'.repeat(ANSWER_KEEP_BYTES));
  });

  test('the exact bytes are sent with their length and Sunap\'s user agent, and the caller\'s headers', async () => {
    seen.length = 0;
    const body = Buffer.from('{"한":"글"}');
    await out.post(`${base}/ok`, body, { 'x-sunap-test': '1' });
    assert.equal(seen[0]!.body, '{"한":"글"}');
    assert.equal(seen[0]!.ua, 'Sunap/1');
    assert.equal(seen[0]!.headers['content-length'], String(body.length));
    assert.equal(seen[0]!.headers['x-sunap-test'], '1');
  });

  test('connections are kept alive: two calls in a row to one receiver share a socket', async () => {
    seen.length = 0;
    await out.post(`${base}/ok`, Buffer.from('1'), {});
    await out.post(`${base}/ok`, Buffer.from('2'), {});
    assert.equal(seen.length, 2);
    assert.equal(seen[0]!.port, seen[1]!.port);
  });

  test('an answer cut off mid-body is a failure, not a hang', async () => {
    await assert.rejects(out.post(`${base}/cut`, Buffer.from('{}'), {}, 1500), (e: Error) => !/timed out/.test(e.message));
  });

  test('the time limit is for the whole call: a receiver that trickles bytes is cut off at it', async () => {
    const started = Date.now();
    await assert.rejects(out.post(`${base}/trickle`, Buffer.from('{}'), {}, 300), /timed out after 300 ms/);
    assert.ok(Date.now() - started < 2500, 'long before the receiver would have finished (3 s)');
  });

  test('an address that is not a URL, and a scheme other than http(s), are refused before any request', async () => {
    seen.length = 0;
    await assert.rejects(out.post('not a url', Buffer.from('{}'), {}), /^Error: invalid URL$/);
    await assert.rejects(out.post(`ftp://127.0.0.1:${new URL(base).port}/ok`, Buffer.from('{}'), {}), /unsupported protocol ftp:/);
    assert.equal(seen.length, 0);
  });

  test('https is used for an https address (a real TLS receiver)', async () => {
    const r = new Receiver();
    await r.start();
    try {
      const a = await out.post(`${r.url}/hook`, Buffer.from('{"a":1}'), { 'content-type': 'application/json' });
      assert.equal(a.status, 200);
      assert.equal(r.received[0]!.headers['user-agent'], 'Sunap/1');
      await assert.rejects(out.post(r.url.replace('https:', 'http:') + '/hook', Buffer.from('{}'), {}));
    } finally {
      await r.close();
    }
  });

  describe('with private targets refused', () => {
    const strict = createHttpOut({ allowPrivateTargets: false, timeoutMs: 2000 });
    test('literal private addresses, IPv6 in brackets included, are refused without a request, naming the address', async () => {
      seen.length = 0;
      const port = new URL(base).port;
      for (const [url, host] of [[`${base}/ok`, '127.0.0.1'], [`http://[::1]:${port}/ok`, '::1'], [`http://[fd00::1]:${port}/ok`, 'fd00::1'], [`https://10.0.0.1/ok`, '10.0.0.1']]) {
        await assert.rejects(strict.post(url!, Buffer.from('{}'), {}), (e: Error) => e.message === `not allowed: ${host} is a private, loopback or reserved address`, url);
      }
      assert.equal(seen.length, 0);
    });
    test('a name that resolves to loopback is refused at connect time', async () => {
      seen.length = 0;
      await assert.rejects(strict.post(`http://localhost:${new URL(base).port}/ok`, Buffer.from('{}'), {}), /not allowed|private|loopback/i);
      assert.equal(seen.length, 0);
    });
  });
});
