import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { ANSWER_KEEP_BYTES, createHttpOut, guardedLookup, isForbiddenAddress, type LookupFunction } from '../../src/ports/http-out.js';
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

  test('a finished call leaves no timer behind', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await out.post(`${base}/ok`, Buffer.from('{}'), {});
    const before = timers();
    await out.post(`${base}/ok`, Buffer.from('{}'), {}, 60_000);
    assert.equal(timers(), before);
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
    test('a name that resolves to loopback is refused by the guarded lookup, before a socket is opened', async () => {
      seen.length = 0;
      await assert.rejects(strict.post(`http://localhost:${new URL(base).port}/ok`, Buffer.from('{}'), {}),
        (e: Error) => /^not allowed: localhost resolves to (127\.0\.0\.1|::1), a private, loopback or reserved address$/.test(e.message) && (e as { code?: string }).code === 'SUNAP_FORBIDDEN_TARGET', 'the lookup\'s own refusal');
      assert.equal(seen.length, 0);
    });
    test('a name is not refused for being a name: it is resolved first (here it does not resolve)', async () => {
      await assert.rejects(strict.post('http://sunap-test.invalid/ok', Buffer.from('{}'), {}), (e: Error) => !e.message.startsWith('not allowed'));
    });
  });
});

// The guard's decision, without a socket (moved here from test/robustness/hostile, which keeps
// the end-to-end refusals aimed at loopback).
describe('outbound guard: which addresses a callback may reach when private targets are refused', () => {
  const forbidden = [
    // loopback, unspecified, this network
    '127.0.0.1', '127.255.255.254', '0.0.0.0', '0.1.2.3', '::1', '::',
    // RFC 1918, CGNAT, link-local (cloud metadata), benchmarking, documentation, reserved, multicast, broadcast
    '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255', '100.64.0.1', '169.254.169.254',
    '198.18.0.1', '192.0.2.1', '240.0.0.1', '224.0.0.1', '255.255.255.255',
    // IPv6 unique-local, link-local, site-local, multicast, documentation, discard
    'fc00::1', 'fd00::2', 'fdff:ffff::1', 'fe80::1', 'febf::1', 'fec0::1', 'ff02::1', '2001:db8::1', '100::1',
    // IPv4 inside IPv6: mapped, compatible (ipaddr.js calls ::/96 unicast), NAT64, 6to4, Teredo, SIIT
    '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::127.0.0.1', '::10.0.0.1', '::169.254.169.254', '::7f00:1',
    '64:ff9b::a00:1', '64:ff9b::7f00:1', '2002:a00:1::1', '2002:7f00:1::1', '2001::1', '::ffff:0:a00:1',
    // not an address at all
    'localhost', '', '0177.0.0.1', '2130706433',
  ];
  const allowed = ['8.8.8.8', '1.1.1.1', '203.0.114.1', '2606:4700:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8'];

  test('every private, loopback, link-local, unique-local, reserved and embedded form is forbidden', () => {
    for (const ip of forbidden) assert.equal(isForbiddenAddress(ip), true, ip);
  });

  test('public unicast addresses are not', () => {
    for (const ip of allowed) assert.equal(isForbiddenAddress(ip), false, ip);
  });

  test('the agent library alone would let IPv4-compatible IPv6 through (why the second check exists)', () => {
    // request-filtering-agent refuses when ipaddr.js says anything but "unicast"; for ::/96 it says unicast.
    for (const ip of ['::7f00:1', '::a00:1', '::a9fe:a9fe']) assert.equal(ipaddr.parse(ip).range(), 'unicast', ip);
    for (const ip of ['::7f00:1', '::a00:1', '::a9fe:a9fe']) assert.equal(isForbiddenAddress(ip), true, ip);
  });

  test('a name that resolves inward is refused by the lookup, whatever else it resolves to', async () => {
    const fake = (answer: dnsAnswer): LookupFunction => (_h, opts, cb) => {
      if (opts.all) cb(null, answer.map(([address, family]) => ({ address, family })));
      else cb(null, answer[0]![0], answer[0]![1]);
    };
    type dnsAnswer = [string, number][];
    const lookup = (answer: dnsAnswer, all: boolean) => new Promise<{ err: Error | null; address?: unknown }>((resolve) => {
      guardedLookup(fake(answer))('partner.example', { all }, (err, address) => resolve({ err, address }));
    });
    for (const all of [true, false]) {
      for (const answer of [[['10.0.0.7', 4]], [['169.254.169.254', 4]], [['fd12::1', 6]], [['8.8.8.8', 4], ['192.168.1.1', 4]], [['::ffff:172.16.0.1', 6]], [['::10.1.1.1', 6]]] as dnsAnswer[]) {
        const r = await lookup(answer, all);
        if (!all && answer.length > 1) continue; // one address asked, one given: the public one
        assert.ok(r.err, `${JSON.stringify(answer)} (all=${all}) must be refused`);
        assert.match(r.err!.message, /not allowed: partner\.example resolves to .*, a private, loopback or reserved address/);
      }
      const ok = await lookup([['8.8.8.8', 4], ['2606:4700:4700::1111', 6]], all);
      assert.equal(ok.err, null);
    }
    // A failed resolution stays a failure.
    const failing: LookupFunction = (_h, _o, cb) => cb(Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }));
    const r = await new Promise<Error | null>((resolve) => guardedLookup(failing)('x', {}, (err) => resolve(err)));
    assert.match(r!.message, /ENOTFOUND/);
  });
});
