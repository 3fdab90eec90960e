import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { secretKeyOf } from '../platform/crypto.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { bankByCode, bankName } from './banks.js';
import { OutcomeUnknown } from './card-processor.js';
import {
  DEFAULT_EASY_PAY, EASY_PAYS, METHOD_NAMES, noticeJson, PAY_METHODS, type CancelResult, type CardFacts, type CheckoutOrder, type CheckoutProcessor,
  type CheckoutResult, type CheckoutWindow, type CloseOutcome, type EventReading, type RawEvent, type ReturnReading,
} from './checkout.js';
import { SANDBOX_CARDS } from './sandbox-card-processor.js';
import { findOrder, insertOrder, moveOrder, type SandboxChoice, type SandboxDetail, type SandboxOrder } from './sandbox-network.js';

/**
 * The sandbox's checkout processor (docs/reference.md, "Sandbox"): a window of its own that needs
 * no script (src/pages/sandbox-window.ts shows it) and plays every method with outcomes to
 * choose, a confirm/look-up/cancel that behave like a processor's (Toss Payments' shape: the
 * window authorizes, the server's confirm takes the money), deposits into virtual accounts, and
 * notices posted to Sunap. Nothing real moves; no card number is ever sent or kept (the window
 * names test cards by a key).
 */

/** The test cards the window offers, by key; their outcomes are the sandbox cards' (SANDBOX_CARDS). */
export const WINDOW_CARDS = [
  { key: 'shinhan', number: '4242424242424242', label: '신한카드 · 승인' },
  { key: 'kb', number: '5555555555554444', label: 'KB국민카드 · 승인' },
  { key: 'declined', number: '4000000000000002', label: '카드사 거절' },
  { key: 'insufficient', number: '4000000000009995', label: '잔액 부족' },
  { key: 'error', number: '4000000000000119', label: '승인 중 카드사 오류 (결제되지 않음)' },
  { key: 'cancel-fails', number: '4000000000000259', label: '승인 · 취소는 실패' },
  { key: 'lost-answer', number: '4000000000000127', label: '승인 · 응답 유실 (조회로 확인)' },
] as const;
export type WindowCardKey = (typeof WINDOW_CARDS)[number]['key'];

/** The card key of a test card number, or undefined for any other number. */
export function windowCardOf(number: string): WindowCardKey | undefined {
  return WINDOW_CARDS.find((c) => c.number === number)?.key;
}

/** Reasons the window can refuse with: the code the fail address carries, and the Korean words the page shows. */
export const REFUSALS: Readonly<Record<string, string>> = {
  REJECT_CARD_COMPANY: '카드사에서 승인을 거절했습니다',
  INSUFFICIENT_BALANCE: '잔액이 부족합니다',
  EXCEED_MAX_AMOUNT: '결제 한도를 초과했습니다',
  INVALID_PASSWORD: '비밀번호가 맞지 않습니다',
  FDS_ERROR: '위험 거래로 판단되어 결제가 제한되었습니다',
};
/** Every failure code the sandbox's fail address carries, with the words the page shows. */
const FAILURES: Readonly<Record<string, string>> = {
  ...REFUSALS,
  INVALID_CARD_NUMBER: '샌드박스에서는 테스트 카드만 사용할 수 있습니다',
};

/** The customer closed the window. */
export const CLOSED_WINDOW = { code: 'PAY_PROCESS_CANCELED', message: '결제를 취소했습니다' };

/** What the customer does in the window. */
export type WindowAction = { action: 'approve'; choice: SandboxChoice } | { action: 'refuse'; code: string } | { action: 'close' };

export interface SandboxCheckoutSettings {
  db: Kysely<Database>;
  clock: { nowMs(): number };
  /** The window's path (beside the payment page). */
  windowPath: string;
  /** Signs the window's address, so only the order's own window opens it. */
  tokenKey: Buffer;
}

const newPaymentKey = () => `sbx_${randomBytes(18).toString('base64url')}`;

export class SandboxCheckout implements CheckoutProcessor {
  readonly id = 'sandbox' as const;
  readonly methods = PAY_METHODS;
  constructor(private readonly s: SandboxCheckoutSettings) {}

  windowToken(orderId: string): string {
    return createHmac('sha256', secretKeyOf(this.s.tokenKey)).update(`sandbox-window:${orderId}`).digest('base64url').slice(0, 32);
  }

  windowTokenValid(orderId: string, token: string): boolean {
    const a = Buffer.from(this.windowToken(orderId));
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  async begin(order: CheckoutOrder): Promise<CheckoutWindow> {
    await insertOrder(this.s.db, {
      orderId: order.orderId, paymentKey: newPaymentKey(), method: order.method, amount: order.amount, now: this.s.clock.nowMs(),
      detail: {
        orderName: order.orderName, storeName: order.storeName, customerName: order.customer.name, successUrl: order.successUrl,
        failUrl: order.failUrl, accountHours: order.accountHours,
      },
    });
    const q = new URLSearchParams({ order: order.orderId, t: this.windowToken(order.orderId) });
    return { kind: 'redirect', url: `${this.s.windowPath}?${q}` };
  }

  /** The order as the window shows it. */
  order(orderId: string): Promise<SandboxOrder | undefined> {
    return findOrder(this.s.db, orderId);
  }

  /**
   * The customer's choice in the window; answers the address the browser goes back to (the
   * success address with paymentKey, orderId and amount, or the fail address with a code), or
   * null when the window is no longer open.
   */
  async play(orderId: string, act: WindowAction): Promise<string | null> {
    const o = await findOrder(this.s.db, orderId);
    if (!o || o.state !== 'OPEN') return null;
    const now = this.s.clock.nowMs();
    const fail = async (code: string, message: string) => {
      if (!(await moveOrder(this.s.db, orderId, ['OPEN'], 'ABORTED', { ...o.detail, failure: { code, message } }, now))) return null;
      return withQuery(o.detail.failUrl, { code, message, orderId });
    };
    if (act.action === 'close') return fail(CLOSED_WINDOW.code, CLOSED_WINDOW.message);
    if (act.action === 'refuse') return fail(act.code in REFUSALS ? act.code : 'REJECT_CARD_COMPANY', REFUSALS[act.code] ?? REFUSALS.REJECT_CARD_COMPANY!);
    const choice = act.choice;
    if (o.method === 'CARD') {
      const card = WINDOW_CARDS.find((c) => c.key === choice.card);
      const outcome = card && SANDBOX_CARDS[card.number];
      if (!outcome) return fail('INVALID_CARD_NUMBER', '샌드박스에서는 테스트 카드만 사용할 수 있습니다');
      if (outcome.outcome === 'DECLINED') return fail(card.key === 'insufficient' ? 'INSUFFICIENT_BALANCE' : 'REJECT_CARD_COMPANY', outcome.message!);
    }
    if (!(await moveOrder(this.s.db, orderId, ['OPEN'], 'AUTHORIZED', { ...o.detail, choice }, now))) return null;
    return withQuery(o.detail.successUrl, { paymentType: 'NORMAL', orderId, paymentKey: o.paymentKey, amount: String(o.amount) });
  }

  readReturn(q: Record<string, string>, outcome: 'success' | 'fail'): ReturnReading {
    if (outcome === 'fail') {
      const code = q.code ?? 'PAY_PROCESS_ABORTED';
      // The address's own message is never shown: only the words this adapter knows for a code.
      const message = code === CLOSED_WINDOW.code ? CLOSED_WINDOW.message : FAILURES[code] ?? '결제가 승인되지 않았습니다';
      return { orderId: q.orderId ?? null, processorRef: null, amount: null, failure: { code, message } };
    }
    const amount = q.amount === undefined ? null : /^\d{1,12}$/.test(q.amount) ? Number(q.amount) : -1;
    return { orderId: q.orderId ?? null, processorRef: q.paymentKey ?? null, amount, failure: null };
  }

  async confirm(req: { orderId: string; processorRef: string | null; amount: number }): Promise<CheckoutResult> {
    const o = await findOrder(this.s.db, req.orderId);
    if (!o || req.processorRef !== o.paymentKey) return { status: 'DECLINED', code: 'NOT_FOUND_PAYMENT_SESSION', message: '결제 정보를 찾을 수 없습니다. 다시 결제해 주세요' };
    if (o.state !== 'AUTHORIZED') return this.resultOf(o) ?? { status: 'DECLINED', code: 'NOT_FOUND_PAYMENT_SESSION', message: '결제 정보를 찾을 수 없습니다. 다시 결제해 주세요' };
    if (req.amount !== o.amount) return { status: 'DECLINED', code: 'INVALID_REQUEST', message: '결제 금액이 일치하지 않습니다' };
    const now = this.s.clock.nowMs();
    const choice = o.detail.choice ?? {};
    const card = o.method === 'CARD' ? WINDOW_CARDS.find((c) => c.key === choice.card) : undefined;
    if (card && SANDBOX_CARDS[card.number]!.outcome === 'ERROR') {
      const failure = { code: 'PROVIDER_ERROR', message: SANDBOX_CARDS[card.number]!.message! };
      await moveOrder(this.s.db, o.orderId, ['AUTHORIZED'], 'ABORTED', { ...o.detail, failure }, now);
      return { status: 'DECLINED', ...failure };
    }
    let detail: SandboxDetail = { ...o.detail, approvalNumber: String(randomInt(10_000_000, 100_000_000)), approvedAt: now };
    let state: 'DONE' | 'WAITING_FOR_DEPOSIT' = 'DONE';
    if (o.method === 'VIRTUAL_ACCOUNT') {
      state = 'WAITING_FOR_DEPOSIT';
      const bank = bankByCode(choice.bankCode ?? '') ? choice.bankCode! : '088';
      detail = {
        ...o.detail, secret: randomBytes(18).toString('base64url'),
        account: { bankCode: bank, number: `${randomInt(100, 1000)}${String(randomInt(0, 1e9)).padStart(9, '0')}${randomInt(10, 100)}`, holder: o.detail.storeName, dueAt: now + o.detail.accountHours * 3_600_000 },
      };
    }
    // The first confirm decides; a repeated one answers what it decided.
    if (!(await moveOrder(this.s.db, o.orderId, ['AUTHORIZED'], state, detail, now))) return this.resultOf((await findOrder(this.s.db, o.orderId))!)!;
    if (card && SANDBOX_CARDS[card.number]!.lostAnswer) throw new OutcomeUnknown('sandbox: the confirm was made and its answer lost (test card 4000 0000 0000 0127)');
    return this.resultOf((await findOrder(this.s.db, o.orderId))!)!;
  }

  async lookup(orderId: string): Promise<CheckoutResult | null> {
    const o = await findOrder(this.s.db, orderId);
    if (!o) return null;
    const acc = o.detail.account;
    if (o.state === 'WAITING_FOR_DEPOSIT' && acc && this.s.clock.nowMs() > acc.dueAt) {
      // Past its due time the account takes no deposit: the network closes it.
      await moveOrder(this.s.db, orderId, ['WAITING_FOR_DEPOSIT'], 'CLOSED', o.detail, this.s.clock.nowMs());
      return this.lookup(orderId);
    }
    return this.resultOf(o) ?? { status: 'PENDING' };
  }

  /** What an order's state answers to a confirm or a look-up; undefined while the window is open or authorized. */
  private resultOf(o: SandboxOrder): CheckoutResult | undefined {
    const d = o.detail;
    switch (o.state) {
      case 'DONE':
        return {
          status: 'APPROVED', processorRef: o.paymentKey, amount: o.amount, approvedAtMs: d.approvedAt ?? null, method: o.method,
          methodName: o.method === 'EASY_PAY' ? (EASY_PAYS as readonly string[]).includes(d.choice?.easyPay ?? '') ? d.choice!.easyPay! : DEFAULT_EASY_PAY : METHOD_NAMES[o.method],
          card: this.cardOf(o), bankName: o.method === 'TRANSFER' ? bankName(d.choice?.bankCode && bankByCode(d.choice.bankCode) ? d.choice.bankCode : '088') : null,
        };
      case 'WAITING_FOR_DEPOSIT': {
        const a = d.account!;
        return {
          status: 'WAITING_FOR_DEPOSIT', processorRef: o.paymentKey, amount: o.amount, secret: d.secret ?? null,
          account: { bankCode: a.bankCode, bankName: bankName(a.bankCode), accountNumber: a.number, holder: a.holder, dueAtMs: a.dueAt },
        };
      }
      case 'CANCELED':
        return { status: 'CANCELED', processorRef: o.paymentKey, canceledAtMs: d.canceledAt ?? null };
      case 'ABORTED':
        return { status: 'DECLINED', code: d.failure?.code ?? 'PAY_PROCESS_ABORTED', message: d.failure?.message ?? '결제가 승인되지 않았습니다' };
      case 'CLOSED':
        return { status: 'CLOSED' };
      default:
        return undefined;
    }
  }

  private cardOf(o: SandboxOrder): CardFacts | null {
    const c = o.detail.choice ?? {};
    const key = o.method === 'CARD' ? c.card : o.method === 'EASY_PAY' && c.funding !== 'balance' ? 'shinhan' : undefined;
    const card = WINDOW_CARDS.find((w) => w.key === key);
    if (!card) return null;
    const issuer = SANDBOX_CARDS[card.number]!.issuer!;
    const installment = o.method === 'CARD' && /^\d{2}$/.test(c.installment ?? '') ? c.installment! : '00';
    return { issuerName: issuer, accepterName: issuer, approvalNumber: o.detail.approvalNumber ?? '', installmentMonth: installment, bin: card.number.slice(0, 6), last4: card.number.slice(-4) };
  }

  async cancel(req: Parameters<CheckoutProcessor['cancel']>[0]): Promise<CancelResult> {
    const o = await findOrder(this.s.db, req.orderId);
    if (!o) return { outcome: 'FAILED', message: 'NOT_FOUND_PAYMENT: no such order' };
    if (o.state === 'CANCELED' || o.state === 'CLOSED') return { outcome: 'CANCELED' };
    const now = this.s.clock.nowMs();
    // Before the deposit a cancel closes the account, as the processor's does.
    if (o.state === 'WAITING_FOR_DEPOSIT') return (await this.closeAccount(req)).outcome === 'CLOSED' ? { outcome: 'CANCELED' } : this.cancel(req);
    if (o.state !== 'DONE') return { outcome: 'FAILED', message: `NOT_CANCELABLE_PAYMENT: the order is ${o.state}` };
    const card = WINDOW_CARDS.find((c) => c.key === o.detail.choice?.card);
    if (o.method === 'CARD' && card && SANDBOX_CARDS[card.number]!.cancelFails) return { outcome: 'FAILED', message: '카드사 취소 처리에 실패했습니다' };
    if (o.method === 'VIRTUAL_ACCOUNT' && !req.refundAccount) return { outcome: 'FAILED', message: 'INVALID_REFUND_ACCOUNT: a paid virtual account refunds to refundReceiveAccount' };
    const detail = { ...o.detail, canceledAt: now, refunds: (o.detail.refunds ?? 0) + 1, ...(req.refundAccount ? { refundBank: req.refundAccount.bankCode } : {}) };
    if (!(await moveOrder(this.s.db, o.orderId, ['DONE'], 'CANCELED', detail, now))) return this.cancel(req);
    return { outcome: 'CANCELED' };
  }

  async closeAccount(req: { orderId: string }): Promise<CloseOutcome> {
    const o = await findOrder(this.s.db, req.orderId);
    if (!o) return { outcome: 'FAILED', message: 'NOT_FOUND_PAYMENT: no such order' };
    if (o.state === 'CLOSED' || o.state === 'CANCELED' || o.state === 'ABORTED') return { outcome: 'CLOSED' };
    if (o.state !== 'WAITING_FOR_DEPOSIT') return { outcome: 'FAILED', message: `NOT_WAITING_FOR_DEPOSIT: the order is ${o.state}` };
    if (!(await moveOrder(this.s.db, o.orderId, ['WAITING_FOR_DEPOSIT'], 'CLOSED', o.detail, this.s.clock.nowMs()))) return this.closeAccount(req);
    return { outcome: 'CLOSED' };
  }

  /**
   * The bank's deposit of the full amount into an open account (the sandbox's deposit call):
   * the notice the processor then posts (DEPOSIT_CALLBACK with the account's secret), or null
   * without an open account (none issued, closed, or past its due time).
   */
  async deposit(orderId: string): Promise<RawEvent | null> {
    const o = await findOrder(this.s.db, orderId);
    const now = this.s.clock.nowMs();
    if (!o || o.state !== 'WAITING_FOR_DEPOSIT' || !o.detail.account || now > o.detail.account.dueAt) return null;
    if (!(await moveOrder(this.s.db, orderId, ['WAITING_FOR_DEPOSIT'], 'DONE', { ...o.detail, approvedAt: now }, now))) return null;
    return notice({ createdAt: new Date(now).toISOString(), secret: o.detail.secret, orderId, status: 'DONE', transactionKey: randomBytes(12).toString('hex') });
  }

  /** A cancel made in the processor's own dashboard: the status notice it posts, or null when the order is not paid. */
  async dashboardCancel(orderId: string): Promise<RawEvent | null> {
    const o = await findOrder(this.s.db, orderId);
    const now = this.s.clock.nowMs();
    if (!o || o.state !== 'DONE') return null;
    if (!(await moveOrder(this.s.db, orderId, ['DONE'], 'CANCELED', { ...o.detail, canceledAt: now, refunds: (o.detail.refunds ?? 0) + 1 }, now))) return null;
    return notice({ eventType: 'PAYMENT_STATUS_CHANGED', createdAt: new Date(now).toISOString(), data: { orderId, paymentKey: o.paymentKey, status: 'CANCELED' } });
  }

  /**
   * The sandbox's notices: a deposit (DEPOSIT_CALLBACK: orderId, secret, status) and a status
   * change (PAYMENT_STATUS_CHANGED: data.orderId). Anything else is refused.
   */
  readEvent(raw: RawEvent): EventReading {
    const parsed = noticeJson(raw);
    if (!parsed.ok) return parsed;
    const body = parsed.body;
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const data = (b.data && typeof b.data === 'object' ? b.data : {}) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : null);
    if (b.eventType === 'PAYMENT_STATUS_CHANGED') {
      return { ok: true, event: { key: null, type: 'PAYMENT_STATUS_CHANGED', orderId: str(data.orderId), claimedSecret: null } };
    }
    if (b.eventType === undefined && str(b.orderId) && 'secret' in b) {
      return { ok: true, event: { key: null, type: 'DEPOSIT_CALLBACK', orderId: str(b.orderId), claimedSecret: typeof b.secret === 'string' ? b.secret : '' } };
    }
    return { ok: false, reason: 'body: neither a deposit notice (orderId, secret) nor a PAYMENT_STATUS_CHANGED event' };
  }
}

function notice(body: unknown): RawEvent {
  return { body: Buffer.from(JSON.stringify(body), 'utf8'), headers: { 'content-type': 'application/json' } };
}

function withQuery(url: string, params: Record<string, string>): string {
  const u = new URL(url, 'http://sunap.invalid');
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return url.startsWith('/') ? `${u.pathname}${u.search}` : u.toString();
}
