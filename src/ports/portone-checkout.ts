import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { bankByCode, bankOfPortone } from './banks.js';
import { OutcomeUnknown } from './card-processor.js';
import {
  METHOD_NAMES, noticeJson, PAY_METHODS, type CancelResult, type CardFacts, type CheckoutOrder, type CheckoutProcessor, type CheckoutResult, type CheckoutWindow,
  type CloseOutcome, type EventReading, type ProcessorHosts, type RawEvent, type RefundAccount, type ReturnReading,
} from './checkout.js';
import { CARD_COMPANY_NAMES, declineWords, EASY_PAY_NAMES, errorWords, METHOD_OF_TYPE, PORTONE_ERRORS, PORTONE_PAY_METHOD } from './portone-codes.js';
import { PORTONE_API_URL } from '../platform/providers.js';
import { callProvider, ProviderUnreachable, type ProviderAnswer } from './provider-http.js';

/**
 * PortOne V2 behind the checkout port (docs/going-live.md, "PortOne"). PortOne puts the Korean
 * PGs (KG이니시스, NICE, KCP, Toss, ...) and the easy pays behind one browser SDK and one REST API;
 * the store's channel key chooses its PG contract.
 *
 * - `begin` registers the order's amount with PortOne first (`POST /payments/{id}/pre-register`,
 *   so the window cannot take another amount), then the page loads PortOne's browser SDK and our
 *   launcher, which calls `PortOne.requestPayment` for the store's channel with our order id as
 *   `paymentId` and the return address as `redirectUrl`.
 * - Unlike Toss, PortOne's window takes the money itself: the browser's return (success or fail)
 *   proves nothing. `confirm` reads the payment (`GET /payments/{paymentId}`) and believes only
 *   that: PAID for the payment's own amount, a virtual account issued, FAILED with its reason.
 * - Cancels (`POST /payments/{id}/cancel`, full, with the refund account of a paid virtual
 *   account) and closes (`POST /payments/{id}/virtual-account/close`) treat "already done" as done.
 * - Notices are Standard Webhooks signed with the webhook secret (`webhook-id`,
 *   `webhook-timestamp`, `webhook-signature`); a verified notice only names the order to look up.
 */

/** PortOne's browser SDK, and the hosts its redirect window uses (docs/going-live.md, "PortOne"). */
export const PORTONE_SDK_URL = 'https://cdn.portone.io/v2/browser-sdk.js';
const PORTONE_CHECKOUT_HOST = 'https://checkout-service.prod.iamport.co';

/** How far a notice's webhook-timestamp may be from now: five minutes, as Standard Webhooks and PortOne's SDKs verify. */
export const WEBHOOK_TOLERANCE_S = 300;

/** Our launcher (src/pages/portone-launcher.ts): reads the data block, calls requestPayment. */
export const PORTONE_LAUNCHER = '/assets/checkout/portone.js';

export interface PortoneSettings {
  apiSecret: string;
  storeId: string;
  channelKey: string;
  /** Without it every notice is refused (and `sunap doctor` says so). */
  webhookSecret?: string;
  baseUrl: string;
  timeoutMs: number;
  /** Where PortOne posts this payment's notices (requestPayment's noticeUrls): /processor-events/portone[/{storeCode}]. */
  noticeUrl?: string;
  /** For tests: the time the webhook tolerance is measured from. */
  nowMs?: () => number;
}

/** A failed window's code rides in the return's processorRef under this prefix, for `confirm` to word the refusal once PortOne agrees nothing was paid. */
const WINDOW_FAILED = 'window-failed:';

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const s = (v: unknown): string => (typeof v === 'string' ? v : '');
const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const ms = (v: unknown): number | null => {
  const t = Date.parse(s(v));
  return Number.isFinite(t) ? t : null;
};

export class PortoneCheckout implements CheckoutProcessor {
  readonly id = 'portone' as const;
  readonly methods = PAY_METHODS;
  /** Every GET is tried twice; the other calls once. */
  readonly callLimitMs: number;
  private readonly secretBytes: Buffer | null;

  constructor(private readonly s: PortoneSettings, private readonly log?: Logger) {
    this.callLimitMs = 2 * s.timeoutMs + 500;
    const ws = s.webhookSecret?.startsWith('whsec_') ? s.webhookSecret.slice(6) : s.webhookSecret;
    this.secretBytes = ws ? Buffer.from(ws, 'base64') : null;
  }

  /** Where the SDK comes from and which hosts the window's page allows: PortOne's own, or the origin of SUNAP_PORTONE_API_URL (the fake serves all). */
  private sdk(): { url: string; hosts: ProcessorHosts } {
    if (this.s.baseUrl === PORTONE_API_URL) {
      const cdn = new URL(PORTONE_SDK_URL).origin;
      return { url: PORTONE_SDK_URL, hosts: { script: [cdn], connect: [PORTONE_CHECKOUT_HOST], frame: [PORTONE_CHECKOUT_HOST], form: [PORTONE_CHECKOUT_HOST], img: [] } };
    }
    const origin = new URL(this.s.baseUrl).origin;
    return { url: `${origin}/v2/browser-sdk.js`, hosts: { script: [origin], connect: [origin], frame: [origin], form: [origin], img: [] } };
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown, tries = 1): Promise<ProviderAnswer> {
    const url = `${this.s.baseUrl}${path}`;
    for (let i = 1; ; i++) {
      try {
        return await callProvider(url, {
          method, timeoutMs: this.s.timeoutMs, body: body === undefined ? undefined : JSON.stringify(body),
          headers: { authorization: `PortOne ${this.s.apiSecret}`, 'content-type': 'application/json', accept: 'application/json' },
        });
      } catch (err) {
        if (i >= tries || !(err instanceof ProviderUnreachable)) throw err;
      }
    }
  }

  private path(orderId: string, tail = ''): string {
    return `/payments/${encodeURIComponent(orderId)}${tail}`;
  }

  async begin(order: CheckoutOrder): Promise<CheckoutWindow> {
    const pre = await this.call('POST', this.path(order.orderId, '/pre-register'), {
      storeId: this.s.storeId, totalAmount: order.amount, taxFreeAmount: order.taxFreeAmount, currency: 'KRW',
    });
    if (pre.status !== 200) throw new Error(`portone: pre-register answered ${pre.status} ${s(o(pre.body).type)}`);
    const request: Json = {
      storeId: this.s.storeId, channelKey: this.s.channelKey, paymentId: order.orderId, orderName: order.orderName,
      totalAmount: order.amount, taxFreeAmount: order.taxFreeAmount, currency: 'KRW', payMethod: PORTONE_PAY_METHOD[order.method],
      customer: { fullName: order.customer.name, phoneNumber: order.customer.phone }, redirectUrl: order.successUrl,
      // One way on phones and desktops alike: the window is a page of its own and comes back to redirectUrl (no frames).
      forceRedirect: true, locale: 'KO_KR',
    };
    if (this.s.noticeUrl) request.noticeUrls = [this.s.noticeUrl];
    if (order.method === 'VIRTUAL_ACCOUNT') request.virtualAccount = { accountExpiry: { validHours: order.accountHours } };
    const sdk = this.sdk();
    return { kind: 'script', scripts: [sdk.url], launcher: PORTONE_LAUNCHER, params: { request, successUrl: order.successUrl, failUrl: order.failUrl }, hosts: sdk.hosts };
  }

  /**
   * PortOne's return: `paymentId` (our order id) and `txId`, or `code` and `message` when the
   * window failed or was closed. Neither is believed: a failure's code is kept for `confirm`,
   * which asks PortOne first (a window can fail in the browser after the PG took the money).
   */
  readReturn(q: Record<string, string>): ReturnReading {
    const code = q.code ? q.code.replace(/[^A-Za-z0-9_]/g, '').slice(0, 60) || 'FAILURE' : null;
    return { orderId: q.paymentId ?? null, processorRef: code ? `${WINDOW_FAILED}${code}` : (q.txId ?? null), amount: null, failure: null };
  }

  async confirm(req: { orderId: string; processorRef: string | null; amount: number }): Promise<CheckoutResult> {
    const payment = await this.read(req.orderId, true);
    const windowFailed = req.processorRef?.startsWith(WINDOW_FAILED) ?? false;
    if (!payment) return { status: 'DECLINED', code: 'PAYMENT_NOT_FOUND', message: windowFailed ? '결제를 취소했습니다' : '결제 정보를 찾을 수 없습니다. 다시 결제해 주세요' };
    let r: CheckoutResult;
    try {
      r = this.resultOf(payment);
    } catch (err) {
      // A status Sunap cannot settle now (partially cancelled, unknown): the attempt stays open for the reconcile.
      throw new OutcomeUnknown((err as Error).message);
    }
    // The window came back failed and PortOne holds nothing paid or issued: the customer closed it.
    if (r.status === 'PENDING' && windowFailed) return { status: 'DECLINED', code: req.processorRef!.slice(WINDOW_FAILED.length), message: '결제를 취소했습니다' };
    return r;
  }

  async lookup(orderId: string): Promise<CheckoutResult | null> {
    const payment = await this.read(orderId, false);
    return payment ? this.resultOf(payment) : null;
  }

  /** The payment as PortOne holds it; null when it has none. Throws OutcomeUnknown (confirm) or an Error when PortOne cannot say now. */
  private async read(orderId: string, confirming: boolean): Promise<Json | null> {
    const fail = (why: string) => (confirming ? new OutcomeUnknown(`portone: ${why}`) : new Error(`portone: ${why}`));
    let a: ProviderAnswer;
    try {
      a = await this.call('GET', `${this.path(orderId)}?storeId=${encodeURIComponent(this.s.storeId)}`, undefined, 2);
    } catch (err) {
      throw fail((err as Error).message);
    }
    if (a.status === 200) {
      const p = o(a.body);
      if (s(p.id) !== orderId) throw fail(`the look-up of ${orderId} answered another payment`);
      if (s(p.storeId) && s(p.storeId) !== this.s.storeId) throw fail('the payment belongs to another PortOne store');
      return p;
    }
    const type = s(o(a.body).type);
    if (a.status === 404 && type === 'PAYMENT_NOT_FOUND') return null;
    if (PORTONE_ERRORS[type] === 'auth') this.log?.error({ processor: 'portone', type }, 'PortOne refused the API secret or store id');
    throw fail(`GET /payments answered ${a.status} ${type || '(no type)'}`);
  }

  /** What PortOne's payment is for Sunap (src/ports/portone-codes.ts, PORTONE_STATUSES). */
  private resultOf(p: Json): CheckoutResult {
    const status = s(p.status);
    const amount = o(p.amount);
    const total = n(amount.total) ?? -1;
    const ref = s(p.transactionId);
    const method = o(p.method);
    switch (status) {
      case 'PAID': {
        if (s(p.currency) && s(p.currency) !== 'KRW') throw new Error(`portone: payment ${s(p.id)} is in ${s(p.currency)}, not KRW`);
        const kind = METHOD_OF_TYPE[s(method.type)] ?? 'CARD';
        const easy = kind === 'EASY_PAY' ? o(method.easyPayMethod) : {};
        const cardOf = kind === 'CARD' ? method : s(easy.type) === 'PaymentMethodCard' ? easy : null;
        const transfer = kind === 'TRANSFER' ? method : s(easy.type) === 'PaymentMethodTransfer' ? easy : null;
        return {
          status: 'APPROVED', processorRef: ref, amount: total, approvedAtMs: ms(p.paidAt), method: kind,
          methodName: kind === 'EASY_PAY' ? EASY_PAY_NAMES[s(method.provider)] ?? (s(method.provider) || '간편결제') : METHOD_NAMES[kind],
          card: cardOf ? cardFacts(cardOf) : null,
          bankName: transfer ? bankOfPortone(s(transfer.bank))?.name ?? (s(transfer.bank) || null) : null,
        };
      }
      case 'VIRTUAL_ACCOUNT_ISSUED': {
        const bank = bankOfPortone(s(method.bank));
        return {
          status: 'WAITING_FOR_DEPOSIT', processorRef: ref, amount: total, secret: null,
          account: {
            bankCode: bank?.code ?? '', bankName: bank?.name ?? s(method.bank), accountNumber: s(method.accountNumber), holder: s(method.remitteeName),
            dueAtMs: ms(method.expiredAt) ?? 0,
          },
        };
      }
      case 'FAILED': {
        const f = o(p.failure);
        return { status: 'DECLINED', code: (s(f.pgCode) || 'FAILED').slice(0, 60), message: declineWords({ reason: s(f.reason), pgCode: s(f.pgCode), pgMessage: s(f.pgMessage) }) };
      }
      case 'CANCELLED':
        // A virtual account closed before any deposit reads CANCELLED too, with nothing paid: closed.
        return !s(p.paidAt) && (n(amount.paid) ?? 0) === 0 ? { status: 'CLOSED' } : { status: 'CANCELED', processorRef: ref, canceledAtMs: ms(p.cancelledAt) };
      case 'READY':
      case 'PAY_PENDING':
        return { status: 'PENDING' };
      case 'PARTIAL_CANCELLED':
        throw new Error(`portone: payment ${s(p.id)} is partially cancelled (${n(amount.cancelled) ?? '?'} of ${total} won); Sunap cancels in full only: finish the cancel in PortOne's console`);
      default:
        throw new Error(`portone: payment ${s(p.id)} has a status this adapter does not know (${status || 'none'})`);
    }
  }

  async cancel(req: { idempotencyKey: string; orderId: string; processorRef: string | null; amount: number; reason: string; refundAccount: RefundAccount | null }): Promise<CancelResult> {
    const refund = req.refundAccount;
    const body: Json = {
      storeId: this.s.storeId, reason: req.reason.slice(0, 200) || '결제 취소', requester: 'ADMIN',
      // Cancels only while the whole amount is cancellable: a retry after a lost answer never cancels twice.
      currentCancellableAmount: req.amount,
    };
    if (refund) {
      const bank = bankByCode(refund.bankCode);
      if (!bank) return { outcome: 'FAILED', message: `환불 은행 코드(${refund.bankCode})를 포트원이 모릅니다` };
      body.refundAccount = { bank: bank.portone, number: refund.accountNumber, holderName: refund.holderName };
    }
    let a: ProviderAnswer;
    try {
      a = await this.call('POST', this.path(req.orderId, '/cancel'), body);
    } catch (err) {
      return { outcome: 'FAILED', message: `포트원 응답이 없어 취소 결과를 모릅니다. 다시 시도하면 이미 취소된 결제는 그대로 완료됩니다 (${(err as Error).message})` };
    }
    if (a.status === 200) {
      const c = o(o(a.body).cancellation);
      // REQUESTED: the PG cancels asynchronously and PortOne's Transaction.Cancelled follows; it cannot be taken back.
      if (s(c.status) === 'SUCCEEDED' || s(c.status) === 'REQUESTED') return { outcome: 'CANCELED' };
      return { outcome: 'FAILED', message: '결제사(PG)가 취소하지 않았습니다' };
    }
    const err = o(a.body);
    const type = s(err.type);
    if (type === 'PAYMENT_ALREADY_CANCELLED') return { outcome: 'CANCELED' };
    if (type === 'PAYMENT_NOT_PAID') {
      // Not paid: an open virtual account closes instead; nothing taken means nothing to refund.
      const now = await this.lookup(req.orderId).catch(() => undefined);
      if (now?.status === 'WAITING_FOR_DEPOSIT') {
        const closed = await this.closeAccount({ idempotencyKey: req.idempotencyKey, orderId: req.orderId, processorRef: req.processorRef });
        return closed.outcome === 'CLOSED' ? { outcome: 'CANCELED' } : closed;
      }
      if (now && now.status !== 'APPROVED') return { outcome: 'CANCELED' };
    }
    return { outcome: 'FAILED', message: errorWords(type || `HTTP_${a.status}`, s(err.pgMessage)) };
  }

  async closeAccount(req: { idempotencyKey: string; orderId: string; processorRef: string | null }): Promise<CloseOutcome> {
    let a: ProviderAnswer;
    try {
      a = await this.call('POST', `${this.path(req.orderId, '/virtual-account/close')}?storeId=${encodeURIComponent(this.s.storeId)}`, {});
    } catch (err) {
      return { outcome: 'FAILED', message: `포트원 응답이 없습니다 (${(err as Error).message})` };
    }
    if (a.status === 200) return { outcome: 'CLOSED' };
    const type = s(o(a.body).type);
    if (type === 'PAYMENT_NOT_FOUND') return { outcome: 'CLOSED' };
    if (type === 'PAYMENT_NOT_WAITING_FOR_DEPOSIT') {
      const now = await this.lookup(req.orderId).catch(() => undefined);
      if (now && (now.status === 'CLOSED' || now.status === 'CANCELED' || now.status === 'DECLINED')) return { outcome: 'CLOSED' };
      if (now?.status === 'APPROVED') return { outcome: 'FAILED', message: '이미 입금된 가상계좌입니다' };
    }
    return { outcome: 'FAILED', message: errorWords(type || `HTTP_${a.status}`, s(o(a.body).pgMessage)) };
  }

  /**
   * A PortOne notice, verified the Standard Webhooks way: HMAC-SHA256 under the webhook secret
   * (base64 after `whsec_`) of `{webhook-id}.{webhook-timestamp}.{body}`, any of the
   * space-separated `v1,` signatures matching, the timestamp within five minutes. Both webhook
   * versions are read: 2024-04-25 (`type`, `data.paymentId`) and 2024-01-01 (`payment_id`).
   */
  readEvent(raw: RawEvent): EventReading {
    const v = verifyStandardWebhook(this.secretBytes, raw, (this.s.nowMs ?? Date.now)());
    if (!v.ok) return v;
    const parsed = noticeJson(raw);
    if (!parsed.ok) return parsed;
    const body = o(parsed.body);
    const id = (x: unknown) => (typeof x === 'string' && x.length > 0 && x.length <= 200 ? x : null);
    const type = s(body.type);
    if (type) {
      const data = o(body.data);
      // Another store's notice (a shared endpoint) is not about a payment of this one.
      const mine = !s(data.storeId) || s(data.storeId) === this.s.storeId;
      return { ok: true, event: { key: v.id, type: type.slice(0, 100), orderId: type.startsWith('Transaction.') && mine ? id(data.paymentId) : null, claimedSecret: null } };
    }
    if (id(body.payment_id)) return { ok: true, event: { key: v.id, type: s(body.status) || 'Transaction', orderId: id(body.payment_id), claimedSecret: null } };
    return { ok: false, reason: 'body: neither a 2024-04-25 (type, data) nor a 2024-01-01 (payment_id) PortOne notice' };
  }

  /** `sunap doctor`: a look-up of an order that cannot exist; PAYMENT_NOT_FOUND proves the secret and the store id. */
  async checkCredentials(): Promise<{ ok: boolean; detail: string }> {
    let a: ProviderAnswer;
    try {
      a = await this.call('GET', `${this.path(`sunap-doctor-${randomBytes(6).toString('hex')}`)}?storeId=${encodeURIComponent(this.s.storeId)}`);
    } catch (err) {
      return { ok: false, detail: `portone: ${(err as Error).message}` };
    }
    const type = s(o(a.body).type);
    if (a.status === 404 && type === 'PAYMENT_NOT_FOUND') {
      if (!this.secretBytes) return { ok: false, detail: `portone: the API secret works for store ${this.s.storeId}, but no webhook secret is set: every notice would be refused` };
      return { ok: true, detail: `portone: the API secret works for store ${this.s.storeId} (channel ${this.s.channelKey}); notices are verified with the webhook secret` };
    }
    if (a.status === 401) return { ok: false, detail: 'portone: the API secret was refused (401 UNAUTHORIZED)' };
    if (a.status === 403) return { ok: false, detail: `portone: the API secret may not use store ${this.s.storeId} (403 FORBIDDEN)` };
    return { ok: false, detail: `portone: answered ${a.status} ${type}` };
  }
}

function cardFacts(m: Json): CardFacts {
  const card = o(m.card);
  const issuer = CARD_COMPANY_NAMES[s(card.issuer)] ?? CARD_COMPANY_NAMES[s(card.publisher)] ?? (s(card.name) || '카드');
  const accepter = CARD_COMPANY_NAMES[s(card.publisher)] ?? issuer;
  const month = n(o(m.installment).month) ?? 0;
  const digits = s(card.number).replace(/[^0-9*]/g, '');
  const last4 = /\d{4}$/.test(digits) ? digits.slice(-4) : null;
  const bin = /^\d{6}/.test(s(card.bin)) ? s(card.bin).slice(0, 6) : null;
  return { issuerName: issuer, accepterName: accepter, approvalNumber: s(m.approvalNumber), installmentMonth: String(Math.min(Math.max(month, 0), 99)).padStart(2, '0'), bin, last4 };
}

/** Standard Webhooks verification; `id` is the notice's webhook-id (its key against replays). */
export function verifyStandardWebhook(secret: Buffer | null, raw: RawEvent, nowMs: number): { ok: true; id: string } | { ok: false; reason: string } {
  if (!secret || secret.length === 0) return { ok: false, reason: 'webhook-signature: no webhook secret is configured for PortOne (SUNAP_PORTONE_WEBHOOK_SECRET or the store\'s own)' };
  const id = raw.headers['webhook-id'];
  const ts = raw.headers['webhook-timestamp'];
  const sigs = raw.headers['webhook-signature'];
  if (!id || !ts || !sigs) return { ok: false, reason: 'headers: webhook-id, webhook-timestamp and webhook-signature are required' };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: 'webhook-timestamp: not a number of seconds' };
  const skew = Math.floor(nowMs / 1000) - Number(ts);
  if (skew > WEBHOOK_TOLERANCE_S) return { ok: false, reason: `webhook-timestamp: older than ${WEBHOOK_TOLERANCE_S} seconds` };
  if (skew < -WEBHOOK_TOLERANCE_S) return { ok: false, reason: `webhook-timestamp: more than ${WEBHOOK_TOLERANCE_S} seconds in the future` };
  const expected = createHmac('sha256', secret).update(`${id}.${ts}.`).update(raw.body).digest();
  for (const part of sigs.split(' ')) {
    const [version, sig] = part.split(',', 2);
    if (version !== 'v1' || !sig) continue;
    const got = Buffer.from(sig, 'base64');
    if (got.length === expected.length && timingSafeEqual(got, expected)) return { ok: true, id: id.slice(0, 200) };
  }
  return { ok: false, reason: 'webhook-signature: no signature matches the webhook secret' };
}
