import { cancelAtProcessor, commitCancel } from './cancellation.js';
import type { GatewayContext } from './context.js';
import { canApply } from './payment-state.js';
import { applyLookup, keyInOfAttempt } from './late-charge.js';
import * as repo from './repository.js';
import { settleOrder } from './settle.js';

import { INSTANCE_ID, ownerGone, ownerHostPrefix } from '../platform/instance.js';

import type { CardProcessor } from '../ports/card-processor.js';
import type { RefundAccount } from '../ports/checkout.js';

/** An attempt open this long was left by a dead process (processor calls time out well before). */
export const STALE_ATTEMPT_MS = 60_000;
/** Never sooner than this, whatever a processor says of its time limits. */
const STALE_FLOOR_MS = 10_000;
/**
 * A window nobody came back from this long is looked up once by the sweep and, when the
 * processor holds nothing paid for it, closed (ABANDONED). Toss lets an authenticated payment be
 * confirmed for 10 minutes and a window stay open for 30; an hour is past both.
 */
export const WINDOW_SWEEP_MS = 60 * 60_000;

/**
 * When an open attempt counts as abandoned: three times the longest call the processor's
 * adapter can make (its time limits and own retries), or STALE_ATTEMPT_MS for one that does
 * not say. Settling a live attempt by mistake is still safe (commitApproval voids a charge
 * whose attempt was settled otherwise); this only keeps that rare.
 */
export function staleAttemptMs(processor: Pick<CardProcessor, 'callLimitMs'>): number {
  return processor.callLimitMs ? Math.max(STALE_FLOOR_MS, 3 * processor.callLimitMs) : STALE_ATTEMPT_MS;
}

/**
 * An attempt left OPEN longer than any processor call takes, or held by a process of this host
 * that is gone (a restart after a crash: src/platform/instance.ts), belongs to a process that
 * died between the processor's answer and our commit. Ask the processor what it did under that
 * idempotency key (a checkout's order id) and finish the job, so the charge is neither lost
 * nor repeated.
 */
export async function reconcile(ctx: GatewayContext, paymentId: string): Promise<boolean> {
  const open = await repo.openAttemptOf(ctx.db, paymentId);
  if (!open) return false;
  if (ctx.clock.nowMs() - open.created_at < ctx.staleAttemptMs) {
    // Not stale: only an owner known to be gone lets it be settled now, by one process (the takeover).
    if (!ownerGone(open.owner, INSTANCE_ID) || !(await repo.takeOverAttempt(ctx.db, open.id, open.owner!))) return false;
  }
  const payment = (await repo.findPaymentById(ctx.db, paymentId))!;
  const now = ctx.clock.nowMs();
  if (open.kind === 'CHECKOUT') {
    await settleOrder(ctx, open.id, 'reconcile');
  } else if (open.kind === 'APPROVE') {
    // A charge pays the payment, or is refunded when the payment no longer waits; nothing found
    // rests the attempt as UNKNOWN, looked up again on a backoff while the processor keeps the order.
    const keyIn = await keyInOfAttempt(ctx, open, payment);
    await applyLookup(ctx, payment, open, await keyIn.adapter.lookup(open.id), keyIn, 'OPEN');
  } else if (open.kind === 'CANCEL' && canApply('cancel', payment.state)) {
    const refund = open.refund_sealed ? (JSON.parse(ctx.box.open(open.refund_sealed)) as RefundAccount) : null;
    await commitCancel(ctx, payment, open.id, await cancelAtProcessor(ctx, payment, '', refund), '');
  } else {
    // DELETE commits its state change and closes its attempt in one transaction: nothing to finish.
    await repo.closeAttempt(ctx.db, open.id, 'SKIPPED', now, { message: 'reconciled' });
  }
  ctx.log.warn({ payment: paymentId, attempt: open.id, kind: open.kind }, 'reconciled an attempt left open');
  return true;
}

/**
 * Reconciles every stale open attempt, and looks up the windows nobody came back from (the
 * server runs this periodically): a processor that charged without the customer's return
 * (PortOne's window pays by itself) is caught here even when its notice is lost.
 */
export async function reconcileAll(ctx: GatewayContext): Promise<number> {
  let n = 0;
  // First the attempts of this host's processes that are gone: settled at once, not once stale.
  for (const a of await repo.openAttemptsOfHost(ctx.db, ownerHostPrefix(), 100)) {
    if (ownerGone(a.owner) && (await reconcile(ctx, a.payment_id).catch(() => false))) n++;
  }
  for (const id of await repo.paymentsWithStaleAttempts(ctx.db, ctx.clock.nowMs() - ctx.staleAttemptMs, 100)) {
    if (await reconcile(ctx, id).catch(() => false)) n++;
  }
  for (const orderId of await repo.staleWindows(ctx.db, ctx.clock.nowMs() - WINDOW_SWEEP_MS, 100)) {
    if (await settleOrder(ctx, orderId, 'sweep').catch((err: Error) => ctx.log.warn({ attempt: orderId, problem: err.message }, 'could not look up a window left open'))) n++;
  }
  return n;
}
