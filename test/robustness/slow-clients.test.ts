/**
 * Slow and greedy clients (docs/security.md, "Slow clients"): a body trickled one byte at a
 * time is cut with 408 and its connection closed, so are headers that never end, and
 * connections past SUNAP_MAX_CONNECTIONS are closed as they arrive. The limits are set small
 * here so the suite stays quick; the defaults are checked on the configuration.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/platform/config.js';
import { forEachEngine, startApp, TEST_SECRET_KEY, type TestApp } from '../helpers/app.js';

interface Trickle {
  /** Everything the server wrote before it closed the connection. */
  answer: Promise<string>;
  /** Bytes of the body the client managed to send. */
  readonly sent: number;
  stop(): void;
}

/** Opens a raw connection, writes `head`, then one byte of `body` every `everyMs`. */
function trickle(port: number, head: string, body: string, everyMs: number): Trickle {
  const socket = net.connect({ port, host: '127.0.0.1' });
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  let out = '';
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('close', () => {
      clearInterval(timer);
      resolve(out);
    });
    socket.on('error', () => {});
  });
  socket.on('connect', () => {
    socket.write(head);
    timer = setInterval(() => {
      if (sent < body.length && socket.writable) socket.write(body[sent++]!);
    }, everyMs);
  });
  return {
    answer,
    get sent() {
      return sent;
    },
    stop() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** A connection that may be closed by the server: resolves with whatever arrived and whether it closed. */
function openIdle(port: number): { socket: net.Socket; closed: Promise<string> } {
  const socket = net.connect({ port, host: '127.0.0.1' });
  let out = '';
  socket.on('data', (d) => (out += d.toString('latin1')));
  socket.on('error', () => {});
  return { socket, closed: new Promise((r) => socket.on('close', () => r(out))) };
}

const connected = (s: net.Socket) => new Promise<void>((r) => (s.readyState === 'open' ? r() : s.once('connect', () => r())));

forEachEngine('slow clients are cut', (engine) => {
  describe('small limits', () => {
    let t: TestApp;
    let port: number;
    before(async () => {
      t = await startApp(engine, { SUNAP_REQUEST_TIMEOUT_MS: '800', SUNAP_HEADERS_TIMEOUT_MS: '400' }, { runJobs: false });
      port = Number(new URL(t.url).port);
    });
    after(async () => t?.close());

    test('a body sent one byte at a time gets 408 and the connection closes before the body is done', async () => {
      const body = JSON.stringify({ email: 'slow@example.com', password: 'x'.repeat(40), loginType: 'EMAIL' });
      const c = trickle(port, `POST /app/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, body, 50);
      const answer = await c.answer;
      assert.match(answer, /^HTTP\/1\.1 408 /, answer);
      assert.ok(c.sent < body.length, `cut after ${c.sent} of ${body.length} bytes`);
    });

    test('the same body sent at once is answered normally on the same limits', async () => {
      const r = await t.post('/app/v1/auth/login', { email: 'slow@example.com', password: 'x'.repeat(40), loginType: 'EMAIL' });
      assert.equal(r.status, 401);
    });

    test('headers that never end are cut too', async () => {
      const head = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
      const c = trickle(port, head, 'X-Slow: ' + 'a'.repeat(200), 30);
      const answer = await c.answer;
      assert.match(answer, /^HTTP\/1\.1 408 /, answer);
      assert.ok(c.sent < 200);
    });

  });

  test('connections past SUNAP_MAX_CONNECTIONS are closed at once; a freed slot serves again', async () => {
    // Its own app: no kept-alive connection of an earlier test holds a slot.
    const t = await startApp(engine, { SUNAP_MAX_CONNECTIONS: '6' }, { runJobs: false });
    const port = Number(new URL(t.url).port);
    try {
      const held = Array.from({ length: 6 }, () => openIdle(port));
      await Promise.all(held.map((h) => connected(h.socket)));
      // Keep them busy with a request that is still arriving (within the request limit).
      for (const h of held) h.socket.write(`POST /app/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`);
      await new Promise((r) => setTimeout(r, 50));
      const extra = openIdle(port);
      extra.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      assert.equal(await extra.closed, '', 'closed without an answer');
      for (const h of held) h.socket.destroy();
      await Promise.all(held.map((h) => h.closed));
      const ok = await fetch(`${t.url}/healthz`);
      assert.equal(ok.status, 200);
    } finally {
      await t.close();
    }
  });
});

test('the defaults: 30 s a request, 10 s for its headers, 72 s kept alive, 1000 connections; headers may not exceed the request', () => {
  const base = { SUNAP_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: 'sqlite::memory:' };
  assert.deepEqual(loadConfig(base).http, { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 72_000, maxConnections: 1000 });
  assert.throws(() => loadConfig({ ...base, SUNAP_REQUEST_TIMEOUT_MS: '1000', SUNAP_HEADERS_TIMEOUT_MS: '2000' }), /SUNAP_HEADERS_TIMEOUT_MS: must not exceed SUNAP_REQUEST_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ ...base, SUNAP_MAX_CONNECTIONS: '0' }), /SUNAP_MAX_CONNECTIONS/);
  assert.equal(loadConfig({ ...base, SUNAP_REQUEST_TIMEOUT_MS: '5000' }).http.headersTimeoutMs, 5000);
});
