import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/db.js';
import { jobSettled } from '../helpers/jobs.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';

const rd = (r: { body: any }) => r.body.result_data;


for (const engine of engines) {
  describe(`payment flow with callbacks [${engine}]`, () => {
    let t: TestApp;
    let rx: Receiver;
    before(async () => {
      rx = await new Receiver().start();
      // The card network's own records are read here: the store takes cards by Sunap's card form.
      t = await startApp(engine, {}, { keyIn: true });
    });
    after(async () => {
      await t?.close();
      await rx?.close();
    });

    const attempts = (paymentId: string) => t.app.sunap.database.db.selectFrom('outbound_attempts').selectAll()
      .where('target', '=', 'CALLBACK').where('ref_id', '=', paymentId).orderBy('id').execute();

    test('create → pay → callback over HTTPS with every field → search → cancel → cancel again', async () => {
      const body = paymentBody({ CONFIRM_URL: `${rx.url}/confirm`, TEMP_VALUE: 'order-77', orderType: 'SHOP', APPROVAL_AMOUNT: '64000', PAY_USER_NAME: '김고객',
        ITEMS: [{ name: '피아노 교재', unitPrice: 32000, qty: 2 }] });
      const before = rx.received.length;
      const created = await t.gw('requestPayment', body);
      assert.equal(rd(created).RESULT_CODE, '0000');
      const page = await t.get(new URL(rd(created).REDIRECT_URL).pathname + new URL(rd(created).REDIRECT_URL).search);
      assert.equal(page.status, 200, 'the REDIRECT_URL answers');
      const paid = await t.pay(body.TRANS_SEQNO as string, '5555555555554444');
      assert.equal(paid.approved, true);
      await rx.waitFor(before + 1);
      const cb = rx.received[before]!;
      assert.equal(cb.method, 'POST');
      assert.equal(cb.url, '/confirm');
      assert.match(String(cb.headers['content-type']), /application\/json/);
      const search = rd(await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO }));
      assert.equal(search.APPROVE_STATUS, 'APPROVE_COMPLETE');
      assert.deepEqual(cb.json, {
        RESULT_CODE: '0000', RESULT_MSG: '정상 승인되었습니다', TRANS_SEQNO: body.TRANS_SEQNO, MOBILE_NO: '01012345678',
        APPROVAL_AMOUNT: '64000', TEMP_VALUE: 'order-77', ORDER_TYPE: 'SHOP', approvalNumber: search.APPROVAL_NUMBER,
        approvalDatetime: search.APPROVAL_DATETIME, cardCompany: 'KB국민카드', installment: '00', payerName: '김고객',
        txId: `${t.platformCode}_${t.storeCode}_${body.TRANS_SEQNO}`, methodName: '신용카드',
      });
      const cancel = { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '64000', MOBILE_NO: '01012345678' };
      const c = rd(await t.gw('requestPaymentCancel', cancel));
      assert.equal(c.RESULT_CODE, '0000');
      assert.equal(c.TEMP_VALUE, 'order-77');
      assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).APPROVE_STATUS, 'CANCEL_COMPLETE');
      assert.equal(rd(await t.gw('requestPaymentCancel', cancel)).RESULT_CODE, '0000');
      const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
      // The attempt is recorded after the receiver answered, so it may land a moment after the callback did.
      const recorded = await eventually(async () => {
        const r = await attempts(p.id);
        return r.length > 0 && r[0]!.status_code !== null ? r : null;
      }, 'the callback attempt recorded');
      assert.equal(recorded.length, 1);
      assert.equal(recorded[0]!.status_code, 200);
      assert.equal(recorded[0]!.error, null);
    });

    test('callback retry: a 500 is retried after 10 s of service clock, and every attempt is recorded', async () => {
      const body = paymentBody({ CONFIRM_URL: `${rx.url}/retry` });
      assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
      const n = rx.received.length;
      rx.script.push(500, 302);
      assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
      await rx.waitFor(n + 1);
      const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
      await eventually(async () => (await attempts(p.id)).length === 1, 'first attempt recorded');
      // Not yet due: nothing more arrives without the clock moving.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(rx.received.length, n + 1);
      await jobSettled(t.app.sunap.database.db, `callback:${p.id}`, 1);
      assert.equal((await t.post('/sandbox/clock', { advanceSeconds: 10 })).status, 200);
      await rx.waitFor(n + 2);
      // The 302 is a failure and is not followed.
      await eventually(async () => (await attempts(p.id)).length === 2, 'second attempt recorded');
      await jobSettled(t.app.sunap.database.db, `callback:${p.id}`, 2);
      assert.equal((await t.post('/sandbox/clock', { advanceSeconds: 60 })).status, 200);
      await rx.waitFor(n + 3);
      const rows = await eventually(async () => {
        const r = await attempts(p.id);
        return r.length === 3 ? r : null;
      }, 'third attempt recorded');
      assert.deepEqual(rows.map((r) => r.status_code), [500, 302, 200]);
      assert.deepEqual(rows.map((r) => r.attempt_no), [1, 2, 3]);
      assert.match(rows[1]!.error!, /redirect 302 not followed/);
      assert.ok(rx.received.slice(n).every((r) => r.url === '/retry'), 'the redirect target was never called');
    });

    test('RETURN_URL keeps its query and gets the five parameters', async () => {
      const { returnUrlFor } = await import('../../src/gateway/index.js');
      const body = paymentBody({ RETURN_DISPLAY_YN: 'Y', RETURN_URL: 'https://shop.example/done?order=9&x=1', TEMP_VALUE: '주문 9' });
      await t.gw('requestPayment', body);
      await t.pay(body.TRANS_SEQNO as string);
      const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
      const u = new URL(returnUrlFor(p, '0000', '정상')!);
      assert.equal(u.origin + u.pathname, 'https://shop.example/done');
      assert.deepEqual([...u.searchParams.keys()], ['order', 'x', 'RESULT_CODE', 'RESULT_MSG', 'TRANS_SEQNO', 'APPROVAL_AMOUNT', 'TEMP_VALUE']);
      assert.equal(u.searchParams.get('TEMP_VALUE'), '주문 9');
      assert.equal(u.searchParams.get('APPROVAL_AMOUNT'), '128000');
    });

    test('concurrency: 20 parallel requestPayment with one TRANS_SEQNO create exactly one payment', async () => {
      const body = paymentBody();
      const answers = await Promise.all(Array.from({ length: 20 }, () => t.gw('requestPayment', body)));
      const codes = answers.map((a) => rd(a).RESULT_CODE).sort();
      assert.deepEqual(codes, ['0000', ...Array(19).fill('4001')]);
      const rows = await t.app.sunap.database.db.selectFrom('payments').select('id').where('trans_seqno', '=', body.TRANS_SEQNO as string).execute();
      assert.equal(rows.length, 1);
    });

    test('concurrency: two simultaneous payments approve once; two simultaneous cancels refund once', async () => {
      const body = paymentBody({ CONFIRM_URL: `${rx.url}/once` });
      await t.gw('requestPayment', body);
      const [a, b] = await Promise.all([t.pay(body.TRANS_SEQNO as string), t.pay(body.TRANS_SEQNO as string)]);
      assert.deepEqual([a.approved, b.approved].sort(), [false, true]);
      const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
      const db = t.app.sunap.database.db;
      const approvals = await db.selectFrom('payment_attempts').select('status').where('payment_id', '=', p.id).where('kind', '=', 'APPROVE').execute();
      assert.equal(approvals.filter((x) => x.status === 'APPROVED').length, 1);
      const jobs = await db.selectFrom('jobs').select('id').where('unique_key', '=', `callback:${p.id}`).execute();
      assert.equal(jobs.length, 1);
      const cancel = { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: body.APPROVAL_AMOUNT, MOBILE_NO: body.MOBILE_NO };
      const both = await Promise.all([t.gw('requestPaymentCancel', cancel), t.gw('requestPaymentCancel', cancel)]);
      assert.deepEqual(both.map((x) => rd(x).RESULT_CODE), ['0000', '0000']);
      // The second cancel waited for the first and found nothing left to do.
      const cancels = await db.selectFrom('payment_attempts').select('status').where('payment_id', '=', p.id).where('kind', '=', 'CANCEL').execute();
      assert.deepEqual(cancels.map((x) => x.status).filter((s) => s !== 'SKIPPED'), ['CANCELED'], 'one card cancel');
    });

    test('declined cards leave the payment waiting; attempts are recorded; another card can pay', async () => {
      const body = paymentBody();
      await t.gw('requestPayment', body);
      for (const card of ['4000000000000002', '4000000000009995', '4000000000000119', '4111111111111111']) {
        const r = await t.pay(body.TRANS_SEQNO as string, card);
        assert.equal(r.approved, false, card);
        assert.equal(r.APPROVE_STATUS, 'STORE_REQUEST');
      }
      assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
      const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
      const rows = await t.app.sunap.database.db.selectFrom('payment_attempts').select(['status', 'card_bin', 'card_last4']).where('payment_id', '=', p.id).orderBy('created_at').execute();
      assert.deepEqual(rows.map((r) => r.status).sort(), ['APPROVED', 'DECLINED', 'DECLINED', 'DECLINED', 'ERROR']);
      assert.ok(rows.every((r) => r.card_bin!.length === 6 && r.card_last4!.length === 4));
    });
  });

  describe(`outbound guard [${engine}]`, () => {
    test('with SUNAP_ALLOW_PRIVATE_TARGETS=false a loopback CONFIRM_URL is refused and recorded', async () => {
      const rx = await new Receiver().start();
      const t = await startApp(engine, { SUNAP_ALLOW_PRIVATE_TARGETS: 'false' });
      try {
        const body = paymentBody({ CONFIRM_URL: `${rx.url}/private` });
        await t.gw('requestPayment', body);
        await t.pay(body.TRANS_SEQNO as string);
        const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
        const rows = await eventually(async () => {
          const r = await t.app.sunap.database.db.selectFrom('outbound_attempts').selectAll().where('ref_id', '=', p.id).execute();
          return r.length ? r : null;
        }, 'refused attempt');
        assert.equal(rows[0]!.status_code, null);
        assert.match(rows[0]!.error!, /private|not allowed/i);
        assert.equal(rx.received.length, 0, 'nothing reached the private address');
      } finally {
        await t.close();
        await rx.close();
      }
    });
  });
}
