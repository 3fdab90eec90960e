import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { TOSS_SDK_URL } from '../platform/providers.js';
import { bankByCode, bankOfToss } from './banks.js';
import { OutcomeUnknown } from './card-processor.js';
import {
  METHOD_NAMES, noticeJson, type CancelResult, type CardFacts, type CheckoutOrder, type CheckoutProcessor, type CheckoutResult, type CheckoutWindow,
  type CloseOutcome, type EventReading, type PayMethod, type ProcessorHosts, type RawEvent, type ReturnReading,
} from './checkout.js';
import { obj, ProviderUnreachable, sleepMs, str, type ProviderAnswer } from './provider-http.js';
import { TOSS_SETTLE_PAUSE_MS, TossApi } from './toss-api.js';
import { ALREADY_CANCELED, CREDENTIAL_ERRORS, cardCompany, confirmError, windowFailure } from './toss-codes.js';

/**
 * Toss Payments' payment window (SDK v2) behind the checkout port (docs/going-live.md, "Toss
 * Payments"). The page loads Toss's SDK and our launcher (/assets/checkout/toss.js), which calls
 * `requestPayment` with the parameters `begin` gives; Toss sends the browser back to Sunap's
 * success address with paymentKey, orderId and amount (or to the fail address with a code);
 * Sunap confirms (POST /v1/payments/confirm) for the payment's own amount. The attempt id is the
 * orderId and the Idempotency-Key of the confirm, so a repeated confirm answers the first one
 * and a look-up by orderId (GET /v1/payments/orders/{orderId}) settles a lost answer. Nothing
 * here logs a request or an answer body; no card number ever reaches Sunap.
 */
export interface TossCheckoutSettings {
  /** The client key the browser uses (test_ck_… / live_ck_…), the store's or the operator's. */
  clientKey: string;
  /** The secret key of the same pair (test_sk_… / live_sk_…): Basic auth of every API call. */
  secretKey: string;
  /** https://api.tosspayments.com unless pointed at the rehearsal fake (SUNAP_TOSS_API_URL). */
  baseUrl: string;
  /** Toss's SDK v2 script, https://js.tosspayments.com/v2/standard unless SUNAP_TOSS_SDK_URL says otherwise. */
  sdkUrl: string;
  /** Time limit of one call (SUNAP_OUTBOUND_TIMEOUT_MS). */
  timeoutMs: number;
}

/** Our launcher: reads the parameters from the page's data block and calls the SDK (src/pages/toss-launcher.ts). */
export const TOSS_LAUNCHER = '/assets/checkout/toss.js';

/**
 * The hosts the page allows for Toss's own SDK: its script, the API calls it makes, the window
 * it frames on a desktop and the pages it posts to (the card companies' and easy pays' pages
 * open from Toss's window, not from ours). A rehearsal SDK (SUNAP_TOSS_SDK_URL) gets its own origin.
 */
export function tossHosts(sdkUrl: string): ProcessorHosts {
  const origin = new URL(sdkUrl).origin;
  if (origin === new URL(TOSS_SDK_URL).origin) {
    const toss = ['https://*.tosspayments.com', 'https://*.toss.im'];
    return { script: [origin], connect: toss, frame: toss, form: toss, img: toss };
  }
  return { script: [origin], connect: [origin], frame: [origin], form: [origin], img: [origin] };
}

/** `method` of requestPayment for each of our methods: an easy pay opens the card window, which lists them. */
const SDK_METHODS: Record<PayMethod, string> = {
  CARD: 'CARD', EASY_PAY: 'CARD', TRANSFER: 'TRANSFER', VIRTUAL_ACCOUNT: 'VIRTUAL_ACCOUNT', MOBILE_PHONE: 'MOBILE_PHONE',
};

/** The Payment object's `method` (Korean by default; the English names in newer API versions). */
const PAYMENT_METHODS: Readonly<Record<string, PayMethod>> = {
  카드: 'CARD', CARD: 'CARD', 간편결제: 'EASY_PAY', EASY_PAY: 'EASY_PAY', 계좌이체: 'TRANSFER', TRANSFER: 'TRANSFER',
  가상계좌: 'VIRTUAL_ACCOUNT', VIRTUAL_ACCOUNT: 'VIRTUAL_ACCOUNT', 휴대폰: 'MOBILE_PHONE', MOBILE_PHONE: 'MOBILE_PHONE',
};

export class TossCheckout implements CheckoutProcessor {
  readonly id = 'toss' as const;
  readonly methods: readonly PayMethod[] = ['CARD', 'EASY_PAY', 'TRANSFER', 'VIRTUAL_ACCOUNT', 'MOBILE_PHONE'];
  readonly callLimitMs: number;
  private readonly api: TossApi;

  constructor(private readonly s: TossCheckoutSettings, private readonly log?: Logger) {
    this.api = new TossApi(s);
    this.callLimitMs = this.api.callLimitMs;
  }

  async begin(order: CheckoutOrder): Promise<CheckoutWindow> {
    const method = SDK_METHODS[order.method];
    const phone = order.customer.phone.replace(/\D/g, '');
    const request: Record<string, unknown> = {
      method, amount: { currency: 'KRW', value: order.amount }, orderId: order.orderId, orderName: order.orderName || '결제',
      successUrl: order.successUrl, failUrl: order.failUrl, customerName: order.customer.name.slice(0, 100),
      ...(/^\d{8,15}$/.test(phone) ? { customerMobilePhone: phone } : {}),
      ...(order.taxFreeAmount > 0 ? { taxFreeAmount: order.taxFreeAmount } : {}),
    };
    if (method === 'CARD') request.card = { flowMode: 'DEFAULT', useEscrow: false, useCardPoint: false, useAppCardOnly: false };
    if (method === 'TRANSFER') request.transfer = { cashReceipt: { type: '소득공제' }, useEscrow: false };
    // Toss keeps an account open at most 720 hours (30 days).
    if (method === 'VIRTUAL_ACCOUNT') request.virtualAccount = { cashReceipt: { type: '소득공제' }, useEscrow: false, validHours: Math.min(order.accountHours, 720) };
    return { kind: 'script', scripts: [this.s.sdkUrl], launcher: TOSS_LAUNCHER, params: { clientKey: this.s.clientKey, request }, hosts: tossHosts(this.s.sdkUrl) };
  }

  readReturn(q: Record<string, string>, outcome: 'success' | 'fail'): ReturnReading {
    if (outcome === 'fail') {
      // The address's own message is never shown: only the words we know for a code.
      return { orderId: q.orderId ?? null, processorRef: null, amount: null, failure: windowFailure(q.code ?? '') };
    }
    const amount = q.amount === undefined ? null : /^\d{1,12}$/.test(q.amount) ? Number(q.amount) : -1;
    return { orderId: q.orderId ?? null, processorRef: q.paymentKey ?? null, amount, failure: null };
  }

  async confirm(req: { orderId: string; processorRef: string | null; amount: number }): Promise<CheckoutResult> {
    if (!req.processorRef) return { status: 'DECLINED', code: 'NOT_FOUND_PAYMENT_SESSION', message: '결제 정보를 찾을 수 없습니다. 다시 결제해 주세요' };
    let answer: ProviderAnswer;
    try {
      answer = await this.api.call('POST', '/v1/payments/confirm', { paymentKey: req.processorRef, orderId: req.orderId, amount: req.amount }, { 'idempotency-key': req.orderId });
    } catch (err) {
      if (!(err instanceof ProviderUnreachable)) throw err;
      this.log?.warn({ attempt: req.orderId, problem: err.message }, 'toss: confirm unanswered; looking it up');
      return this.settleByLookup(req.orderId);
    }
    if (answer.status === 200) return this.fromPayment(answer.body, req.orderId);
    const code = str(answer.body, 'code');
    if (CREDENTIAL_ERRORS.has(code)) this.log?.error({ code }, 'toss: the secret key was refused (SUNAP_TOSS_SECRET_KEY or the store\'s own); run sunap doctor');
    const kind = confirmError(answer.status, code, str(answer.body, 'message'));
    if (kind.kind === 'DECLINED' || kind.kind === 'ERROR') return { status: 'DECLINED', code: code || String(answer.status), message: kind.message };
    this.log?.warn({ attempt: req.orderId, code, status: answer.status }, 'toss: confirm outcome open; looking it up');
    return this.settleByLookup(req.orderId);
  }

  /** After a lost or open answer: what the look-up says, or OutcomeUnknown when it cannot tell yet (the reconcile asks again). */
  private async settleByLookup(orderId: string): Promise<CheckoutResult> {
    await sleepMs(TOSS_SETTLE_PAUSE_MS);
    let found: CheckoutResult | null;
    try {
      found = await this.lookup(orderId);
    } catch (err) {
      throw new OutcomeUnknown(`toss: the confirm's answer was lost and the look-up failed (${(err as Error).message})`);
    }
    // Not confirmed yet (IN_PROGRESS) or not known: the confirm may still be on its way.
    if (!found || found.status === 'PENDING') throw new OutcomeUnknown('toss: the confirm\'s answer was lost and the order is not confirmed yet');
    return found;
  }

  /** What a Payment object says, checked to be the order asked about. */
  private fromPayment(p: unknown, orderId: string): CheckoutResult {
    if (str(p, 'orderId') !== orderId) throw new OutcomeUnknown(`toss: an answer about another order (${str(p, 'orderId') || 'none'})`);
    const status = str(p, 'status');
    const method = PAYMENT_METHODS[str(p, 'method')] ?? 'CARD';
    const paymentKey = str(p, 'paymentKey');
    const amount = Number(str(p, 'totalAmount'));
    const va = obj(p, 'virtualAccount');
    const ms = (iso: string) => (iso && Number.isFinite(Date.parse(iso)) ? Date.parse(iso) : null);
    switch (status) {
      case 'DONE':
        return {
          status: 'APPROVED', processorRef: paymentKey, amount, approvedAtMs: ms(str(p, 'approvedAt')), method,
          methodName: method === 'EASY_PAY' ? str(obj(p, 'easyPay'), 'provider') || '간편결제' : METHOD_NAMES[method],
          card: cardOf(obj(p, 'card')), bankName: method === 'TRANSFER' ? bankOfToss(str(obj(p, 'transfer'), 'bankCode'))?.name ?? null : null,
        };
      case 'WAITING_FOR_DEPOSIT': {
        if (!va || va.expired === true) return { status: 'CLOSED' };
        const bank = bankOfToss(str(va, 'bankCode'));
        return {
          status: 'WAITING_FOR_DEPOSIT', processorRef: paymentKey, amount, secret: str(p, 'secret') || null,
          account: {
            bankCode: bank?.code ?? '', bankName: bank?.name ?? `은행(${str(va, 'bankCode')})`, accountNumber: str(va, 'accountNumber'),
            // Toss's answer does not name the account's holder (its customerName is the payer's): none rather than a wrong one.
            holder: '', dueAtMs: ms(str(va, 'dueDate')) ?? 0,
          },
        };
      }
      case 'CANCELED':
      case 'PARTIAL_CANCELED': {
        // A virtual account cancelled before any deposit was only closed: nothing was paid.
        if (method === 'VIRTUAL_ACCOUNT' && !str(p, 'approvedAt')) return { status: 'CLOSED' };
        const cancels = Array.isArray((p as { cancels?: unknown }).cancels) ? (p as { cancels: unknown[] }).cancels : [];
        return { status: 'CANCELED', processorRef: paymentKey, canceledAtMs: ms(str(cancels[cancels.length - 1], 'canceledAt')) };
      }
      case 'EXPIRED':
        // Not confirmed in time (a window's authorization lasts minutes), or an account past its due date.
        return method === 'VIRTUAL_ACCOUNT' && va ? { status: 'CLOSED' } : { status: 'DECLINED', code: 'EXPIRED', message: '결제 시간이 지나 결제되지 않았습니다. 다시 결제해 주세요' };
      case 'ABORTED': {
        const failure = obj(p, 'failure');
        const kind = confirmError(400, str(failure, 'code'), str(failure, 'message'));
        return { status: 'DECLINED', code: str(failure, 'code') || 'ABORTED', message: kind.kind === 'DECLINED' || kind.kind === 'ERROR' ? kind.message : '결제가 승인되지 않았습니다' };
      }
      case 'READY':
      case 'IN_PROGRESS':
        return { status: 'PENDING' };
      default:
        throw new OutcomeUnknown(`toss: the order is ${status || 'in an unknown state'}`);
    }
  }

  async lookup(orderId: string): Promise<CheckoutResult | null> {
    const answer = await this.api.call('GET', `/v1/payments/orders/${encodeURIComponent(orderId)}`);
    if (answer.status === 200) return this.fromPayment(answer.body, orderId);
    const code = str(answer.body, 'code');
    if (answer.status === 404 && (code === 'NOT_FOUND_PAYMENT' || code === 'NOT_FOUND')) return null;
    throw new Error(`toss: look-up of an order answered ${answer.status} ${code}`);
  }

  /** The paymentKey of an order: the one on record, else Toss's by a look-up. */
  private async paymentKeyOf(orderId: string, processorRef: string | null): Promise<string | null> {
    if (processorRef) return processorRef;
    const found = await this.lookup(orderId).catch(() => null);
    return found && 'processorRef' in found ? found.processorRef : null;
  }

  async cancel(req: Parameters<CheckoutProcessor['cancel']>[0]): Promise<CancelResult> {
    const paymentKey = await this.paymentKeyOf(req.orderId, req.processorRef);
    if (!paymentKey) return { outcome: 'FAILED', message: 'NOT_FOUND_PAYMENT: Toss holds no payment for this order; check the Toss dashboard' };
    const body: Record<string, unknown> = { cancelReason: (req.reason || '결제 취소').slice(0, 200) };
    if (req.refundAccount) {
      const bank = bankByCode(req.refundAccount.bankCode);
      if (!bank) return { outcome: 'FAILED', message: `INVALID_BANK: no Toss code for bank ${req.refundAccount.bankCode}` };
      body.refundReceiveAccount = { bank: bank.toss, accountNumber: req.refundAccount.accountNumber.replace(/\D/g, ''), holderName: req.refundAccount.holderName };
    }
    return this.postCancel(paymentKey, body, req.idempotencyKey);
  }

  async closeAccount(req: { idempotencyKey: string; orderId: string; processorRef: string | null }): Promise<CloseOutcome> {
    const paymentKey = await this.paymentKeyOf(req.orderId, req.processorRef);
    if (!paymentKey) return { outcome: 'CLOSED' };
    const r = await this.postCancel(paymentKey, { cancelReason: '가상계좌 발급 취소' }, req.idempotencyKey);
    return r.outcome === 'CANCELED' ? { outcome: 'CLOSED' } : r;
  }

  private async postCancel(paymentKey: string, body: Record<string, unknown>, idempotencyKey: string): Promise<CancelResult> {
    const path = `/v1/payments/${encodeURIComponent(paymentKey)}/cancel`;
    // The same Idempotency-Key on the retry: a cancel whose answer was lost is not made twice.
    for (let i = 0; i < 2; i++) {
      let answer: ProviderAnswer;
      try {
        answer = await this.api.call('POST', path, body, { 'idempotency-key': idempotencyKey });
      } catch (err) {
        if (!(err instanceof ProviderUnreachable)) throw err;
        this.log?.warn({ key: idempotencyKey, problem: err.message }, 'toss: cancel unanswered');
        continue;
      }
      if (answer.status === 200) return { outcome: 'CANCELED' };
      const code = str(answer.body, 'code');
      if (ALREADY_CANCELED.has(code)) return { outcome: 'CANCELED' };
      if (answer.status >= 500 || code === 'IDEMPOTENT_REQUEST_PROCESSING' || code === 'FORBIDDEN_CONSECUTIVE_REQUEST') continue;
      if (CREDENTIAL_ERRORS.has(code)) this.log?.error({ code }, 'toss: the secret key was refused; run sunap doctor');
      return { outcome: 'FAILED', message: `${code || answer.status}: ${str(answer.body, 'message') || 'the cancel was refused'}` };
    }
    return { outcome: 'FAILED', message: 'Toss did not confirm the cancel; request it again (the same cancel is never made twice)' };
  }

  /**
   * Toss's notices (docs/reference.md, "Processor events"): a virtual account's deposit
   * callback (orderId, status and the account's `secret`, which the service compares with the
   * one the confirm returned), and webhooks (`eventType`, `data`) whose status is confirmed by a
   * look-up. Events about other things (payouts, billing) are read as not about a payment.
   */
  readEvent(raw: RawEvent): EventReading {
    const parsed = noticeJson(raw);
    if (!parsed.ok) return parsed;
    const body = parsed.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return { ok: false, reason: 'body: not a JSON object' };
    const b = body as Record<string, unknown>;
    const data = obj(b, 'data');
    const orderOf = (o: unknown) => {
      const v = str(o, 'orderId');
      return v.length > 0 && v.length <= 64 ? v : null;
    };
    const deposit = (d: unknown): EventReading => {
      const secret = (d as Record<string, unknown>).secret;
      return { ok: true, event: { key: null, type: 'DEPOSIT_CALLBACK', orderId: orderOf(d), claimedSecret: typeof secret === 'string' ? secret : '' } };
    };
    if (b.eventType === undefined) {
      if (orderOf(b) && typeof b.status === 'string') return deposit(b);
      return { ok: false, reason: 'body: neither a deposit callback (orderId, status, secret) nor a webhook (eventType)' };
    }
    if (typeof b.eventType !== 'string' || !/^[A-Z_]{1,64}$/.test(b.eventType)) return { ok: false, reason: 'eventType: not a Toss event type' };
    if (b.eventType === 'DEPOSIT_CALLBACK') return data && orderOf(data) ? deposit(data) : { ok: false, reason: 'data.orderId: missing' };
    if (b.eventType === 'PAYMENT_STATUS_CHANGED' || b.eventType === 'CANCEL_STATUS_CHANGED') {
      return { ok: true, event: { key: null, type: b.eventType, orderId: data ? orderOf(data) : null, claimedSecret: null } };
    }
    return { ok: true, event: { key: null, type: b.eventType, orderId: null, claimedSecret: null } };
  }

  /** A look-up of an order that cannot exist: 404 proves the secret key was accepted, 401 that it was not. */
  async checkCredentials(): Promise<{ ok: boolean; detail: string }> {
    const where = `${this.s.secretKey.startsWith('live_') ? 'live' : 'test'} keys at ${this.s.baseUrl}`;
    let answer: ProviderAnswer;
    try {
      answer = await this.api.call('GET', `/v1/payments/orders/sunap-doctor-${randomUUID()}`);
    } catch (err) {
      return { ok: false, detail: `toss (window) ${where}: ${(err as Error).message}` };
    }
    const code = str(answer.body, 'code');
    if (answer.status === 404) return { ok: true, detail: `toss (window) ${where}: the secret key was accepted; the client key is checked by the browser's SDK (${this.s.sdkUrl})` };
    if (CREDENTIAL_ERRORS.has(code) || answer.status === 401) return { ok: false, detail: `toss (window) ${where}: the secret key was refused (${code || answer.status}); check SUNAP_TOSS_SECRET_KEY` };
    return { ok: false, detail: `toss (window) ${where}: unexpected answer ${answer.status} ${code}` };
  }
}

/** The card of a payment (a card, or an easy pay paid by card): Toss shows the first eight digits and masks the rest. */
function cardOf(c: Record<string, unknown> | null): CardFacts | null {
  if (!c) return null;
  const number = str(c, 'number');
  const issuer = str(c, 'issuerCode');
  const months = Number(str(c, 'installmentPlanMonths')) || 0;
  const last = /(\d{4})$/.exec(number);
  return {
    issuerName: cardCompany(issuer), accepterName: cardCompany(str(c, 'acquirerCode') || issuer), approvalNumber: str(c, 'approveNo'),
    installmentMonth: String(months > 1 ? months : 0).padStart(2, '0'), bin: /^\d{6}/.test(number) ? number.slice(0, 6) : null, last4: last ? last[1]! : null,
  };
}
