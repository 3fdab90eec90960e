/**
 * Hostile callers: callbacks and webhooks aimed inward (SSRF), redirects to internal addresses,
 * login brute force, lookups by the thousand, and secrets in the logs.
 *
 * SAFETY: nothing here sends a packet to a non-loopback address. Every end-to-end target below
 * is a loopback form; the private, link-local, unique-local and public ranges are covered by
 * asserting on the guard's decision (isForbiddenAddress, guardedLookup with a fake resolver,
 * in test/ports/http-out.test.ts), which opens no socket.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { createAccount, grantPoints } from '../../src/invoicing/accounts.js';
import { createHttpOut } from '../../src/ports/http-out.js';
import { forEachEngine, paymentBody, seqNo, startApp, type TestApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { findWhole } from '../helpers/text.js';
import { billBody, newAccount, waitSent, type Login } from '../invoicing/support.js';
import { raw, until } from './support.js';

const rd = (r: { body: any }) => r.body?.result_data;

/** A TCP listener on every loopback address (dual-stack ::) that counts whoever reaches it. */
async function trap(): Promise<{ port: number; readonly hits: number; close(): Promise<void> }> {
  let hits = 0;
  const server = net.createServer((s) => {
    hits++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen({ port: 0, host: '::', ipv6Only: false }, r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get hits() {
      return hits;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Names that /etc/hosts maps to a loopback address (no DNS query is made for them). */
function loopbackHostNames(): string[] {
  try {
    return readFileSync('/etc/hosts', 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim().split(/\s+/))
      .filter(([ip]) => ip && net.isIP(ip) && ipaddr.parse(ip).range() === 'loopback')
      .flatMap(([, ...names]) => names)
      .filter((n) => /^[a-z0-9-]+$/i.test(n) && n.toLowerCase() !== 'localhost')
      .slice(0, 2);
  } catch {
    return [];
  }
}

// ---- end to end, loopback only --------------------------------------------------------------

forEachEngine('hostile callers', (engine) => {
  describe('SSRF: with SUNAP_ALLOW_PRIVATE_TARGETS=false, callbacks and webhooks aimed at loopback', () => {
    let t: TestApp;
    let a: Login;
    let inside: Awaited<ReturnType<typeof trap>>;
    before(async () => {
      inside = await trap();
      t = await startApp(engine, { SUNAP_ALLOW_PRIVATE_TARGETS: 'false' });
      a = await newAccount(t, { points: 10_000 });
    });
    after(async () => {
      await t?.close();
      await inside?.close();
    });

    const attemptsFor = (target: 'CALLBACK' | 'WEBHOOK', refId: string) =>
      t.app.sunap.database.db.selectFrom('outbound_attempts').selectAll().where('target', '=', target).where('ref_id', '=', refId).execute();

    /** Every spelling of loopback Node's URL parser accepts (decimal, hex, octal, short, mapped, by name). */
    const loopbackForms = (p: number) => [
      `https://127.0.0.1:${p}/cb`, `https://127.1:${p}/cb`, `https://127.0.0.2:${p}/cb`, `https://0.0.0.0:${p}/cb`, `https://0:${p}/cb`,
      `https://[::1]:${p}/cb`, `https://[::ffff:127.0.0.1]:${p}/cb`, `https://[0:0:0:0:0:0:0:1]:${p}/cb`, `https://[::]:${p}/cb`,
      `https://localhost:${p}/cb`, `https://LocalHost:${p}/cb`, `https://2130706433:${p}/cb`, `https://0x7f000001:${p}/cb`,
      `https://0177.0.0.1:${p}/cb`, `https://0x7f.1:${p}/cb`, `https://%31%32%37.0.0.1:${p}/cb`,
      ...loopbackHostNames().map((n) => `https://${n}:${p}/cb`),
    ];

    test('control: with private targets allowed, these forms do reach the listener (so "nothing reached it" means something)', async () => {
      const control = await trap();
      try {
        const open = createHttpOut({ allowPrivateTargets: true, timeoutMs: 3000 });
        for (const form of loopbackForms(control.port)) {
          const unspecified = /\/\/(0\.0\.0\.0|0|\[::\]):/.test(form); // refused even then (the agent's "meta address" rule)
          const before = control.hits;
          await open.post(form, Buffer.from('{}'), {}).catch(() => {});
          assert.equal(control.hits > before, !unspecified, form);
        }
      } finally {
        await control.close();
      }
    });

    test('every loopback form of CONFIRM_URL is refused, the refusal recorded, nothing reaches the listener', async () => {
      const forms = loopbackForms(inside.port);
      const sent: { form: string; paymentId: string }[] = [];
      for (const form of forms) {
        const seq = seqNo('SSRF');
        const r = await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, CONFIRM_URL: form }));
        assert.equal(rd(r).RESULT_CODE, '0000', `${form}: ${JSON.stringify(r.body)}`);
        assert.equal((await t.pay(seq)).approved, true);
        const pay = await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq);
        sent.push({ form, paymentId: pay!.id });
      }
      for (const { form, paymentId } of sent) {
        const [attempt] = await until(`the callback attempt to ${form}`, async () => {
          const rows = await attemptsFor('CALLBACK', paymentId);
          return rows.length ? rows : null;
        });
        assert.equal(attempt!.status_code, null, form);
        assert.equal(attempt!.url, form);
        assert.match(attempt!.error ?? '', /not allowed/, `${form}: ${attempt!.error}`);
      }
      assert.equal(inside.hits, 0, 'no connection reached the loopback listener');
    });

    test('webhookUrl aimed at loopback: bill.paid is refused and recorded, nothing reaches the listener', async () => {
      const p = inside.port;
      const forms = [`https://127.0.0.1:${p}/wh`, `https://[::1]:${p}/wh`, `https://localhost:${p}/wh`, `https://2130706433:${p}/wh`, `https://[::ffff:127.0.0.1]:${p}/wh`];
      const events: { form: string; eventId: number }[] = [];
      for (const form of forms) {
        const r = await t.post('/app/v1/sales/bill', billBody({ webhookUrl: form, webhookSecret: 'whsec_0123456789abcdef' }), a.h);
        assert.equal(r.body.result_code, 0, `${form}: ${JSON.stringify(r.body)}`);
        const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
        const d = await waitSent(t, a, id);
        assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
        const inv = await t.app.sunap.database.db.selectFrom('invoices').select('id').where('unique_id', '=', id).executeTakeFirstOrThrow();
        const ev = await t.app.sunap.database.db.selectFrom('webhook_events').select('id').where('invoice_id', '=', inv.id).executeTakeFirstOrThrow();
        events.push({ form, eventId: Number(ev.id) });
      }
      for (const { form, eventId } of events) {
        const [attempt] = await until(`the webhook attempt to ${form}`, async () => {
          const rows = await attemptsFor('WEBHOOK', String(eventId));
          return rows.length ? rows : null;
        });
        assert.equal(attempt!.status_code, null, form);
        assert.match(attempt!.error ?? '', /not allowed/, `${form}: ${attempt!.error}`);
      }
      assert.equal(inside.hits, 0, 'no connection reached the loopback listener');
    });
  });

  describe('redirects: a receiver answering 3xx towards an internal address is not followed', () => {
    let t: TestApp;
    let a: Login;
    let inside: Awaited<ReturnType<typeof trap>>;
    let redirector: https.Server;
    let hits = 0;
    let url = '';
    before(async () => {
      inside = await trap();
      const dir = process.env.SUNAP_TEST_TLS_DIR!;
      redirector = https.createServer({ key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.crt')) }, (req, res) => {
        hits++;
        req.resume();
        const status = req.url?.includes('307') ? 307 : req.url?.includes('308') ? 308 : 302;
        res.writeHead(status, { location: `https://127.0.0.1:${inside.port}/internal`, 'content-type': 'application/json' }).end('{}');
      });
      await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
      url = `https://localhost:${(redirector.address() as net.AddressInfo).port}`;
      // The receiver itself is on loopback, so private targets are allowed here (the sandbox default).
      t = await startApp(engine);
      a = await newAccount(t, { points: 1_000 });
    });
    after(async () => {
      await t?.close();
      redirector?.closeAllConnections();
      await new Promise((r) => redirector?.close(r));
      await inside?.close();
    });

    test('callback and webhook: the 3xx is a recorded failure, the Location is never visited', async () => {
      const ids: { target: 'CALLBACK' | 'WEBHOOK'; refId: string; status: number }[] = [];
      for (const status of [302, 307, 308]) {
        const seq = seqNo('REDIR');
        assert.equal(rd(await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, CONFIRM_URL: `${url}/cb/${status}` }))).RESULT_CODE, '0000');
        assert.equal((await t.pay(seq)).approved, true);
        ids.push({ target: 'CALLBACK', refId: (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq))!.id, status });
      }
      assert.equal((await t.post('/app/v1/sales/bill', billBody({ webhookUrl: `${url}/wh` }), a.h)).body.result_code, 0);
      const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
      const d = await waitSent(t, a, id);
      assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
      const inv = await t.app.sunap.database.db.selectFrom('invoices').select('id').where('unique_id', '=', id).executeTakeFirstOrThrow();
      const ev = await t.app.sunap.database.db.selectFrom('webhook_events').select('id').where('invoice_id', '=', inv.id).executeTakeFirstOrThrow();
      ids.push({ target: 'WEBHOOK', refId: String(ev.id), status: 302 });
      for (const { target, refId, status } of ids) {
        const [attempt] = await until(`${target} attempt`, async () => {
          const rows = await t.app.sunap.database.db.selectFrom('outbound_attempts').selectAll().where('target', '=', target).where('ref_id', '=', refId).execute();
          return rows.length ? rows : null;
        });
        assert.equal(attempt!.status_code, status);
        assert.equal(attempt!.error, `redirect ${status} not followed`);
      }
      assert.ok(hits >= ids.length, `the receiver was asked (${hits})`);
      assert.equal(inside.hits, 0, 'the internal Location was never visited');
    });
  });

  describe('brute force and scraping', () => {
    let t: TestApp;
    let a: Login;
    before(async () => {
      t = await startApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '8', SUNAP_TRUST_PROXY: '1' });
      a = await newAccount(t);
    });
    after(async () => t?.close());
    const login = (email: string, password: string, from: string) =>
      t.post('/app/v1/auth/login', { email, password, loginType: 'EMAIL' }, { 'x-forwarded-for': from });

    test('per email: after 5 failures even the right password waits (429 / -29)', async () => {
      for (let i = 0; i < 5; i++) {
        const r = await login(a.email, `wrong-${i}`, `203.0.113.${10 + i}`);
        assert.equal(r.status, 401);
        assert.equal(r.body.result_code, -3);
      }
      const r = await login(a.email, a.password, '203.0.113.20');
      assert.equal(r.status, 429, JSON.stringify(r.body));
      assert.deepEqual(r.body, { result_code: -29, result_msg: r.body.result_msg, result_data: null });
    });

    test('per address: spraying many emails from one address is cut off at SUNAP_LOGIN_RATE_LIMIT a minute', async () => {
      const b = await newAccount(t);
      for (let i = 0; i < 8; i++) {
        const r = await login(`nobody-${i}@example.com`, 'guess-123456', '198.51.100.7');
        assert.equal(r.body.result_code, -3, JSON.stringify(r.body));
      }
      const limited = await login(`nobody-9@example.com`, 'guess-123456', '198.51.100.7');
      assert.equal(limited.status, 429);
      assert.equal(limited.body.result_code, -29);
      assert.equal(limited.body.result_data, null);
      // The right password from that address waits too; another address is not affected.
      assert.equal((await login(b.email, b.password, '198.51.100.7')).body.result_code, -29);
      assert.equal((await login(b.email, b.password, '198.51.100.8')).body.result_code, 0);
    });

    test('the public lookup is limited per address: 429 / -29 in the envelope', async () => {
      const codes: number[] = [];
      for (let i = 0; i < 61; i++) {
        const r = await raw(t, 'GET', `/app/v1/sales/public/bill/INV${i}`, { headers: { 'x-forwarded-for': '192.0.2.99' } });
        codes.push(r.body.result_code);
        if (r.status === 429) {
          assert.deepEqual(r.body, { result_code: -29, result_msg: r.body.result_msg, result_data: null });
          break;
        }
        assert.equal(r.status, 404);
      }
      assert.equal(codes.filter((c) => c === -10).length, 60);
      assert.equal(codes.at(-1), -29);
      const other = await raw(t, 'GET', '/app/v1/sales/public/bill/INV0', { headers: { 'x-forwarded-for': '192.0.2.100' } });
      assert.equal(other.body.result_code, -10);
    });
  });

  test('the login limit is on by default (100 a minute per address) and 0 turns it off', async () => {
    const t = await startApp(engine, {}, { runJobs: false });
    try {
      assert.equal(t.app.sunap.config.loginRateLimit, 100);
    } finally {
      await t.close();
    }
  });

  describe('secrets never reach the logs', () => {
    let t: TestApp;
    let receiver: Receiver;
    before(async () => {
      receiver = await new Receiver().start();
      t = await startApp(engine, { LOG_LEVEL: 'trace' }, { keyIn: true });
    });
    after(async () => {
      await t?.close();
      await receiver?.close();
    });

    test('a whole flow at LOG_LEVEL=trace: no key, token, password, webhook secret, card number, expiry, birth date or page token in any line', async () => {
      const secrets: Record<string, string> = { apiKey: t.apiKey };
      // An account, points, a login, a failed login, a refresh, a refresh reused (family revoked), a login again.
      const email = `secret-owner-${Date.now()}@example.com`;
      const password = 'Pw-4b1f-secret-9e77';
      const wrongPassword = 'Wrong-7c3a-secret-1d20';
      await createAccount(t.app.sunap.database.db, t.app.sunap.clock.nowMs(), { email, password, storeCode: t.storeCode });
      await grantPoints(t.app.sunap.database.db, t.app.sunap.clock.nowMs(), { email, amount: 1000 });
      Object.assign(secrets, { password, wrongPassword });
      assert.equal((await t.post('/app/v1/auth/login', { email, password: wrongPassword, loginType: 'EMAIL' })).body.result_code, -3);
      const first = rd(await t.post('/app/v1/auth/login', { email, password, loginType: 'EMAIL' }));
      const second = rd(await t.post('/app/v1/auth/refresh', { refreshToken: first.refreshToken }));
      assert.equal((await t.post('/app/v1/auth/refresh', { refreshToken: first.refreshToken })).body.result_code, -3);
      const third = rd(await t.post('/app/v1/auth/login', { email, password, loginType: 'EMAIL' }));
      Object.assign(secrets, {
        access1: first.accessToken, refresh1: first.refreshToken, access2: second.accessToken, refresh2: second.refreshToken,
        access3: third.accessToken, refresh3: third.refreshToken,
      });
      const h = { 'x-access-token': third.accessToken };
      assert.equal((await t.get('/app/v1/points/me', { 'x-access-token': first.accessToken })).body.result_code, -1); // revoked
      // An invoice with a signed webhook, paid on the payment page with full card data, then refunded.
      const webhookSecret = `whsec_${Date.now().toString(36)}_5e1a9c`;
      secrets.webhookSecret = webhookSecret;
      assert.equal((await t.post('/app/v1/sales/bill', billBody({ webhookUrl: `${receiver.url}/hooks`, webhookSecret }), h)).body.result_code, 0);
      const id = (await t.get('/app/v1/sales/bill?size=1', h)).body.result_data.bills[0].uniqueId;
      const d = await waitSent(t, { h } as unknown as Login, id);
      const link = new URL((await t.get(`/app/v1/sales/public/bill/${d.bill.transSeqNo}`)).body.result_data.paymentUrl);
      const tid = link.searchParams.get('tid')!;
      const token = link.searchParams.get('token')!;
      secrets.invoicePageToken = token;
      const form = (card: Record<string, string>) => fetch(`${t.url}/checkout/pay`, {
        method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ tid, token, installment: '00', ...card }).toString(),
      });
      // A declined card, a form with a bad field, then the approval.
      assert.equal((await form({ cardNumber: '4000 0000 0000 9995', expiry: '11/37', birth: '851231', cardPassword: '47' })).status, 200);
      assert.equal((await form({ cardNumber: '5555 5555 5555 4445', expiry: '11/37', birth: '851231', cardPassword: '47' })).status, 400);
      assert.equal((await form({ cardNumber: '5555 5555 5555 4444', expiry: '11/37', birth: '851231', cardPassword: '47' })).status, 303);
      Object.assign(secrets, {
        card1: '4000000000009995', card1Spaced: '4000 0000 0000 9995', card2: '5555555555554444', card2Spaced: '5555 5555 5555 4444', card3: '5555555555554445',
        expiry: '11/37', expiryEncoded: '11%2F37', birth: '851231',
      });
      await receiver.waitFor(1);
      assert.equal((await t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, h)).body.result_code, 0);
      await receiver.waitFor(2);
      // A gateway payment with a callback, paid through the sandbox with a full card number; its page token.
      const seq = seqNo('LOGS');
      const created = await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, CONFIRM_URL: `${receiver.url}/confirm`, TEMP_VALUE: 'order-77' }));
      secrets.gatewayPageToken = new URL(rd(created).REDIRECT_URL).searchParams.get('token')!;
      const paid = await t.post(`/sandbox/payments/${seq}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, cardNumber: '4242424242424242' });
      assert.equal(paid.body.approved, true);
      secrets.card4 = '4242424242424242';
      await receiver.waitFor(3);
      // The page token also travels in GET query strings.
      assert.equal((await t.get(`/checkout?tid=${tid}&token=${token}`)).status, 200);
      assert.equal((await t.get(`/checkout?tid=${tid}&token=${secrets.gatewayPageToken}`)).status, 404);
      // Let the last log lines land.
      await until('logs', async () => t.logs.length > 0);
      const logs = t.logs.join('');
      assert.ok(logs.length > 1000, 'the flow did log');
      assert.ok(/"msg":"request completed"/.test(logs) && /"url":"\/api\/requestPayment"/.test(logs), 'request logs are in, with the path asked');
      for (const [name, value] of Object.entries(secrets)) {
        assert.ok(value.length >= 5, name);
        // Whole values only: a birth date's six digits can occur inside an epoch timestamp by chance.
        const m = findWhole(logs, value);
        assert.equal(m, null, `${name} appears in the logs: …${m ? logs.slice(Math.max(0, m.index - 200), m.index + value.length + 50) : ''}…`);
      }
    });
  });
});
