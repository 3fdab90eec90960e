import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { OutcomeUnknown, type ApproveOutcome, type CancelOutcome, type CardInput, type CardProcessor } from '../../src/ports/card-processor.js';
import { STALE_ATTEMPT_MS } from '../../src/gateway/reconcile.js';
import { DEFAULT_SANDBOX_CARD } from '../../src/gateway/sandbox-routes.js';
import { SandboxCardProcessor } from '../../src/ports/sandbox-card-processor.js';
import { newId } from '../../src/platform/crypto.js';
import { GatewayError } from '../../src/platform/errors.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { openAttempt } from '../helpers/attempts.js';
import { withFailingInserts } from '../helpers/db.js';
import { withReceiver } from '../helpers/receiver.js';

/**
 * The approval and the cancel at their edges, called as the payment page and the sandbox call
 * them (the gateway service), with a card network that records what it is asked and can be
 * made to do, while it is being asked, what another process could do meanwhile.
 */
type ApproveRequest = Parameters<CardProcessor['approve']>[0];
type CancelRequest = Parameters<CardProcessor['cancel']>[0];

class WatchedProcessor implements CardProcessor {
  inner!: CardProcessor;
  readonly approves: ApproveRequest[] = [];
  readonly cancels: CancelRequest[] = [];
  /** Runs inside approve, before the network answers; what it returns (if anything) is the answer. */
  duringApprove?: (req: ApproveRequest) => Promise<ApproveOutcome | void>;

  async approve(req: ApproveRequest): Promise<ApproveOutcome> {
    this.approves.push(req);
    const hook = this.duringApprove;
    this.duringApprove = undefined;
    return (await hook?.(req)) ?? this.inner.approve(req);
  }

  lookup(key: string): Promise<ApproveOutcome | null> {
    return this.inner.lookup(key);
  }

  /** Runs inside cancel, before the network answers; what it returns (if anything) is the answer. */
  duringCancel?: (req: CancelRequest) => Promise<CancelOutcome | void>;

  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    this.cancels.push(req);
    const hook = this.duringCancel;
    this.duringCancel = undefined;
    return (await hook?.(req)) ?? this.inner.cancel(req);
  }
}

const card = (number = DEFAULT_SANDBOX_CARD.number): CardInput => ({ ...DEFAULT_SANDBOX_CARD, number });
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('approval and cancel at their edges', (engine) => {
  const processor = new WatchedProcessor();
  // The worker stays off: these tests look at what a payment change writes, not at its sending.
  const t = withApp(engine, {}, { runJobs: false, processor });
  before(() => {
    processor.inner = new SandboxCardProcessor(t.app.sunap.database.db);
  });

  const db = () => t.app.sunap.database.db;
  const gateway = () => t.app.sunap.gateway;
  async function waiting(over: Record<string, unknown> = {}) {
    const body = paymentBody(over);
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    return (await gateway().findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
  }
  async function approved(over: Record<string, unknown> = {}) {
    const p = await waiting(over);
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'APPROVED');
    return r.payment;
  }
  const attempts = (paymentId: string) => db().selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).orderBy('created_at').execute();
  const callbackRows = async (paymentId: string) => ({
    deliveries: await db().selectFrom('deliveries').selectAll().where('kind', '=', 'callback').where('ref_id', '=', paymentId).execute(),
    jobs: await db().selectFrom('jobs').select('id').where('unique_key', '=', `callback:${paymentId}`).execute(),
  });
  const logLines = (msg: string) => t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);

  test('an unknown payment is refused as 4003 naming TRANS_SEQNO', async () => {
    await assert.rejects(gateway().pay(newId(), card(), '00'), (e: unknown) =>
      e instanceof GatewayError && e.resultCode === '4003' && /^TRANS_SEQNO: /.test(e.message));
  });

  test('a payment no longer waiting answers STATE and is not touched: no attempt, no processor call', async () => {
    const p = await approved();
    const before = { attempts: (await attempts(p.id)).length, approves: processor.approves.length };
    const r = await gateway().pay(p.id, card('5555555555554444'), '00');
    assert.equal(r.outcome, 'STATE');
    assert.equal(r.payment.state, 'APPROVE_COMPLETE');
    assert.equal(r.payment.approval_number, p.approval_number);
    assert.equal((await attempts(p.id)).length, before.attempts, 'no attempt opened');
    assert.equal(processor.approves.length, before.approves, 'the card network was not asked');
  });

  test('an installment month that does not exist is INVALID before anything is opened', async () => {
    const p = await waiting({ APPROVAL_AMOUNT: '128000' });
    const asked = processor.approves.length;
    for (const month of ['01', '13', '3', '']) {
      const r = await gateway().pay(p.id, card(), month);
      assert.equal(r.outcome, 'INVALID', month);
      assert.equal((r as { message: string }).message, '할부 개월 수가 올바르지 않습니다', month);
      assert.equal(r.payment.state, 'STORE_REQUEST');
    }
    assert.equal((await attempts(p.id)).length, 0);
    assert.equal(processor.approves.length, asked, 'the card network was not asked');
    // The other side: 12 months is a month that exists.
    const twelve = await gateway().pay(p.id, card(), '12');
    assert.equal(twelve.outcome, 'APPROVED');
    assert.equal(twelve.payment.installment_month, '12');
  });

  test('installments below 50,000 won are INVALID; at 50,000 they are approved and the callback says so', async () => {
    const below = await waiting({ APPROVAL_AMOUNT: '49999' });
    const r = await gateway().pay(below.id, card(), '03');
    assert.equal(r.outcome, 'INVALID');
    assert.equal((r as { message: string }).message, '할부는 50,000원 이상부터 가능합니다');
    assert.equal((await attempts(below.id)).length, 0);
    assert.equal((await gateway().pay(below.id, card(), '00')).outcome, 'APPROVED', 'a lump sum is always allowed');

    const at = await waiting({ APPROVAL_AMOUNT: '50000' });
    const ok = await gateway().pay(at.id, card(), '03');
    assert.equal(ok.outcome, 'APPROVED');
    assert.equal(processor.approves.at(-1)!.installmentMonth, '03');
    const { deliveries } = await callbackRows(at.id);
    assert.equal(JSON.parse(deliveries[0]!.body).installment, '03', 'the callback carries the months chosen');
  });

  test('an approval records the issuer on its attempt and WEB / 신용카드 on the payment', async () => {
    const p = await approved();
    assert.equal(p.pay_path, 'WEB');
    assert.equal(p.method_name, '신용카드');
    assert.equal(p.issuer_name, '신한카드');
    assert.equal(p.card_bin, '424242');
    assert.equal(p.card_last4, '4242');
    const [a] = await attempts(p.id);
    assert.deepEqual([a!.kind, a!.status, a!.issuer_name, a!.card_bin, a!.card_last4, a!.installment_month], ['APPROVE', 'APPROVED', '신한카드', '424242', '4242', '00']);
    const rows = await callbackRows(p.id);
    assert.equal(rows.deliveries.length, 1);
    assert.equal(rows.jobs.length, 1);
  });

  test('a payment without CONFIRM_URL (as the invoicing side makes) is approved with no callback', async () => {
    const p = await waiting();
    await db().updateTable('payments').set({ confirm_url: null }).where('id', '=', p.id).execute();
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'APPROVED');
    assert.deepEqual(await callbackRows(p.id), { deliveries: [], jobs: [] });
  });

  test('a declined card keeps the network\'s message on its attempt and leaves the payment waiting', async () => {
    const p = await waiting();
    const r = await gateway().pay(p.id, card('4000000000009995'), '00');
    assert.equal(r.outcome, 'DECLINED');
    assert.equal((r as { message: string }).message, '잔액이 부족합니다');
    assert.equal(r.payment.state, 'STORE_REQUEST');
    const [a] = await attempts(p.id);
    assert.equal(a!.status, 'DECLINED');
    assert.equal(a!.message, '잔액이 부족합니다');
  });

  test('a lost answer (OutcomeUnknown) is PENDING: the attempt stays open and the log says why', async () => {
    const p = await waiting();
    processor.duringApprove = async () => {
      throw new OutcomeUnknown('card network timed out after 30000 ms');
    };
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'PENDING');
    assert.equal((r as { message: string }).message, '카드사 응답이 늦어 결제 결과를 확인하고 있습니다');
    assert.equal(r.payment.state, 'STORE_REQUEST');
    assert.deepEqual((await attempts(p.id)).map((a) => a.status), ['OPEN']);
    const line = logLines('approval outcome unknown; the attempt stays open for the reconcile').find((l) => l.payment === p.id);
    assert.ok(line, 'the warning names the payment');
    assert.equal(line.problem, 'card network timed out after 30000 ms');
  });

  test('any other failure of the network call is thrown, never taken for a pending answer', async () => {
    const p = await waiting();
    processor.duringApprove = async () => {
      throw new TypeError('fetch failed');
    };
    await assert.rejects(gateway().pay(p.id, card(), '00'), (e: unknown) => e instanceof TypeError && e.message === 'fetch failed');
    // It may have happened after the network acted: the attempt stays open for the reconcile.
    assert.deepEqual((await attempts(p.id)).map((a) => a.status), ['OPEN']);
  });

  test('an attempt settled as abandoned while the network approved: the charge is voided and the payment still waits', async () => {
    const p = await waiting();
    let attemptId = '';
    processor.duringApprove = async (req) => {
      attemptId = req.idempotencyKey;
      const answer = await processor.inner.approve(req);
      // What a reconcile on another instance does with an attempt it takes for abandoned.
      await db().updateTable('payment_attempts').set({ status: 'ERROR', closed_at: Date.now() }).where('id', '=', attemptId).execute();
      return answer;
    };
    const cancelsBefore = processor.cancels.length;
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'STATE');
    assert.equal(r.payment.state, 'STORE_REQUEST');
    const voids = processor.cancels.slice(cancelsBefore);
    assert.equal(voids.length, 1);
    const charge = (await processor.inner.lookup(attemptId)) as Extract<ApproveOutcome, { outcome: 'APPROVED' }>;
    assert.deepEqual(voids[0], {
      idempotencyKey: `void:${attemptId}`, approvalNumber: charge.approvalNumber, amount: p.amount, cardBin: '424242', cardLast4: '4242',
      processorRef: null, reason: '승인 기록 실패로 인한 자동 취소',
    });
    assert.deepEqual((await attempts(p.id)).map((a) => a.status), ['ERROR'], 'the reconcile\'s decision stands');
    assert.deepEqual(await callbackRows(p.id), { deliveries: [], jobs: [] });
    assert.ok(logLines('voided an approval whose attempt was settled as abandoned meanwhile').some((l) => l.payment === p.id && l.attempt === attemptId));
    // The customer can still pay.
    assert.equal((await gateway().pay(p.id, card(), '00')).outcome, 'APPROVED');
  });

  test('an attempt a reconcile already settled as APPROVED: that approval is the payment\'s, nothing is voided', async () => {
    const p = await waiting();
    processor.duringApprove = async (req) => {
      const answer = await processor.inner.approve(req);
      // A moved clock lets a reconcile in while the network is still answering.
      await t.app.sunap.clock.advance(120);
      try {
        assert.equal(await gateway().reconcile(p.id), true);
      } finally {
        await t.app.sunap.clock.reset();
      }
      return answer;
    };
    const cancelsBefore = processor.cancels.length;
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'APPROVED');
    assert.equal(r.payment.state, 'APPROVE_COMPLETE');
    assert.equal(processor.cancels.length, cancelsBefore, 'no void');
    assert.deepEqual((await attempts(p.id)).map((a) => a.status), ['APPROVED']);
    const rows = await callbackRows(p.id);
    assert.equal(rows.jobs.length, 1, 'one callback');
  });

  test('a payment that moved while the network approved is not overwritten: the charge is voided, the attempt CANCELED', async () => {
    const p = await waiting();
    let attemptId = '';
    processor.duringApprove = async (req) => {
      attemptId = req.idempotencyKey;
      // The slot keeps this from happening; the approval must not trust that alone.
      await db().updateTable('payments').set({ state: 'STORE_DELETE' }).where('id', '=', p.id).execute();
      return undefined;
    };
    const cancelsBefore = processor.cancels.length;
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'STATE');
    assert.equal(r.payment.state, 'STORE_DELETE');
    assert.deepEqual(processor.cancels.slice(cancelsBefore).map((c) => c.idempotencyKey), [`void:${attemptId}`]);
    const [a] = await attempts(p.id);
    assert.equal(a!.status, 'CANCELED');
    assert.equal(a!.message, 'voided: the payment was no longer waiting');
    assert.deepEqual(await callbackRows(p.id), { deliveries: [], jobs: [] });
  });

  test('a processor\'s own key of the approval is kept with the payment and given back to cancel it', async () => {
    const p = await waiting();
    processor.duringApprove = async (req) => ({ ...(await processor.inner.approve(req)), processorRef: 'tviva20261122143110abcd' });
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'APPROVED');
    assert.equal(r.payment.processor_ref, 'tviva20261122143110abcd');
    const n = processor.cancels.length;
    const c = rd(await t.gw('requestPaymentCancel', { TRANS_SEQNO: p.trans_seqno, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: String(p.amount), MOBILE_NO: p.mobile_no }));
    assert.equal(c.RESULT_CODE, '0000');
    assert.equal(processor.cancels[n]!.processorRef, 'tviva20261122143110abcd');
  });

  test('a failure while the approval commits leaves the attempt open for the reconcile, which finishes it; nothing is voided', async () => {
    let fail = true;
    gateway().addListener({
      onApproved: async () => {
        if (fail) throw new Error('invoice update failed');
      },
    });
    const p = await waiting();
    const cancels = processor.cancels.length;
    try {
      await assert.rejects(gateway().pay(p.id, card(), '00'), /invoice update failed/);
    } finally {
      fail = false;
    }
    assert.equal((await gateway().findById(p.id))!.state, 'STORE_REQUEST', 'the approval rolled back');
    assert.deepEqual((await attempts(p.id)).map((a) => a.status), ['OPEN']);
    assert.equal(processor.cancels.length, cancels, 'the charge is not voided');
    await t.app.sunap.clock.advance(120);
    try {
      assert.equal(await gateway().reconcile(p.id), true);
    } finally {
      await t.app.sunap.clock.reset();
    }
    assert.equal((await gateway().findById(p.id))!.state, 'APPROVE_COMPLETE');
    assert.deepEqual((await attempts(p.id)).map((a) => a.status), ['APPROVED']);
  });

  test('while another operation holds the payment, a second payer is told after the wait that it is being confirmed (never "already processed"), without asking the network', async () => {
    const p = await waiting();
    // A live attempt of another process (fresh, so no reconcile takes it for abandoned).
    await openAttempt(db(), { paymentId: p.id, kind: 'APPROVE', createdAt: t.app.sunap.clock.nowMs() });
    const approves = processor.approves.length;
    const r = await gateway().pay(p.id, card(), '00');
    assert.deepEqual([r.outcome, r.payment.state, 'message' in r && r.message], ['CONFIRMING', 'STORE_REQUEST', '앞선 결제 시도의 결과를 확인하고 있습니다']);
    assert.equal(processor.approves.length, approves);
  });

  test('the sandbox\'s pay call says the same of a payment another operation holds, and "already processed" only of one that is', async () => {
    const p = await waiting();
    const holder = await openAttempt(db(), { paymentId: p.id, kind: 'APPROVE', createdAt: t.app.sunap.clock.nowMs() });
    assert.deepEqual(await t.pay(p.trans_seqno), { approved: false, APPROVE_STATUS: 'STORE_REQUEST', message: '앞선 결제 시도의 결과를 확인하고 있습니다' });
    await db().updateTable('payment_attempts').set({ status: 'DECLINED', closed_at: Date.now() }).where('id', '=', holder).execute();
    assert.equal((await t.pay(p.trans_seqno)).approved, true);
    assert.deepEqual(await t.pay(p.trans_seqno), { approved: false, APPROVE_STATUS: 'APPROVE_COMPLETE', message: '이미 처리된 결제입니다 (APPROVE_COMPLETE)' });
  });

  test('a database failure while opening the attempt is thrown, never taken for a busy payment', async () => {
    const p = await waiting();
    // Only the attempt's insert fails, as a full disk would make it fail. Retried as if the
    // slot were taken, it would end as a STATE answer after the wait.
    await assert.rejects(withFailingInserts(db(), engine, 'payment_attempts', () => gateway().pay(p.id, card(), '00')), /simulated write failure/);
  });

  test('a second payer waits for the operation holding the payment and then goes ahead', async () => {
    const p = await waiting();
    const holder = await openAttempt(db(), { paymentId: p.id, kind: 'APPROVE', createdAt: t.app.sunap.clock.nowMs() });
    // The holder finishes (without paying) a moment later.
    const released = new Promise((r) => setTimeout(r, 400)).then(() =>
      db().updateTable('payment_attempts').set({ status: 'DECLINED', closed_at: Date.now() }).where('id', '=', holder).execute());
    const r = await gateway().pay(p.id, card(), '00');
    await released;
    assert.equal(r.outcome, 'APPROVED', 'it waited instead of answering busy at once');
  });

  test('a holder that turns abandoned while the second payer waits is settled, and the payer goes ahead', async () => {
    const p = await waiting();
    // Open for 1.5 s less than the limit: a process that died just before this payer came.
    await openAttempt(db(), { paymentId: p.id, kind: 'APPROVE', createdAt: t.app.sunap.clock.nowMs() - STALE_ATTEMPT_MS + 1500 });
    const r = await gateway().pay(p.id, card(), '00');
    assert.equal(r.outcome, 'APPROVED', 'the wait looked at the holder again once it had turned stale');
    assert.deepEqual((await attempts(p.id)).map((a) => a.status), ['ERROR', 'APPROVED']);
  });

  test('a listener that only cares about cancels does not stop approvals, and hears each cancel once', async () => {
    const heard: string[] = [];
    gateway().addListener({ onCanceled: async (_trx, payment) => void heard.push(payment.id) });
    const p = await approved();
    const c = rd(await t.gw('requestPaymentCancel', { TRANS_SEQNO: p.trans_seqno, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: String(p.amount), MOBILE_NO: p.mobile_no }));
    assert.equal(c.RESULT_CODE, '0000');
    assert.equal(rd(await t.gw('requestPaymentCancel', { TRANS_SEQNO: p.trans_seqno, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: String(p.amount), MOBILE_NO: p.mobile_no })).RESULT_CODE, '0000');
    assert.deepEqual(heard.filter((id) => id === p.id), [p.id]);
  });

  const cancel = (p: { trans_seqno: string; amount: number }, over: Record<string, unknown> = {}) =>
    t.gw('requestPaymentCancel', { TRANS_SEQNO: p.trans_seqno, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: String(p.amount), MOBILE_NO: '01012345678', ...over }).then(rd);

  test('a cancel tells the network the approval, the card, the amount and the merchant\'s reason, under the payment\'s cancel key', async () => {
    const p = await approved({ APPROVAL_AMOUNT: '77000' });
    const n = processor.cancels.length;
    assert.equal((await cancel(p, { CANCEL_REASON: '고객 변심' })).RESULT_CODE, '0000');
    assert.deepEqual(processor.cancels.slice(n), [{
      idempotencyKey: `cancel:${p.id}`, approvalNumber: p.approval_number, amount: 77000, cardBin: '424242', cardLast4: '4242', processorRef: null, reason: '고객 변심',
    }]);
    const q = await approved();
    const m = processor.cancels.length;
    assert.equal((await cancel(q)).RESULT_CODE, '0000');
    assert.equal(processor.cancels[m]!.reason, '결제 취소', 'without CANCEL_REASON');
  });

  test('cancelling a cancelled payment again: the same amount is done without a new attempt, another amount is 4007', async () => {
    const p = await approved({ APPROVAL_AMOUNT: '30000' });
    assert.equal((await cancel(p)).RESULT_CODE, '0000');
    const before = { attempts: (await attempts(p.id)).length, cancels: processor.cancels.length };
    assert.equal((await cancel(p)).RESULT_CODE, '0000');
    assert.equal((await attempts(p.id)).length, before.attempts, 'no attempt opened');
    assert.equal(processor.cancels.length, before.cancels, 'the network was not asked again');
    const other = await cancel(p, { APPROVAL_AMOUNT: '29999' });
    assert.equal(other.RESULT_CODE, '4007');
    assert.match(other.RESULT_MSG, /^APPROVAL_AMOUNT: .*\(30000\)$/);
  });

  test('the refusals of a cancel name the field and say what to do', async () => {
    const unpaid = await waiting();
    const r = await cancel(unpaid);
    assert.equal(r.RESULT_CODE, '4009');
    assert.equal(r.RESULT_MSG, 'REQUEST_TYPE: a payment in STORE_REQUEST cannot be cancelled; CANCEL is for approved payments');
    const noCat = await t.addStore({ cat: false });
    const body = paymentBody({ STORE_CODE: noCat });
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    const p = (await gateway().findByStore(t.platformCode, noCat, body.TRANS_SEQNO as string))!;
    assert.equal((await gateway().pay(p.id, card(), '00')).outcome, 'APPROVED');
    const c = await cancel(p, { STORE_CODE: noCat });
    assert.equal(c.RESULT_CODE, '4006');
    assert.equal(c.RESULT_MSG, 'STORE_CODE: the store has no online terminal (CAT) information; card cancels are not possible');
  });

  test('a card cancel that fails is 4004 with the network\'s reason and what to do', async () => {
    const p = await waiting();
    assert.equal((await gateway().pay(p.id, card('4000000000000259'), '00')).outcome, 'APPROVED');
    const r = await cancel(p);
    assert.equal(r.RESULT_CODE, '4004');
    assert.equal(r.RESULT_MSG, 'TRANS_SEQNO: the card cancel failed (카드사 취소 처리에 실패했습니다); the payment is CANCEL_FAIL, request CANCEL again to retry');
  });

  test('a cancel while another operation holds the payment is 4009 after the wait, without asking the network', async () => {
    const p = await approved();
    await openAttempt(db(), { paymentId: p.id, kind: 'CANCEL', createdAt: t.app.sunap.clock.nowMs() });
    const n = processor.cancels.length;
    const r = await cancel(p);
    assert.equal(r.RESULT_CODE, '4009');
    assert.equal(r.RESULT_MSG, 'TRANS_SEQNO: another operation on this payment is in progress; try again');
    assert.equal(processor.cancels.length, n);
    assert.equal((await gateway().findById(p.id))!.state, 'APPROVE_COMPLETE');
  });

  test('a failed card cancel: CANCEL_FAIL stamped now, the network\'s message on the FAILED attempt, a warning in the log', async () => {
    const p = await waiting();
    assert.equal((await gateway().pay(p.id, card('4000000000000259'), '00')).outcome, 'APPROVED');
    await t.app.sunap.clock.advance(90);
    try {
      const at = t.app.sunap.clock.nowMs();
      assert.equal((await cancel(p)).RESULT_CODE, '4004');
      const after = (await gateway().findById(p.id))!;
      assert.equal(after.state, 'CANCEL_FAIL');
      assert.ok(after.updated_at >= at, 'updated_at is the failed cancel\'s time');
    } finally {
      await t.app.sunap.clock.reset();
    }
    const failed = (await attempts(p.id)).filter((a) => a.kind === 'CANCEL');
    assert.deepEqual(failed.map((a) => [a.status, a.message]), [['FAILED', '카드사 취소 처리에 실패했습니다']]);
    assert.equal(logLines('card cancel failed').filter((l) => l.payment === p.id).length, 1);
    // The other side: a cancel that succeeds warns of nothing.
    const q = await approved();
    assert.equal((await cancel(q)).RESULT_CODE, '0000');
    assert.equal(logLines('card cancel failed').filter((l) => l.payment === q.id).length, 0);
  });

  test('a cancel another process finished while the network answered: done, nothing changed twice, listeners not called', async () => {
    const heard: string[] = [];
    gateway().addListener({ onCanceled: async (_trx, payment) => void heard.push(payment.id) });
    for (const answer of ['CANCELED', 'FAILED'] as const) {
      const p = await approved();
      processor.duringCancel = async () => {
        // What a reconcile on another instance leaves when it finished the same cancel.
        await db().updateTable('payments').set({ state: 'CANCEL_COMPLETE', cancel_at: 1, cancel_amount: p.amount }).where('id', '=', p.id).execute();
        return answer === 'CANCELED' ? { outcome: 'CANCELED' } : { outcome: 'FAILED', message: '이미 취소된 거래입니다' };
      };
      const r = await cancel(p);
      assert.equal(r.RESULT_CODE, '0000', answer);
      const after = (await gateway().findById(p.id))!;
      assert.equal(after.state, 'CANCEL_COMPLETE', answer);
      assert.equal(after.cancel_at, 1, `${answer}: the other process's record stands`);
      assert.deepEqual(heard.filter((id) => id === p.id), [], answer);
    }
  });

  const remove = (p: { trans_seqno: string; amount: number }, amount = p.amount) =>
    t.gw('requestPaymentCancel', { TRANS_SEQNO: p.trans_seqno, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: String(amount), MOBILE_NO: '01012345678' }).then(rd);

  test('DELETE of an unpaid payment: STORE_DELETE stamped now and a DELETED attempt; a paid one or another amount is refused by name', async () => {
    const p = await waiting({ APPROVAL_AMOUNT: '40000' });
    const wrong = await remove(p, 39000);
    assert.equal(wrong.RESULT_CODE, '4007');
    assert.equal(wrong.RESULT_MSG, 'APPROVAL_AMOUNT: does not match the requested amount (40000)');
    await t.app.sunap.clock.advance(90);
    try {
      const at = t.app.sunap.clock.nowMs();
      assert.equal((await remove(p)).RESULT_CODE, '0000');
      const after = (await gateway().findById(p.id))!;
      assert.equal(after.state, 'STORE_DELETE');
      assert.ok(after.updated_at >= at, 'updated_at is the delete\'s time');
    } finally {
      await t.app.sunap.clock.reset();
    }
    assert.deepEqual((await attempts(p.id)).map((a) => [a.kind, a.status, a.message]),
      [['DELETE', 'ERROR', 'APPROVAL_AMOUNT: does not match the requested amount (40000)'], ['DELETE', 'DELETED', null]]);
    assert.equal((await remove(p)).RESULT_CODE, '0000', 'a second DELETE is done');
    const paid = await approved();
    const r = await remove(paid);
    assert.equal(r.RESULT_CODE, '4009');
    assert.equal(r.RESULT_MSG, 'REQUEST_TYPE: a payment in APPROVE_COMPLETE cannot be deleted; DELETE is for unpaid requests');
  });

  test('a DELETE while the payment is being paid is 4009 after the wait', async () => {
    const p = await waiting();
    await openAttempt(db(), { paymentId: p.id, kind: 'APPROVE', createdAt: t.app.sunap.clock.nowMs() });
    const r = await remove(p);
    assert.equal(r.RESULT_CODE, '4009');
    assert.equal(r.RESULT_MSG, 'TRANS_SEQNO: the payment is being paid right now; try again');
    assert.equal((await gateway().findById(p.id))!.state, 'STORE_REQUEST');
  });

  test('a cancel a crashed process left open is finished by the reconcile, with the reason 결제 취소', async () => {
    const p = await approved();
    await openAttempt(db(), { paymentId: p.id, kind: 'CANCEL', createdAt: t.app.sunap.clock.nowMs() - 10 * 60_000 });
    const n = processor.cancels.length;
    assert.equal(await gateway().reconcile(p.id), true);
    assert.deepEqual(processor.cancels.slice(n).map((c) => [c.idempotencyKey, c.reason]), [[`cancel:${p.id}`, '결제 취소']]);
    assert.equal((await gateway().findById(p.id))!.state, 'CANCEL_COMPLETE');
  });
});

forEachEngine('an approval wakes the worker', (engine) => {
  // The worker looks for due jobs only once a minute: the callback arrives at once only if the
  // approval's commit wakes it.
  const t = withApp(engine, { SUNAP_JOB_POLL_MS: '60000' });
  const rx = withReceiver();

  test('the callback is sent right after the approval, not at the next poll', async () => {
    // Let the worker finish its first look at the queue and go to sleep.
    await new Promise((r) => setTimeout(r, 300));
    const body = paymentBody({ CONFIRM_URL: `${rx.url}/wake` });
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
    await rx.waitFor(1, 15_000);
    assert.equal(rx.received[0]!.url, '/wake');
  });
});
