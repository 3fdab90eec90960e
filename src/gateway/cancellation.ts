import type { CancelOutcome } from '../ports/card-processor.js';
import { GatewayCodes as C, GatewayError } from '../platform/errors.js';
import type { GatewayContext } from './context.js';
import { alreadyApplied, canApply } from './payment-state.js';
import * as repo from './repository.js';
import type { Payment, Store } from './repository.js';
import { withSlot } from './slot.js';

const amountMismatch = (p: Payment) =>
  new GatewayError(C.AMOUNT_MISMATCH, `APPROVAL_AMOUNT: the requested cancel amount does not match the original approved amount (${p.amount})`);

/**
 * The processor call of a full cancel, under the payment's one cancel key (a retry refunds
 * nothing twice). Without a reason (none given, or a reconcile, which does not know the
 * request's) the processor is told 결제 취소.
 */
export function cancelAtProcessor(ctx: GatewayContext, p: Payment, reason: string): Promise<CancelOutcome> {
  return ctx.processor.cancel({
    idempotencyKey: `cancel:${p.id}`, approvalNumber: p.approval_number ?? '', amount: p.amount, cardBin: p.card_bin ?? '', cardLast4: p.card_last4 ?? '',
    processorRef: p.processor_ref, reason: reason || '결제 취소',
  });
}

/**
 * Full cancel of an approved payment (CANCEL): CANCEL_FAIL retries the card cancel; a
 * CANCEL_COMPLETE payment answers as done (idempotent). The amount must be the approved one.
 */
export async function cancelApproved(ctx: GatewayContext, store: Store, found: Payment, amount: number, reason: string): Promise<Payment> {
  const check = (p: Payment): 'DONE' | 'GO' => {
    if (alreadyApplied('cancel', p.state)) {
      if (amount !== p.amount) throw amountMismatch(p);
      return 'DONE';
    }
    if (!canApply('cancel', p.state)) {
      throw new GatewayError(C.STATE, `REQUEST_TYPE: a payment in ${p.state} cannot be cancelled; CANCEL is for approved payments`);
    }
    if (amount !== p.amount) throw amountMismatch(p);
    if (!store.cat_enabled) throw new GatewayError(C.NO_CAT, 'STORE_CODE: the store has no online terminal (CAT) information; card cancels are not possible');
    return 'GO';
  };
  if (check(found) === 'DONE') return found;
  const result = await withSlot(ctx, found.id, 'CANCEL', {}, async (attemptId) => {
    const p = (await repo.findPaymentById(ctx.db, found.id))!;
    if (check(p) === 'DONE') return p;
    const done = await commitCancel(ctx, p, attemptId, await cancelAtProcessor(ctx, p, reason), reason);
    if (done.state !== 'CANCEL_COMPLETE') {
      throw new GatewayError(C.CANCEL_FAILED, `TRANS_SEQNO: the card cancel failed (${done.failure ?? 'no reason given'}); the payment is CANCEL_FAIL, request CANCEL again to retry`);
    }
    return done.payment;
  });
  if (result === 'BUSY') throw new GatewayError(C.STATE, 'TRANS_SEQNO: another operation on this payment is in progress; try again');
  ctx.wake();
  return result;
}

/**
 * Records what the processor answered to a cancel, in one transaction with the attempt's close
 * and (only when the payment really changed) the listeners. When the payment had moved on
 * meanwhile (a reconcile finished the same cancel), nothing changes and its state is reported.
 */
export async function commitCancel(ctx: GatewayContext, p: Payment, attemptId: string, r: CancelOutcome, reason: string): Promise<{ payment: Payment; state: Payment['state']; failure?: string }> {
  const now = ctx.clock.nowMs();
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    if (r.outcome === 'CANCELED') {
      const updated = await repo.transition(trx, p, 'cancel', { cancel_at: now, cancel_reason: reason, cancel_amount: p.amount, updated_at: now });
      await repo.closeAttempt(trx, attemptId, 'CANCELED', now);
      if (!updated) return { payment: (await repo.findPaymentById(trx, p.id))! };
      for (const l of ctx.listeners) await l.onCanceled?.(trx, updated);
      return { payment: updated };
    }
    const updated = await repo.transition(trx, p, 'cancelFail', { updated_at: now });
    await repo.closeAttempt(trx, attemptId, 'FAILED', now, { message: r.message });
    return { payment: updated ?? (await repo.findPaymentById(trx, p.id))!, failure: r.message };
  });
  if (outcome.payment.state !== 'CANCEL_COMPLETE') ctx.log.warn({ payment: p.id }, 'card cancel failed');
  return { payment: outcome.payment, state: outcome.payment.state, failure: outcome.failure };
}

/** DELETE of an unpaid payment; an already deleted one answers as done. The amount must be the requested one. */
export async function deletePayment(ctx: GatewayContext, found: Payment, amount: number): Promise<void> {
  const result = await withSlot(ctx, found.id, 'DELETE', {}, async (attemptId) => {
    return ctx.db.transaction().execute(async (trx) => {
      const p = (await repo.findPaymentById(trx, found.id))!;
      if (alreadyApplied('delete', p.state)) return 'ALREADY' as const;
      if (!canApply('delete', p.state)) {
        throw new GatewayError(C.STATE, `REQUEST_TYPE: a payment in ${p.state} cannot be deleted; DELETE is for unpaid requests`);
      }
      if (amount !== p.amount) throw new GatewayError(C.AMOUNT_MISMATCH, `APPROVAL_AMOUNT: does not match the requested amount (${p.amount})`);
      const now = ctx.clock.nowMs();
      const updated = await repo.transition(trx, p, 'delete', { updated_at: now });
      // The slot keeps every other operation away; a payment that moved anyway is reported, never overwritten.
      if (!updated) throw new GatewayError(C.STATE, 'TRANS_SEQNO: the payment changed while it was being deleted; look it up and try again');
      await repo.closeAttempt(trx, attemptId, 'DELETED', now);
      for (const l of ctx.listeners) await l.onDeleted?.(trx, updated);
      return 'DELETED' as const;
    });
  });
  if (result === 'BUSY') throw new GatewayError(C.STATE, 'TRANS_SEQNO: the payment is being paid right now; try again');
}
