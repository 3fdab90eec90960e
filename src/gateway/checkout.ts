import { newId } from '../platform/crypto.js';
import { OutcomeUnknown } from '../ports/card-processor.js';
import type { CheckoutProcessor, CheckoutProcessorId, CheckoutWindow, PayMethod } from '../ports/checkout.js';
import { applyResult, ORDER_MESSAGES, type OrderOutcome } from './checkout-commit.js';
import { sleep, type GatewayContext } from './context.js';
import { ProcessorUnavailable } from './processors.js';
import * as repo from './repository.js';
import type { Attempt, Payment } from './repository.js';
import { settleOrder } from './settle.js';
import { claimOrder } from './slot.js';

/**
 * The checkout (docs/reference.md, "Payment page"): the customer chooses a method, the page opens
 * the processor's window for one order (an attempt committed before anything else, its id the
 * order id), the window sends the browser back, and Sunap confirms for the payment's own amount.
 * A return seen before (a reload, the back button, a second tab) confirms nothing again.
 */

/** Hours a virtual account stays open: 7 days (docs/reference.md, "Virtual accounts"). */
export const ACCOUNT_HOURS = 168;

/** What the customer is told when the store's processor cannot be used now. */
export const CONFIG_MESSAGE = '결제 설정 문제로 지금은 결제할 수 없습니다. 가맹점에 문의해 주세요';

export type BeginResult =
  | { outcome: 'WINDOW'; orderId: string; window: CheckoutWindow }
  /** Not waiting for a payment (paid, closed, or a virtual account is open). */
  | { outcome: 'STATE'; payment: Payment }
  | { outcome: 'REFUSED'; payment: Payment; message: string };

export interface BeginOptions {
  /** The processor to use instead of the store's (the sandbox pay call plays the sandbox's window). */
  processor?: CheckoutProcessorId;
  /** Any method, offered or not (the sandbox pay call plays the customer). */
  anyMethod?: boolean;
  /** The success and fail addresses of an order (built by the gateway for its page). */
  returnUrls: (orderId: string) => { success: string; fail: string };
}

export async function beginCheckout(ctx: GatewayContext, paymentId: string, method: PayMethod, opts: BeginOptions): Promise<BeginResult> {
  const p = await repo.findPaymentById(ctx.db, paymentId);
  if (!p) throw new Error(`payment ${paymentId} not found`);
  if (p.state !== 'STORE_REQUEST' || repo.accountOpen(p)) return { outcome: 'STATE', payment: p };
  const store = (await repo.findStoreByCode(ctx.db, p.store_code))!;
  const way = await ctx.processors.storeWay(store.code);
  if (!opts.processor && way.way !== 'checkout') return { outcome: 'REFUSED', payment: p, message: '이 상점은 카드 정보 입력으로 결제합니다' };
  if (!opts.anyMethod && !way.methods.includes(method)) return { outcome: 'REFUSED', payment: p, message: '이 상점에서 받지 않는 결제수단입니다. 다른 결제수단을 선택해 주세요' };
  const id = opts.processor ?? way.processor;
  let adapter: CheckoutProcessor;
  try {
    adapter = await ctx.processors.checkout(id, store.code);
  } catch (err) {
    if (!(err instanceof ProcessorUnavailable)) throw err;
    ctx.log.error({ store: store.code, processor: id, problem: err.message }, 'the store\'s processor is not available; the customer cannot pay');
    return { outcome: 'REFUSED', payment: p, message: CONFIG_MESSAGE };
  }
  if (!adapter.methods.includes(method)) return { outcome: 'REFUSED', payment: p, message: '이 결제사로는 받을 수 없는 결제수단입니다' };
  const orderId = newId();
  // Committed before the processor hears of the order: every order it knows is on record here.
  await repo.openAttempt(ctx.db, { id: orderId, payment_id: p.id, kind: 'CHECKOUT', status: 'WINDOW', processor: id, method, now: ctx.clock.nowMs() });
  const urls = opts.returnUrls(orderId);
  try {
    const window = await adapter.begin({
      orderId, amount: p.amount, taxFreeAmount: p.tax_free_amount, orderName: p.request_reason.slice(0, 100), storeName: store.name, method,
      customer: { name: p.pay_user_name, phone: p.mobile_no }, successUrl: urls.success, failUrl: urls.fail, accountHours: ACCOUNT_HOURS,
    });
    return { outcome: 'WINDOW', orderId, window };
  } catch (err) {
    ctx.log.warn({ payment: p.id, processor: id, problem: (err as Error).message }, 'could not open the processor\'s window');
    await repo.closeAttempt(ctx.db, orderId, 'ERROR', ctx.clock.nowMs(), { message: (err as Error).message, from: ['WINDOW'] });
    return { outcome: 'REFUSED', payment: p, message: '결제창을 열지 못했습니다. 잠시 후 다시 시도해 주세요' };
  }
}

/** How long a second return of an order waits for the first one's confirm: 100 looks, 50 ms apart. */
const SEEN_TRIES = 100;

/**
 * The same order's return is being confirmed right now (a second tab, a double click): wait
 * for that confirm to end and show where the payment then stands, confirming nothing.
 */
async function seenAfter(ctx: GatewayContext, paymentId: string, orderId: string): Promise<ReturnResult> {
  let attempt = (await repo.findAttempt(ctx.db, orderId))!;
  for (let i = 0; attempt.status === 'OPEN' && i < SEEN_TRIES; i++) {
    await sleep(50);
    attempt = (await repo.findAttempt(ctx.db, orderId))!;
  }
  const payment = (await repo.findPaymentById(ctx.db, paymentId))!;
  if (attempt.status === 'OPEN') return { outcome: 'BUSY', payment };
  return { outcome: 'SEEN', payment, attempt };
}

export type ReturnResult =
  | OrderOutcome
  /** The order is not this payment's (or not a window's): nothing done. */
  | { outcome: 'UNKNOWN' }
  /** The return was handled before (a reload, a second tab): the payment as it stands, and the order's end. */
  | { outcome: 'SEEN'; payment: Payment; attempt: Attempt }
  /** Another operation holds the payment (a deletion): try again. */
  | { outcome: 'BUSY'; payment: Payment };

/**
 * The browser came back from the window. The amount the address claims is compared with the
 * payment's and never used; a failure closes the order; otherwise the order is confirmed once,
 * for the payment's own amount, its slot held while the processor answers.
 */
export async function returnFromWindow(ctx: GatewayContext, paymentId: string, orderId: string, outcome: 'success' | 'fail', query: Record<string, string>): Promise<ReturnResult> {
  const attempt = await repo.findAttempt(ctx.db, orderId);
  if (!attempt || attempt.payment_id !== paymentId || attempt.kind !== 'CHECKOUT' || !attempt.processor) return { outcome: 'UNKNOWN' };
  if (attempt.status === 'OPEN') return seenAfter(ctx, paymentId, orderId);
  const p = (await repo.findPaymentById(ctx.db, paymentId))!;
  if (attempt.status !== 'WINDOW') return { outcome: 'SEEN', payment: p, attempt };
  const id = attempt.processor as CheckoutProcessorId;
  const adapter = await ctx.processors.checkout(id, p.store_code);
  const reading = adapter.readReturn(query, outcome);
  const close = async (status: 'DECLINED' | 'ABANDONED', message: string): Promise<ReturnResult> => {
    if (!(await repo.closeAttempt(ctx.db, orderId, status, ctx.clock.nowMs(), { message, from: ['WINDOW'] }))) {
      return { outcome: 'SEEN', payment: (await repo.findPaymentById(ctx.db, paymentId))!, attempt: (await repo.findAttempt(ctx.db, orderId))! };
    }
    return { outcome: 'DECLINED', payment: p, message };
  };
  if (reading.orderId !== null && reading.orderId !== orderId) {
    ctx.log.warn({ payment: p.id, attempt: orderId }, 'a return named another order; nothing confirmed');
    return close('DECLINED', ORDER_MESSAGES.mismatch);
  }
  if (reading.failure) return close(reading.failure.code === 'PAY_PROCESS_CANCELED' ? 'ABANDONED' : 'DECLINED', reading.failure.message);
  // Paid by another order meanwhile (a second tab, a notice): this one may take nothing.
  if (p.state !== 'STORE_REQUEST' || repo.accountOpen(p)) return (await settleOrder(ctx, orderId, 'return')) ?? { outcome: 'STATE', payment: p };
  if (reading.amount !== null && reading.amount !== p.amount) {
    ctx.log.warn({ payment: p.id, attempt: orderId, expected: p.amount }, 'a return claimed another amount; the order is closed without a confirm');
    return close('DECLINED', ORDER_MESSAGES.tampered);
  }
  const claim = await claimOrder(ctx, p.id, orderId, 'WINDOW', reading.processorRef);
  if (claim === 'MOVED') return seenAfter(ctx, paymentId, orderId);
  if (claim === 'BUSY') return { outcome: 'BUSY', payment: p };
  try {
    const r = await adapter.confirm({ orderId, processorRef: reading.processorRef, amount: p.amount });
    return await applyResult(ctx, { payment: p, attempt, resting: 'WINDOW', processor: id, adapter }, r);
  } catch (err) {
    // The attempt stays OPEN: the reconcile settles it by a look-up under the order id.
    if (!(err instanceof OutcomeUnknown)) throw err;
    ctx.log.warn({ payment: p.id, attempt: orderId, problem: err.message }, 'confirm outcome unknown; the attempt stays open for the reconcile');
    return { outcome: 'PENDING', payment: p, message: ORDER_MESSAGES.checking };
  }
}
