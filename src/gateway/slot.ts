import { newId } from '../platform/crypto.js';
import { GatewayError, isUniqueViolation } from '../platform/errors.js';
import type { PayMethod, ProcessorId } from '../ports/checkout.js';
import { sleep, type GatewayContext } from './context.js';
import type { AttemptKind, RestingStatus } from './payment-state.js';
import * as repo from './repository.js';

/** How long a second operation waits for the first: 100 tries, 50 ms apart (5 s). */
const SLOT_TRIES = 100;
const SLOT_WAIT_MS = 50;
/** Every this many tries, check whether the holder is a dead process and settle its attempt. */
const SETTLE_EVERY = 20;

/** What an attempt records besides its kind: the card's facts (key-in), its processor and method, a cancel's refund account (sealed). */
export interface AttemptFacts {
  card_bin?: string;
  card_last4?: string;
  installment_month?: string;
  processor?: ProcessorId | null;
  method?: PayMethod | null;
  refund_sealed?: string | null;
}

/**
 * Runs `fn` while holding the payment's single open-attempt slot (a partial unique index on
 * payment_attempts), waiting briefly when another operation holds it: two cancels, or a cancel
 * and a payment, never act on the same payment at once, on one instance or many. 'BUSY' when
 * the slot stayed taken.
 *
 * The slot is released when fn ends (a no-op when fn closed it itself; SKIPPED means nothing
 * needed doing). An unexpected failure (database or processor gone) may have happened after
 * the processor acted, so that attempt stays OPEN for the reconcile to settle.
 */
export async function withSlot<T>(
  ctx: GatewayContext,
  paymentId: string,
  kind: AttemptKind,
  facts: AttemptFacts,
  fn: (attemptId: string) => Promise<T>,
): Promise<T | 'BUSY'> {
  const attemptId = newId();
  for (let i = 0; ; i++) {
    try {
      await repo.openAttempt(ctx.db, { id: attemptId, payment_id: paymentId, kind, ...facts, now: ctx.clock.nowMs() });
      break;
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      if (i === SLOT_TRIES - 1) return 'BUSY';
      // The holder may be a process that died mid-operation: finish its work first.
      if (i % SETTLE_EVERY === 0 && (await ctx.reconcile(paymentId).catch(() => false))) continue;
      await sleep(SLOT_WAIT_MS);
    }
  }
  let result: T;
  try {
    result = await fn(attemptId);
  } catch (err) {
    if (err instanceof GatewayError) await repo.closeAttempt(ctx.db, attemptId, 'ERROR', ctx.clock.nowMs(), { message: err.message }).catch(() => {});
    throw err;
  }
  await repo.closeAttempt(ctx.db, attemptId, 'SKIPPED', ctx.clock.nowMs()).catch(() => {});
  return result;
}

/**
 * Takes the slot for an order that rests (a window, an issued account): its own attempt moves
 * to OPEN, waiting as withSlot does while another operation holds the slot. 'MOVED' when the
 * order is no longer resting there (another request settled it), 'BUSY' when the slot stayed taken.
 */
export async function claimOrder(ctx: GatewayContext, paymentId: string, orderId: string, from: RestingStatus, processorRef?: string | null): Promise<'CLAIMED' | 'MOVED' | 'BUSY'> {
  for (let i = 0; ; i++) {
    const r = await repo.claimAttempt(ctx.db, orderId, from, processorRef);
    if (r !== 'TAKEN') return r;
    if (i === SLOT_TRIES - 1) return 'BUSY';
    if (i % SETTLE_EVERY === 0 && (await ctx.reconcile(paymentId).catch(() => false))) continue;
    await sleep(SLOT_WAIT_MS);
  }
}
