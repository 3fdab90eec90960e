import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ACCOUNT_EXPIRY_JOB, WINDOW_SWEEP_MS } from '../../src/gateway/index.js';
import { kstCompact } from '../../src/platform/kst.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { docExample } from '../helpers/openapi.js';
import { Receiver, withReceiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';

/**
 * The checkout through the gateway's API and the sandbox's calls (docs/reference.md, "Payment
 * methods", "Virtual accounts", "Refunds to a bank account"): every method's wire fields, the
 * callback's methodName, a virtual account issued, deposited, expired and deleted, the refund
 * account of a cancel (4010), a lost confirm settled by a look-up, and payments that keep the
 * processor that took them.
 */
const rd = (r: { body: any }) => r.body.result_data;
const DAY_MS = 86_400_000;

test('an account\'s expiry retries after 1 min, 5 min, 30 min, 2 h and 6 h; a window nobody came back from is looked up after an hour', () => {
  assert.deepEqual(ACCOUNT_EXPIRY_JOB.backoffSeconds, [60, 300, 1800, 7200, 21600]);
  assert.equal(ACCOUNT_EXPIRY_JOB.maxAttempts, 6);
  assert.equal(WINDOW_SWEEP_MS, 3_600_000);
});

forEachEngine('checkout through the API', (engine) => {
  const rx: Receiver = withReceiver();
  const t = withApp(engine);

  const db = () => t.app.sunap.database.db;
  async function create(over: Record<string, unknown> = {}) {
    const body = paymentBody({ CONFIRM_URL: `${rx.url}/confirm`, ...over });
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    return body.TRANS_SEQNO as string;
  }
  const where = () => ({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode });
  const pay = (seq: string, over: Record<string, unknown> = {}) => t.post(`/sandbox/payments/${seq}/pay`, { ...where(), ...over });
  const deposit = (seq: string) => t.post(`/sandbox/payments/${seq}/deposit`, where());
  const search = async (seq: string) => rd(await t.gw('searchPayment', { TRANS_SEQNO: seq }));
  const cancel = (seq: string, over: Record<string, unknown> = {}) =>
    t.gw('requestPaymentCancel', { TRANS_SEQNO: seq, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678', ...over });
  const payment = (seq: string) => db().selectFrom('payments').selectAll().where('trans_seqno', '=', seq).where('store_code', '=', t.storeCode).executeTakeFirstOrThrow();
  const callbackOf = (seq: string) => eventually(async () => rx.received.find((r) => r.json?.TRANS_SEQNO === seq)?.json, `the callback of ${seq}`);
  const cardFields = (d: any) => [d.METHOD_NAME, d.ISSUER_NAME, d.ACCEPTER_NAME, d.INSTALLMENT_MONTH];
  const noAccount = (d: any) => assert.deepEqual([d.VBANK_NAME, d.VBANK_ACCOUNT, d.VBANK_HOLDER, d.VBANK_DUE], ['', '', '', null]);

  test('a card (the default): METHOD_NAME 신용카드 with the card\'s fields, recorded as the sandbox processor\'s; the callback names the method', async () => {
    const seq = await create();
    assert.deepEqual((await pay(seq, { installmentMonth: '03' })).body, { approved: true, APPROVE_STATUS: 'APPROVE_COMPLETE', message: '승인되었습니다' });
    const d = await search(seq);
    assert.deepEqual(cardFields(d), ['신용카드', '신한카드', '신한카드', '03']);
    assert.match(d.APPROVAL_NUMBER, /^\d{8}$/);
    noAccount(d);
    const p = await payment(seq);
    assert.deepEqual([p.processor, p.method, p.card_bin, p.card_last4], ['sandbox', 'CARD', '424242', '4242']);
    const cb = await callbackOf(seq);
    assert.deepEqual([cb.methodName, cb.cardCompany, cb.installment, cb.approvalNumber], ['신용카드', '신한카드', '03', d.APPROVAL_NUMBER]);
  });

  test('an easy pay paid by its card carries the card; a transfer the bank in ISSUER_NAME only; a phone nothing of a card', async () => {
    const easy = await create();
    assert.equal((await pay(easy, { method: 'EASY_PAY', easyPay: '카카오페이' })).body.approved, true);
    assert.deepEqual(cardFields(await search(easy)), ['카카오페이', '신한카드', '신한카드', '00']);
    const ecb = await callbackOf(easy);
    assert.deepEqual([ecb.methodName, ecb.cardCompany, ecb.installment], ['카카오페이', '신한카드', '00']);

    const transfer = await create();
    assert.equal((await pay(transfer, { method: 'TRANSFER' })).body.approved, true);
    const td = await search(transfer);
    assert.deepEqual([...cardFields(td), td.APPROVAL_NUMBER], ['계좌이체', '신한은행', '', '', '']);
    const tcb = await callbackOf(transfer);
    assert.deepEqual([tcb.methodName, tcb.cardCompany, tcb.installment], ['계좌이체', '', '00']);

    const phone = await create();
    assert.equal((await pay(phone, { method: 'MOBILE_PHONE' })).body.approved, true);
    assert.deepEqual(cardFields(await search(phone)), ['휴대폰', '', '', '']);
    assert.equal((await pay(await create(), { method: 'EASY_PAY' })).body.approved, true, 'EASY_PAY without a provider is 토스페이');
    const refused = await pay(await create(), { method: 'EASY_PAY', easyPay: '애플페이' });
    assert.deepEqual([refused.status, refused.body.result_msg], [400, 'easyPay: must be one of 토스페이, 카카오페이, 네이버페이, 페이코, 삼성페이']);
  });

  test('a virtual account: issued due 7 days later (the answer and searchPayment carry it), deposited with the callback, its time the approval\'s', async () => {
    const seq = await create();
    const issuedAt = t.app.sunap.clock.nowMs();
    const r = await pay(seq, { method: 'VIRTUAL_ACCOUNT' });
    assert.deepEqual(Object.keys(r.body), ['approved', 'APPROVE_STATUS', 'VBANK_NAME', 'VBANK_ACCOUNT', 'VBANK_HOLDER', 'VBANK_DUE']);
    assert.deepEqual([r.body.approved, r.body.APPROVE_STATUS, r.body.VBANK_NAME, r.body.VBANK_HOLDER], [false, 'STORE_REQUEST', '신한은행', '행복 피아노 학원']);
    assert.match(r.body.VBANK_ACCOUNT, /^\d{14}$/);
    const due = Number((await payment(seq)).vbank_due_at);
    assert.ok(due - issuedAt >= 7 * DAY_MS && due - issuedAt < 7 * DAY_MS + 5_000, `due 7 days after the issue (${due - issuedAt} ms)`);
    assert.equal(r.body.VBANK_DUE, kstCompact(due));
    const waiting = await search(seq);
    assert.deepEqual([waiting.APPROVE_STATUS, waiting.METHOD_NAME, waiting.VBANK_NAME, waiting.VBANK_ACCOUNT, waiting.VBANK_HOLDER, waiting.VBANK_DUE, waiting.APPROVAL_DATETIME],
      ['STORE_REQUEST', '가상계좌', '신한은행', r.body.VBANK_ACCOUNT, '행복 피아노 학원', r.body.VBANK_DUE, null]);
    assert.deepEqual((await pay(seq)).body, { approved: false, APPROVE_STATUS: 'STORE_REQUEST', message: '가상계좌가 발급되어 입금을 기다리는 결제입니다' }, 'no card while the account is open');
    assert.equal(rx.received.some((x) => x.json?.TRANS_SEQNO === seq), false, 'no callback for an issue');

    await t.post('/sandbox/clock', { advanceSeconds: 3600 });
    const depositedAt = t.app.sunap.clock.nowMs();
    assert.deepEqual((await deposit(seq)).body, { approved: true, APPROVE_STATUS: 'APPROVE_COMPLETE', message: '입금되었습니다' });
    const paid = await search(seq);
    assert.equal(paid.APPROVE_STATUS, 'APPROVE_COMPLETE');
    const at = Number((await payment(seq)).approval_at);
    assert.ok(at >= depositedAt && at - depositedAt < 5_000, 'APPROVAL_DATETIME is the deposit\'s time');
    assert.equal(paid.APPROVAL_DATETIME, kstCompact(at));
    assert.deepEqual([paid.VBANK_NAME, paid.VBANK_ACCOUNT], ['신한은행', r.body.VBANK_ACCOUNT], 'the account paid stays on record');
    const cb = await callbackOf(seq);
    assert.deepEqual([cb.methodName, cb.cardCompany, cb.installment, cb.approvalDatetime], ['가상계좌', '', '00', paid.APPROVAL_DATETIME]);
    const again = await deposit(seq);
    assert.deepEqual([again.status, again.body.result_code], [404, -10], 'deposited once');
    const none = await deposit(await create());
    assert.deepEqual([none.status, none.body.result_code, none.body.result_msg], [404, -10, 'TRANS_SEQNO: no open virtual account for this payment (none issued, closed, or past its due time)']);
  });

  test('past its due time the account closes by the expiry job, not a second before: the payment is payable again', async () => {
    const seq = await create();
    await pay(seq, { method: 'VIRTUAL_ACCOUNT' });
    const p = await payment(seq);
    const job = await db().selectFrom('jobs').selectAll().where('unique_key', '=', `account-expiry:${p.processor_order}`).executeTakeFirstOrThrow();
    assert.deepEqual([job.kind, Number(job.run_at), job.status], ['gateway.account-expiry', Number(p.vbank_due_at), 'PENDING']);
    const left = Math.floor((Number(p.vbank_due_at) - t.app.sunap.clock.nowMs()) / 1000);
    await t.post('/sandbox/clock', { advanceSeconds: left - 2 });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await search(seq)).VBANK_NAME, '신한은행', 'still open before its due time');
    await t.post('/sandbox/clock', { advanceSeconds: 4 });
    await eventually(async () => (await search(seq)).VBANK_ACCOUNT === '', 'the account closed');
    const d = await search(seq);
    assert.deepEqual([d.APPROVE_STATUS, d.METHOD_NAME], ['STORE_REQUEST', '']);
    noAccount(d);
    const attempt = await db().selectFrom('payment_attempts').select(['status', 'message']).where('id', '=', p.processor_order!).executeTakeFirstOrThrow();
    assert.deepEqual(attempt, { status: 'CLOSED', message: '입금 기한이 지나 가상계좌가 닫혔습니다' });
    assert.equal((await deposit(seq)).status, 404, 'a deposit after the due time finds no open account');
    assert.equal((await pay(seq)).body.approved, true, 'payable again');
  });

  test('DELETE closes the open account at the processor first, then the payment; a deposit finds nothing', async () => {
    const seq = await create();
    await pay(seq, { method: 'VIRTUAL_ACCOUNT' });
    const order = (await payment(seq)).processor_order!;
    const r = await t.gw('requestPaymentCancel', { TRANS_SEQNO: seq, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
    assert.equal(rd(r).RESULT_CODE, '0000');
    const d = await search(seq);
    assert.equal(d.APPROVE_STATUS, 'STORE_DELETE');
    noAccount(d);
    const network = await db().selectFrom('sandbox_checkouts').select('state').where('order_id', '=', order).executeTakeFirstOrThrow();
    assert.equal(network.state, 'CLOSED', 'closed at the processor');
    assert.equal((await db().selectFrom('payment_attempts').select('status').where('id', '=', order).executeTakeFirstOrThrow()).status, 'CLOSED');
    assert.equal((await deposit(seq)).status, 404);
  });

  test('CANCEL of a paid virtual account: 4010 naming the three fields without them (or with one missing), 4002 naming a bad one, then refunded to the account given', async () => {
    const seq = await create();
    await pay(seq, { method: 'VIRTUAL_ACCOUNT' });
    await deposit(seq);
    const msg4010 = 'REFUND_BANK_CODE, REFUND_ACCOUNT_NO, REFUND_HOLDER_NAME: required to cancel a payment made by virtual account; the refund goes to that bank account';
    const account = { REFUND_BANK_CODE: '088', REFUND_ACCOUNT_NO: '110-987-654321', REFUND_HOLDER_NAME: '홍길동' };
    for (const over of [{}, { ...account, REFUND_HOLDER_NAME: '' }, { REFUND_BANK_CODE: '088', REFUND_ACCOUNT_NO: '110987654321' }, { ...account, REFUND_ACCOUNT_NO: ' ' }]) {
      assert.deepEqual(rd(await cancel(seq, over)), { RESULT_CODE: '4010', RESULT_MSG: msg4010 }, JSON.stringify(over));
    }
    const bad: [Record<string, string>, string][] = [
      [{ REFUND_BANK_CODE: '999' }, 'REFUND_BANK_CODE: must be a bank\'s standard three-digit code, such as 004 (KB국민은행) or 088 (신한은행)'],
      [{ REFUND_BANK_CODE: '88' }, 'REFUND_BANK_CODE: must be a bank\'s standard three-digit code, such as 004 (KB국민은행) or 088 (신한은행)'],
      [{ REFUND_ACCOUNT_NO: '12345' }, 'REFUND_ACCOUNT_NO: must be 6 to 20 digits (dashes allowed)'],
      [{ REFUND_ACCOUNT_NO: '1'.repeat(21) }, 'REFUND_ACCOUNT_NO: must be 6 to 20 digits (dashes allowed)'],
      [{ REFUND_ACCOUNT_NO: '110-98x-654321' }, 'REFUND_ACCOUNT_NO: must be 6 to 20 digits (dashes allowed)'],
      [{ REFUND_HOLDER_NAME: '가'.repeat(31) }, 'REFUND_HOLDER_NAME: must be 1 to 30 characters'],
    ];
    for (const [over, message] of bad) assert.deepEqual(rd(await cancel(seq, { ...account, ...over })), { RESULT_CODE: '4002', RESULT_MSG: message }, JSON.stringify(over));
    assert.equal((await payment(seq)).state, 'APPROVE_COMPLETE', 'nothing changed');
    const done = await cancel(seq, { ...account, REFUND_ACCOUNT_NO: '123456', REFUND_HOLDER_NAME: '가'.repeat(30) });
    assert.equal(rd(done).RESULT_CODE, '0000', 'six digits and thirty characters are within the limits');
    const p = await payment(seq);
    assert.equal(p.state, 'CANCEL_COMPLETE');
    const order = await db().selectFrom('sandbox_checkouts').select(['state', 'detail']).where('order_id', '=', p.processor_order!).executeTakeFirstOrThrow();
    assert.deepEqual([order.state, JSON.parse(order.detail).refunds, JSON.parse(order.detail).refundBank], ['CANCELED', 1, '088']);
    const attempt = await db().selectFrom('payment_attempts').select(['status', 'refund_sealed']).where('payment_id', '=', p.id).where('kind', '=', 'CANCEL').executeTakeFirstOrThrow();
    assert.deepEqual(attempt, { status: 'CANCELED', refund_sealed: null }, 'the refund account is gone with the attempt');
    assert.deepEqual(rd(await cancel(seq)).RESULT_CODE, '0000', 'a cancelled payment answers as done, without the account');
  });

  test('a refund account goes nowhere but the processor: not in the database, not in the logs', async () => {
    const seq = await create();
    await pay(seq, { method: 'VIRTUAL_ACCOUNT' });
    await deposit(seq);
    const accountNo = '3021987654302119';
    assert.equal(rd(await cancel(seq, { REFUND_BANK_CODE: '004', REFUND_ACCOUNT_NO: accountNo, REFUND_HOLDER_NAME: '김환불' })).RESULT_CODE, '0000');
    assert.ok(!t.logs.join('').includes(accountNo), 'not in a log line');
    if (engine === 'sqlite') {
      const file = t.databaseUrl.slice('sqlite:'.length);
      for (const f of [file, `${file}-wal`]) {
        try {
          assert.ok(!readFileSync(f).includes(Buffer.from(accountNo)), `not in ${f}`);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
    }
    const rows = JSON.stringify(await db().selectFrom('payment_attempts').selectAll().execute()) + JSON.stringify(await db().selectFrom('sandbox_checkouts').selectAll().execute());
    assert.ok(!rows.includes(accountNo) && !rows.includes('김환불'));
  });

  test('other methods ignore the refund fields, whatever they hold', async () => {
    const seq = await create();
    await pay(seq);
    assert.equal(rd(await cancel(seq, { REFUND_BANK_CODE: 'zz', REFUND_ACCOUNT_NO: 'x', REFUND_HOLDER_NAME: '' })).RESULT_CODE, '0000');
  });

  test('a confirm whose answer was lost: the attempt stays open, the reconcile finds the charge, one approval and one callback', async () => {
    const seq = await create();
    const r = await pay(seq, { cardNumber: '4000000000000127' });
    assert.deepEqual(r.body, { approved: false, APPROVE_STATUS: 'STORE_REQUEST', message: '결제사 응답이 늦어 결제 결과를 확인하고 있습니다' });
    const p = await payment(seq);
    const open = await db().selectFrom('payment_attempts').selectAll().where('payment_id', '=', p.id).where('status', '=', 'OPEN').executeTakeFirstOrThrow();
    assert.equal(open.kind, 'CHECKOUT');
    assert.deepEqual((await pay(seq)).body.approved, false, 'another payment waits for the open one and does not charge');
    assert.equal(await t.app.sunap.gateway.reconcileAll() >= 0, true);
    assert.equal((await payment(seq)).state, 'STORE_REQUEST', 'not settled before it is stale');
    await t.app.sunap.clock.advance(Math.ceil(t.app.sunap.gateway.staleAttemptMs / 1000));
    await t.app.sunap.gateway.reconcileAll();
    const after = await payment(seq);
    assert.deepEqual([after.state, after.processor_order, after.card_last4], ['APPROVE_COMPLETE', open.id, '0127']);
    const charged = await db().selectFrom('sandbox_checkouts').select(['order_id', 'state']).where('state', '=', 'DONE')
      .where('order_id', 'in', (await db().selectFrom('payment_attempts').select('id').where('payment_id', '=', p.id).execute()).map((a) => a.id)).execute();
    assert.deepEqual(charged.map((c) => c.order_id), [open.id], 'one charge');
    await callbackOf(seq);
    assert.equal(rx.received.filter((x) => x.json?.TRANS_SEQNO === seq).length, 1);
  });

  test('a window nobody came back from: left alone for an hour, then looked up and closed (nothing was paid)', async () => {
    const seq = await create();
    const p = await payment(seq);
    const begun = await t.app.sunap.gateway.beginCheckout(p.id, 'CARD');
    assert.equal(begun.outcome, 'WINDOW');
    const orderId = (begun as { orderId: string }).orderId;
    const status = async () => (await db().selectFrom('payment_attempts').select(['status', 'message']).where('id', '=', orderId).executeTakeFirstOrThrow());
    await t.app.sunap.clock.advance(3599);
    await t.app.sunap.gateway.reconcileAll();
    assert.equal((await status()).status, 'WINDOW', 'under an hour: left alone');
    await t.app.sunap.clock.advance(2);
    await t.app.sunap.gateway.reconcileAll();
    assert.deepEqual(await status(), { status: 'ABANDONED', message: '결제창에서 돌아오지 않아 결제하지 않았습니다' });
    assert.equal((await payment(seq)).state, 'STORE_REQUEST');
  });

  test('payments keep the processor that took them: a cancel after the store\'s settings changed goes to it', async () => {
    const code = await t.addStore({ keyIn: true });
    const keyed = await create({ STORE_CODE: code });
    assert.equal((await t.pay(keyed, undefined, code)).approved, true);
    await t.setWay(code, 'checkout');
    const windowed = await create({ STORE_CODE: code });
    assert.equal((await t.pay(windowed, undefined, code)).approved, true);
    // Now the store moves to Toss, which this build cannot take payments with: the old payments still cancel.
    await db().updateTable('store_processors').set({ processor: 'toss' }).where('store_code', '=', code).execute();
    const byCode = (seq: string) => db().selectFrom('payments').select(['processor', 'state']).where('trans_seqno', '=', seq).where('store_code', '=', code).executeTakeFirstOrThrow();
    assert.deepEqual(await byCode(keyed), { processor: 'sandbox-keyin', state: 'APPROVE_COMPLETE' });
    assert.deepEqual(await byCode(windowed), { processor: 'sandbox', state: 'APPROVE_COMPLETE' });
    for (const seq of [keyed, windowed]) assert.equal(rd(await cancel(seq, { STORE_CODE: code })).RESULT_CODE, '0000', seq);
    assert.deepEqual((await byCode(windowed)).state, 'CANCEL_COMPLETE');
    const keyCancel = await db().selectFrom('sandbox_card_charges').select('idempotency_key').where('idempotency_key', 'like', 'cancel:%').execute();
    assert.ok(keyCancel.length >= 1, 'the key-in payment was refunded by the card network');
    // A new payment of the store goes to its processor now: Toss's window, which this build does not have.
    const fresh = await create({ STORE_CODE: code });
    const r = await t.post(`/sandbox/payments/${fresh}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: code, method: 'TRANSFER' });
    assert.equal(r.body.approved, true, 'the sandbox pay call still plays the sandbox\'s window (it plays the customer)');
    assert.equal((await byCode(fresh)).processor, 'sandbox');
  });

  test('/docs documents the methods, the refund account, the VBANK fields, the sandbox\'s deposit and the processor events, with examples', async () => {
    const doc = (await t.get('/docs/json')).body;
    const pay = doc.paths['/sandbox/payments/{TRANS_SEQNO}/pay'].post;
    const props = pay.requestBody.content['application/json'].schema.properties;
    assert.deepEqual(props.method.anyOf.map((x: { const?: string; enum?: string[] }) => x.const ?? x.enum?.[0]), ['CARD', 'EASY_PAY', 'TRANSFER', 'VIRTUAL_ACCOUNT', 'MOBILE_PHONE']);
    assert.deepEqual([docExample(props.method), docExample(props.easyPay)], ['CARD', '토스페이']);
    assert.ok(Object.keys(pay.responses['200'].content['application/json'].schema.properties).includes('VBANK_DUE'));
    for (const path of ['/sandbox/payments/{TRANS_SEQNO}/deposit', '/sandbox/payments/{TRANS_SEQNO}/dashboard-cancel']) {
      assert.deepEqual(doc.paths[path].post.tags, ['Sandbox'], path);
      assert.ok(doc.paths[path].post.description.length > 40, path);
    }
    const cancelBody = doc.paths['/api/requestPaymentCancel'].post.requestBody.content['application/json'].schema.properties;
    assert.deepEqual(['REFUND_BANK_CODE', 'REFUND_ACCOUNT_NO', 'REFUND_HOLDER_NAME'].map((k) => docExample(cancelBody[k])), ['088', '110123456789', '홍길동']);
    assert.match(cancelBody.REFUND_BANK_CODE.description, /4010/);
    const record = doc.paths['/api/searchPayment'].post.responses['200'].content['application/json'].schema.properties.result_data.properties;
    assert.deepEqual(['VBANK_NAME', 'VBANK_ACCOUNT', 'VBANK_HOLDER', 'VBANK_DUE'].map((k) => docExample(record[k])), ['신한은행', '56211234567890', '행복 피아노 학원', '20261129143005']);
    for (const path of ['/processor-events/{processor}', '/processor-events/{processor}/{storeCode}']) {
      const op = doc.paths[path].post;
      assert.deepEqual(op.tags, ['Processors'], path);
      assert.deepEqual(Object.keys(op.responses).sort(), ['200', '401', '404', '500'], path);
      assert.match(op.description, /never what the body says/, path);
    }
  });

  test('a payment cancelled in the processor\'s own dashboard: CANCEL_COMPLETE by a look-up, with what a cancel causes', async () => {
    const seq = await create();
    await pay(seq);
    const r = await t.post(`/sandbox/payments/${seq}/dashboard-cancel`, where());
    assert.deepEqual(r.body, { approved: false, APPROVE_STATUS: 'CANCEL_COMPLETE', message: '결제사에서 취소되었습니다' });
    const p = await payment(seq);
    assert.deepEqual([p.state, p.cancel_reason, Number(p.cancel_amount)], ['CANCEL_COMPLETE', '결제사에서 취소됨', 128000]);
    const events = await db().selectFrom('processor_events').select(['event_type', 'outcome', 'detail']).where('payment_id', '=', p.id).execute();
    assert.deepEqual(events, [{ event_type: 'PAYMENT_STATUS_CHANGED', outcome: 'APPLIED', detail: 'looked up: STATE' }]);
    assert.equal(rd(await cancel(seq)).RESULT_CODE, '0000', 'a CANCEL after it answers as done');
    assert.equal((await t.post(`/sandbox/payments/${seq}/dashboard-cancel`, where())).status, 404, 'not paid any more');
  });
});
