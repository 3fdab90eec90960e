import { OutcomeUnknown, type ApproveOutcome, type CardInput, type CardProcessor } from '../ports/card-processor.js';
import type { KeyInProcessorId } from '../ports/checkout.js';
import { GatewayCodes as C, GatewayError } from '../platform/errors.js';
import { recordCallback } from './callback.js';
import type { GatewayContext } from './context.js';
import { installmentProblem } from './installments.js';
import { ProcessorRegistry, ProcessorUnavailable } from './processors.js';
import * as repo from './repository.js';
import type { Payment } from './repository.js';
import { withSlot } from './slot.js';

export type PayResult =
  | { outcome: 'APPROVED'; payment: Payment }
  | { outcome: 'DECLINED' | 'ERROR'; payment: Payment; message: string }
  | { outcome: 'INVALID'; payment: Payment; message: string }
  /** The processor's answer was lost: the attempt stays open until a look-up settles it (reconcile.ts). */
  | { outcome: 'PENDING'; payment: Payment; message: string }
  /**
   * Another attempt held the payment past the wait (its processor call in flight, or a dead
   * process's attempt being looked up): this card was not sent; the payment is being confirmed.
   */
  | { outcome: 'CONFIRMING'; payment: Payment; message: string }
  | { outcome: 'STATE'; payment: Payment };

/** What a customer reads while another attempt on the payment is being settled. */
export const CONFIRMING_MESSAGE = '앞선 결제 시도의 결과를 확인하고 있습니다';

type CardFacts = { card_bin: string; card_last4: string; installment_month: string };

/** The key-in processor a card goes to, and its adapter with the store's keys. */
export interface KeyIn {
  id: KeyInProcessorId;
  adapter: CardProcessor;
}

/**
 * The store's key-in processor, or null when the store takes cards through a window (its page
 * never shows the card form; a card number sent anyway is never passed on).
 */
export async function keyInOf(ctx: GatewayContext, storeCode: string): Promise<KeyIn | null> {
  const way = await ctx.processors.storeWay(storeCode);
  if (way.way !== 'key-in') return null;
  const id = ProcessorRegistry.processorIdOf(way) as KeyInProcessorId;
  return { id, adapter: await ctx.processors.keyIn(id, storeCode) };
}

/**
 * The one path by which a customer pays (payment page and sandbox alike). The attempt row is
 * committed before the processor is called and carries its idempotency key; the approval
 * commits with a compare-and-set together with the callback job. A declined card leaves the
 * payment waiting, so the customer can try another.
 */
export async function pay(ctx: GatewayContext, paymentId: string, card: CardInput, installmentMonth: string): Promise<PayResult> {
  const payment = await repo.findPaymentById(ctx.db, paymentId);
  if (!payment) throw new GatewayError(C.NOT_FOUND_SEARCH, 'TRANS_SEQNO: no such transaction');
  if (payment.state !== 'STORE_REQUEST' || repo.accountOpen(payment)) return { outcome: 'STATE', payment };
  let keyIn: KeyIn | null;
  try {
    keyIn = await keyInOf(ctx, payment.store_code);
  } catch (err) {
    if (!(err instanceof ProcessorUnavailable)) throw err;
    ctx.log.error({ store: payment.store_code, problem: err.message }, 'the store\'s key-in processor is not available; the customer cannot pay');
    return { outcome: 'ERROR', payment, message: '결제 설정 문제로 지금은 결제할 수 없습니다. 가맹점에 문의해 주세요' };
  }
  if (!keyIn) return { outcome: 'INVALID', payment, message: '이 상점은 결제창으로 결제합니다. 카드 정보를 입력받지 않습니다' };
  const problem = installmentProblem(installmentMonth, payment.amount);
  if (problem === 'unknown') return { outcome: 'INVALID', payment, message: '할부 개월 수가 올바르지 않습니다' };
  if (problem === 'below-minimum') return { outcome: 'INVALID', payment, message: '할부는 50,000원 이상부터 가능합니다' };
  const facts: CardFacts = { card_bin: card.number.slice(0, 6), card_last4: card.number.slice(-4), installment_month: installmentMonth };
  const k = keyIn;
  const result = await withSlot(ctx, paymentId, 'APPROVE', { ...facts, processor: k.id, method: 'CARD' }, async (attemptId): Promise<PayResult> => {
    const current = (await repo.findPaymentById(ctx.db, paymentId))!;
    if (current.state !== 'STORE_REQUEST' || repo.accountOpen(current)) return { outcome: 'STATE', payment: current };
    const r = await k.adapter.approve({ idempotencyKey: attemptId, amount: current.amount, installmentMonth, card, orderName: current.request_reason });
    if (r.outcome !== 'APPROVED') {
      await repo.closeAttempt(ctx.db, attemptId, r.outcome, ctx.clock.nowMs(), { message: r.message });
      return { outcome: r.outcome, payment: current, message: r.message };
    }
    const approved = await commitApproval(ctx, current, attemptId, r, facts, k);
    if (!approved) return { outcome: 'STATE', payment: (await repo.findPaymentById(ctx.db, paymentId))! };
    return { outcome: 'APPROVED', payment: approved };
  }).catch((err: unknown) => {
    // withSlot left the attempt open: the reconcile settles it by a look-up under its key.
    if (!(err instanceof OutcomeUnknown)) throw err;
    ctx.log.warn({ payment: paymentId, problem: err.message }, 'approval outcome unknown; the attempt stays open for the reconcile');
    return 'PENDING' as const;
  });
  if (result === 'PENDING') {
    return { outcome: 'PENDING', payment: (await repo.findPaymentById(ctx.db, paymentId))!, message: '카드사 응답이 늦어 결제 결과를 확인하고 있습니다' };
  }
  if (result === 'BUSY') {
    // Never "already processed" for a payment that is still waiting: its state is not settled yet.
    const now = (await repo.findPaymentById(ctx.db, paymentId))!;
    return now.state === 'STORE_REQUEST' ? { outcome: 'CONFIRMING', payment: now, message: CONFIRMING_MESSAGE } : { outcome: 'STATE', payment: now };
  }
  return result;
}

/**
 * Commits an approval the processor gave: close the attempt, compare-and-set the payment,
 * enqueue the callback and let listeners act, in one transaction. The attempt is closed with
 * its own compare-and-set first, because a reconcile (another instance's sweep, or one that a
 * moved clock let in while the processor was still answering) may have settled it already:
 * then that decision stands. Settled as APPROVED, the approval is on record and is the
 * payment's; settled otherwise, this charge has no record and is voided. Returns null (and
 * voids the charge) too if the payment is no longer waiting, which the slot prevents.
 */
export async function commitApproval(ctx: GatewayContext, current: Payment, attemptId: string, r: Extract<ApproveOutcome, { outcome: 'APPROVED' }>, card: CardFacts, keyIn: KeyIn): Promise<Payment | null> {
  const now = ctx.clock.nowMs();
  const notWaiting = new Error('the payment is no longer waiting');
  const approved = await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.closeAttempt(trx, attemptId, 'APPROVED', now, { issuer_name: r.issuerName }))) return 'SETTLED' as const;
    const updated = await repo.transition(trx, current, 'approve', {
      approval_number: r.approvalNumber, approval_at: now, installment_month: card.installment_month, issuer_name: r.issuerName,
      accepter_name: r.accepterName, method_name: '신용카드', card_bin: card.card_bin, card_last4: card.card_last4, pay_path: 'WEB',
      processor_ref: r.processorRef ?? null, processor: keyIn.id, processor_order: attemptId, method: 'CARD', updated_at: now,
    });
    // Rolls the attempt's close back with it: the void below closes it as CANCELED.
    if (!updated) throw notWaiting;
    await recordCallback(trx, updated, now);
    for (const l of ctx.listeners) await l.onApproved?.(trx, updated);
    return updated;
  }).catch((err) => {
    if (err === notWaiting) return null;
    throw err;
  });
  const voidCharge = () => keyIn.adapter.cancel({
    idempotencyKey: `void:${attemptId}`, approvalNumber: r.approvalNumber, amount: current.amount, cardBin: card.card_bin, cardLast4: card.card_last4,
    processorRef: r.processorRef ?? null, reason: '승인 기록 실패로 인한 자동 취소',
  });
  if (approved === 'SETTLED') {
    if ((await repo.attemptStatus(ctx.db, attemptId)) === 'APPROVED') return (await repo.findPaymentById(ctx.db, current.id)) ?? null;
    await voidCharge();
    ctx.log.warn({ payment: current.id, attempt: attemptId }, 'voided an approval whose attempt was settled as abandoned meanwhile');
    return null;
  }
  if (!approved) {
    await voidCharge();
    await repo.closeAttempt(ctx.db, attemptId, 'CANCELED', now, { message: 'voided: the payment was no longer waiting' });
    return null;
  }
  ctx.wake();
  return approved;
}
