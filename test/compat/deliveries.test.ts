import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { billBody, newAccount, waitSent } from '../invoicing/support.js';
import { withFakes, withLiveApp } from '../live/support.js';
import { PlainReceiver, type Delivery } from './support.js';

const SECRET = 'whsec_0123456789abcdef';

/** A receiver written from the SDK README: it reads only the X-CariPay-* names. */
function verifyCariPay(d: Delivery, secret: string, nowSec = Math.floor(Date.now() / 1000)): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(d.headers['x-caripay-signature'] ?? ''));
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.`).update(d.raw).digest();
  const got = Buffer.from(m[2]!, 'hex');
  return got.length === expected.length && timingSafeEqual(got, expected) && Math.abs(nowSec - Number(m[1])) <= 300;
}

const rd = (r: { body: any }) => r.body.result_data;

/**
 * The callback and the webhook as the public clients' receivers expect them, sent over plain
 * http to this machine, as a developer runs a receiver against the sandbox (decisions §9).
 */
forEachEngine('compat: callback and webhooks to a local http receiver', (engine) => {
  const t = withApp(engine);
  const rx = new PlainReceiver();
  before(async () => {
    await rx.start('localhost');
  });
  after(async () => rx.close());

  test('CONFIRM_URL http://localhost is accepted in the sandbox; the callback arrives with txId', async () => {
    const body = paymentBody({ CONFIRM_URL: `${rx.url}/confirm`, TEMP_VALUE: 'order-1' });
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    const n = rx.received.length;
    assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
    await rx.waitFor(n + 1);
    const cb = rx.received[n]!;
    assert.equal(cb.url, '/confirm');
    assert.equal(cb.json.txId, `${t.platformCode}_${t.storeCode}_${body.TRANS_SEQNO}`);
    assert.equal(cb.json.TRANS_SEQNO, body.TRANS_SEQNO);
    assert.equal(cb.json.RESULT_CODE, '0000');
    assert.equal(cb.json.TEMP_VALUE, 'order-1');
  });

  test('loopback http targets: localhost, 127.0.0.0/8 and [::1] pass; any other http host is refused (4002)', async () => {
    for (const url of ['http://localhost:9/cb', 'http://127.0.0.1:9/cb', 'http://127.1.2.3/cb', 'http://[::1]:9/cb', 'https://merchant.example/cb']) {
      const r = rd(await t.gw('requestPayment', paymentBody({ CONFIRM_URL: url, RETURN_URL: url.replace('/cb', '/done') })));
      assert.equal(r.RESULT_CODE, '0000', `${url}: ${r.RESULT_MSG}`);
    }
    for (const [field, url] of [['CONFIRM_URL', 'http://merchant.example/cb'], ['CONFIRM_URL', 'http://10.0.0.5/cb'], ['CONFIRM_URL', 'http://128.0.0.1/cb'], ['RETURN_URL', 'http://shop.example/done']] as const) {
      const r = rd(await t.gw('requestPayment', paymentBody({ [field]: url })));
      assert.equal(r.RESULT_CODE, '4002', url);
      assert.match(r.RESULT_MSG, new RegExp(`^${field}: must start with https://`));
    }
    // Sunap's own return page (the console's recharge) follows SUNAP_PUBLIC_URL, whatever its host.
    const store = (await t.app.sunap.gateway.findStore(t.storeCode))!;
    const own = { amount: 1000, mobileNo: '01012345678', payUserName: '상점', requestReason: '충전', returnUrl: 'http://sunap.internal:8080/console/points' };
    await assert.rejects(t.app.sunap.gateway.createPayment(store, { ...own, transSeqNo: `OWN-${Date.now()}-a` }), /RETURN_URL: must start with https:\/\//);
    assert.ok(await t.app.sunap.gateway.createPayment(store, { ...own, transSeqNo: `OWN-${Date.now()}-b`, returnUrlIsOurs: true }));
    // The length limit stays: 100 characters (5001).
    const long = `http://localhost/${'a'.repeat(100 - 'http://localhost/'.length + 1)}`;
    assert.equal(rd(await t.gw('requestPayment', paymentBody({ CONFIRM_URL: long }))).RESULT_CODE, '5001');
  });

  test('webhookUrl http://localhost: the delivery carries X-CariPay-Event/Delivery/Signature, equal to X-Service-*, and verifies', async () => {
    const a = await newAccount(t, { points: 1000 });
    const created = await t.post('/app/v1/sales/bill', billBody({ webhookUrl: `${rx.url}/hooks`, webhookSecret: SECRET }), a.h);
    assert.equal(created.body.result_code, 0, created.text);
    const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
    const d = await waitSent(t, a, id);
    const n = rx.received.length;
    assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
    await rx.waitFor(n + 1);
    const w = rx.received[n]!;
    assert.equal(w.url, '/hooks');
    assert.equal(w.headers['x-caripay-event'], 'bill.paid');
    assert.match(String(w.headers['x-caripay-delivery']), /^\d+$/);
    for (const h of ['event', 'delivery', 'signature']) assert.equal(w.headers[`x-caripay-${h}`], w.headers[`x-service-${h}`], h);
    assert.ok(verifyCariPay(w, SECRET), 'a by-the-book receiver verifies the X-CariPay-Signature');
    assert.equal(verifyCariPay(w, `${SECRET}x`), false, 'another secret does not verify');
    assert.equal(w.json.event, 'bill.paid');
    assert.equal(w.json.billId, id);
  });

  test('webhookUrl: http to any other host is refused (-20)', async () => {
    const a = await newAccount(t, { points: 1000 });
    const r = await t.post('/app/v1/sales/bill', billBody({ webhookUrl: 'http://partner.example/hooks' }), a.h);
    assert.equal(r.status, 400);
    assert.equal(r.body.result_code, -20);
    assert.match(r.body.result_msg, /^webhookUrl: must start with https:\/\//);
  });
});

forEachEngine('compat: [::1] receiver', (engine) => {
  const t = withApp(engine);
  const rx = new PlainReceiver();
  before(async () => {
    await rx.start('[::1]');
  });
  after(async () => rx.close());

  test('a callback to http://[::1] arrives', async () => {
    const body = paymentBody({ CONFIRM_URL: `${rx.url}/v6` });
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
    await rx.waitFor(1);
    assert.equal(rx.received[0]!.json.txId, `${t.platformCode}_${t.storeCode}_${body.TRANS_SEQNO}`);
  });
});

forEachEngine('compat: live mode keeps https only', (engine) => {
  describe('live', () => {
    const fakes = withFakes();
    const t = withLiveApp(engine, fakes);

    test('http://localhost is refused for CONFIRM_URL, RETURN_URL (4002) and webhookUrl (-20); https passes', async () => {
      for (const field of ['CONFIRM_URL', 'RETURN_URL']) {
        const r = rd(await t.gw('requestPayment', paymentBody({ [field]: 'http://localhost:8081/cb' })));
        assert.equal(r.RESULT_CODE, '4002', field);
        assert.match(r.RESULT_MSG, new RegExp(`^${field}: must start with https://$`));
      }
      assert.equal(rd(await t.gw('requestPayment', paymentBody({ CONFIRM_URL: 'https://merchant.example/cb', RETURN_URL: 'https://merchant.example/done' }))).RESULT_CODE, '0000');
      const a = await newAccount(t, { points: 1000 });
      const r = await t.post('/app/v1/sales/bill', billBody({ webhookUrl: 'http://localhost:8081/hooks' }), a.h);
      assert.equal(r.body.result_code, -20);
      assert.match(r.body.result_msg, /^webhookUrl: must start with https:\/\/$/);
      assert.equal((await t.post('/sandbox/clock', { reset: true })).status, 404, 'no sandbox routes in live mode');
    });
  });
});
