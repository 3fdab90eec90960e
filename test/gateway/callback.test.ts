import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CALLBACK_JOB, callbackBody } from '../../src/gateway/callback.js';
import type { Payment } from '../../src/gateway/repository.js';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { withReceiver } from '../helpers/receiver.js';

/**
 * The CONFIRM_URL callback's job, one run at a time (the worker stays off, so each run here is
 * the only one): what it sends, when it sends nothing, and how its attempts are recorded.
 */
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('the callback job', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const rx = withReceiver();

  const db = () => t.app.sunap.database.db;
  const deps = () => ({ db: db(), http: t.app.sunap.http, clock: t.app.sunap.clock });
  const run = (paymentId: string, opts: { manual?: boolean; attempt?: number } = {}) =>
    CALLBACK_JOB.run({ paymentId, ...(opts.manual ? { manual: true } : {}) }, deps(), { jobId: newId(), attempt: opts.attempt ?? 1, final: false });
  const attempts = (paymentId: string) => db().selectFrom('outbound_attempts').select(['attempt_no', 'trigger', 'status_code'])
    .where('target', '=', 'CALLBACK').where('ref_id', '=', paymentId).orderBy('id').execute();
  const delivery = (paymentId: string) => db().selectFrom('deliveries').selectAll().where('kind', '=', 'callback').where('ref_id', '=', paymentId).executeTakeFirst();

  async function approved(path: string): Promise<Payment> {
    const body = paymentBody({ CONFIRM_URL: `${rx.url}${path}` });
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
    return (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
  }

  test('a payment that does not exist, or has no CONFIRM_URL, sends nothing and makes no delivery', async () => {
    const n = rx.received.length;
    await run(newId());
    const p = await approved('/none');
    // What the invoicing side's payments look like: no CONFIRM_URL.
    await db().deleteFrom('deliveries').where('kind', '=', 'callback').where('ref_id', '=', p.id).execute();
    await db().updateTable('payments').set({ confirm_url: null }).where('id', '=', p.id).execute();
    await run(p.id);
    assert.equal(rx.received.length, n);
    assert.equal(await delivery(p.id), undefined);
    assert.deepEqual(await attempts(p.id), []);
  });

  test('a job written before deliveries existed makes its delivery on its first run and sends it', async () => {
    const p = await approved('/old-job');
    const made = (await delivery(p.id))!;
    await db().deleteFrom('deliveries').where('id', '=', made.id).execute();
    const n = rx.received.length;
    await run(p.id);
    await rx.waitFor(n + 1);
    const d = (await delivery(p.id))!;
    assert.equal(d.status, 'delivered');
    assert.equal(rx.received[n]!.url, '/old-job');
    assert.deepEqual(rx.received[n]!.json, callbackBody(p));
  });

  test('a scheduled run of a settled delivery sends nothing; a manual one sends, as manual only on its first attempt', async () => {
    const p = await approved('/settled');
    const n = rx.received.length;
    await run(p.id);
    assert.equal(rx.received.length, n + 1);
    assert.equal((await delivery(p.id))!.status, 'delivered');
    // A scheduled job that runs again (after a crash) finds the delivery settled.
    await run(p.id, { attempt: 2 });
    assert.equal(rx.received.length, n + 1);
    // A redelivery: its first attempt is manual; if it fails, its retries are scheduled.
    rx.script.push(500);
    await assert.rejects(run(p.id, { manual: true, attempt: 1 }), /HTTP 500/);
    await run(p.id, { manual: true, attempt: 2 });
    assert.equal(rx.received.length, n + 3);
    assert.deepEqual((await attempts(p.id)).map((a) => [a.trigger, a.status_code]), [['scheduled', 200], ['manual', 500], ['scheduled', 200]]);
    assert.equal(rx.received[n + 2]!.raw.toString('utf8'), (await delivery(p.id))!.body, 'the stored bytes, sent again');
  });
});

test('callbackBody: every field of the approval, the optional ones empty when absent', () => {
  const p = {
    trans_seqno: 'ORDER-1', mobile_no: '01012345678', amount: 128000, temp_value: null, order_type: 'BILL', approval_number: null,
    approval_at: null, issuer_name: null, installment_month: null, pay_user_name: '홍길동', platform_code: 'PC1', store_code: 'SD1',
  } as unknown as Payment;
  assert.deepEqual(callbackBody(p), {
    RESULT_CODE: '0000', RESULT_MSG: '정상 승인되었습니다', TRANS_SEQNO: 'ORDER-1', MOBILE_NO: '01012345678', APPROVAL_AMOUNT: '128000',
    TEMP_VALUE: '', ORDER_TYPE: 'BILL', approvalNumber: '', approvalDatetime: '', cardCompany: '', installment: '00', payerName: '홍길동',
    txId: 'PC1_SD1_ORDER-1', methodName: '',
  });
  const full = { ...p, temp_value: 'order-9', approval_number: '48213377', approval_at: Date.UTC(2026, 10, 22, 5, 31, 10), issuer_name: '신한카드', installment_month: '03' } as Payment;
  assert.deepEqual(callbackBody(full), {
    RESULT_CODE: '0000', RESULT_MSG: '정상 승인되었습니다', TRANS_SEQNO: 'ORDER-1', MOBILE_NO: '01012345678', APPROVAL_AMOUNT: '128000',
    TEMP_VALUE: 'order-9', ORDER_TYPE: 'BILL', approvalNumber: '48213377', approvalDatetime: '20261122143110', cardCompany: '신한카드', installment: '03',
    payerName: '홍길동', txId: 'PC1_SD1_ORDER-1', methodName: '',
  });
  // Paid with no card (a transfer keeps its bank as issuer, an easy pay from its balance has none): no card company, a lump sum; the method's name.
  const transfer = { ...full, method: 'TRANSFER', method_name: '계좌이체', issuer_name: '신한은행', installment_month: null } as Payment;
  assert.deepEqual([callbackBody(transfer).cardCompany, callbackBody(transfer).installment, callbackBody(transfer).methodName], ['', '00', '계좌이체']);
  const balance = { ...full, method: 'EASY_PAY', method_name: '카카오페이', issuer_name: null, installment_month: null } as Payment;
  assert.deepEqual([callbackBody(balance).cardCompany, callbackBody(balance).installment, callbackBody(balance).methodName], ['', '00', '카카오페이']);
  const byCard = { ...full, method: 'EASY_PAY', method_name: '토스페이', issuer_name: 'KB국민카드', installment_month: '02' } as Payment;
  assert.deepEqual([callbackBody(byCard).cardCompany, callbackBody(byCard).installment, callbackBody(byCard).methodName], ['KB국민카드', '02', '토스페이']);
  const account = { ...full, method: 'VIRTUAL_ACCOUNT', method_name: '가상계좌', issuer_name: null, installment_month: null } as Payment;
  assert.deepEqual([callbackBody(account).cardCompany, callbackBody(account).installment, callbackBody(account).methodName], ['', '00', '가상계좌']);
  const card = { ...full, method: 'CARD', method_name: '신용카드' } as Payment;
  assert.deepEqual([callbackBody(card).cardCompany, callbackBody(card).installment, callbackBody(card).methodName], ['신한카드', '03', '신용카드']);
});
