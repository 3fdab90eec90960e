/**
 * Live mode against the Toss Payments fake (docs/going-live.md): the whole card flow through
 * the payment page, and every way an approval or a cancel can go wrong, each settled without a
 * lost or double charge.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { LIVE_TIMEOUT_MS, payOnPage, withFakes, withLiveApp } from './support.js';

forEachEngine('live card payments through Toss', (engine) => {
  const f = withFakes();
  let rx: Receiver;
  before(async () => {
    rx = await new Receiver().start();
  });
  after(async () => rx.close());
  // The merchant's CONFIRM_URL is on this machine in the test.
  const t = withLiveApp(engine, f, () => ({ SUNAP_ALLOW_PRIVATE_TARGETS: 'true' }));

  async function newPayment(over: Record<string, unknown> = {}) {
    const body = paymentBody({ CONFIRM_URL: `${rx.url}/confirm`, ...over });
    const r = await t.gw('requestPayment', body);
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    const payment = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
    return { body, payment, redirect: r.body.result_data.REDIRECT_URL as string };
  }
  const attempts = (paymentId: string) => t.app.sunap.database.db.selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).orderBy('created_at').execute();
  const tossCalls = (path: RegExp) => f.toss.requests.filter((r) => path.test(r.path));

  test('page → approve → callback → searchPayment → cancel, with the Toss paymentKey kept for the cancel', async () => {
    const { body, payment, redirect } = await newPayment();
    const paid = await payOnPage(t, redirect, '4242424242424242');
    assert.equal(paid.status, 303, paid.text);
    const [attempt] = (await attempts(payment.id)).filter((a) => a.status === 'APPROVED');
    assert.ok(attempt, 'one approved attempt');
    const charge = f.toss.payments.get(attempt.id)!;
    assert.ok(charge, 'the attempt id is the orderId at Toss');
    const approval = tossCalls(/key-in/).find((r) => r.json.orderId === attempt.id)!;
    assert.equal(approval.headers['idempotency-key'], attempt.id, 'and the Idempotency-Key');
    assert.equal(approval.json.orderName, body.REQUEST_REASON);
    assert.equal(approval.json.customerIdentityNumber, '900101');

    const after1 = (await t.app.sunap.gateway.findById(payment.id))!;
    assert.equal(after1.state, 'APPROVE_COMPLETE');
    assert.equal(after1.processor_ref, charge.paymentKey);
    assert.equal(after1.approval_number, charge.approveNo);
    assert.equal(after1.issuer_name, '신한카드', 'issuer code 41 is 신한카드');
    assert.equal(after1.card_last4, '4242');

    await eventually(async () => rx.received.find((x) => x.json?.TRANS_SEQNO === body.TRANS_SEQNO), 'the CONFIRM_URL callback');
    const cb = rx.received.find((x) => x.json?.TRANS_SEQNO === body.TRANS_SEQNO)!;
    assert.equal(cb.json.RESULT_CODE, '0000');
    assert.equal(cb.json.approvalNumber, charge.approveNo);
    assert.equal(cb.json.cardCompany, '신한카드');

    const search = await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO });
    assert.equal(search.body.result_data.APPROVE_STATUS, 'APPROVE_COMPLETE');
    assert.equal(search.body.result_data.APPROVAL_NUMBER, charge.approveNo);

    const cancel = await t.gw('requestPaymentCancel', { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: body.APPROVAL_AMOUNT, MOBILE_NO: body.MOBILE_NO });
    assert.equal(cancel.body.result_data.RESULT_CODE, '0000', JSON.stringify(cancel.body));
    assert.equal(charge.status, 'CANCELED', 'cancelled at Toss');
    const cancels = tossCalls(new RegExp(`^/v1/payments/${charge.paymentKey}/cancel$`));
    assert.equal(cancels.length, 1);
    assert.equal(cancels[0]!.headers['idempotency-key'], `cancel:${payment.id}`);
    const again = await t.gw('requestPaymentCancel', { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: body.APPROVAL_AMOUNT, MOBILE_NO: body.MOBILE_NO });
    assert.equal(again.body.result_data.RESULT_CODE, '0000', 'a second CANCEL answers as done');
    assert.equal(tossCalls(new RegExp(`^/v1/payments/${charge.paymentKey}/cancel$`)).length, 1, 'and refunds nothing twice');
  });

  test('a decline shows its Korean reason on the page; the payment waits and another card pays it once', async () => {
    const { payment, redirect } = await newPayment();
    const declined = await payOnPage(t, redirect, '4000000000009995');
    assert.equal(declined.status, 200);
    assert.match(declined.text, /한도 초과 또는 잔액 부족으로 결제되지 않았습니다/);
    assert.equal((await t.app.sunap.gateway.findById(payment.id))!.state, 'STORE_REQUEST');
    const expired = await payOnPage(t, redirect, '4000000000000069');
    assert.match(expired.text, /카드 유효기간을 다시 확인해 주세요/);
    const ok = await payOnPage(t, redirect, '5555555555554444');
    assert.equal(ok.status, 303);
    const p = (await t.app.sunap.gateway.findById(payment.id))!;
    assert.equal(p.state, 'APPROVE_COMPLETE');
    assert.equal(p.issuer_name, 'KB국민카드');
    const tried = await attempts(payment.id);
    assert.deepEqual(tried.map((a) => a.status), ['DECLINED', 'DECLINED', 'APPROVED']);
    assert.deepEqual(tried.map((a) => f.toss.payments.has(a.id)), [false, false, true], 'only the approval is a charge');
  });

  test('a processor error is no charge: the page says so and the customer may try again', async () => {
    const { payment, redirect } = await newPayment();
    const r = await payOnPage(t, redirect, '4000000000000119');
    assert.match(r.text, /카드사 처리 중 일시적인 오류가 발생했습니다/);
    assert.deepEqual((await attempts(payment.id)).map((a) => a.status), ['ERROR']);
  });

  test('an approval whose answer was lost (time-out) is settled by a look-up: approved, exactly one charge', async () => {
    const { payment, redirect } = await newPayment();
    const started = Date.now();
    const r = await payOnPage(t, redirect, '4000000000003220');
    assert.equal(r.status, 303, r.text);
    assert.ok(Date.now() - started >= LIVE_TIMEOUT_MS, 'the approval ran into its time limit');
    const [attempt] = await attempts(payment.id);
    assert.equal(attempt!.status, 'APPROVED');
    assert.equal(f.toss.approvals.get(attempt!.id), 1, 'one charge at Toss');
    assert.equal(tossCalls(/key-in/).filter((x) => x.json?.orderId === attempt!.id).length, 1, 'the approval was not sent again');
    assert.equal(tossCalls(new RegExp(`^/v1/payments/orders/${attempt!.id}$`)).length, 1, 'one look-up settled it');
    assert.equal((await t.app.sunap.gateway.findById(payment.id))!.state, 'APPROVE_COMPLETE');
  });

  test('an approval answered 500 after Toss acted is settled the same way', async () => {
    const { payment, redirect } = await newPayment();
    assert.equal((await payOnPage(t, redirect, '4000000000005126')).status, 303);
    const [attempt] = await attempts(payment.id);
    assert.equal(attempt!.status, 'APPROVED');
    assert.equal(f.toss.approvals.get(attempt!.id), 1);
  });

  test('when the look-up fails too, the page says the result is being checked, and the reconcile settles it later: one charge', async () => {
    const { payment, redirect } = await newPayment();
    f.toss.failLookups = 1;
    const r = await payOnPage(t, redirect, '4000000000003220');
    assert.equal(r.status, 202);
    assert.match(r.text, /결제 결과를 확인하고 있습니다/);
    const [open] = await attempts(payment.id);
    assert.equal(open!.status, 'OPEN', 'the attempt stays open for the reconcile');
    assert.equal((await t.app.sunap.gateway.reconcile(payment.id)), false, 'not before it is stale');
    await t.app.sunap.clock.advance(Math.ceil(t.app.sunap.gateway.staleAttemptMs / 1000) + 1);
    assert.equal(await t.app.sunap.gateway.reconcile(payment.id), true);
    const p = (await t.app.sunap.gateway.findById(payment.id))!;
    assert.equal(p.state, 'APPROVE_COMPLETE');
    assert.equal(p.processor_ref, f.toss.payments.get(open!.id)!.paymentKey);
    assert.equal(f.toss.approvals.get(open!.id), 1);
  });

  test('an approval Toss did not know at the reconcile gives the payment back (UNKNOWN, looked up again later: test/live/late-charges.test.ts), and the customer pays afterwards', async () => {
    const { payment, redirect } = await newPayment();
    const r = await payOnPage(t, redirect, '4000000000001000');
    assert.equal(r.status, 202);
    await t.app.sunap.clock.advance(Math.ceil(t.app.sunap.gateway.staleAttemptMs / 1000) + 1);
    assert.equal(await t.app.sunap.gateway.reconcile(payment.id), true);
    assert.deepEqual((await attempts(payment.id)).map((a) => a.status), ['UNKNOWN']);
    assert.equal((await payOnPage(t, redirect, '4242424242424242')).status, 303);
    assert.equal((await t.app.sunap.gateway.findById(payment.id))!.state, 'APPROVE_COMPLETE');
  });

  test('a cancel Toss refuses is CANCEL_FAIL (4004), and nothing is cancelled', async () => {
    const { body, redirect, payment } = await newPayment();
    assert.equal((await payOnPage(t, redirect, '4000000000000259')).status, 303);
    const r = await t.gw('requestPaymentCancel', { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: body.APPROVAL_AMOUNT, MOBILE_NO: body.MOBILE_NO });
    assert.equal(r.body.result_data.RESULT_CODE, '4004');
    assert.match(r.body.result_data.RESULT_MSG, /NOT_CANCELABLE_PAYMENT/);
    assert.equal((await t.app.sunap.gateway.findById(payment.id))!.state, 'CANCEL_FAIL');
  });
});

forEachEngine('live card payments with a wrong Toss key', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f, () => ({ SUNAP_TOSS_SECRET_KEY: 'test_sk_wrongKey000000000000000' }));

  test('the payment page refuses with a clear message, nothing is charged, and the log names the variable (not the key)', async () => {
    const body = paymentBody();
    const r = await t.gw('requestPayment', body);
    const paid = await payOnPage(t, r.body.result_data.REDIRECT_URL, '4242424242424242');
    assert.match(paid.text, /결제 설정 문제로 지금은 결제할 수 없습니다/);
    assert.equal(f.toss.payments.size, 0);
    const logs = t.logs.join('');
    assert.match(logs, /secret key was refused \(SUNAP_TOSS_SECRET_KEY\)/);
    assert.doesNotMatch(logs, /test_sk_wrongKey/);
  });
});

forEachEngine('the sandbox pay call on Toss test keys', (engine) => {
  const f = withFakes();
  // Sandbox mode (its routes exist) with the card processor pointed at Toss's test keys (docs/going-live.md).
  const t = withLiveApp(engine, f, () => ({ SUNAP_MODE: 'sandbox', SUNAP_PUBLIC_URL: 'http://127.0.0.1' }));

  test('without a card the call pays with the documented default card: its number, expiry 12/99, birth date 900101, password 00', async () => {
    const body = paymentBody();
    assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
    const r = await t.post(`/sandbox/payments/${body.TRANS_SEQNO as string}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode });
    assert.equal(r.body.approved, true, JSON.stringify(r.body));
    const sent = f.toss.requests.filter((q) => q.path === '/v1/payments/key-in').map((q) => q.json);
    assert.equal(sent.length, 1);
    const { cardNumber, cardExpirationMonth, cardExpirationYear, customerIdentityNumber, cardPassword } = sent[0];
    assert.deepEqual({ cardNumber, cardExpirationMonth, cardExpirationYear, customerIdentityNumber, cardPassword },
      { cardNumber: '4242424242424242', cardExpirationMonth: '12', cardExpirationYear: '99', customerIdentityNumber: '900101', cardPassword: '00' });
  });
});
