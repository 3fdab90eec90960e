import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import { ensureShortCode, findShortLink } from './short-links-repository.js';
import type { Database } from '../db/index.js';
import type { CardInput } from '../ports/card-processor.js';
import type { PayMethod, RawEvent, RefundAccount } from '../ports/checkout.js';
import type { Clock } from '../platform/clock.js';
import { hmacToken, newId, type SecretBox, tokenEqual } from '../platform/crypto.js';
import { GatewayCodes as C, GatewayError, isUniqueViolation } from '../platform/errors.js';
import { urlProblem, type HttpPolicy } from '../platform/urls.js';
import { checker, dropNulls } from '../platform/validation.js';
import { breakdown } from './amounts.js';
import { pay, type PayResult } from './approval.js';
import { cancelApproved, deletePayment, terminalRefusal } from './cancellation.js';
import { beginCheckout, returnFromWindow, type BeginResult, type ReturnResult } from './checkout.js';
import type { GatewayContext, PaymentListener } from './context.js';
import { receiveEvent, type EventAnswer } from './processor-events.js';
import type { ProcessorRegistry, StoreWay } from './processors.js';
import { sandboxDashboardCancel, sandboxDeposit, sandboxPay, type SandboxPayAnswer, type SandboxPayRequest } from './sandbox-pay.js';
import { closeAccountForCustomer, type CloseResult } from './settle.js';
import { storedLine, storeLines } from './items.js';
import { isTerminalPayPath, type OrderType, type TerminalPayPath } from './payment-state.js';
import { reconcile, reconcileAll, staleAttemptMs } from './reconcile.js';
import * as repo from './repository.js';
import type { Db, Payment, Store } from './repository.js';
import { CancelPaymentBody, refundAccountOf, RequestPaymentBody, type Item } from './schemas.js';
import { verifySignedCall, type SigningDeps } from './signing.js';
import { paymentRecord } from './views.js';

export interface PaymentInput {
  transSeqNo: string;
  amount: number;
  mobileNo: string;
  payUserName: string;
  requestReason: string;
  infoMessage?: string | null;
  confirmUrl?: string | null;
  returnDisplayYn?: 'Y' | 'N';
  returnUrl?: string | null;
  /**
   * The RETURN_URL is a page of this service (the console's recharge), not a merchant's: it
   * follows SUNAP_PUBLIC_URL, so the merchant rule (https, or loopback http in the sandbox) does
   * not apply, only http(s).
   */
  returnUrlIsOurs?: boolean;
  tempValue?: string | null;
  userId?: string | null;
  orderType?: OrderType;
  items?: Item[];
  /**
   * The tax-free part given as an amount (an invoice's taxFreeAmount; the gateway API computes it
   * from ITEMS' taxType instead): the rest is taxed at the default rate (amounts.ts, breakdown).
   */
  taxFreeAmount?: number;
}

export interface GatewayDeps {
  clock: Clock;
  box: SecretBox;
  /** Which processor a store or a payment goes to (src/gateway/processors.ts). */
  processors: ProcessorRegistry;
  /** The longest call of the operator's processor (the reconcile's staleness); absent: 60 s. */
  callLimitMs?: number;
  /** The master key; page tokens are derived from it, so nothing about them is stored. */
  secretKey: Buffer;
  paymentPageUrl: string;
  /** Where short payment links live (`{SUNAP_PUBLIC_URL}/s`): `/s/<code>` redirects to the payment page. */
  shortLinkUrl?: string;
  signMaxSkewSeconds: number;
  /** What CONFIRM_URL and RETURN_URL may be (src/platform/urls.ts, urlPolicyOf). */
  confirmUrlPolicy: HttpPolicy;
  log: Logger;
  /** Called after a commit that made jobs due, so a worker picks them up at once. */
  wake: () => void;
}

const createCheck = checker(RequestPaymentBody);
const cancelCheck = checker(CancelPaymentBody);

/**
 * The gateway (docs/reference.md, sections 2, 3, 5 and 6): signed calls, payment creation, the customer's
 * payment, cancel and delete, and what the invoicing side and the pages may ask of payments.
 * The rules live in the files this delegates to: signing.ts, approval.ts, cancellation.ts,
 * reconcile.ts, amounts.ts, payment-state.ts.
 */
export class GatewayService {
  private readonly listeners: PaymentListener[] = [];
  private readonly ctx: GatewayContext;

  constructor(private readonly db: Kysely<Database>, private readonly deps: GatewayDeps) {
    this.ctx = {
      db, clock: deps.clock, processors: deps.processors, box: deps.box, log: deps.log, listeners: this.listeners,
      wake: deps.wake, staleAttemptMs: staleAttemptMs({ callLimitMs: deps.callLimitMs }), reconcile: (id) => reconcile(this.ctx, id),
    };
  }

  addListener(l: PaymentListener): void {
    this.listeners.push(l);
  }

  // ---- links -------------------------------------------------------------------------

  /** Page token: derived from the payment id under the master key, so nothing is stored. */
  pageToken(paymentId: string): string {
    return hmacToken(this.deps.secretKey, 'payment-page', paymentId);
  }

  redirectUrl(payment: Pick<Payment, 'id'>): string {
    const u = new URL(this.deps.paymentPageUrl);
    u.searchParams.set('tid', payment.id);
    u.searchParams.set('token', this.pageToken(payment.id));
    return u.toString();
  }

  /**
   * The payment's short link (short-links-repository.ts): a random code, made on first use and
   * the same afterwards, that redirects to redirectUrl(payment).
   */
  async shortUrl(payment: Pick<Payment, 'id' | 'store_code'>): Promise<string> {
    const code = await ensureShortCode(this.db, payment.store_code, payment.id, this.deps.clock.nowMs());
    return `${this.shortLinkBase()}/${code}`;
  }

  /** Where a short link's code leads: its payment's page link, or null for a code that opens nothing. */
  async resolveShortLink(code: string): Promise<string | null> {
    const link = await findShortLink(this.db, code);
    return link ? this.redirectUrl({ id: link.paymentId }) : null;
  }

  private shortLinkBase(): string {
    return (this.deps.shortLinkUrl ?? `${new URL(this.deps.paymentPageUrl).origin}/s`).replace(/\/+$/, '');
  }

  /**
   * Where a processor's window sends the browser back for one order: beside the payment page,
   * with the page's own link parameters and the order (the processor appends its own).
   */
  returnUrls(paymentId: string): (orderId: string) => { success: string; fail: string } {
    const base = new URL(this.deps.paymentPageUrl);
    const path = base.pathname.replace(/\/+$/, '');
    return (orderId) => {
      const at = (outcome: string) => {
        const u = new URL(`${base.origin}${path}/return/${outcome}`);
        u.searchParams.set('tid', paymentId);
        u.searchParams.set('token', this.pageToken(paymentId));
        u.searchParams.set('order', orderId);
        return u.toString();
      };
      return { success: at('success'), fail: at('fail') };
    };
  }

  /** The payment behind a page link, or undefined for an unknown id or a wrong token alike. */
  async paymentForPage(tid: unknown, token: unknown): Promise<{ payment: Payment; store: Store } | undefined> {
    if (typeof tid !== 'string' || typeof token !== 'string' || tid.length > 64) return undefined;
    if (!tokenEqual(token, this.pageToken(tid))) return undefined;
    const payment = await repo.findPaymentById(this.db, tid);
    if (!payment) return undefined;
    const store = await repo.findStoreByCode(this.db, payment.store_code);
    return store ? { payment, store } : undefined;
  }

  // ---- signed operations ---------------------------------------------------------------

  private signingDeps?: SigningDeps;
  private get signing(): SigningDeps {
    return (this.signingDeps ??= { box: this.deps.box, wallNowMs: Date.now, nowMs: () => this.deps.clock.nowMs(), maxSkewSeconds: this.deps.signMaxSkewSeconds });
  }

  private verify(body: Record<string, unknown>) {
    return verifySignedCall(this.db, this.signing, body);
  }

  async requestPayment(raw: Record<string, unknown>): Promise<{ REDIRECT_URL: string }> {
    const body = dropNulls(raw) as Record<string, unknown>;
    // A payment already holding this TRANS_SEQNO is refused by the insert's unique index (4001),
    // so the signed call's lookup reads the store and its keys only.
    const { store } = await verifySignedCall(this.db, this.signing, body, repo.findStoreForSigning);
    const err = createCheck.firstError(body);
    if (err) throw new GatewayError(C.VALIDATION, err);
    const b = body as RequestPaymentBody;
    if (b.CONFIRM_URL.length > 100) throw new GatewayError(C.CONFIRM_URL_LENGTH, 'CONFIRM_URL: must be at most 100 characters');
    const payment = await this.createPayment(store, {
      transSeqNo: b.TRANS_SEQNO, amount: Number(b.APPROVAL_AMOUNT), mobileNo: b.MOBILE_NO, payUserName: b.PAY_USER_NAME,
      requestReason: b.REQUEST_REASON, infoMessage: b.INFO_MESSAGE, confirmUrl: b.CONFIRM_URL,
      returnDisplayYn: b.RETURN_DISPLAY_YN, returnUrl: b.RETURN_URL, tempValue: b.TEMP_VALUE, userId: b.USER_ID,
      orderType: b.orderType, items: b.ITEMS,
    });
    return { REDIRECT_URL: this.redirectUrl(payment) };
  }

  /** Creates a payment of a store; shared by requestPayment and the invoicing side (in its transaction). */
  async createPayment(store: Store, input: PaymentInput, trx?: Transaction<Database>): Promise<Payment> {
    if (!(input.amount > 0)) throw new GatewayError(C.VALIDATION, 'APPROVAL_AMOUNT: must be greater than 0');
    const urlCheck = (field: string, value: string | null | undefined, policy: HttpPolicy) => {
      const problem = value != null ? urlProblem(value, policy) : null;
      if (problem) throw new GatewayError(C.VALIDATION, `${field}: ${problem}`);
    };
    urlCheck('CONFIRM_URL', input.confirmUrl, this.deps.confirmUrlPolicy);
    urlCheck('RETURN_URL', input.returnUrl, input.returnUrlIsOurs ? 'http-or-https' : this.deps.confirmUrlPolicy);
    if (input.returnDisplayYn === 'Y' && !input.returnUrl) throw new GatewayError(C.VALIDATION, 'RETURN_URL: is required when RETURN_DISPLAY_YN is Y');
    const split = breakdown(input.amount, input.items, input.taxFreeAmount);
    if ('error' in split) throw new GatewayError(C.VALIDATION, split.error);
    const now = this.deps.clock.nowMs();
    const payment: Payment = {
      id: newId(), platform_code: store.platform_code, store_code: store.code, trans_seqno: input.transSeqNo,
      state: 'STORE_REQUEST', amount: input.amount, supply_amount: split.supplyAmount, tax_charge: split.taxCharge,
      tax_free_amount: split.taxFreeAmount, mobile_no: input.mobileNo, pay_user_name: input.payUserName,
      request_reason: input.requestReason, info_message: input.infoMessage ?? null, confirm_url: input.confirmUrl ?? null,
      return_display_yn: input.returnDisplayYn ?? 'N', return_url: input.returnUrl ?? null, temp_value: input.tempValue ?? null,
      user_id: input.userId ?? null, order_type: input.orderType ?? 'BILL',
      items_json: storeLines((input.items ?? []).map((it, i) => storedLine({ ...it, net: split.lines[i]! }))),
      pay_path: 'WEB', approval_number: null, approval_at: null, installment_month: null, issuer_name: null,
      accepter_name: null, method_name: null, card_bin: null, card_last4: null, processor_ref: null, cancel_at: null, cancel_reason: '',
      cancel_amount: 0, created_at: now, updated_at: now, processor: null, processor_order: null, method: null,
      vbank_code: '', vbank_name: '', vbank_account: '', vbank_holder: '', vbank_due_at: null, vbank_secret_sealed: null,
    };
    try {
      await repo.insertPayment(trx ?? this.db, payment);
    } catch (e) {
      if (isUniqueViolation(e)) throw new GatewayError(C.DUPLICATE, 'TRANS_SEQNO: a payment with this TRANS_SEQNO already exists');
      throw e;
    }
    return payment;
  }

  async searchPayment(raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { store, payment } = await verifySignedCall(this.db, this.signing, dropNulls(raw) as Record<string, unknown>, repo.findStorePaymentViewForSigning);
    if (!payment) throw new GatewayError(C.NOT_FOUND_SEARCH, 'TRANS_SEQNO: no such transaction');
    return paymentRecord(payment, store);
  }

  async cancelPayment(raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = dropNulls(raw) as Record<string, unknown>;
    const { store, payment: found } = await this.verify(body);
    const err = cancelCheck.firstError(body);
    if (err) throw new GatewayError(C.VALIDATION, err);
    const b = body as CancelPaymentBody;
    const amount = Number(b.APPROVAL_AMOUNT);
    if (!found) throw new GatewayError(C.NOT_FOUND_CANCEL, 'TRANS_SEQNO: no such transaction');
    // DELETE too: a terminal's approval is refused as such (4008) before any state rule.
    if (isTerminalPayPath(found.pay_path)) throw terminalRefusal(found);
    if (b.REQUEST_TYPE === 'DELETE') {
      await deletePayment(this.ctx, found, amount);
      return {};
    }
    const p = await cancelApproved(this.ctx, store, found, amount, b.CANCEL_REASON ?? '', refundAccountOf(b));
    return { TRANS_SEQNO: p.trans_seqno, MOBILE_NO: p.mobile_no, APPROVAL_AMOUNT: p.amount, TEMP_VALUE: p.temp_value };
  }

  // ---- for the invoicing side and the pages ------------------------------------------------

  /** Deletes an unpaid payment on behalf of the invoicing side (the rules of DELETE). */
  async deleteUnpaid(payment: Payment): Promise<void> {
    await deletePayment(this.ctx, payment, payment.amount);
  }

  /**
   * Full cancel of an approved payment (the rules of CANCEL); a paid virtual account refunds to
   * `refund`. `onCanceled` runs in the cancel's transaction, only when this call refunded.
   */
  cancelApproved(
    store: Store, payment: Payment, amount: number, reason: string, refund: Partial<RefundAccount> | null = null,
    onCanceled?: (trx: Db, payment: Payment) => Promise<void>,
  ): Promise<Payment> {
    return cancelApproved(this.ctx, store, payment, amount, reason, refund, onCanceled);
  }

  /** The customer pays by card number (a key-in store's card form). */
  pay(paymentId: string, card: CardInput, installmentMonth: string): Promise<PayResult> {
    return pay(this.ctx, paymentId, card, installmentMonth);
  }

  /** How a store takes payments: its processor, way and offered methods. */
  storeWay(storeCode: string): Promise<StoreWay> {
    return this.ctx.processors.storeWay(storeCode);
  }

  /** The customer chose a method: one order handed to the store's processor's window. */
  beginCheckout(paymentId: string, method: PayMethod): Promise<BeginResult> {
    return beginCheckout(this.ctx, paymentId, method, { returnUrls: this.returnUrls(paymentId) });
  }

  /** The browser came back from the window: confirm once, for the payment's own amount. */
  returnFromWindow(paymentId: string, orderId: string, outcome: 'success' | 'fail', query: Record<string, string>): Promise<ReturnResult> {
    return returnFromWindow(this.ctx, paymentId, orderId, outcome, query);
  }

  /** The customer chose to pay another way while a virtual account was open: it closes first. */
  closeAccount(paymentId: string): Promise<CloseResult> {
    return closeAccountForCustomer(this.ctx, paymentId);
  }

  /** A processor's notice (POST /processor-events/...). */
  receiveEvent(processor: string, storeCode: string | null, raw: RawEvent): Promise<EventAnswer> {
    return receiveEvent(this.ctx, processor, storeCode, raw);
  }

  /** The attempt of a checkout order (its status and message, for the page after a return seen before). */
  async orderOf(orderId: string) {
    return repo.findAttempt(this.db, orderId);
  }

  reconcile(paymentId: string): Promise<boolean> {
    return reconcile(this.ctx, paymentId);
  }

  /** Settles every attempt a dead process left open (the server runs it at start and then periodically). */
  reconcileAll(): Promise<number> {
    return reconcileAll(this.ctx);
  }

  /** How long an attempt stays open before it counts as abandoned. */
  get staleAttemptMs(): number {
    return this.ctx.staleAttemptMs;
  }

  async findById(id: string): Promise<Payment | undefined> {
    return repo.findPaymentById(this.db, id);
  }

  async findByStore(platformCode: string, storeCode: string, transSeqNo: string): Promise<Payment | undefined> {
    return repo.findPayment(this.db, platformCode, storeCode, transSeqNo);
  }

  async findStore(storeCode: string): Promise<Store | undefined> {
    return repo.findStoreByCode(this.db, storeCode);
  }

  // ---- sandbox -------------------------------------------------------------------------

  /** Sandbox: the customer pays, through the same code as the page. */
  sandboxPay(p: Payment, req: SandboxPayRequest): Promise<SandboxPayAnswer> {
    return sandboxPay(this.ctx, p, req, this.returnUrls(p.id));
  }

  /** Sandbox: the bank deposits into the payment's open account; null without one. */
  sandboxDeposit(p: Payment): Promise<Payment | null> {
    return sandboxDeposit(this.ctx, p);
  }

  /** Sandbox: the payment is cancelled in the processor's dashboard; null when it is not a paid sandbox payment. */
  sandboxDashboardCancel(p: Payment): Promise<Payment | null> {
    return sandboxDashboardCancel(this.ctx, p);
  }

  /** The context the sandbox's window works with (its route plays the window). */
  get context(): GatewayContext {
    return this.ctx;
  }

  /** Sandbox: a payment approved on a terminal (PAY_PATH KIOSK, VAN or CARD), recorded as such. */
  async recordTerminalPayment(input: { platformCode: string; storeCode: string; transSeqNo: string; amount: number; mobileNo: string; payPath: TerminalPayPath }): Promise<Payment> {
    const store = await repo.findStore(this.db, input.platformCode, input.storeCode);
    if (!store) throw new GatewayError(C.STORE, 'PLATFORM_CODE, STORE_CODE: unknown platform or store, or the store is not of this platform');
    return this.db.transaction().execute(async (trx) => {
      const p = await this.createPayment(store, { transSeqNo: input.transSeqNo, amount: input.amount, mobileNo: input.mobileNo, payUserName: '', requestReason: `${input.payPath} 결제` }, trx);
      const now = this.deps.clock.nowMs();
      const approved = await repo.transition(trx, p, 'approve', {
        pay_path: input.payPath, approval_at: now, approval_number: String(10_000_000 + Math.floor(Math.random() * 89_999_999)),
        installment_month: '00', issuer_name: '신한카드', accepter_name: '신한카드', method_name: '신용카드', method: 'CARD', updated_at: now,
      });
      if (!approved) throw new Error(`terminal payment ${p.id} was not waiting right after its creation`);
      return approved;
    });
  }
}
