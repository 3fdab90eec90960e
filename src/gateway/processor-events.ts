import { timingSafeEqual } from 'node:crypto';
import { newId, sha256Hex } from '../platform/crypto.js';
import { CHECKOUT_PROCESSOR_IDS, type CheckoutProcessor, type CheckoutProcessorId, type RawEvent } from '../ports/checkout.js';
import type { GatewayContext } from './context.js';
import { finishEvent, recordEvent } from './events-repository.js';
import { ProcessorUnavailable } from './processors.js';
import * as repo from './repository.js';
import { settleOrder } from './settle.js';

/**
 * A processor's notices in (docs/reference.md, "Processor events"): a deposit into a virtual
 * account, a status change, a cancel made in the processor's dashboard. The adapter verifies
 * the notice (its signature, a virtual account's secret) and reads which order it is about;
 * what happened is then asked of the processor (`lookup`), never taken from the notice's body.
 * Each notice is recorded once per (processor, key) and shows in the payment's timeline; a
 * notice seen before answers as it did without acting again.
 *
 * Answers: 200 when handled (applied, or nothing to do: an order that is not ours), 401 when
 * the notice failed its verification, 404 for a processor or store Sunap does not know, 500
 * when it could not be handled now (the processor sends it again later).
 */
export interface EventAnswer {
  status: 200 | 401 | 404 | 500;
  outcome: 'APPLIED' | 'IGNORED' | 'REFUSED' | 'FAILED' | 'UNKNOWN' | 'DUPLICATE';
  detail: string;
}

const isCheckoutId = (v: string): v is CheckoutProcessorId => (CHECKOUT_PROCESSOR_IDS as readonly string[]).includes(v);

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function receiveEvent(ctx: GatewayContext, processor: string, storeCode: string | null, raw: RawEvent): Promise<EventAnswer> {
  if (!isCheckoutId(processor)) return { status: 404, outcome: 'UNKNOWN', detail: `processor: no such processor (${CHECKOUT_PROCESSOR_IDS.join(', ')})` };
  if (storeCode !== null && !(await repo.findStoreByCode(ctx.db, storeCode))) return { status: 404, outcome: 'UNKNOWN', detail: 'storeCode: no such store' };
  let adapter: CheckoutProcessor;
  try {
    adapter = await ctx.processors.checkout(processor, storeCode ?? '');
  } catch (err) {
    if (!(err instanceof ProcessorUnavailable)) throw err;
    return { status: 404, outcome: 'UNKNOWN', detail: `processor: ${err.message}` };
  }
  const reading = await adapter.readEvent(raw);
  const now = ctx.clock.nowMs();
  const id = newId();
  // A refused notice is keyed by its body and signature: a processor's retry of the same body, signed anew (Standard Webhooks), is read again.
  const key = (reading.ok && reading.event.key) || sha256Hex(raw.body.toString('latin1') + (reading.ok ? '' : (raw.headers['webhook-signature'] ?? '')));
  const recorded = await recordEvent(ctx.db, {
    id, processor, store_code: storeCode, event_key: key, event_type: reading.ok ? reading.event.type.slice(0, 100) : 'UNREADABLE',
    order_id: reading.ok ? reading.event.orderId : null, payment_id: null, received_at: now,
  });
  if (!recorded.fresh) {
    const e = recorded.existing;
    if (e.outcome === 'APPLIED' || e.outcome === 'IGNORED') return { status: 200, outcome: 'DUPLICATE', detail: `seen before: ${e.detail}` };
    if (e.outcome === 'REFUSED') return { status: 401, outcome: 'DUPLICATE', detail: `seen before: ${e.detail}` };
  }
  const rowId = recorded.fresh ? id : recorded.existing.id;
  const finish = async (a: EventAnswer, paymentId?: string | null): Promise<EventAnswer> => {
    const outcome = a.outcome === 'UNKNOWN' || a.outcome === 'DUPLICATE' ? 'IGNORED' : a.outcome;
    await finishEvent(ctx.db, rowId, { outcome, detail: a.detail, payment_id: paymentId, now: ctx.clock.nowMs() });
    if (a.outcome === 'REFUSED') ctx.log.warn({ processor, store: storeCode, problem: a.detail }, 'a processor notice failed its verification');
    return a;
  };
  if (!reading.ok) return finish({ status: 401, outcome: 'REFUSED', detail: reading.reason });
  const { event } = reading;
  if (!event.orderId) return finish({ status: 200, outcome: 'IGNORED', detail: 'not about a payment' });
  const attempt = await repo.findAttempt(ctx.db, event.orderId);
  if (!attempt || attempt.kind !== 'CHECKOUT') return finish({ status: 200, outcome: 'IGNORED', detail: 'no such order' });
  const p = (await repo.findPaymentById(ctx.db, attempt.payment_id))!;
  if (attempt.processor !== processor || (storeCode !== null && p.store_code !== storeCode)) {
    return finish({ status: 200, outcome: 'IGNORED', detail: 'the order is not this processor\'s or this store\'s' });
  }
  if (event.claimedSecret !== null && p.processor_order === attempt.id && p.vbank_secret_sealed && !sameSecret(event.claimedSecret, ctx.box.open(p.vbank_secret_sealed))) {
    return finish({ status: 401, outcome: 'REFUSED', detail: 'secret: does not match the virtual account\'s' }, p.id);
  }
  try {
    const r = await settleOrder(ctx, attempt.id, 'event');
    return finish({ status: 200, outcome: 'APPLIED', detail: r ? `looked up: ${r.outcome}` : 'looked up: nothing to change' }, p.id);
  } catch (err) {
    ctx.log.warn({ processor, attempt: attempt.id, problem: (err as Error).message }, 'could not settle an order after a processor notice; it will be sent again');
    return finish({ status: 500, outcome: 'FAILED', detail: (err as Error).message }, p.id);
  }
}
