import type { CheckoutProcessor, CheckoutProcessorId, CheckoutResult } from '../ports/checkout.js';
import { scheduleExpiry } from './account-expiry.js';
import { recordCallback } from './callback.js';
import type { GatewayContext } from './context.js';
import { askVoid, ORDER_VOID_MESSAGES, restVoiding } from './order-void.js';
import type { RestingStatus } from './payment-state.js';
import * as repo from './repository.js';
import type { Attempt, Payment } from './repository.js';

/**
 * What an order's result (a confirm's or a look-up's) does to its payment, the order's attempt
 * holding the slot (OPEN). Every change commits in one transaction with its attempt's close and
 * what it causes (the callback, the listeners, the account's expiry job). A charge the payment
 * can no longer take (it was paid meanwhile, or the amount is not its own) is voided at the
 * processor, never kept.
 */
export type OrderOutcome =
  | { outcome: 'APPROVED'; payment: Payment }
  /** A virtual account is open and waits for its deposit. */
  | { outcome: 'ISSUED'; payment: Payment }
  | { outcome: 'DECLINED'; payment: Payment; message: string }
  /** The order's virtual account closed without a deposit; the payment is payable again. */
  | { outcome: 'CLOSED'; payment: Payment }
  /** Nothing is known yet: the order rests again (a window still open, an account still waiting). */
  | { outcome: 'PENDING'; payment: Payment; message: string }
  /** The payment had moved on (paid by another order, deleted): this order took nothing. */
  | { outcome: 'STATE'; payment: Payment };

/** Korean words the pages show. */
export const ORDER_MESSAGES = {
  tampered: '결제 금액이 주문 금액과 달라 결제하지 않았습니다',
  mismatch: '결제 정보가 일치하지 않아 결제하지 않았습니다',
  checking: '결제사 응답이 늦어 결제 결과를 확인하고 있습니다',
  abandoned: '결제창에서 돌아오지 않아 결제하지 않았습니다',
  expired: '입금 기한이 지나 가상계좌가 닫혔습니다',
  closedByCustomer: '다른 결제수단을 선택해 가상계좌를 닫았습니다',
  closedByProcessor: '결제사에서 가상계좌를 닫았습니다',
} as const;

export interface ClaimedOrder {
  payment: Payment;
  attempt: Attempt;
  /** Where the order rested before the claim, and goes back to when nothing is decided. */
  resting: RestingStatus;
  processor: CheckoutProcessorId;
  adapter: CheckoutProcessor;
}

const fresh = async (ctx: GatewayContext, id: string) => (await repo.findPaymentById(ctx.db, id))!;

/** `final`: nothing decided counts as the end of the window (the sweep's last look). */
export async function applyResult(ctx: GatewayContext, o: ClaimedOrder, r: CheckoutResult, opts: { final?: boolean } = {}): Promise<OrderOutcome> {
  const { attempt } = o;
  const now = ctx.clock.nowMs();
  const p = await fresh(ctx, o.payment.id);
  switch (r.status) {
    case 'APPROVED':
      if (r.amount !== p.amount) return voidOrder(ctx, o, p, ORDER_MESSAGES.tampered);
      return commitPaid(ctx, o, p, r);
    case 'WAITING_FOR_DEPOSIT':
      if (o.resting === 'ISSUED') return release(ctx, o, p, '가상계좌에 입금을 기다리고 있습니다');
      if (r.amount !== p.amount) return voidOrder(ctx, o, p, ORDER_MESSAGES.tampered);
      return commitIssued(ctx, o, p, r);
    case 'DECLINED':
      if (o.resting === 'ISSUED') return commitClosed(ctx, o, ORDER_MESSAGES.closedByProcessor);
      await repo.closeAttempt(ctx.db, attempt.id, 'DECLINED', now, { message: r.message });
      return { outcome: 'DECLINED', payment: p, message: r.message };
    case 'CLOSED':
    case 'CANCELED':
      if (o.resting === 'ISSUED') return commitClosed(ctx, o, ORDER_MESSAGES.closedByProcessor);
      await repo.closeAttempt(ctx.db, attempt.id, 'ABANDONED', now, { message: '결제사에서 취소된 주문입니다' });
      return { outcome: 'DECLINED', payment: p, message: '결제사에서 취소된 주문입니다' };
    case 'PENDING':
      if (opts.final && o.resting === 'WINDOW') {
        await repo.closeAttempt(ctx.db, attempt.id, 'ABANDONED', now, { message: ORDER_MESSAGES.abandoned });
        return { outcome: 'DECLINED', payment: p, message: ORDER_MESSAGES.abandoned };
      }
      return release(ctx, o, p, ORDER_MESSAGES.checking);
  }
}

async function release(ctx: GatewayContext, o: ClaimedOrder, p: Payment, message: string): Promise<OrderOutcome> {
  await repo.releaseAttempt(ctx.db, o.attempt.id, o.resting);
  return { outcome: 'PENDING', payment: p, message };
}

/**
 * Paid: an approval, or the deposit into this order's open account (APPROVAL_DATETIME is then
 * the deposit's time). The attempt's close comes first and is itself a compare-and-set: a
 * reconcile that settled it otherwise meanwhile wins, and this charge is voided.
 */
async function commitPaid(ctx: GatewayContext, o: ClaimedOrder, p: Payment, r: Extract<CheckoutResult, { status: 'APPROVED' }>): Promise<OrderOutcome> {
  const now = ctx.clock.nowMs();
  const deposit = repo.accountOpen(p) && p.processor_order === o.attempt.id;
  const card = r.card;
  const notWaiting = new Error('the payment is no longer waiting for this order');
  const done = await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.closeAttempt(trx, o.attempt.id, 'APPROVED', now, { issuer_name: card?.issuerName ?? r.bankName ?? null }))) return 'SETTLED' as const;
    const updated = await repo.transition(trx, p, deposit ? 'deposit' : 'approve', {
      approval_number: card?.approvalNumber ?? '', approval_at: deposit ? (r.approvedAtMs ?? now) : now, installment_month: card ? card.installmentMonth : null,
      issuer_name: card ? card.issuerName : r.bankName, accepter_name: card ? card.accepterName : null, method_name: r.methodName,
      card_bin: card?.bin ?? null, card_last4: card?.last4 ?? null, pay_path: 'WEB', processor_ref: r.processorRef, processor: o.processor,
      processor_order: o.attempt.id, method: r.method, updated_at: now,
    });
    if (!updated) throw notWaiting;
    await recordCallback(trx, updated, now);
    for (const l of ctx.listeners) await l.onApproved?.(trx, updated);
    return updated;
  }).catch((err) => {
    if (err === notWaiting) return null;
    throw err;
  });
  if (done === 'SETTLED') {
    if ((await repo.attemptStatus(ctx.db, o.attempt.id)) === 'APPROVED') return { outcome: 'APPROVED', payment: await fresh(ctx, p.id) };
    return voidOrder(ctx, o, p, '이미 다른 방법으로 처리된 결제입니다', true);
  }
  if (!done) return voidOrder(ctx, o, p, '이미 처리된 결제라 이 결제는 취소했습니다');
  ctx.wake();
  return { outcome: 'APPROVED', payment: done };
}

/** A virtual account issued: the payment keeps waiting with the account on it, and its expiry is scheduled. */
async function commitIssued(ctx: GatewayContext, o: ClaimedOrder, p: Payment, r: Extract<CheckoutResult, { status: 'WAITING_FOR_DEPOSIT' }>): Promise<OrderOutcome> {
  const now = ctx.clock.nowMs();
  const a = r.account;
  const issued = await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.closeAttempt(trx, o.attempt.id, 'ISSUED', now, { issuer_name: a.bankName }))) return 'SETTLED' as const;
    const updated = await repo.transition(trx, p, 'issueAccount', {
      vbank_code: a.bankCode, vbank_name: a.bankName, vbank_account: a.accountNumber, vbank_holder: a.holder, vbank_due_at: a.dueAtMs,
      vbank_secret_sealed: r.secret ? ctx.box.seal(r.secret) : null, processor: o.processor, processor_order: o.attempt.id, processor_ref: r.processorRef,
      method: 'VIRTUAL_ACCOUNT', method_name: '가상계좌', updated_at: now,
    });
    if (!updated) {
      // Undo the attempt's close with the rest: the account is closed below instead.
      throw Object.assign(new Error('not waiting'), { notWaiting: true });
    }
    await scheduleExpiry(trx, { paymentId: p.id, orderId: o.attempt.id, storeCode: p.store_code, dueAtMs: a.dueAtMs, now });
    return updated;
  }).catch((err: { notWaiting?: boolean }) => {
    if (err.notWaiting) return null;
    throw err;
  });
  if (issued === 'SETTLED') return { outcome: 'STATE', payment: await fresh(ctx, p.id) };
  if (!issued) {
    // Paid or closed meanwhile: this account must take no deposit.
    const closed = await o.adapter.closeAccount({ idempotencyKey: `void:${o.attempt.id}`, orderId: o.attempt.id, processorRef: r.processorRef });
    await repo.closeAttempt(ctx.db, o.attempt.id, 'CLOSED', now, { message: closed.outcome === 'CLOSED' ? 'closed: the payment was no longer waiting' : `close failed: ${closed.message}` });
    return { outcome: 'STATE', payment: await fresh(ctx, p.id) };
  }
  ctx.wake();
  return { outcome: 'ISSUED', payment: issued };
}

/** The order's account closed without a deposit: the payment is payable again (VBANK fields back to ''/null). */
export async function commitClosed(ctx: GatewayContext, o: Pick<ClaimedOrder, 'payment' | 'attempt'>, message: string): Promise<OrderOutcome> {
  const now = ctx.clock.nowMs();
  await ctx.db.transaction().execute(async (trx) => {
    await repo.closeAttempt(trx, o.attempt.id, 'CLOSED', now, { message });
    const p = (await repo.findPaymentById(trx, o.payment.id))!;
    if (p.processor_order === o.attempt.id) await repo.transition(trx, p, 'closeAccount', { ...repo.NO_ACCOUNT, updated_at: now });
  });
  return { outcome: 'CLOSED', payment: await fresh(ctx, o.payment.id) };
}

/**
 * The order charged (or issued) what the payment cannot take: cancel it at the processor under
 * the order's own void key and close the attempt CANCELED. A refusal or a lost answer is not a
 * cancel: the attempt rests VOIDING with its retry queued (src/gateway/order-void.ts), which
 * looks the order up before asking again. `settled`: the attempt was closed by another (a
 * reconcile) already, which made the same void under the same key and owns its record.
 */
async function voidOrder(ctx: GatewayContext, o: ClaimedOrder, p: Payment, message: string, settled = false): Promise<OrderOutcome> {
  const r = await askVoid(o.adapter, o.attempt.id, p.amount);
  if (r !== 'LOST' && r.outcome === 'CANCELED') {
    ctx.log.warn({ payment: p.id, attempt: o.attempt.id }, 'voided an order the payment cannot take');
    if (!settled) await repo.closeAttempt(ctx.db, o.attempt.id, 'CANCELED', ctx.clock.nowMs(), { message: `voided: ${message}` });
  } else if (settled) {
    ctx.log.warn({ payment: p.id, attempt: o.attempt.id, problem: r === 'LOST' ? 'no answer' : r.message }, 'a void of an order another process settled was not confirmed; that process retries it');
  } else {
    const why = ORDER_VOID_MESSAGES.why(message === ORDER_MESSAGES.tampered);
    await restVoiding(ctx, p, o.attempt.id, r === 'LOST' ? ORDER_VOID_MESSAGES.lost(why) : ORDER_VOID_MESSAGES.refused(why, r.message));
  }
  const now = await fresh(ctx, p.id);
  return now.state === 'STORE_REQUEST' && message === ORDER_MESSAGES.tampered ? { outcome: 'DECLINED', payment: now, message } : { outcome: 'STATE', payment: now };
}
