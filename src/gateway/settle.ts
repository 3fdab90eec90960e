import type { CheckoutProcessorId, CheckoutResult } from '../ports/checkout.js';
import type { AccountExpiryPayload } from './account-expiry.js';
import { commitCancel } from './cancellation.js';
import { applyResult, commitClosed, ORDER_MESSAGES, type OrderOutcome } from './checkout-commit.js';
import type { GatewayContext } from './context.js';
import { canApply, type RestingStatus } from './payment-state.js';
import * as repo from './repository.js';
import type { Attempt, Payment } from './repository.js';
import { claimOrder, withSlot } from './slot.js';

/**
 * Settling an order by asking its processor (docs/reference.md, "Processor events"): never by
 * what a notice or a browser said. Used by a processor's notice, the sweep of windows nobody
 * came back from, the reconcile of an order a dead process left open, a return for a payment
 * that another order paid, and a virtual account's expiry.
 */
export type SettleWhy = 'return' | 'event' | 'sweep' | 'reconcile';

/** Why a settle could not act now and should be tried again (the processor will resend its notice). */
export class SettleBusy extends Error {
  override name = 'SettleBusy';
}

const adapterOf = (ctx: GatewayContext, a: Attempt, p: Payment) => ctx.processors.checkout(a.processor as CheckoutProcessorId, p.store_code);

/**
 * Looks the order up and applies what the processor holds. Null when there is nothing to settle
 * (not a checkout order, already ended, or moved on under us).
 */
export async function settleOrder(ctx: GatewayContext, orderId: string, why: SettleWhy): Promise<OrderOutcome | null> {
  const attempt = await repo.findAttempt(ctx.db, orderId);
  if (!attempt || attempt.kind !== 'CHECKOUT' || !attempt.processor) return null;
  const p = (await repo.findPaymentById(ctx.db, attempt.payment_id))!;
  const adapter = await adapterOf(ctx, attempt, p);
  let resting: RestingStatus;
  if (attempt.status === 'WINDOW' || attempt.status === 'ISSUED') {
    const c = await claimOrder(ctx, p.id, orderId, attempt.status);
    if (c === 'BUSY') throw new SettleBusy(`order ${orderId}: another operation holds the payment`);
    if (c === 'MOVED') return null;
    resting = attempt.status;
  } else if (attempt.status === 'OPEN' && why === 'reconcile') {
    resting = p.processor_order === orderId && repo.accountOpen(p) ? 'ISSUED' : 'WINDOW';
  } else if (attempt.status === 'APPROVED' && why === 'event') {
    return settlePaid(ctx, attempt, p);
  } else {
    return null;
  }
  let r: CheckoutResult | null;
  try {
    r = await adapter.lookup(orderId);
  } catch (err) {
    await repo.releaseAttempt(ctx.db, orderId, resting);
    throw err;
  }
  const o = { payment: (await repo.findPaymentById(ctx.db, p.id))!, attempt, resting, processor: attempt.processor as CheckoutProcessorId, adapter };
  // The sweep's last look, and a return for a payment another order paid, end a window that took nothing.
  return applyResult(ctx, o, r ?? { status: 'PENDING' }, { final: why === 'sweep' || why === 'return' });
}

/**
 * A notice about an order that paid: the processor may have cancelled it (in its own
 * dashboard). A look-up that says cancelled makes the payment CANCEL_COMPLETE with everything a
 * cancel causes; the processor is not asked to cancel again.
 */
async function settlePaid(ctx: GatewayContext, attempt: Attempt, p: Payment): Promise<OrderOutcome | null> {
  if (p.processor_order !== attempt.id || !canApply('cancel', p.state)) return null;
  const adapter = await adapterOf(ctx, attempt, p);
  const r = await adapter.lookup(attempt.id);
  if (r?.status !== 'CANCELED') return null;
  const done = await withSlot(ctx, p.id, 'CANCEL', { processor: p.processor }, async (attemptId) => {
    const current = (await repo.findPaymentById(ctx.db, p.id))!;
    if (!canApply('cancel', current.state)) return current;
    return (await commitCancel(ctx, current, attemptId, { outcome: 'CANCELED' }, '결제사에서 취소됨')).payment;
  });
  if (done === 'BUSY') throw new SettleBusy(`payment ${p.id}: another operation holds it`);
  ctx.wake();
  return { outcome: 'STATE', payment: done };
}

/**
 * The expiry job's run: past the due time, look the order up (a deposit may have come with its
 * notice lost), then close the account at the processor and make the payment payable again.
 * Throws to be run again later when it is early or the processor did not answer.
 */
export async function expireAccount(ctx: GatewayContext, { paymentId, orderId }: AccountExpiryPayload): Promise<void> {
  const p = await repo.findPaymentById(ctx.db, paymentId);
  if (!p || p.processor_order !== orderId || !repo.accountOpen(p)) return;
  if (ctx.clock.nowMs() < Number(p.vbank_due_at)) throw new Error(`the account of order ${orderId} is not due yet`);
  const attempt = await repo.findAttempt(ctx.db, orderId);
  if (!attempt || attempt.status !== 'ISSUED') throw new Error(`order ${orderId} is being settled by another operation`);
  const c = await claimOrder(ctx, p.id, orderId, 'ISSUED');
  if (c === 'MOVED') return;
  if (c === 'BUSY') throw new Error(`payment ${p.id}: another operation holds it`);
  const adapter = await adapterOf(ctx, attempt, p);
  const o = { payment: p, attempt, resting: 'ISSUED' as const, processor: attempt.processor as CheckoutProcessorId, adapter };
  let r: CheckoutResult | null;
  try {
    r = await adapter.lookup(orderId);
  } catch (err) {
    await repo.releaseAttempt(ctx.db, orderId, 'ISSUED');
    throw err;
  }
  if (r?.status === 'APPROVED') {
    await applyResult(ctx, o, r);
    return;
  }
  if (r?.status !== 'CLOSED' && r?.status !== 'CANCELED') {
    const closed = await adapter.closeAccount({ idempotencyKey: `close:${orderId}`, orderId, processorRef: p.processor_ref });
    if (closed.outcome !== 'CLOSED') {
      await repo.releaseAttempt(ctx.db, orderId, 'ISSUED');
      throw new Error(`the processor did not close the account of order ${orderId}: ${closed.message}`);
    }
  }
  await commitClosed(ctx, o, ORDER_MESSAGES.expired);
  ctx.log.info({ payment: p.id, attempt: orderId }, 'a virtual account passed its due time without a deposit; the payment is payable again');
}

export type CloseResult = { outcome: 'CLOSED'; payment: Payment } | { outcome: 'NONE'; payment: Payment } | { outcome: 'FAILED'; payment: Payment; message: string };

/**
 * The customer chose another way to pay while an account was open: the account closes at the
 * processor first (so it takes no deposit), then the payment is payable again. A processor that
 * refuses to close (the deposit came meanwhile) is looked up and its answer applied.
 */
export async function closeAccountForCustomer(ctx: GatewayContext, paymentId: string): Promise<CloseResult> {
  const p = (await repo.findPaymentById(ctx.db, paymentId))!;
  const orderId = p.processor_order;
  if (!repo.accountOpen(p) || !orderId) return { outcome: 'NONE', payment: p };
  const attempt = await repo.findAttempt(ctx.db, orderId);
  if (!attempt || attempt.status !== 'ISSUED') return { outcome: 'NONE', payment: p };
  const c = await claimOrder(ctx, p.id, orderId, 'ISSUED');
  if (c !== 'CLAIMED') return { outcome: 'FAILED', payment: p, message: '지금은 처리할 수 없습니다. 잠시 후 다시 시도해 주세요' };
  const adapter = await adapterOf(ctx, attempt, p);
  const closed = await adapter.closeAccount({ idempotencyKey: `close:${orderId}`, orderId, processorRef: p.processor_ref }).catch((err: Error) => ({ outcome: 'FAILED' as const, message: err.message }));
  const o = { payment: p, attempt, resting: 'ISSUED' as const, processor: attempt.processor as CheckoutProcessorId, adapter };
  if (closed.outcome === 'CLOSED') {
    const done = await commitClosed(ctx, o, ORDER_MESSAGES.closedByCustomer);
    return { outcome: 'CLOSED', payment: done.payment };
  }
  const r = await adapter.lookup(orderId).catch(() => null);
  const applied = r ? await applyResult(ctx, o, r) : (await repo.releaseAttempt(ctx.db, orderId, 'ISSUED'), null);
  return { outcome: 'FAILED', payment: applied?.payment ?? p, message: '가상계좌를 닫지 못했습니다. 이미 입금되었는지 확인해 주세요' };
}
