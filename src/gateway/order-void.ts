import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import type { CancelResult, CheckoutProcessor, CheckoutProcessorId, CheckoutResult } from '../ports/checkout.js';
import type { GatewayContext } from './context.js';
import * as repo from './repository.js';
import type { Payment } from './repository.js';

/**
 * The automatic void of a window order the payment cannot take (docs/reliability.md, "A void
 * the processor refused or never answered"): a second order that charged after the payment was
 * paid by another, or a charge whose amount is not the payment's. src/gateway/checkout-commit.ts
 * asks the processor to cancel it under the order's void key; when the processor refuses, or its
 * answer is lost, the order is not cancelled and is not recorded so: its attempt rests VOIDING
 * (the charge stands at the processor, Sunap is taking it back), a job on this schedule is queued
 * in the same transaction, and the team's audit log says so. Each run first looks the order up
 * (a lost answer may have cancelled it: never guessed), cancels again under the same key while
 * it is still charged, and closes the attempt CANCELED once the processor says so. When the
 * schedule ends without that, the attempt closes FAILED and the team and the operator are told
 * to cancel it in the processor's dashboard.
 */
/** The first run, after the void that was refused or lost. */
export const ORDER_VOID_FIRST_SECONDS = 60;
/** Each next run after one that could not void: 5, 15 min, 1, 3, 6, 12 h, then daily three times: the last try 3 days 22 h 21 min after the refusal (a test pins the sum). */
export const ORDER_VOID_BACKOFF_SECONDS = [300, 900, 3600, 10_800, 21_600, 43_200, 86_400, 86_400, 86_400] as const;

export interface OrderVoidPayload {
  paymentId: string;
  attemptId: string;
}

export interface OrderVoidDeps {
  /** One try at the order's void; throws to try again on the schedule. `final`: the schedule's last try. */
  retry(payload: OrderVoidPayload, final: boolean): Promise<void>;
}

export const ORDER_VOID_JOB: JobDefinition<OrderVoidPayload, OrderVoidDeps> = defineJob({
  kind: 'gateway.order-void',
  backoffSeconds: ORDER_VOID_BACKOFF_SECONDS,
  run: (payload: OrderVoidPayload, deps: OrderVoidDeps, job) => deps.retry(payload, job.final),
});

/** What the timeline, the audit log and the log say of a void. `PENDING`: refused or lost, retrying; `VOIDED`: done after a retry; `FAILED`: given up. */
export interface OrderVoidEvent {
  attemptId: string;
  outcome: 'PENDING' | 'VOIDED' | 'FAILED';
  amount: number;
  detail: string;
}

/** Korean words of the attempt's record (the payment's timeline shows them). */
export const ORDER_VOID_MESSAGES = {
  /** Why the order is voided, as the team reads it (never "cancelled": it is not yet). */
  why: (tampered: boolean) => (tampered ? '주문 금액과 다른 결제' : '이미 다른 주문으로 결제된 결제'),
  refused: (why: string, problem: string) => `${why}라 자동 취소를 요청했으나 결제사가 거절해 다시 요청합니다: ${problem}`,
  lost: (why: string) => `${why}라 자동 취소를 요청했으나 결제사 응답이 없어, 조회한 뒤 다시 요청합니다`,
  voided: '주문과 맞지 않는 결제를 다시 요청해 자동 취소했습니다',
  nothingCharged: '결제사에 남은 승인이 없어 취소할 것이 없었습니다',
  gaveUp: '자동 취소를 마치지 못했습니다. 결제사 관리자 화면에서 이 주문을 취소해 주세요',
} as const;

/** The void's own cancel: a throw (a timeout, a lost connection) is an answer we do not have. */
export async function askVoid(adapter: CheckoutProcessor, attemptId: string, amount: number): Promise<CancelResult | 'LOST'> {
  return adapter.cancel({ idempotencyKey: `void:${attemptId}`, orderId: attemptId, processorRef: null, amount, reason: '주문과 맞지 않는 결제 자동 취소', refundAccount: null })
    .catch(() => 'LOST' as const);
}

/**
 * The void was refused or its answer lost: the attempt (OPEN, held by this process) rests VOIDING
 * with why, the retry is queued and the team's audit log told, in one transaction. False when the
 * attempt was no longer OPEN (another process settled it, and owns its void).
 */
export async function restVoiding(ctx: GatewayContext, p: Payment, attemptId: string, message: string): Promise<boolean> {
  const now = ctx.clock.nowMs();
  const done = await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.closeAttempt(trx, attemptId, 'VOIDING', now, { message }))) return false;
    await enqueue(trx, ORDER_VOID_JOB, { paymentId: p.id, attemptId }, {
      runAt: now + ORDER_VOID_FIRST_SECONDS * 1000, uniqueKey: `order-void:${attemptId}`, now, storeCode: p.store_code,
    });
    for (const l of ctx.listeners) await l.onOrderVoid?.(trx, p, { attemptId, outcome: 'PENDING', amount: p.amount, detail: message });
    return true;
  });
  if (done) {
    ctx.log.error({ payment: p.id, attempt: attemptId, problem: message }, 'the processor did not void an order the payment cannot take; retrying on the order-void schedule');
    ctx.wake();
  }
  return done;
}

const charged = (r: CheckoutResult | null) => r?.status === 'APPROVED' || r?.status === 'WAITING_FOR_DEPOSIT';
/** The processor holds nothing to take back: cancelled (by us or in its dashboard), refused, closed. */
const nothingLeft = (r: CheckoutResult | null) => r?.status === 'CANCELED' || r?.status === 'DECLINED' || r?.status === 'CLOSED';

/** The job's run: one try at a VOIDING order's void. */
export async function retryVoid(ctx: GatewayContext, payload: OrderVoidPayload, final: boolean): Promise<void> {
  const a = await repo.findAttempt(ctx.db, payload.attemptId);
  if (!a || a.status !== 'VOIDING' || a.payment_id !== payload.paymentId || !a.processor) return;
  const p = (await repo.findPaymentById(ctx.db, a.payment_id))!;
  try {
    const adapter = await ctx.processors.checkout(a.processor as CheckoutProcessorId, p.store_code);
    // A lost answer may have voided it already: the processor says, never a guess.
    const found = await adapter.lookup(a.id);
    if (nothingLeft(found)) {
      await settle(ctx, p, a.id, 'CANCELED', found?.status === 'CANCELED' ? ORDER_VOID_MESSAGES.voided : ORDER_VOID_MESSAGES.nothingCharged, 'VOIDED');
      return;
    }
    if (!charged(found)) throw new Error(`the processor answers ${found ? found.status : 'nothing'} for order ${a.id}, which it charged; looking again later`);
    const r = await askVoid(adapter, a.id, p.amount);
    if (r === 'LOST') throw new Error(`the void of order ${a.id} got no answer; looking it up at the next try`);
    if (r.outcome !== 'CANCELED') throw new Error(`the processor refused the void of order ${a.id}: ${r.message}`);
    await settle(ctx, p, a.id, 'CANCELED', ORDER_VOID_MESSAGES.voided, 'VOIDED');
  } catch (err) {
    if (final) {
      await settle(ctx, p, a.id, 'FAILED', `${ORDER_VOID_MESSAGES.gaveUp}: ${(err as Error).message}`.slice(0, 500), 'FAILED');
      ctx.log.error({ payment: p.id, attempt: a.id, problem: (err as Error).message }, 'gave up voiding an order the payment cannot take: cancel it in the processor\'s dashboard');
    } else {
      ctx.log.warn({ payment: p.id, attempt: a.id, problem: (err as Error).message }, 'could not void an order the payment cannot take yet; trying again on the schedule');
    }
    throw err;
  }
}

/** The void's end, from VOIDING, with its audit row, in one transaction. */
async function settle(ctx: GatewayContext, p: Payment, attemptId: string, status: 'CANCELED' | 'FAILED', message: string, outcome: 'VOIDED' | 'FAILED'): Promise<void> {
  const now = ctx.clock.nowMs();
  const closed = await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.closeAttempt(trx, attemptId, status, now, { message, from: ['VOIDING'] }))) return false;
    for (const l of ctx.listeners) await l.onOrderVoid?.(trx, p, { attemptId, outcome, amount: p.amount, detail: message });
    return true;
  });
  if (closed && outcome === 'VOIDED') ctx.log.warn({ payment: p.id, attempt: attemptId }, 'voided an order the payment cannot take, after a retry');
}

/** Orders whose void is still being retried (VOIDING), for the operator's gauge. */
export async function countVoiding(db: Kysely<Database>): Promise<{ key: string; n: number }[]> {
  const r = await db.selectFrom('payment_attempts').select((eb) => eb.fn.countAll<string | number>().as('n')).where('status', '=', 'VOIDING').executeTakeFirst();
  return [{ key: 'pending', n: Number(r?.n ?? 0) }];
}
