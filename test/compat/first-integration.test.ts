import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_OFFSET_SECONDS } from '../../src/platform/clock.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { billBody, newAccount } from '../invoicing/support.js';

const rd = (r: { body: any }) => r.body.result_data;

/** What a first integration runs into (issue "Drop-in for the public client SDKs"), answered so that it teaches. */
forEachEngine('compat: a first integration', (engine) => {
  const t = withApp(engine);

  test('a JSON body sent without Content-Type: application/json is told so, in each API\'s envelope', async () => {
    const json = JSON.stringify({ ...paymentBody(), PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_AT: '20261122120000', API_SIGN: 'b'.repeat(64) });
    // What `curl -d '{...}'` sends without -H: a form.
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const gw = await t.request('POST', '/api/requestPayment', json, { 'content-type': type });
      assert.equal(gw.status, 400, gw.text);
      assert.deepEqual(gw.body, { result_code: -1, result_msg: gw.body.result_msg, result_data: { RESULT_CODE: '4002', RESULT_MSG: 'body: send JSON with Content-Type: application/json' } });
      const app = await t.request('POST', '/app/v1/auth/login', JSON.stringify({ email: 'a@example.com', password: 'x', loginType: 'EMAIL' }), { 'content-type': type });
      assert.equal(app.status, 400, app.text);
      assert.deepEqual(app.body, { result_code: -20, result_msg: 'body: send JSON with Content-Type: application/json', result_data: null });
      const sandbox = await t.request('POST', '/sandbox/clock', '{"advanceSeconds":0}', { 'content-type': type });
      assert.equal(sandbox.body.result_msg, 'body: send JSON with Content-Type: application/json');
    }
    // The other side of the rule: the same bytes as JSON (with a charset) are read.
    const ok = await t.request('POST', '/api/searchPayment', json, { 'content-type': 'application/json; charset=utf-8' });
    assert.equal(rd(ok).RESULT_CODE, '3001', 'read as JSON: it reaches the signature check');
    // Calls without a body need no content type, and may carry one (clients that set it on every call).
    const a = await newAccount(t, { points: 1000 });
    assert.equal((await t.get('/app/v1/points/me', a.h)).body.result_code, 0);
    assert.equal((await t.post('/app/v1/sales/bill', billBody(), a.h)).body.result_code, 0);
    const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
    const jsonHeaders = { ...a.h, 'content-type': 'application/json' };
    for (const [method, path] of [['GET', '/app/v1/points/me'], ['POST', `/app/v1/sales/bill/${id}/refresh-status`], ['DELETE', `/app/v1/sales/bill/${id}`]] as const) {
      const r = await t.request(method, path, undefined, jsonHeaders);
      assert.equal(r.status, 200, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.result_code, 0);
    }
    // An empty body where one is needed is missing, and said so in each envelope.
    const empty = await t.request('POST', '/app/v1/sales/bill', undefined, jsonHeaders);
    assert.deepEqual(empty.body, { result_code: -20, result_msg: 'body: is required', result_data: null });
    const emptyGw = await t.request('POST', '/api/requestPayment', undefined, { 'content-type': 'application/json' });
    assert.equal(emptyGw.status, 400);
    assert.equal(emptyGw.body.result_data.RESULT_MSG, 'body: must be a JSON object');
    assert.equal((await t.request('POST', '/api/requestPayment', '{"TRANS_SEQNO":', { 'content-type': 'application/json' })).body.result_data.RESULT_MSG, 'body: is not valid JSON');
    // Forms still work where forms belong (the payment page).
    const page = await t.request('POST', '/checkout/pay', 'tid=x&token=y', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(page.status, 404);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  });

  test('a number sent as a string (and the other way round) is named as such', async () => {
    const a = await newAccount(t, { points: 1000 });
    const r = await t.post('/app/v1/sales/bill', billBody({ amount: '50000' }), a.h);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { result_code: -20, result_msg: 'amount: must be a number, not a string', result_data: null });
    assert.equal((await t.post('/app/v1/sales/bill', billBody({ amount: 50000 }), a.h)).body.result_code, 0);
    const gw = rd(await t.gw('requestPayment', paymentBody({ APPROVAL_AMOUNT: 128000 })));
    assert.equal(gw.RESULT_CODE, '4002');
    assert.equal(gw.RESULT_MSG, 'APPROVAL_AMOUNT: must be a string, not a number');
  });

  test('each gateway request\'s log line carries its RESULT_CODE, never the signature or key', async () => {
    const before = t.logs.length;
    const b = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', { ...b, API_SIGN: 'a'.repeat(64) })).RESULT_CODE, '3001');
    assert.equal(rd(await t.gw('requestPayment', b)).RESULT_CODE, '0000');
    const lines = t.logs.slice(before).map((l) => JSON.parse(l) as { msg: string; reqId?: string; req?: { method: string; url: string; id: string }; res?: { statusCode: number; resultCode?: string }; responseTime?: number });
    // One line per request, written when it is answered.
    assert.deepEqual(lines.map((l) => l.msg), ['request completed', 'request completed']);
    assert.deepEqual(lines.map((l) => l.res), [{ statusCode: 200, resultCode: '3001' }, { statusCode: 200, resultCode: '0000' }]);
    for (const l of lines) {
      assert.equal(l.req?.method, 'POST');
      assert.equal(l.req?.url, '/api/requestPayment');
      assert.equal(l.reqId, l.req?.id);
      assert.ok(typeof l.responseTime === 'number' && l.responseTime >= 0, 'responseTime in ms');
    }
    assert.notEqual(lines[0]!.reqId, lines[1]!.reqId);
    const text = t.logs.slice(before).join('');
    assert.ok(!text.includes(t.apiKey), 'no API key');
    assert.ok(!text.includes('a'.repeat(64)), 'no API_SIGN');
  });

  test('signed calls keep working while the sandbox clock moves 2 hours forward and back with reset', async () => {
    const b = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', b)).RESULT_CODE, '0000');
    const moved = await t.post('/sandbox/clock', { advanceSeconds: 7200 });
    assert.equal(moved.status, 200);
    assert.ok(moved.body.offsetSeconds >= 7200);
    // TRANS_AT is the client's own clock: still fresh.
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).RESULT_CODE, '0000');
    assert.equal(rd(await t.gw('requestPayment', paymentBody())).RESULT_CODE, '0000');
    // A TRANS_AT on the moved clock is 2 hours off real time: stale.
    const { kstCompact } = await import('../../src/platform/kst.js');
    const late = rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO, TRANS_AT: kstCompact(t.app.sunap.clock.nowMs()) }));
    assert.equal(late.RESULT_CODE, '3001');
    assert.match(late.RESULT_MSG, /^TRANS_AT: /);
    const reset = await t.post('/sandbox/clock', { reset: true });
    assert.equal(reset.status, 200);
    assert.equal(reset.body.offsetSeconds, 0);
    assert.ok(Math.abs(Date.parse(reset.body.now) - Date.now()) < 5000, 'now is real time again');
    assert.deepEqual(Object.keys(reset.body).sort(), ['now', 'offsetSeconds']);
    assert.equal((await t.get('/sandbox/clock')).body.offsetSeconds, 0);
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).RESULT_CODE, '0000');
  });

  test('the clock stays within 400 days of real time: beyond, 400 / -20 naming advanceSeconds', async () => {
    await t.post('/sandbox/clock', { reset: true });
    const full = await t.post('/sandbox/clock', { advanceSeconds: MAX_OFFSET_SECONDS });
    assert.equal(full.status, 200, full.text);
    assert.equal(full.body.offsetSeconds, 400 * 86400);
    const beyond = await t.post('/sandbox/clock', { advanceSeconds: 1 });
    assert.equal(beyond.status, 400);
    assert.equal(beyond.body.result_code, -20);
    assert.match(beyond.body.result_msg, /^advanceSeconds: /);
    assert.equal((await t.get('/sandbox/clock')).body.offsetSeconds, MAX_OFFSET_SECONDS, 'a refused advance changes nothing');
    // reset, then advance, in one call.
    const both = await t.post('/sandbox/clock', { reset: true, advanceSeconds: 60 });
    assert.equal(both.body.offsetSeconds, 60);
    const tooFar = await t.post('/sandbox/clock', { advanceSeconds: MAX_OFFSET_SECONDS });
    assert.equal(tooFar.status, 400);
    assert.match(tooFar.body.result_msg, /^advanceSeconds: /);
    const nothing = await t.post('/sandbox/clock', {});
    assert.equal(nothing.status, 400);
    assert.match(nothing.body.result_msg, /^advanceSeconds: is required/);
    const back = await t.post('/sandbox/clock', { advanceSeconds: -1 });
    assert.equal(back.status, 400);
    assert.match(back.body.result_msg, /^advanceSeconds: /);
    assert.equal((await t.post('/sandbox/clock', { reset: true })).body.offsetSeconds, 0);
  });
});
