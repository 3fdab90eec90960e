import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { OutcomeUnknown } from '../../src/ports/card-processor.js';
import type { CheckoutOrder, PayMethod } from '../../src/ports/checkout.js';
import { TossCheckout, tossHosts } from '../../src/ports/toss-checkout.js';
import { CONFIRM_ERRORS, confirmError, windowFailure, WINDOW_FAILURES } from '../../src/ports/toss-codes.js';
import { captureLog } from '../helpers/log.js';
import { ScriptedServer } from '../helpers/scripted-server.js';

/**
 * Toss Payments' window adapter (src/ports/toss-checkout.ts), one scripted answer at a time:
 * what begin hands the SDK, how a return address is read, what the confirm sends, what every
 * documented status and error code becomes (approved, declined with Korean words, waiting for a
 * deposit, closed, or unknown and looked up), the cancel with a refund account, the notices and
 * the doctor's key check. Against the fake in Chromium: test/live/toss-window.test.ts.
 */
describe('Toss window adapter, answer by answer', () => {
  const server = new ScriptedServer({ status: 404, body: { code: 'NOT_FOUND_PAYMENT', message: '존재하지 않는 결제 정보 입니다.' } });
  const { seen, script } = server;
  let base: string;
  before(async () => {
    base = (await server.start()).url;
  });
  after(() => server.close());
  const { lines, log } = captureLog();
  beforeEach(() => {
    server.reset();
    lines.length = 0;
  });
  const toss = (over: { sdkUrl?: string } = {}) => new TossCheckout({ clientKey: 'test_ck_abc', secretKey: 'test_sk_abc', baseUrl: base, sdkUrl: 'https://js.tosspayments.com/v2/standard', timeoutMs: 300, ...over }, log);
  const order = (method: PayMethod, over: Partial<CheckoutOrder> = {}): CheckoutOrder => ({
    orderId: 'order_0001', amount: 128000, taxFreeAmount: 0, orderName: '11월 수강료', storeName: '피아노 학원', method, customer: { name: '홍길동', phone: '010-1234-5678' },
    successUrl: 'https://pay.example.com/checkout/return/success?tid=t&token=k&order=order_0001', failUrl: 'https://pay.example.com/checkout/return/fail?tid=t&token=k&order=order_0001', accountHours: 168, ...over,
  });
  const payment = (over: Record<string, unknown> = {}) => ({
    orderId: 'order_0001', paymentKey: 'pk_1', status: 'DONE', method: '카드', totalAmount: 128000, approvedAt: '2026-11-26T10:00:00+09:00',
    card: { issuerCode: '41', acquirerCode: '31', number: '43301234****123*', installmentPlanMonths: 3, approveNo: '00012345' }, ...over,
  });
  const confirmReq = { orderId: 'order_0001', processorRef: 'pk_1', amount: 128000 };

  test('the time limits: a call, the 500 ms pause before the look-up after a lost answer, and a second call', () => {
    assert.equal(toss().callLimitMs, 2 * 300 + 500);
  });

  describe('begin', () => {
    test('the SDK and our launcher with requestPayment\'s parameters; an easy pay opens the card window, which lists them', async () => {
      for (const [method, sdk] of [['CARD', 'CARD'], ['EASY_PAY', 'CARD'], ['TRANSFER', 'TRANSFER'], ['VIRTUAL_ACCOUNT', 'VIRTUAL_ACCOUNT'], ['MOBILE_PHONE', 'MOBILE_PHONE']] as const) {
        const w = await toss().begin(order(method));
        assert.equal(w.kind, 'script');
        if (w.kind !== 'script') return;
        assert.deepEqual([w.scripts, w.launcher], [['https://js.tosspayments.com/v2/standard'], '/assets/checkout/toss.js']);
        const req = (w.params as { request: Record<string, unknown> }).request;
        assert.equal((w.params as { clientKey: string }).clientKey, 'test_ck_abc');
        assert.deepEqual([req.method, req.amount, req.orderId, req.orderName, req.customerName, req.customerMobilePhone], [sdk, { currency: 'KRW', value: 128000 }, 'order_0001', '11월 수강료', '홍길동', '01012345678'], method);
        assert.deepEqual([req.successUrl, req.failUrl], [order(method).successUrl, order(method).failUrl]);
        assert.equal('card' in req, sdk === 'CARD', method);
      }
      assert.equal(seen.length, 0, 'begin calls no API');
    });

    test('a virtual account stays open the order\'s hours, at most Toss\'s 720; a tax-free part is passed; the secret key never reaches the page', async () => {
      const va = async (hours: number) => ((await toss().begin(order('VIRTUAL_ACCOUNT', { accountHours: hours }))) as unknown as { params: { request: { virtualAccount: { validHours: number } } } }).params.request.virtualAccount.validHours;
      assert.deepEqual([await va(168), await va(720), await va(721)], [168, 720, 720]);
      const w = await toss().begin(order('CARD', { taxFreeAmount: 5000 }));
      assert.equal((w as unknown as { params: { request: { taxFreeAmount: number } } }).params.request.taxFreeAmount, 5000);
      assert.doesNotMatch(JSON.stringify(w), /test_sk_abc/);
    });

    test('the CSP hosts: Toss\'s own domains for its SDK; a rehearsal SDK\'s origin only', () => {
      assert.deepEqual(tossHosts('https://js.tosspayments.com/v2/standard'), {
        script: ['https://js.tosspayments.com'], connect: ['https://*.tosspayments.com', 'https://*.toss.im'], frame: ['https://*.tosspayments.com', 'https://*.toss.im'],
        form: ['https://*.tosspayments.com', 'https://*.toss.im'], img: ['https://*.tosspayments.com', 'https://*.toss.im'],
      });
      const o = 'https://localhost:9701';
      assert.deepEqual(tossHosts(`${o}/v2/standard`), { script: [o], connect: [o], frame: [o], form: [o], img: [o] });
    });
  });

  describe('the return address', () => {
    test('success: orderId, paymentKey and the claimed amount (a non-number is -1, never a number we would use)', () => {
      const r = toss().readReturn({ paymentType: 'NORMAL', orderId: 'order_0001', paymentKey: 'pk_1', amount: '128000' }, 'success');
      assert.deepEqual(r, { orderId: 'order_0001', processorRef: 'pk_1', amount: 128000, failure: null });
      assert.equal(toss().readReturn({ orderId: 'o', paymentKey: 'k', amount: '1e5' }, 'success').amount, -1);
      assert.equal(toss().readReturn({ orderId: 'o', paymentKey: 'k' }, 'success').amount, null);
    });

    test('fail: a closed window (PAY_PROCESS_CANCELED, or the SDK\'s USER_CANCEL) and each known code in our words; the address\'s own message is never shown', () => {
      const closed = { code: 'PAY_PROCESS_CANCELED', message: '결제를 취소했습니다' };
      assert.deepEqual(toss().readReturn({ code: 'PAY_PROCESS_CANCELED', message: '<b>피싱</b>', orderId: 'o' }, 'fail').failure, closed);
      assert.deepEqual(windowFailure('USER_CANCEL'), closed);
      for (const [code, words] of Object.entries(WINDOW_FAILURES)) assert.deepEqual(windowFailure(code), { code, message: words });
      assert.deepEqual(windowFailure('REJECT_CARD_PAYMENT'), { code: 'REJECT_CARD_PAYMENT', message: '한도 초과 또는 잔액 부족으로 결제되지 않았습니다' });
      assert.deepEqual(windowFailure('SOMETHING_NEW'), { code: 'SOMETHING_NEW', message: '결제가 승인되지 않았습니다' });
      assert.deepEqual(windowFailure('<script>'), { code: 'PAY_PROCESS_ABORTED', message: '결제가 승인되지 않았습니다' });
    });
  });

  describe('confirm', () => {
    test('one POST of paymentKey, orderId and the payment\'s amount, keyed by the order, Basic auth with the secret key', async () => {
      script.push({ status: 200, body: payment() });
      const r = await toss().confirm(confirmReq);
      assert.equal(seen.length, 1);
      assert.deepEqual([seen[0]!.method, seen[0]!.path, seen[0]!.headers['idempotency-key'], seen[0]!.headers.authorization], ['POST', '/v1/payments/confirm', 'order_0001', `Basic ${Buffer.from('test_sk_abc:').toString('base64')}`]);
      assert.deepEqual(JSON.parse(seen[0]!.body), { paymentKey: 'pk_1', orderId: 'order_0001', amount: 128000 });
      assert.deepEqual(r, {
        status: 'APPROVED', processorRef: 'pk_1', amount: 128000, approvedAtMs: Date.parse('2026-11-26T01:00:00Z'), method: 'CARD', methodName: '신용카드', bankName: null,
        card: { issuerName: '신한카드', accepterName: 'BC카드', approvalNumber: '00012345', installmentMonth: '03', bin: '433012', last4: null },
      });
    });

    test('an easy pay, a transfer, a phone payment: METHOD_NAME the provider\'s, 계좌이체 with its bank, 휴대폰', async () => {
      script.push(
        { status: 200, body: payment({ method: '간편결제', easyPay: { provider: '카카오페이', amount: 0 } }) },
        { status: 200, body: payment({ method: '간편결제', easyPay: { provider: '토스페이', amount: 128000 }, card: null }) },
        { status: 200, body: payment({ method: '계좌이체', card: null, transfer: { bankCode: '20', settlementStatus: 'COMPLETED' } }) },
        { status: 200, body: payment({ method: '휴대폰', card: null, mobilePhone: { customerMobilePhone: '01012345678' } }) },
      );
      const kakao = await toss().confirm(confirmReq);
      assert.deepEqual(kakao.status === 'APPROVED' && [kakao.method, kakao.methodName, kakao.card?.issuerName], ['EASY_PAY', '카카오페이', '신한카드']);
      const tosspay = await toss().confirm(confirmReq);
      assert.deepEqual(tosspay.status === 'APPROVED' && [tosspay.methodName, tosspay.card], ['토스페이', null]);
      const transfer = await toss().confirm(confirmReq);
      assert.deepEqual(transfer.status === 'APPROVED' && [transfer.method, transfer.methodName, transfer.bankName], ['TRANSFER', '계좌이체', '우리은행']);
      const phone = await toss().confirm(confirmReq);
      assert.deepEqual(phone.status === 'APPROVED' && [phone.method, phone.methodName], ['MOBILE_PHONE', '휴대폰']);
    });

    test('a virtual account: waiting for its deposit, the account in the standard bank code, its due time and its secret', async () => {
      script.push({ status: 200, body: payment({ method: '가상계좌', status: 'WAITING_FOR_DEPOSIT', approvedAt: null, card: null, secret: 'ps_secret', virtualAccount: { bankCode: '88', accountNumber: 'X1234567890', customerName: '홍길동', dueDate: '2026-12-03T10:00:00+09:00', expired: false } }) });
      assert.deepEqual(await toss().confirm(confirmReq), {
        status: 'WAITING_FOR_DEPOSIT', processorRef: 'pk_1', amount: 128000, secret: 'ps_secret',
        account: { bankCode: '088', bankName: '신한은행', accountNumber: 'X1234567890', holder: '', dueAtMs: Date.parse('2026-12-03T01:00:00Z') },
      });
    });

    test('every documented refusal is declined with Korean words; a key or contract problem too (and logged for the operator); nothing is looked up', async () => {
      for (const [code, kind] of Object.entries(CONFIRM_ERRORS)) {
        if (kind.kind !== 'DECLINED' && kind.kind !== 'ERROR') continue;
        script.push({ status: 400, body: { code, message: 'Toss의 메시지' } });
        const r = await toss().confirm(confirmReq);
        assert.deepEqual(r, { status: 'DECLINED', code, message: kind.message }, code);
        assert.match(kind.message, /[가-힣]/, code);
      }
      assert.ok(seen.every((s) => s.path === '/v1/payments/confirm'), 'no look-up after a refusal');
      assert.deepEqual(lines.filter((l) => /the secret key was refused/.test(l.msg)).map((l) => l.code), ['UNAUTHORIZED_KEY', 'INVALID_API_KEY', 'FORBIDDEN_REQUEST']);
      // An undocumented 4xx is a refusal in Toss's own words; 5xx, 409 and 429 are open.
      assert.deepEqual(confirmError(400, 'NEW_CODE', '새 오류'), { kind: 'DECLINED', message: '새 오류' });
      for (const status of [500, 503, 409, 429]) assert.deepEqual(confirmError(status, 'NEW_CODE', ''), { kind: 'UNKNOWN' });
      assert.deepEqual(confirmError(400, 'ALREADY_PROCESSED_PAYMENT', ''), { kind: 'EXISTS' });
    });

    test('no paymentKey in the return: declined without a call', async () => {
      assert.deepEqual(await toss().confirm({ ...confirmReq, processorRef: null }), { status: 'DECLINED', code: 'NOT_FOUND_PAYMENT_SESSION', message: '결제 정보를 찾을 수 없습니다. 다시 결제해 주세요' });
      assert.equal(seen.length, 0);
    });

    for (const [what, first] of [
      ['answered 500', { status: 500, body: { code: 'FAILED_INTERNAL_SYSTEM_PROCESSING' } }],
      ['already processed (a second confirm)', { status: 400, body: { code: 'ALREADY_PROCESSED_PAYMENT' } }],
      ['never answered within the time limit', { status: 200, body: payment(), delayMs: 1000 }],
    ] as const) {
      test(`a confirm ${what}: the look-up by orderId decides`, async () => {
        script.push(first, { status: 200, body: payment() });
        const r = await toss().confirm(confirmReq);
        assert.equal(r.status, 'APPROVED');
        assert.deepEqual(seen.map((s) => `${s.method} ${s.path}`), ['POST /v1/payments/confirm', 'GET /v1/payments/orders/order_0001']);
      });
    }

    test('the look-up cannot tell (not confirmed, not found, failing, another order\'s answer): OutcomeUnknown, for the reconcile', async () => {
      for (const second of [
        { status: 200, body: payment({ status: 'IN_PROGRESS', approvedAt: null }) },
        { status: 404, body: { code: 'NOT_FOUND_PAYMENT' } },
        { status: 500, body: { code: 'FAILED_INTERNAL_SYSTEM_PROCESSING' } },
      ]) {
        script.push({ status: 500, body: { code: 'UNKNOWN_PAYMENT_ERROR' } }, second);
        await assert.rejects(toss().confirm(confirmReq), OutcomeUnknown);
      }
      script.push({ status: 200, body: payment({ orderId: 'someone_else' }) });
      await assert.rejects(toss().confirm(confirmReq), /an answer about another order/);
    });
  });

  describe('look-up', () => {
    const look = async (body: Record<string, unknown>) => {
      script.push({ status: 200, body });
      return toss().lookup('order_0001');
    };
    test('each status Toss documents', async () => {
      assert.equal(seen.length, 0);
      assert.deepEqual(await look(payment({ status: 'READY', approvedAt: null })), { status: 'PENDING' });
      assert.deepEqual(await look(payment({ status: 'IN_PROGRESS', approvedAt: null })), { status: 'PENDING' });
      assert.equal((await look(payment()))!.status, 'APPROVED');
      const va = { method: '가상계좌', card: null, virtualAccount: { bankCode: '88', accountNumber: 'X1', customerName: '홍', dueDate: '2026-12-03T10:00:00+09:00', expired: false } };
      assert.equal((await look(payment({ ...va, status: 'WAITING_FOR_DEPOSIT', approvedAt: null })))!.status, 'WAITING_FOR_DEPOSIT');
      assert.deepEqual(await look(payment({ ...va, status: 'WAITING_FOR_DEPOSIT', approvedAt: null, virtualAccount: { ...va.virtualAccount, expired: true } })), { status: 'CLOSED' });
      assert.deepEqual(await look(payment({ ...va, status: 'EXPIRED', approvedAt: null })), { status: 'CLOSED' });
      assert.deepEqual(await look(payment({ ...va, status: 'CANCELED', approvedAt: null })), { status: 'CLOSED' }, 'an account closed before any deposit');
      const cancels = [{ canceledAt: '2026-11-26T11:00:00+09:00', cancelAmount: 128000 }];
      assert.deepEqual(await look(payment({ ...va, status: 'CANCELED', cancels })), { status: 'CANCELED', processorRef: 'pk_1', canceledAtMs: Date.parse('2026-11-26T02:00:00Z') });
      assert.deepEqual(await look(payment({ status: 'CANCELED', cancels })), { status: 'CANCELED', processorRef: 'pk_1', canceledAtMs: Date.parse('2026-11-26T02:00:00Z') });
      assert.equal((await look(payment({ status: 'PARTIAL_CANCELED', cancels })))!.status, 'CANCELED');
      assert.deepEqual(await look(payment({ status: 'EXPIRED', approvedAt: null })), { status: 'DECLINED', code: 'EXPIRED', message: '결제 시간이 지나 결제되지 않았습니다. 다시 결제해 주세요' });
      assert.deepEqual(await look(payment({ status: 'ABORTED', approvedAt: null, failure: { code: 'REJECT_CARD_COMPANY', message: 'x' } })), { status: 'DECLINED', code: 'REJECT_CARD_COMPANY', message: '카드사에서 승인을 거절했습니다' });
      await assert.rejects(look(payment({ status: 'SOMETHING_ELSE' })), OutcomeUnknown);
      assert.ok(seen.every((s) => s.method === 'GET' && s.path === '/v1/payments/orders/order_0001'));
    });

    test('not found is null; any other error throws (the caller tries again later)', async () => {
      assert.equal(await toss().lookup('order_0001'), null);
      script.push({ status: 500, body: { code: 'FAILED_INTERNAL_SYSTEM_PROCESSING' } });
      await assert.rejects(toss().lookup('order_0001'), /answered 500/);
    });
  });

  describe('cancel and close', () => {
    const req = { idempotencyKey: 'cancel_1', orderId: 'order_0001', processorRef: 'pk_1', amount: 128000, reason: '고객 요청', refundAccount: null };
    test('a full cancel by paymentKey with its reason, under the cancel\'s key; a paid virtual account refunds to the account given, in Toss\'s bank code, digits only', async () => {
      script.push({ status: 200, body: payment({ status: 'CANCELED' }) }, { status: 200, body: payment({ status: 'CANCELED' }) });
      assert.deepEqual(await toss().cancel(req), { outcome: 'CANCELED' });
      assert.deepEqual([seen[0]!.path, seen[0]!.headers['idempotency-key'], JSON.parse(seen[0]!.body)], ['/v1/payments/pk_1/cancel', 'cancel_1', { cancelReason: '고객 요청' }]);
      await toss().cancel({ ...req, refundAccount: { bankCode: '088', accountNumber: '110-987-654321', holderName: '홍길동' } });
      assert.deepEqual(JSON.parse(seen[1]!.body).refundReceiveAccount, { bank: '88', accountNumber: '110987654321', holderName: '홍길동' });
      assert.deepEqual(await toss().cancel({ ...req, refundAccount: { bankCode: '999', accountNumber: '1', holderName: 'x' } }), { outcome: 'FAILED', message: 'INVALID_BANK: no Toss code for bank 999' });
      assert.equal(seen.length, 2);
    });

    test('already cancelled is success; a 5xx or a request in progress is tried once more under the same key; a refusal fails with Toss\'s code', async () => {
      script.push({ status: 400, body: { code: 'ALREADY_CANCELED_PAYMENT' } });
      assert.deepEqual(await toss().cancel(req), { outcome: 'CANCELED' });
      script.push({ status: 500, body: {} }, { status: 200, body: payment({ status: 'CANCELED' }) });
      assert.deepEqual(await toss().cancel(req), { outcome: 'CANCELED' });
      assert.equal(seen[1]!.headers['idempotency-key'], seen[2]!.headers['idempotency-key']);
      script.push({ status: 409, body: { code: 'IDEMPOTENT_REQUEST_PROCESSING' } }, { status: 500, body: {} });
      assert.match((await toss().cancel(req) as { message: string }).message, /did not confirm the cancel/);
      script.push({ status: 403, body: { code: 'NOT_CANCELABLE_PAYMENT', message: '취소 할 수 없는 결제 입니다.' } });
      assert.deepEqual(await toss().cancel(req), { outcome: 'FAILED', message: 'NOT_CANCELABLE_PAYMENT: 취소 할 수 없는 결제 입니다.' });
    });

    test('without a paymentKey on record, the look-up gives it; an order Toss never saw has nothing to cancel', async () => {
      script.push({ status: 200, body: payment() }, { status: 200, body: payment({ status: 'CANCELED' }) });
      assert.deepEqual(await toss().cancel({ ...req, processorRef: null }), { outcome: 'CANCELED' });
      assert.deepEqual(seen.map((s) => s.path), ['/v1/payments/orders/order_0001', '/v1/payments/pk_1/cancel']);
      assert.match((await toss().cancel({ ...req, processorRef: null }) as { message: string }).message, /^NOT_FOUND_PAYMENT/);
    });

    test('closing an open account is a cancel without an account; one closed already is closed', async () => {
      script.push({ status: 200, body: payment({ status: 'CANCELED' }) }, { status: 400, body: { code: 'ALREADY_CANCELED_PAYMENT' } });
      assert.deepEqual(await toss().closeAccount({ idempotencyKey: 'close_1', orderId: 'order_0001', processorRef: 'pk_1' }), { outcome: 'CLOSED' });
      assert.deepEqual(JSON.parse(seen[0]!.body), { cancelReason: '가상계좌 발급 취소' });
      assert.deepEqual(await toss().closeAccount({ idempotencyKey: 'close_1', orderId: 'order_0001', processorRef: 'pk_1' }), { outcome: 'CLOSED' });
    });
  });

  describe('notices', () => {
    const read = (body: unknown) => toss().readEvent({ body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), headers: {} });
    test('a deposit callback (as Toss posts it, or as a DEPOSIT_CALLBACK webhook) names the order and the secret it claims; a missing secret claims the empty one', () => {
      assert.deepEqual(read({ createdAt: '2026-11-26T10:00:00.000', secret: 's1', status: 'DONE', transactionKey: 'tk', orderId: 'order_0001' }), { ok: true, event: { key: null, type: 'DEPOSIT_CALLBACK', orderId: 'order_0001', claimedSecret: 's1' } });
      assert.deepEqual(read({ eventType: 'DEPOSIT_CALLBACK', createdAt: 'x', data: { secret: 's2', status: 'DONE', orderId: 'order_0001' } }), { ok: true, event: { key: null, type: 'DEPOSIT_CALLBACK', orderId: 'order_0001', claimedSecret: 's2' } });
      assert.deepEqual(read({ status: 'DONE', orderId: 'order_0001' }), { ok: true, event: { key: null, type: 'DEPOSIT_CALLBACK', orderId: 'order_0001', claimedSecret: '' } });
    });

    test('a status webhook names the order only (its status is looked up); other events are about no payment; anything else is refused', () => {
      assert.deepEqual(read({ eventType: 'PAYMENT_STATUS_CHANGED', createdAt: 'x', data: { orderId: 'order_0001', status: 'DONE' } }), { ok: true, event: { key: null, type: 'PAYMENT_STATUS_CHANGED', orderId: 'order_0001', claimedSecret: null } });
      assert.deepEqual(read({ eventType: 'CANCEL_STATUS_CHANGED', data: { orderId: 'order_0001' } }), { ok: true, event: { key: null, type: 'CANCEL_STATUS_CHANGED', orderId: 'order_0001', claimedSecret: null } });
      assert.deepEqual(read({ eventType: 'PAYOUT_STATUS_CHANGED', data: {} }), { ok: true, event: { key: null, type: 'PAYOUT_STATUS_CHANGED', orderId: null, claimedSecret: null } });
      assert.deepEqual(read('not json'), { ok: false, reason: 'body: not JSON' });
      assert.deepEqual(read([1]), { ok: false, reason: 'body: not a JSON object' });
      assert.deepEqual(read({ hello: 1 }), { ok: false, reason: 'body: neither a deposit callback (orderId, status, secret) nor a webhook (eventType)' });
      assert.deepEqual(read({ eventType: 'bad type!' }), { ok: false, reason: 'eventType: not a Toss event type' });
      assert.deepEqual(read({ eventType: 'DEPOSIT_CALLBACK', data: {} }), { ok: false, reason: 'data.orderId: missing' });
    });
  });

  test('doctor: a look-up of an order that cannot exist; 404 proves the secret key, 401 refuses it, anything else says what came', async () => {
    const ok = await toss().checkCredentials();
    assert.equal(ok.ok, true);
    assert.match(seen[0]!.path, /^\/v1\/payments\/orders\/sunap-doctor-[0-9a-f-]{36}$/);
    script.push({ status: 401, body: { code: 'UNAUTHORIZED_KEY' } }, { status: 500, body: { code: 'X' } });
    assert.match((await toss().checkCredentials()).detail, /the secret key was refused \(UNAUTHORIZED_KEY\); check SUNAP_TOSS_SECRET_KEY$/);
    const odd = await toss().checkCredentials();
    assert.deepEqual([odd.ok, /unexpected answer 500 X$/.test(odd.detail)], [false, true]);
  });
});
