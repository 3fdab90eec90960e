import type { Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import type { ApproveOutcome } from '../ports/card-processor.js';
import type { KeyInProcessorId } from '../ports/checkout.js';
import { commitApproval, type KeyIn } from './approval.js';
import type { GatewayContext } from './context.js';
import { canApply } from './payment-state.js';
import { ProcessorRegistry } from './processors.js';
import * as repo from './repository.js';
import type { Attempt, Payment } from './repository.js';
import { claimOrder } from './slot.js';

/**
 * A key-in approval the processor did not know when it was looked up (docs/reliability.md,
 * "A charge booked late"). Toss may book a charge after a look-up found nothing, and keeps the
 * order id and its Idempotency-Key for 15 days: the attempt rests as UNKNOWN (the customer may
 * pay again meanwhile) and is looked up again on this schedule until the processor answers, or
 * until the processor no longer keeps the order (`keepsOrdersMs`) or the schedule ends; then it
 * is ABANDONED. A charge found while the payment is still waiting pays it; one found after the
 * payment was paid by another attempt (or ended) is refunded at once, under the attempt's own
 * void key, and shown in the payment's timeline and the team's audit log.
 */
/** The first look again, after the look-up that found nothing. */
export const LATE_CHARGE_FIRST_LOOKUP_SECONDS = 60;
/**
 * Each next look after one that found nothing: 2, 5, 10, 30 min, 1, 2, 4, 8, 12 h, then daily.
 * With the first look this ends 14 days 3 h 48 min after the first look-up, inside the 15 days
 * Toss keeps an order (a test pins the sum).
 */
export const LATE_CHARGE_BACKOFF_SECONDS = [120, 300, 600, 1800, 3600, 7200, 14400, 28800, 43200, ...Array<number>(13).fill(86400)] as const;

export interface AttemptLookupPayload {
  paymentId: string;
  attemptId: string;
}

export interface AttemptLookupDeps {
  /** Looks the attempt up once; throws to look again on the schedule. `final`: the schedule's last look. */
  lookUp(payload: AttemptLookupPayload, final: boolean): Promise<void>;
}

export const ATTEMPT_LOOKUP_JOB: JobDefinition<AttemptLookupPayload, AttemptLookupDeps> = defineJob({
  kind: 'gateway.attempt-lookup',
  backoffSeconds: LATE_CHARGE_BACKOFF_SECONDS,
  run: (payload: AttemptLookupPayload, deps: AttemptLookupDeps, job) => deps.lookUp(payload, job.final),
});

/** What the timeline, the audit log and the log say of a refunded late charge. */
export interface LateRefund {
  attemptId: string;
  approvalNumber: string;
  amount: number;
}

/** Korean words of the attempt's record. */
export const LATE_CHARGE_MESSAGES = {
  unknown: '결제사에 아직 기록이 없어 다시 조회합니다',
  gaveUp: '결제사가 주문을 보관하는 기간 동안 기록이 없어 조회를 마쳤습니다',
  refunded: (r: LateRefund) => `늦게 확인된 승인 ${r.approvalNumber} (${r.amount.toLocaleString('ko-KR')}원): 이미 다른 시도로 결제된 결제라 자동 환불했습니다`,
} as const;

/** The attempt's key-in processor: the one on record, or the store's for an attempt made before processors were recorded. */
export async function keyInOfAttempt(ctx: GatewayContext, a: Attempt, p: Payment): Promise<KeyIn> {
  const way = await ctx.processors.storeWay(p.store_code);
  const id = (a.processor ?? ProcessorRegistry.processorIdOf({ processor: way.processor, way: 'key-in' })) as KeyInProcessorId;
  return { id, adapter: await ctx.processors.keyIn(id, p.store_code) };
}

/**
 * The look-up found nothing and the processor may still book the charge: the attempt gives the
 * slot back as UNKNOWN and its look-ups are scheduled, in one transaction. False when the
 * attempt was no longer OPEN (settled by another process).
 */
export async function restUnknown(ctx: GatewayContext, a: Pick<Attempt, 'id' | 'payment_id'>, storeCode: string): Promise<boolean> {
  const now = ctx.clock.nowMs();
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.closeAttempt(trx, a.id, 'UNKNOWN', now, { message: LATE_CHARGE_MESSAGES.unknown }))) return false;
    await scheduleLookups(trx, { paymentId: a.payment_id, attemptId: a.id, storeCode, now });
    return true;
  });
}

async function scheduleLookups(trx: Transaction<Database>, p: { paymentId: string; attemptId: string; storeCode: string; now: number }): Promise<void> {
  await enqueue(trx, ATTEMPT_LOOKUP_JOB, { paymentId: p.paymentId, attemptId: p.attemptId }, {
    runAt: p.now + LATE_CHARGE_FIRST_LOOKUP_SECONDS * 1000, uniqueKey: `attempt-lookup:${p.attemptId}`, now: p.now,
  });
}

/**
 * What a look-up of an open (OPEN, held by this process) or resting (UNKNOWN) key-in attempt
 * found, applied: a charge pays the payment if it still waits and is refunded otherwise; a
 * refusal closes the attempt; nothing found rests it as UNKNOWN when the processor may still
 * book it (OPEN only), and is final otherwise.
 */
export async function applyLookup(ctx: GatewayContext, p: Payment, a: Attempt, r: ApproveOutcome | null, keyIn: KeyIn, from: 'OPEN' | 'UNKNOWN'): Promise<void> {
  const now = ctx.clock.nowMs();
  const card = { card_bin: a.card_bin ?? '', card_last4: a.card_last4 ?? '', installment_month: a.installment_month ?? '00' };
  if (r?.outcome === 'APPROVED') {
    if (!canApply('approve', p.state, repo.accountOpen(p))) return refundLateCharge(ctx, p, a, r, keyIn, from);
    if (from === 'UNKNOWN') {
      // Paying takes the payment's slot, as any operation on it does.
      const c = await claimOrder(ctx, p.id, a.id, 'UNKNOWN');
      if (c === 'MOVED') return;
      if (c === 'BUSY') throw new Error(`payment ${p.id}: another operation holds it; the charge of attempt ${a.id} is applied at the next look`);
      const current = (await repo.findPaymentById(ctx.db, p.id))!;
      if (!canApply('approve', current.state, repo.accountOpen(current))) return refundLateCharge(ctx, current, a, r, keyIn, 'OPEN');
      await commitApproval(ctx, current, a.id, r, card, keyIn);
      return;
    }
    await commitApproval(ctx, p, a.id, r, card, keyIn);
    return;
  }
  if (r) {
    // The reconcile of an open attempt records the outcome alone, as it always did; a later look says what it found.
    await repo.closeAttempt(ctx.db, a.id, r.outcome, now, { message: from === 'OPEN' ? null : r.message, from: [from] });
    return;
  }
  if (from === 'OPEN' && keyIn.adapter.keepsOrdersMs && now - Number(a.created_at) < keyIn.adapter.keepsOrdersMs) {
    await restUnknown(ctx, a, p.store_code);
    return;
  }
  await repo.closeAttempt(ctx.db, a.id, from === 'OPEN' ? 'ERROR' : 'ABANDONED', now, { message: from === 'OPEN' ? 'abandoned: the processor has no record of it' : LATE_CHARGE_MESSAGES.gaveUp, from: [from] });
}

/**
 * A charge the payment cannot take (it was paid by another attempt, deleted or cancelled): the
 * processor refunds it under the attempt's void key (a repeat never refunds twice), then the
 * attempt closes REFUNDED with the listeners' records (the audit log) in one transaction. A
 * refusal leaves the attempt UNKNOWN with its look-ups scheduled, so the refund is asked again.
 */
async function refundLateCharge(ctx: GatewayContext, p: Payment, a: Attempt, r: Extract<ApproveOutcome, { outcome: 'APPROVED' }>, keyIn: KeyIn, from: 'OPEN' | 'UNKNOWN'): Promise<void> {
  const refund: LateRefund = { attemptId: a.id, approvalNumber: r.approvalNumber, amount: p.amount };
  const res = await keyIn.adapter.cancel({
    idempotencyKey: `void:${a.id}`, approvalNumber: r.approvalNumber, amount: p.amount, cardBin: a.card_bin ?? '', cardLast4: a.card_last4 ?? '',
    processorRef: r.processorRef ?? null, reason: '중복 결제 자동 환불',
  }).catch((err: Error) => ({ outcome: 'FAILED' as const, message: err.message }));
  if (res.outcome !== 'CANCELED') {
    ctx.log.error({ payment: p.id, attempt: a.id, problem: res.message }, 'could not refund a charge found after the payment was paid otherwise; asking again on the look-up schedule');
    if (from === 'OPEN') await restUnknown(ctx, a, p.store_code);
    throw new Error(`the refund of attempt ${a.id} was refused: ${res.message}`);
  }
  const now = ctx.clock.nowMs();
  const closed = await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.closeAttempt(trx, a.id, 'REFUNDED', now, { message: LATE_CHARGE_MESSAGES.refunded(refund), issuer_name: r.issuerName, from: [from] }))) return false;
    for (const l of ctx.listeners) await l.onLateChargeRefunded?.(trx, p, refund);
    return true;
  });
  if (closed) ctx.log.warn({ payment: p.id, attempt: a.id, approval: r.approvalNumber }, 'refunded a charge the processor booked after the payment was paid by another attempt');
}

/** The look-up job's run: one look at an UNKNOWN attempt. */
export async function lookUpUnknown(ctx: GatewayContext, payload: AttemptLookupPayload, final: boolean): Promise<void> {
  const a = await repo.findAttempt(ctx.db, payload.attemptId);
  if (!a || a.status !== 'UNKNOWN' || a.payment_id !== payload.paymentId) return;
  const p = (await repo.findPaymentById(ctx.db, a.payment_id))!;
  const keyIn = await keyInOfAttempt(ctx, a, p);
  const r = await keyIn.adapter.lookup(a.id);
  if (!r && !final && ctx.clock.nowMs() - Number(a.created_at) < (keyIn.adapter.keepsOrdersMs ?? 0)) {
    throw new Error(`the processor does not know attempt ${a.id} yet; looking again later`);
  }
  await applyLookup(ctx, p, a, r, keyIn, 'UNKNOWN');
  if (!r) ctx.log.warn({ payment: p.id, attempt: a.id }, 'the processor never booked an attempt whose outcome was unknown; its look-ups ended');
}
