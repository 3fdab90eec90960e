import { commitApproval } from './approval.js';
import { cancelAtProcessor, commitCancel } from './cancellation.js';
import type { GatewayContext } from './context.js';
import { canApply } from './payment-state.js';
import * as repo from './repository.js';

import type { CardProcessor } from '../ports/card-processor.js';

/** An attempt open this long was left by a dead process (processor calls time out well before). */
export const STALE_ATTEMPT_MS = 60_000;
/** Never sooner than this, whatever a processor says of its time limits. */
const STALE_FLOOR_MS = 10_000;

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
 * An attempt left OPEN longer than any processor call takes belongs to a process that died
 * between the processor's answer and our commit. Ask the processor what it did under that
 * idempotency key and finish the job, so the charge is neither lost nor repeated.
 */
export async function reconcile(ctx: GatewayContext, paymentId: string): Promise<boolean> {
  const open = await repo.openAttemptOf(ctx.db, paymentId);
  if (!open || ctx.clock.nowMs() - open.created_at < ctx.staleAttemptMs) return false;
  const payment = (await repo.findPaymentById(ctx.db, paymentId))!;
  const now = ctx.clock.nowMs();
  if (open.kind === 'APPROVE') {
    const r = await ctx.processor.lookup(open.id);
    if (r?.outcome === 'APPROVED' && canApply('approve', payment.state)) {
      await commitApproval(ctx, payment, open.id, r, { card_bin: open.card_bin ?? '', card_last4: open.card_last4 ?? '', installment_month: open.installment_month ?? '00' });
    } else {
      await repo.closeAttempt(ctx.db, open.id, r ? r.outcome : 'ERROR', now, { message: r ? null : 'abandoned: the processor has no record of it' });
    }
  } else if (open.kind === 'CANCEL' && canApply('cancel', payment.state)) {
    await commitCancel(ctx, payment, open.id, await cancelAtProcessor(ctx, payment, ''), '');
  } else {
    // DELETE commits its state change and closes its attempt in one transaction: nothing to finish.
    await repo.closeAttempt(ctx.db, open.id, 'SKIPPED', now, { message: 'reconciled' });
  }
  ctx.log.warn({ payment: paymentId, attempt: open.id, kind: open.kind }, 'reconciled an attempt left open');
  return true;
}

/** Reconciles every stale open attempt (the server runs this periodically). */
export async function reconcileAll(ctx: GatewayContext): Promise<number> {
  let n = 0;
  for (const id of await repo.paymentsWithStaleAttempts(ctx.db, ctx.clock.nowMs() - ctx.staleAttemptMs, 100)) {
    if (await reconcile(ctx, id).catch(() => false)) n++;
  }
  return n;
}
