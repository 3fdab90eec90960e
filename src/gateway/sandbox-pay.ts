import { EASY_PAYS, type PayMethod } from '../ports/checkout.js';
import { SandboxCheckout, windowCardOf, type WindowAction } from '../ports/sandbox-checkout.js';
import type { SandboxChoice } from '../ports/sandbox-network.js';
import { kstCompact } from '../platform/kst.js';
import { CONFIRMING_MESSAGE, pay } from './approval.js';
import { beginCheckout, returnFromWindow, type BeginOptions, type ReturnResult } from './checkout.js';
import type { GatewayContext } from './context.js';
import { installmentProblem, LUMP_SUM } from './installments.js';
import { receiveEvent } from './processor-events.js';
import * as repo from './repository.js';
import type { Payment } from './repository.js';

/**
 * The sandbox's calls that play the customer and the bank (docs/reference.md, "Sandbox"):
 * `pay` goes through the same code as the page (a key-in store's card form for a card; the
 * sandbox's window for every other case, whatever methods the store offers), `deposit` pays an
 * open virtual account and posts the processor's notice to Sunap, `dashboardCancel` cancels in
 * the processor's "dashboard" and posts its status notice.
 */

/** The card the sandbox pay call uses when none is given (docs/reference.md, "Sandbox"). */
export const DEFAULT_SANDBOX_CARD = { number: '4242424242424242', expiryMonth: '12', expiryYear: '99', holderId: '900101', passwordDigits: '00' };

export interface SandboxPayRequest {
  method?: PayMethod;
  easyPay?: string;
  cardNumber?: string;
  installmentMonth?: string;
}

export type SandboxPayAnswer =
  | { approved: boolean; APPROVE_STATUS: string; message: string }
  | { approved: false; APPROVE_STATUS: 'STORE_REQUEST'; VBANK_NAME: string; VBANK_ACCOUNT: string; VBANK_HOLDER: string; VBANK_DUE: string | null };

const APPROVED = '승인되었습니다';
// A payment still waiting is never "already processed": an operation on it is in flight.
const stateMessage = (p: Payment) => (p.state === 'STORE_REQUEST' ? CONFIRMING_MESSAGE : `이미 처리된 결제입니다 (${p.state})`);

async function sandboxOf(ctx: GatewayContext, storeCode: string): Promise<SandboxCheckout> {
  const adapter = await ctx.processors.checkout('sandbox', storeCode);
  if (!(adapter instanceof SandboxCheckout)) throw new Error('the sandbox processor is not the sandbox adapter');
  return adapter;
}

export async function sandboxPay(ctx: GatewayContext, p: Payment, req: SandboxPayRequest, returnUrls: BeginOptions['returnUrls']): Promise<SandboxPayAnswer> {
  const method = req.method ?? 'CARD';
  const installment = req.installmentMonth ?? LUMP_SUM;
  if (repo.accountOpen(p)) return { approved: false, APPROVE_STATUS: p.state, message: '가상계좌가 발급되어 입금을 기다리는 결제입니다' };
  const way = await ctx.processors.storeWay(p.store_code);
  if (method === 'CARD' && way.way === 'key-in') {
    const r = await pay(ctx, p.id, { ...DEFAULT_SANDBOX_CARD, number: req.cardNumber ?? DEFAULT_SANDBOX_CARD.number }, installment);
    return { approved: r.outcome === 'APPROVED', APPROVE_STATUS: r.payment.state, message: r.outcome === 'APPROVED' ? APPROVED : r.outcome === 'STATE' ? stateMessage(r.payment) : r.message };
  }
  if (p.state !== 'STORE_REQUEST') return { approved: false, APPROVE_STATUS: p.state, message: stateMessage(p) };
  if (method === 'CARD') {
    const problem = installmentProblem(installment, p.amount);
    if (problem === 'unknown') return { approved: false, APPROVE_STATUS: p.state, message: '할부 개월 수가 올바르지 않습니다' };
    if (problem === 'below-minimum') return { approved: false, APPROVE_STATUS: p.state, message: '할부는 50,000원 이상부터 가능합니다' };
  }
  const begun = await beginCheckout(ctx, p.id, method, { processor: 'sandbox', anyMethod: true, returnUrls });
  if (begun.outcome === 'STATE') return { approved: false, APPROVE_STATUS: begun.payment.state, message: stateMessage(begun.payment) };
  if (begun.outcome === 'REFUSED') return { approved: false, APPROVE_STATUS: begun.payment.state, message: begun.message };
  const choice: SandboxChoice = {
    card: method === 'CARD' ? windowCardOf(req.cardNumber ?? DEFAULT_SANDBOX_CARD.number) ?? 'unknown' : undefined,
    installment: method === 'CARD' ? installment : undefined,
    easyPay: method === 'EASY_PAY' ? (req.easyPay && (EASY_PAYS as readonly string[]).includes(req.easyPay) ? req.easyPay : EASY_PAYS[0]) : undefined,
  };
  const back = await playWindow(ctx, p, begun.orderId, { action: 'approve', choice });
  return answer(back);
}

/** Plays the window and follows the browser back to the return, as the page does. */
export async function playWindow(ctx: GatewayContext, p: Payment, orderId: string, act: WindowAction): Promise<ReturnResult> {
  const url = await (await sandboxOf(ctx, p.store_code)).play(orderId, act);
  if (!url) return { outcome: 'UNKNOWN' };
  const u = new URL(url, 'http://sunap.invalid');
  return returnFromWindow(ctx, p.id, orderId, u.pathname.endsWith('/return/fail') ? 'fail' : 'success', Object.fromEntries(u.searchParams));
}

function answer(r: ReturnResult): SandboxPayAnswer {
  switch (r.outcome) {
    case 'APPROVED':
      return { approved: true, APPROVE_STATUS: r.payment.state, message: APPROVED };
    case 'ISSUED': {
      const p = r.payment;
      return {
        approved: false, APPROVE_STATUS: 'STORE_REQUEST', VBANK_NAME: p.vbank_name, VBANK_ACCOUNT: p.vbank_account, VBANK_HOLDER: p.vbank_holder,
        VBANK_DUE: p.vbank_due_at === null ? null : kstCompact(Number(p.vbank_due_at)),
      };
    }
    case 'DECLINED':
    case 'PENDING':
      return { approved: false, APPROVE_STATUS: r.payment.state, message: r.message };
    case 'CLOSED':
    case 'STATE':
    case 'SEEN':
    case 'BUSY':
      return { approved: false, APPROVE_STATUS: r.payment.state, message: stateMessage(r.payment) };
    case 'UNKNOWN':
      return { approved: false, APPROVE_STATUS: 'STORE_REQUEST', message: '결제창이 닫혔습니다' };
  }
}

/** The bank deposits the full amount into the payment's open sandbox account; null without one. */
export async function sandboxDeposit(ctx: GatewayContext, p: Payment): Promise<Payment | null> {
  if (!repo.accountOpen(p) || p.processor !== 'sandbox' || !p.processor_order) return null;
  const notice = await (await sandboxOf(ctx, p.store_code)).deposit(p.processor_order);
  if (!notice) return null;
  const a = await receiveEvent(ctx, 'sandbox', null, notice);
  if (a.status !== 200) throw new Error(`the sandbox's deposit notice was not applied: ${a.detail}`);
  return (await repo.findPaymentById(ctx.db, p.id))!;
}

/** The payment is cancelled in the processor's own dashboard; null when it is not a paid sandbox payment. */
export async function sandboxDashboardCancel(ctx: GatewayContext, p: Payment): Promise<Payment | null> {
  if (p.processor !== 'sandbox' || !p.processor_order) return null;
  const notice = await (await sandboxOf(ctx, p.store_code)).dashboardCancel(p.processor_order);
  if (!notice) return null;
  const a = await receiveEvent(ctx, 'sandbox', null, notice);
  if (a.status !== 200) throw new Error(`the sandbox's status notice was not applied: ${a.detail}`);
  return (await repo.findPaymentById(ctx.db, p.id))!;
}
