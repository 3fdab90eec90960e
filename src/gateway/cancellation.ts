import type { CancelOutcome } from '../ports/card-processor.js';
import type { CheckoutProcessorId, RefundAccount } from '../ports/checkout.js';
import { GatewayCodes as C, GatewayError } from '../platform/errors.js';
import { bankByCode } from '../ports/banks.js';
import type { GatewayContext } from './context.js';
import { alreadyApplied, canApply, isTerminalPayPath } from './payment-state.js';
import { ProcessorUnavailable } from './processors.js';
import * as repo from './repository.js';
import type { Payment, Store } from './repository.js';
import { withSlot } from './slot.js';

const amountMismatch = (p: Payment) =>
  new GatewayError(C.AMOUNT_MISMATCH, `APPROVAL_AMOUNT: the requested cancel amount does not match the original approved amount (${p.amount})`);

/** The three fields a paid virtual account's refund needs (docs/reference.md, "Refunds to a bank account"). */
export const REFUND_FIELDS = 'REFUND_BANK_CODE, REFUND_ACCOUNT_NO, REFUND_HOLDER_NAME';

/**
 * The refund account of a CANCEL of a paid virtual account, checked: without any of the three
 * fields 4010 naming them; a field present but malformed 4002 naming it.
 */
export function checkedRefund(raw: Partial<RefundAccount> | null): RefundAccount {
  const bankCode = raw?.bankCode?.trim() ?? '';
  const accountNumber = (raw?.accountNumber ?? '').replace(/[\s-]/g, '');
  const holderName = raw?.holderName?.trim() ?? '';
  if (!bankCode || !accountNumber || !holderName) {
    throw new GatewayError(C.REFUND_ACCOUNT, `${REFUND_FIELDS}: required to cancel a payment made by virtual account; the refund goes to that bank account`);
  }
  if (!bankByCode(bankCode)) throw new GatewayError(C.VALIDATION, 'REFUND_BANK_CODE: must be a bank\'s standard three-digit code, such as 004 (KB국민은행) or 088 (신한은행)');
  if (!/^\d{6,20}$/.test(accountNumber)) throw new GatewayError(C.VALIDATION, 'REFUND_ACCOUNT_NO: must be 6 to 20 digits (dashes allowed)');
  if (holderName.length > 30) throw new GatewayError(C.VALIDATION, 'REFUND_HOLDER_NAME: must be 1 to 30 characters');
  return { bankCode, accountNumber, holderName };
}

/**
 * The processor call of a full cancel, under the payment's one cancel key (a retry refunds
 * nothing twice), at the processor the payment recorded. Without a reason (none given, or a
 * reconcile, which does not know the request's) the processor is told 결제 취소. A paid virtual
 * account refunds to `refund`.
 */
export async function cancelAtProcessor(ctx: GatewayContext, p: Payment, reason: string, refund: RefundAccount | null): Promise<CancelOutcome> {
  let proc;
  try {
    proc = await ctx.processors.forPayment(p);
  } catch (err) {
    if (!(err instanceof ProcessorUnavailable)) throw err;
    return { outcome: 'FAILED', message: `the payment's processor is not available: ${err.message}` };
  }
  if (proc.kind === 'key-in') {
    return proc.adapter.cancel({
      idempotencyKey: `cancel:${p.id}`, approvalNumber: p.approval_number ?? '', amount: p.amount, cardBin: p.card_bin ?? '', cardLast4: p.card_last4 ?? '',
      processorRef: p.processor_ref, reason: reason || '결제 취소',
    });
  }
  return proc.adapter.cancel({
    idempotencyKey: `cancel:${p.id}`, orderId: p.processor_order ?? '', processorRef: p.processor_ref, amount: p.amount, reason: reason || '결제 취소',
    refundAccount: p.method === 'VIRTUAL_ACCOUNT' ? refund : null,
  });
}

/**
 * Full cancel of an approved payment (CANCEL): CANCEL_FAIL retries the processor's cancel; a
 * CANCEL_COMPLETE payment answers as done (idempotent). The amount must be the approved one; a
 * paid virtual account needs the account to refund to (4010), sealed on the cancel's attempt
 * only while it is open. `onCanceled` runs in the transaction that cancels, and only when this
 * call made the payment CANCEL_COMPLETE (a repeat or a racing call that found it done does not):
 * one record per refund, whatever the number of requests (the console's audit row).
 */
/** 4008: a terminal's approval (KIOSK, VAN, CARD) is cancelled on that terminal, never through Sunap. */
export function terminalRefusal(p: Pick<Payment, 'pay_path'>): GatewayError {
  return new GatewayError(C.TERMINAL, `TRANS_SEQNO: approved on a terminal (${p.pay_path}); cancel it on that terminal`);
}

export async function cancelApproved(
  ctx: GatewayContext, store: Store, found: Payment, amount: number, reason: string, given: Partial<RefundAccount> | null = null,
  onCanceled?: (trx: repo.Db, payment: Payment) => Promise<void>,
): Promise<Payment> {
  // Here, not only in the API's route: the console's cancel and an invoice's refund come here too.
  if (isTerminalPayPath(found.pay_path)) throw terminalRefusal(found);
  let refund: RefundAccount | null = null;
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
    if (p.method === 'VIRTUAL_ACCOUNT') refund = checkedRefund(given);
    return 'GO';
  };
  if (check(found) === 'DONE') return found;
  const sealed = found.method === 'VIRTUAL_ACCOUNT' && refund ? ctx.box.seal(JSON.stringify(refund)) : null;
  const result = await withSlot(ctx, found.id, 'CANCEL', { processor: found.processor, refund_sealed: sealed }, async (attemptId) => {
    const p = (await repo.findPaymentById(ctx.db, found.id))!;
    if (check(p) === 'DONE') return p;
    const done = await commitCancel(ctx, p, attemptId, await cancelAtProcessor(ctx, p, reason, refund), reason, onCanceled);
    if (done.state !== 'CANCEL_COMPLETE') {
      const what = p.method && p.method !== 'CARD' ? 'the processor\'s cancel' : 'the card cancel';
      throw new GatewayError(C.CANCEL_FAILED, `TRANS_SEQNO: ${what} failed (${done.failure ?? 'no reason given'}); the payment is CANCEL_FAIL, request CANCEL again to retry`);
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
export async function commitCancel(
  ctx: GatewayContext, p: Payment, attemptId: string, r: CancelOutcome, reason: string, onCanceled?: (trx: repo.Db, payment: Payment) => Promise<void>,
): Promise<{ payment: Payment; state: Payment['state']; failure?: string }> {
  const now = ctx.clock.nowMs();
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    if (r.outcome === 'CANCELED') {
      const updated = await repo.transition(trx, p, 'cancel', { cancel_at: now, cancel_reason: reason, cancel_amount: p.amount, updated_at: now });
      await repo.closeAttempt(trx, attemptId, 'CANCELED', now);
      if (!updated) return { payment: (await repo.findPaymentById(trx, p.id))! };
      for (const l of ctx.listeners) await l.onCanceled?.(trx, updated);
      await onCanceled?.(trx, updated);
      return { payment: updated };
    }
    const updated = await repo.transition(trx, p, 'cancelFail', { updated_at: now });
    await repo.closeAttempt(trx, attemptId, 'FAILED', now, { message: r.message });
    return { payment: updated ?? (await repo.findPaymentById(trx, p.id))!, failure: r.message };
  });
  if (outcome.payment.state !== 'CANCEL_COMPLETE') ctx.log.warn({ payment: p.id }, 'card cancel failed');
  return { payment: outcome.payment, state: outcome.payment.state, failure: outcome.failure };
}

/**
 * DELETE of an unpaid payment; an already deleted one answers as done. The amount must be the
 * requested one. An open virtual account is closed at its processor first (so it takes no
 * deposit), then the account and the payment close in one transaction.
 */
export async function deletePayment(ctx: GatewayContext, found: Payment, amount: number): Promise<void> {
  const result = await withSlot(ctx, found.id, 'DELETE', {}, async (attemptId) => {
    const before = (await repo.findPaymentById(ctx.db, found.id))!;
    if (alreadyApplied('delete', before.state)) return 'ALREADY' as const;
    if (!canApply('delete', before.state, repo.accountOpen(before)) && !canApply('closeAccount', before.state, repo.accountOpen(before))) {
      throw new GatewayError(C.STATE, `REQUEST_TYPE: a payment in ${before.state} cannot be deleted; DELETE is for unpaid requests`);
    }
    if (amount !== before.amount) throw new GatewayError(C.AMOUNT_MISMATCH, `APPROVAL_AMOUNT: does not match the requested amount (${before.amount})`);
    if (repo.accountOpen(before)) await closeAtProcessor(ctx, before);
    return ctx.db.transaction().execute(async (trx) => {
      let p = (await repo.findPaymentById(trx, found.id))!;
      const now = ctx.clock.nowMs();
      if (repo.accountOpen(p)) {
        if (p.processor_order) await repo.closeAttempt(trx, p.processor_order, 'CLOSED', now, { message: 'closed: the payment was deleted', from: ['ISSUED'] });
        p = (await repo.transition(trx, p, 'closeAccount', { ...repo.NO_ACCOUNT, updated_at: now })) ?? p;
      }
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

/** Closes a payment's open virtual account at its processor; a refusal (a deposit came meanwhile) stops the DELETE. */
async function closeAtProcessor(ctx: GatewayContext, p: Payment): Promise<void> {
  const orderId = p.processor_order ?? '';
  let message: string;
  try {
    const adapter = await ctx.processors.checkout(p.processor as CheckoutProcessorId, p.store_code);
    const r = await adapter.closeAccount({ idempotencyKey: `close:${orderId}`, orderId, processorRef: p.processor_ref });
    if (r.outcome === 'CLOSED') return;
    message = r.message;
  } catch (err) {
    message = (err as Error).message;
  }
  ctx.log.warn({ payment: p.id, problem: message }, 'the processor did not close the virtual account; the payment stays waiting');
  throw new GatewayError(C.STATE, `TRANS_SEQNO: the virtual account could not be closed at the processor (${message}); the payment stays waiting, look it up and try again`);
}
