import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { BANKS, bankByCode, bankName, bankOfPortone, bankOfToss } from '../../src/ports/banks.js';
import { luhnValid, OutcomeUnknown } from '../../src/ports/card-processor.js';
import type { CheckoutOrder } from '../../src/ports/checkout.js';
import { SANDBOX_CARDS } from '../../src/ports/sandbox-card-processor.js';
import { CLOSED_WINDOW, REFUSALS, SandboxCheckout, WINDOW_CARDS, windowCardOf } from '../../src/ports/sandbox-checkout.js';
import { engines, withDatabase } from '../helpers/db.js';

/**
 * The sandbox's checkout processor on its own (src/ports/sandbox-checkout.ts): its window's
 * outcomes, a confirm that takes the money once, look-ups, cancels, accounts, deposits and the
 * notices it posts, against a real database per engine and a clock the test moves.
 */

describe('banks', () => {
  test('every bank has a standard code, a name and each processor\'s own code, none twice', () => {
    assert.equal(new Set(BANKS.map((b) => b.code)).size, BANKS.length);
    assert.equal(new Set(BANKS.map((b) => b.toss)).size, BANKS.length);
    assert.equal(new Set(BANKS.map((b) => b.portone)).size, BANKS.length);
    for (const b of BANKS) assert.match(b.code, /^\d{3}$/);
    assert.deepEqual([bankByCode('004')?.toss, bankByCode('088')?.portone, bankName('020'), bankName('999'), bankName('')], ['06', 'SHINHAN', '우리은행', '은행(999)', '']);
    assert.equal(bankOfToss('06')?.code, '004');
    assert.equal(bankOfPortone('KOOKMIN')?.code, '004');
    assert.equal(bankOfToss('04'), undefined, 'Toss has no 04: KB국민 is 06');
  });
});

describe('the window\'s test cards', () => {
  test('each is a sandbox card with the check digit right; the lost answer is 4000 0000 0000 0127', () => {
    for (const c of WINDOW_CARDS) {
      assert.ok(SANDBOX_CARDS[c.number], c.key);
      assert.equal(luhnValid(c.number), true, c.number);
      assert.equal(windowCardOf(c.number), c.key);
    }
    assert.equal(windowCardOf('4111111111111111'), undefined);
    assert.deepEqual(SANDBOX_CARDS['4000000000000127'], { outcome: 'APPROVED', issuer: '신한카드', lostAnswer: true });
  });
});

for (const engine of engines) {
  describe(`the sandbox checkout processor [${engine}]`, () => {
    const h = withDatabase(engine);
    let now = Date.UTC(2026, 10, 23, 3);
    let sandbox: SandboxCheckout;
    before(() => {
      sandbox = new SandboxCheckout({ db: h.db, clock: { nowMs: () => now }, windowPath: '/checkout/sandbox-window', tokenKey: Buffer.alloc(32, 7) });
    });
    const order = (over: Partial<CheckoutOrder> = {}): CheckoutOrder => ({
      orderId: randomUUID(), amount: 55_000, taxFreeAmount: 0, orderName: '11월 수강료', storeName: '행복 피아노 학원', method: 'CARD',
      customer: { name: '홍길동', phone: '01012345678' }, successUrl: 'https://pay.example.com/checkout/return/success?tid=p&token=t&order=o',
      failUrl: 'https://pay.example.com/checkout/return/fail?tid=p&token=t&order=o', accountHours: 168, ...over,
    });
    const query = (url: string) => Object.fromEntries(new URL(url).searchParams);

    test('begin: the window is a page of the sandbox, signed for its order; another order\'s token does not open it', async () => {
      const o = order();
      const w = await sandbox.begin(o);
      assert.equal(w.kind, 'redirect');
      const u = new URL((w as { url: string }).url, 'https://x');
      assert.equal(u.pathname, '/checkout/sandbox-window');
      assert.equal(u.searchParams.get('order'), o.orderId);
      assert.equal(sandbox.windowTokenValid(o.orderId, u.searchParams.get('t')!), true);
      assert.equal(sandbox.windowTokenValid(randomUUID(), u.searchParams.get('t')!), false);
      assert.equal((await sandbox.order(o.orderId))!.state, 'OPEN');
    });

    test('approve with a test card: back to the success address with the order, the key and the amount; the confirm takes the money once', async () => {
      const o = order();
      await sandbox.begin(o);
      const back = await sandbox.play(o.orderId, { action: 'approve', choice: { card: 'kb', installment: '03' } });
      const q = query(back!);
      assert.equal(new URL(back!).pathname, '/checkout/return/success');
      assert.deepEqual([q.tid, q.order, q.orderId, q.amount, q.paymentType], ['p', 'o', o.orderId, '55000', 'NORMAL']);
      assert.equal(await sandbox.play(o.orderId, { action: 'close' }), null, 'the window is no longer open');
      assert.deepEqual(sandbox.readReturn(q, 'success'), { orderId: o.orderId, processorRef: q.paymentKey, amount: 55_000, failure: null });
      assert.deepEqual(await sandbox.lookup(o.orderId), { status: 'PENDING' }, 'authorized in the window is not paid');
      const r = await sandbox.confirm({ orderId: o.orderId, processorRef: q.paymentKey!, amount: 55_000 });
      assert.equal(r.status, 'APPROVED');
      const a = r as Extract<typeof r, { status: 'APPROVED' }>;
      assert.deepEqual([a.method, a.methodName, a.amount, a.approvedAtMs, a.bankName], ['CARD', '신용카드', 55_000, now, null]);
      assert.deepEqual({ ...a.card, approvalNumber: '' }, { issuerName: 'KB국민카드', accepterName: 'KB국민카드', approvalNumber: '', installmentMonth: '03', bin: '555555', last4: '4444' });
      assert.match(a.card!.approvalNumber, /^\d{8}$/);
      assert.deepEqual(await sandbox.confirm({ orderId: o.orderId, processorRef: q.paymentKey!, amount: 55_000 }), r, 'a repeated confirm answers the first');
      assert.deepEqual(await sandbox.lookup(o.orderId), r);
      assert.equal(JSON.stringify(await sandbox.order(o.orderId)).includes('5555555555554444'), false, 'no card number kept');
    });

    test('the confirm refuses another key or another amount, and an order never authorized', async () => {
      const o = order();
      await sandbox.begin(o);
      const q = query((await sandbox.play(o.orderId, { action: 'approve', choice: { card: 'shinhan' } }))!);
      assert.deepEqual(await sandbox.confirm({ orderId: o.orderId, processorRef: 'sbx_other', amount: 55_000 }),
        { status: 'DECLINED', code: 'NOT_FOUND_PAYMENT_SESSION', message: '결제 정보를 찾을 수 없습니다. 다시 결제해 주세요' });
      assert.deepEqual(await sandbox.confirm({ orderId: o.orderId, processorRef: q.paymentKey!, amount: 54_999 }),
        { status: 'DECLINED', code: 'INVALID_REQUEST', message: '결제 금액이 일치하지 않습니다' });
      assert.equal((await sandbox.order(o.orderId))!.state, 'AUTHORIZED', 'still confirmable for the right amount');
      assert.equal((await sandbox.confirm({ orderId: o.orderId, processorRef: q.paymentKey!, amount: 55_000 })).status, 'APPROVED');
      assert.equal(await sandbox.lookup(randomUUID()), null, 'an order it never saw');
    });

    test('declined cards, a refusal and a closed window go to the fail address with a code; only the adapter\'s own words are read back', async () => {
      for (const [act, code, message] of [
        [{ action: 'approve', choice: { card: 'declined' } }, 'REJECT_CARD_COMPANY', '카드사에서 승인을 거절했습니다'],
        [{ action: 'approve', choice: { card: 'insufficient' } }, 'INSUFFICIENT_BALANCE', '잔액이 부족합니다'],
        [{ action: 'approve', choice: { card: 'nope' } }, 'INVALID_CARD_NUMBER', '샌드박스에서는 테스트 카드만 사용할 수 있습니다'],
        [{ action: 'refuse', code: 'EXCEED_MAX_AMOUNT' }, 'EXCEED_MAX_AMOUNT', '결제 한도를 초과했습니다'],
        [{ action: 'refuse', code: 'MADE_UP' }, 'REJECT_CARD_COMPANY', REFUSALS.REJECT_CARD_COMPANY],
        [{ action: 'close' }, 'PAY_PROCESS_CANCELED', CLOSED_WINDOW.message],
      ] as const) {
        const o = order();
        await sandbox.begin(o);
        const back = (await sandbox.play(o.orderId, act as never))!;
        assert.equal(new URL(back).pathname, '/checkout/return/fail');
        const q = query(back);
        assert.deepEqual([q.code, q.orderId], [code, o.orderId]);
        assert.deepEqual(sandbox.readReturn({ ...q, message: '전화 주세요 010-0000-0000' }, 'fail').failure, { code, message }, JSON.stringify(act));
        assert.deepEqual(await sandbox.lookup(o.orderId), { status: 'DECLINED', code, message });
      }
      assert.deepEqual(sandbox.readReturn({ code: 'SOMETHING_ELSE' }, 'fail').failure, { code: 'SOMETHING_ELSE', message: '결제가 승인되지 않았습니다' });
      assert.equal(sandbox.readReturn({ orderId: 'x', paymentKey: 'k', amount: '5e4' }, 'success').amount, -1, 'an amount that is not digits never matches');
      assert.equal(sandbox.readReturn({ orderId: 'x', paymentKey: 'k' }, 'success').amount, null);
    });

    test('the card that fails at the processor declines at the confirm and charges nothing; the lost answer charges and throws', async () => {
      const err = order();
      await sandbox.begin(err);
      const q1 = query((await sandbox.play(err.orderId, { action: 'approve', choice: { card: 'error' } }))!);
      assert.deepEqual(await sandbox.confirm({ orderId: err.orderId, processorRef: q1.paymentKey!, amount: 55_000 }),
        { status: 'DECLINED', code: 'PROVIDER_ERROR', message: '카드사 처리 중 오류가 발생했습니다' });
      const lost = order();
      await sandbox.begin(lost);
      const q2 = query((await sandbox.play(lost.orderId, { action: 'approve', choice: { card: 'lost-answer' } }))!);
      await assert.rejects(sandbox.confirm({ orderId: lost.orderId, processorRef: q2.paymentKey!, amount: 55_000 }), OutcomeUnknown);
      assert.equal((await sandbox.lookup(lost.orderId))!.status, 'APPROVED', 'the look-up finds the charge');
    });

    test('easy pays, transfers and phones: the method\'s name, a card only when a card paid, a transfer\'s bank', async () => {
      const pay = async (over: Partial<CheckoutOrder>, choice: object) => {
        const o = order(over);
        await sandbox.begin(o);
        const q = query((await sandbox.play(o.orderId, { action: 'approve', choice }))!);
        return sandbox.confirm({ orderId: o.orderId, processorRef: q.paymentKey!, amount: o.amount }) as Promise<Extract<Awaited<ReturnType<SandboxCheckout['confirm']>>, { status: 'APPROVED' }>>;
      };
      const kakao = await pay({ method: 'EASY_PAY' }, { easyPay: '카카오페이', funding: 'card' });
      assert.deepEqual([kakao.methodName, kakao.card?.issuerName, kakao.card?.installmentMonth], ['카카오페이', '신한카드', '00']);
      const balance = await pay({ method: 'EASY_PAY' }, { easyPay: '네이버페이', funding: 'balance' });
      assert.deepEqual([balance.methodName, balance.card], ['네이버페이', null]);
      assert.equal((await pay({ method: 'EASY_PAY' }, { easyPay: 'made-up pay' })).methodName, '토스페이', 'an unknown provider is the default');
      const transfer = await pay({ method: 'TRANSFER' }, { bankCode: '004' });
      assert.deepEqual([transfer.methodName, transfer.bankName, transfer.card], ['계좌이체', 'KB국민은행', null]);
      const phone = await pay({ method: 'MOBILE_PHONE' }, {});
      assert.deepEqual([phone.methodName, phone.card, phone.bankName], ['휴대폰', null, null]);
    });

    test('a virtual account: issued for 168 hours, deposited once before its due time with its secret in the notice, refunded only to an account', async () => {
      const o = order({ method: 'VIRTUAL_ACCOUNT', accountHours: 168 });
      await sandbox.begin(o);
      const q = query((await sandbox.play(o.orderId, { action: 'approve', choice: { bankCode: '020' } }))!);
      const issued = await sandbox.confirm({ orderId: o.orderId, processorRef: q.paymentKey!, amount: 55_000 });
      assert.equal(issued.status, 'WAITING_FOR_DEPOSIT');
      const w = issued as Extract<typeof issued, { status: 'WAITING_FOR_DEPOSIT' }>;
      assert.deepEqual([w.account.bankCode, w.account.bankName, w.account.holder, w.account.dueAtMs], ['020', '우리은행', '행복 피아노 학원', now + 168 * 3_600_000]);
      assert.match(w.account.accountNumber, /^\d{14}$/);
      assert.ok(w.secret && w.secret.length >= 20);
      now += 168 * 3_600_000;
      const notice = await sandbox.deposit(o.orderId);
      const body = JSON.parse(notice!.body.toString('utf8'));
      assert.deepEqual([body.orderId, body.secret, body.status], [o.orderId, w.secret, 'DONE']);
      assert.equal(await sandbox.deposit(o.orderId), null, 'deposited once');
      const paid = await sandbox.lookup(o.orderId);
      assert.deepEqual([paid!.status, (paid as { approvedAtMs: number }).approvedAtMs, (paid as { methodName: string }).methodName], ['APPROVED', now, '가상계좌']);
      const cancel = { idempotencyKey: `cancel:${o.orderId}`, orderId: o.orderId, processorRef: null, amount: 55_000, reason: 'r' };
      assert.equal((await sandbox.cancel({ ...cancel, refundAccount: null })).outcome, 'FAILED');
      assert.deepEqual(await sandbox.cancel({ ...cancel, refundAccount: { bankCode: '088', accountNumber: '110123456789', holderName: '홍길동' } }), { outcome: 'CANCELED' });
      assert.deepEqual(await sandbox.cancel({ ...cancel, refundAccount: null }), { outcome: 'CANCELED' }, 'a cancelled order cancels again as success');
      const d = (await sandbox.order(o.orderId))!.detail;
      assert.deepEqual([d.refunds, d.refundBank, JSON.stringify(d).includes('110123456789')], [1, '088', false], 'one refund; the account number is not kept');
    });

    test('past its due time an account takes no deposit and reads as closed; closing an open account is final and idempotent', async () => {
      const late = order({ method: 'VIRTUAL_ACCOUNT', accountHours: 1 });
      await sandbox.begin(late);
      const q = query((await sandbox.play(late.orderId, { action: 'approve', choice: {} }))!);
      await sandbox.confirm({ orderId: late.orderId, processorRef: q.paymentKey!, amount: 55_000 });
      now += 3_600_000 + 1;
      assert.equal(await sandbox.deposit(late.orderId), null);
      assert.deepEqual(await sandbox.lookup(late.orderId), { status: 'CLOSED' });
      const open = order({ method: 'VIRTUAL_ACCOUNT' });
      await sandbox.begin(open);
      const q2 = query((await sandbox.play(open.orderId, { action: 'approve', choice: {} }))!);
      await sandbox.confirm({ orderId: open.orderId, processorRef: q2.paymentKey!, amount: 55_000 });
      const close = { idempotencyKey: 'c', orderId: open.orderId, processorRef: null };
      assert.deepEqual(await sandbox.closeAccount(close), { outcome: 'CLOSED' });
      assert.deepEqual(await sandbox.closeAccount(close), { outcome: 'CLOSED' });
      assert.equal(await sandbox.deposit(open.orderId), null);
      assert.deepEqual(await sandbox.lookup(open.orderId), { status: 'CLOSED' });
    });

    test('a dashboard cancel of a paid order posts a status notice; the notices read back as events, anything else is refused', async () => {
      const o = order();
      await sandbox.begin(o);
      const q = query((await sandbox.play(o.orderId, { action: 'approve', choice: { card: 'shinhan' } }))!);
      await sandbox.confirm({ orderId: o.orderId, processorRef: q.paymentKey!, amount: 55_000 });
      const notice = (await sandbox.dashboardCancel(o.orderId))!;
      assert.deepEqual(sandbox.readEvent(notice), { ok: true, event: { key: null, type: 'PAYMENT_STATUS_CHANGED', orderId: o.orderId, claimedSecret: null } });
      assert.equal((await sandbox.lookup(o.orderId))!.status, 'CANCELED');
      assert.equal(await sandbox.dashboardCancel(o.orderId), null, 'not paid any more');
      const raw = (v: unknown) => ({ body: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)), headers: {} });
      assert.deepEqual(sandbox.readEvent(raw({ orderId: 'o-1', secret: 's', status: 'DONE' })), { ok: true, event: { key: null, type: 'DEPOSIT_CALLBACK', orderId: 'o-1', claimedSecret: 's' } });
      assert.deepEqual(sandbox.readEvent(raw({ orderId: 'o-1', secret: 5 })), { ok: true, event: { key: null, type: 'DEPOSIT_CALLBACK', orderId: 'o-1', claimedSecret: '' } }, 'a secret that is not a string matches none');
      assert.equal(sandbox.readEvent(raw('not json')).ok, false);
      assert.equal(sandbox.readEvent(raw({ eventType: 'SOMETHING' })).ok, false);
      assert.equal(sandbox.readEvent(raw({ orderId: 'o-1' })).ok, false, 'a deposit notice without its secret');
    });
  });
}
