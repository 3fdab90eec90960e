/**
 * The sandbox's edges (docs/security.md, "The sandbox"): its routes answer only the configured
 * host or a loopback name (DNS rebinding), only loopback callers unless SUNAP_SANDBOX_OPEN=true,
 * and do not exist in live mode. The shapes of the sandbox API stay as they were.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { isLoopbackAddress, isLoopbackName } from '../../src/platform/sandbox-guard.js';
import { forEachEngine, paymentBody, seqNo, startApp, type TestApp } from '../helpers/app.js';
import { withFailingInserts } from '../helpers/db.js';
import { withFakes, withLiveApp } from '../live/support.js';

/** fetch cannot set Host: a raw request with the given headers. */
function call(t: TestApp, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const u = new URL(t.url);
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname, port: u.port, method, path, agent: false,
      headers: { ...(data ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(data)) } : {}), ...headers },
    }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode!, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

const SANDBOX_CALLS: [string, string, (t: TestApp) => unknown][] = [
  ['GET', '/sandbox/clock', () => undefined],
  ['POST', '/sandbox/clock', () => ({ advanceSeconds: 1 })],
  ['GET', '/sandbox/messages', () => undefined],
  ['GET', '/sandbox/outbox', () => undefined],
  ['POST', `/sandbox/payments/NOPE/pay`, (t) => ({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode })],
  ['POST', '/sandbox/terminal-payments', (t) => ({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_SEQNO: seqNo('TERM'), APPROVAL_AMOUNT: '1000', MOBILE_NO: '01012345678', PAY_PATH: 'KIOSK' })],
];

forEachEngine('the sandbox\'s edges', (engine) => {
  describe('default: loopback only, own hosts only', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine, { SUNAP_TRUST_PROXY: '1' }, { runJobs: false });
    });
    after(async () => t?.close());
    const port = () => new URL(t.url).port;

    test('a foreign Host is refused (403 / -4) on every sandbox route, and nothing moves', async () => {
      const before = (await t.get('/sandbox/clock')).body.offsetSeconds;
      for (const [method, path, body] of SANDBOX_CALLS) {
        const r = await call(t, method, path, { host: `rebind.attacker.example:${port()}` }, body(t));
        assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
        if (r.body) assert.equal(r.body.result_code, -4);
      }
      assert.equal((await t.get('/sandbox/clock')).body.offsetSeconds, before, 'the clock did not move');
    });

    test('the configured host and loopback names are served', async () => {
      for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, `app.localhost:${port()}`, `[::1]:${port()}`, '127.0.0.2']) {
        const r = await call(t, 'GET', '/sandbox/clock', { host });
        assert.equal(r.status, 200, `${host}: ${r.text}`);
        assert.equal(typeof r.body.now, 'string');
      }
    });

    test('a non-loopback caller (through the trusted proxy) is refused; a loopback one through it is served', async () => {
      for (const [method, path, body] of SANDBOX_CALLS) {
        const r = await call(t, method, path, { host: `127.0.0.1:${port()}`, 'x-forwarded-for': '192.0.2.44' }, body(t));
        assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      }
      const local = await call(t, 'GET', '/sandbox/messages', { host: `127.0.0.1:${port()}`, 'x-forwarded-for': '127.0.0.1' });
      assert.equal(local.status, 200);
      assert.ok(Array.isArray(local.body.messages));
    });

    test('the rest of the service answers any caller: the guard is for /sandbox only', async () => {
      const r = await call(t, 'GET', '/healthz', { host: 'anything.example', 'x-forwarded-for': '192.0.2.44' });
      assert.equal(r.status, 200);
      const p = await call(t, 'POST', '/api/requestPayment', { host: 'anything.example', 'x-forwarded-for': '192.0.2.44' }, {});
      assert.notEqual(p.status, 403);
    });

    test('the sandbox API keeps its shapes: pay answers as before', async () => {
      const seq = seqNo('EDGE');
      assert.equal((await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq }))).body.result_data.RESULT_CODE, '0000');
      const pay = (body: Record<string, unknown> = {}, s = seq) => t.post(`/sandbox/payments/${s}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, ...body });
      // Declined: the network's reason, the payment still waiting; then paid; then already paid.
      assert.deepEqual((await pay({ cardNumber: '4000000000009995' })).body, { approved: false, APPROVE_STATUS: 'STORE_REQUEST', message: '잔액이 부족합니다' });
      assert.deepEqual((await pay()).body, { approved: true, APPROVE_STATUS: 'APPROVE_COMPLETE', message: '승인되었습니다' });
      assert.deepEqual((await pay()).body, { approved: false, APPROVE_STATUS: 'APPROVE_COMPLETE', message: '이미 처리된 결제입니다 (APPROVE_COMPLETE)' });
      const unknown = await pay({}, seqNo('NOPE'));
      assert.deepEqual([unknown.status, unknown.body.result_code, unknown.body.result_msg], [404, -10, 'TRANS_SEQNO: no such payment for this platform and store']);
    });

    test('the sandbox calls refuse bad input naming the field (400 / -20) and change nothing; the edges of each rule are accepted', async () => {
      const seq = seqNo('EDGE');
      assert.equal((await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq }))).body.result_data.RESULT_CODE, '0000');
      const where = { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode };
      const refused = async (path: string, body: unknown, msg: string) => {
        const r = await t.post(path, body);
        assert.deepEqual([r.status, r.body.result_code, r.body.result_msg], [400, -20, msg], `${path} ${JSON.stringify(body)}`);
      };
      const pay = `/sandbox/payments/${seq}/pay`;
      await refused(pay, { ...where, cardNumber: '424242424242' }, 'cardNumber: must be 13 to 19 digits');
      await refused(pay, { ...where, cardNumber: '42424242424242424242' }, 'cardNumber: must be 13 to 19 digits');
      await refused(pay, { ...where, installmentMonth: '3' }, 'installmentMonth: must be two digits, 00 for a lump sum');
      await refused(pay, { ...where, installmentMonth: '003' }, 'installmentMonth: must be two digits, 00 for a lump sum');
      await refused(pay, { ...where, PLATFORM_CODE: '' }, 'PLATFORM_CODE: must not be empty');
      await refused(pay, { PLATFORM_CODE: t.platformCode }, 'STORE_CODE: is required');
      await refused(pay, { ...where, STORE_CODE: '' }, 'STORE_CODE: must not be empty');
      await refused(`/sandbox/payments/${'T'.repeat(65)}/pay`, where, 'TRANS_SEQNO: must be at most 64 characters');
      assert.equal((await t.gw('searchPayment', { TRANS_SEQNO: seq })).body.result_data.APPROVE_STATUS, 'STORE_REQUEST');
      // 13 digits and 00 are inside the rules: this card is declined by the sandbox network, not refused here.
      const edge = await t.post(pay, { ...where, cardNumber: '4000000000002', installmentMonth: '00' });
      assert.equal(edge.status, 200, JSON.stringify(edge.body));
      assert.equal(typeof edge.body.approved, 'boolean');

      const terminal = { ...where, TRANS_SEQNO: seqNo('TERM'), APPROVAL_AMOUNT: '1000', MOBILE_NO: '01012345678', PAY_PATH: 'KIOSK' };
      await refused('/sandbox/terminal-payments', { ...terminal, APPROVAL_AMOUNT: '1000.5' }, 'APPROVAL_AMOUNT: must be a string of 1 to 12 digits');
      await refused('/sandbox/terminal-payments', { ...terminal, APPROVAL_AMOUNT: '1234567890123' }, 'APPROVAL_AMOUNT: must be a string of 1 to 12 digits');
      await refused('/sandbox/terminal-payments', { ...terminal, MOBILE_NO: '01234567' }, 'MOBILE_NO: must be 9 to 11 digits');
      await refused('/sandbox/terminal-payments', { ...terminal, TRANS_SEQNO: 'T'.repeat(65) }, 'TRANS_SEQNO: must be at most 64 characters');
      await refused('/sandbox/terminal-payments', { ...terminal, STORE_CODE: '' }, 'STORE_CODE: must not be empty');
      await refused('/sandbox/terminal-payments', { ...terminal, PLATFORM_CODE: '' }, 'PLATFORM_CODE: must not be empty');
      assert.equal((await t.gw('searchPayment', { TRANS_SEQNO: terminal.TRANS_SEQNO })).body.result_data.RESULT_CODE, '4003', 'nothing recorded');
      const ok = await t.post('/sandbox/terminal-payments', { ...terminal, TRANS_SEQNO: 'T'.repeat(64), MOBILE_NO: '021234567' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.APPROVE_STATUS, 'APPROVE_COMPLETE');
      // The gateway's own refusals in the sandbox's envelope: a number already used is a state (409 / -24), an unknown store 404 / -10, any other a validation (400 / -20).
      const again = await t.post('/sandbox/terminal-payments', { ...terminal, TRANS_SEQNO: 'T'.repeat(64), MOBILE_NO: '021234567' });
      assert.deepEqual([again.status, again.body.result_code], [409, -24], JSON.stringify(again.body));
      assert.match(again.body.result_msg, /^TRANS_SEQNO: /);
      const unknown = await t.post('/sandbox/terminal-payments', { ...terminal, TRANS_SEQNO: seqNo('TERM'), STORE_CODE: 'NO-SUCH-STORE' });
      assert.deepEqual([unknown.status, unknown.body.result_code, unknown.body.result_msg], [404, -10, 'PLATFORM_CODE, STORE_CODE: unknown platform or store, or the store is not of this platform']);
      const zero = await t.post('/sandbox/terminal-payments', { ...terminal, TRANS_SEQNO: seqNo('TERM'), APPROVAL_AMOUNT: '0' });
      assert.deepEqual([zero.status, zero.body.result_code], [400, -20], JSON.stringify(zero.body));
      assert.match(zero.body.result_msg, /^APPROVAL_AMOUNT: /);
      // A failure that is not the gateway's refusal (the database) is a server error, not a refusal of the input.
      const broken = await withFailingInserts(t.app.sunap.database.db, engine, 'payments', () => t.post('/sandbox/terminal-payments', { ...terminal, TRANS_SEQNO: seqNo('TERM') }));
      assert.equal(broken.status, 500, JSON.stringify(broken.body));
    });
  });

  describe('SUNAP_SANDBOX_OPEN=true', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine, { SUNAP_TRUST_PROXY: '1', SUNAP_SANDBOX_OPEN: 'true' }, { runJobs: false });
    });
    after(async () => t?.close());

    test('callers on the network are served; a foreign Host is still refused', async () => {
      const port = new URL(t.url).port;
      const r = await call(t, 'GET', '/sandbox/clock', { host: `127.0.0.1:${port}`, 'x-forwarded-for': '192.0.2.44' });
      assert.equal(r.status, 200, r.text);
      const foreign = await call(t, 'GET', '/sandbox/clock', { host: 'rebind.attacker.example', 'x-forwarded-for': '192.0.2.44' });
      assert.equal(foreign.status, 403);
    });
  });

  describe('live mode', () => {
    const fakes = withFakes();
    const t = withLiveApp(engine, fakes);

    test('has no sandbox route: every one is 404, whatever the caller', async () => {
      for (const [method, path, body] of SANDBOX_CALLS) {
        const r = await call(t, method, path, { host: 'pay.example.com' }, body(t));
        assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
      }
    });
  });
});

test('loopback names and addresses', () => {
  for (const h of ['localhost', 'LOCALHOST'.toLowerCase(), 'a.b.localhost', '127.0.0.1', '127.255.0.9', '[::1]', 'localhost.']) assert.ok(isLoopbackName(h), h);
  for (const h of ['localhost.attacker.example', '128.0.0.1', '10.0.0.1', '[::2]', 'evil-localhost', '']) assert.ok(!isLoopbackName(h), h);
  for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) assert.ok(isLoopbackAddress(a), a);
  for (const a of ['192.0.2.1', '::ffff:10.0.0.1', '::2', 'fe80::1']) assert.ok(!isLoopbackAddress(a), a);
});
