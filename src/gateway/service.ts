import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import { enqueue } from '../jobs/queue.js';
import type { ApproveOutcome, CancelOutcome, CardInput, CardProcessor } from '../ports/card-processor.js';
import { kstCompact, parseKstCompact, type Clock } from '../platform/clock.js';
import { apiSign, hexEqual, hmacToken, newId, SecretBox, tokenEqual } from '../platform/crypto.js';
import { GatewayCodes as C, GatewayError, isUniqueViolation } from '../platform/errors.js';
import { checker, dropNulls } from '../platform/validation.js';
import { breakdown } from './amounts.js';
import * as repo from './repository.js';
import type { Payment, Store } from './repository.js';
import { CancelPaymentBody, RequestPaymentBody, SigningFields, type Item } from './schemas.js';

export type { Payment, Store } from './repository.js';

export const TERMINAL_PAY_PATHS = ['KIOSK', 'VAN', 'CARD'] as const;
export const CALLBACK_JOB = 'gateway.callback';
/** Delay before attempts 2..5 of a CONFIRM_URL callback (decisions §4). */
export const CALLBACK_BACKOFF_SECONDS = [10, 60, 300, 1800];
/** An attempt open this long was left by a dead process (processor calls time out well before). */
export const STALE_ATTEMPT_MS = 60_000;

/**
 * Lets another part of the service act in the same transaction as a payment change
 * (the invoicing side moves its invoice and writes its webhook event there).
 */
export interface PaymentListener {
  onApproved?(trx: Transaction<Database>, payment: Payment): Promise<void>;
  onCanceled?(trx: Transaction<Database>, payment: Payment): Promise<void>;
  onDeleted?(trx: Transaction<Database>, payment: Payment): Promise<void>;
}

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
  tempValue?: string | null;
  userId?: string | null;
  orderType?: 'BILL' | 'SHOP';
  items?: Item[];
}

export type PayResult =
  | { outcome: 'APPROVED'; payment: Payment }
  | { outcome: 'DECLINED' | 'ERROR'; payment: Payment; message: string }
  | { outcome: 'INVALID'; payment: Payment; message: string }
  | { outcome: 'STATE'; payment: Payment };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class GatewayService {
  private readonly listeners: PaymentListener[] = [];
  private readonly signingCheck = checker(SigningFields);
  private readonly createCheck = checker(RequestPaymentBody);
  private readonly cancelCheck = checker(CancelPaymentBody);

  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: {
      clock: Clock;
      box: SecretBox;
      processor: CardProcessor;
      secretKey: Buffer;
      paymentPageUrl: string;
      signMaxSkewSeconds: number;
      log: Logger;
      /** Called after a commit that made jobs due, so a worker picks them up at once. */
      wake: () => void;
    },
  ) {}

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

  /** Order of checks (decisions §4): signing fields → store pair (4005) → signature and window (3001). */
  /** The store, and its payment with the call's TRANS_SEQNO if any (read in the same query). */
  private async authenticate(body: Record<string, unknown>): Promise<{ store: Store; payment: Payment | undefined }> {
    const err = this.signingCheck.firstError(body);
    if (err) throw new GatewayError(C.VALIDATION, err);
    const b = body as { TRANS_SEQNO: string; PLATFORM_CODE: string; STORE_CODE: string; TRANS_AT: string; API_SIGN: string };
    const transAt = parseKstCompact(b.TRANS_AT);
    if (transAt === null) throw new GatewayError(C.VALIDATION, 'TRANS_AT: is not a real date and time');
    const now = this.deps.clock.nowMs();
    const found = await repo.findStorePaymentForSigning(this.db, b.PLATFORM_CODE, b.STORE_CODE, now, b.TRANS_SEQNO);
    if (!found) throw new GatewayError(C.STORE, 'PLATFORM_CODE, STORE_CODE: unknown platform or store, or the store is not of this platform');
    const { store, keys, payment } = found;
    const ok = keys.some((sealed) => hexEqual(apiSign(b.TRANS_SEQNO, b.PLATFORM_CODE, b.STORE_CODE, b.TRANS_AT, this.deps.box.open(sealed)), b.API_SIGN));
    if (!ok) throw new GatewayError(C.SIGNATURE, 'API_SIGN: signature mismatch; check the field order, TRANS_AT and API_KEY');
    const skew = this.deps.signMaxSkewSeconds;
    if (skew > 0 && Math.abs(now - transAt) > skew * 1000) {
      throw new GatewayError(C.SIGNATURE, `TRANS_AT: more than ${skew} seconds away from server time (${kstCompact(now)} KST)`);
    }
    return { store, payment };
  }

  async requestPayment(raw: Record<string, unknown>): Promise<{ REDIRECT_URL: string }> {
    const body = dropNulls(raw) as Record<string, unknown>;
    // A payment already holding this TRANS_SEQNO is refused by the insert's unique index (4001).
    const { store } = await this.authenticate(body);
    const err = this.createCheck.firstError(body);
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

  /** Creates a payment of a store; shared by requestPayment and the invoicing side. */
  async createPayment(store: Store, input: PaymentInput, trx?: Transaction<Database>): Promise<Payment> {
    if (!(input.amount > 0)) throw new GatewayError(C.VALIDATION, 'APPROVAL_AMOUNT: must be greater than 0');
    if (input.confirmUrl != null) checkUrl('CONFIRM_URL', input.confirmUrl, true);
    if (input.returnUrl != null) checkUrl('RETURN_URL', input.returnUrl, false);
    if (input.returnDisplayYn === 'Y' && !input.returnUrl) throw new GatewayError(C.VALIDATION, 'RETURN_URL: is required when RETURN_DISPLAY_YN is Y');
    const split = breakdown(input.amount, input.items);
    if ('error' in split) throw new GatewayError(C.VALIDATION, split.error);
    const now = this.deps.clock.nowMs();
    const payment: Payment = {
      id: newId(), platform_code: store.platform_code, store_code: store.code, trans_seqno: input.transSeqNo,
      state: 'STORE_REQUEST', amount: input.amount, supply_amount: split.supplyAmount, tax_charge: split.taxCharge,
      tax_free_amount: split.taxFreeAmount, mobile_no: input.mobileNo, pay_user_name: input.payUserName,
      request_reason: input.requestReason, info_message: input.infoMessage ?? null, confirm_url: input.confirmUrl ?? null,
      return_display_yn: input.returnDisplayYn ?? 'N', return_url: input.returnUrl ?? null, temp_value: input.tempValue ?? null,
      user_id: input.userId ?? null, order_type: input.orderType ?? 'BILL',
      items_json: input.items?.length ? JSON.stringify(input.items.map((it, i) => ({ ...it, net: split.lines[i] }))) : null,
      pay_path: 'WEB', approval_number: null, approval_at: null, installment_month: null, issuer_name: null,
      accepter_name: null, method_name: null, card_bin: null, card_last4: null, cancel_at: null, cancel_reason: '',
      cancel_amount: 0, created_at: now, updated_at: now,
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
    const body = dropNulls(raw) as Record<string, unknown>;
    const { store, payment: p } = await this.authenticate(body);
    if (!p) throw new GatewayError(C.NOT_FOUND_SEARCH, 'TRANS_SEQNO: no such transaction');
    return paymentRecord(p, store);
  }

  async cancelPayment(raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = dropNulls(raw) as Record<string, unknown>;
    const { store, payment: found } = await this.authenticate(body);
    const err = this.cancelCheck.firstError(body);
    if (err) throw new GatewayError(C.VALIDATION, err);
    const b = body as CancelPaymentBody;
    const amount = Number(b.APPROVAL_AMOUNT);
    if (!found) throw new GatewayError(C.NOT_FOUND_CANCEL, 'TRANS_SEQNO: no such transaction');
    if ((TERMINAL_PAY_PATHS as readonly string[]).includes(found.pay_path)) {
      throw new GatewayError(C.TERMINAL, `TRANS_SEQNO: approved on a terminal (${found.pay_path}); cancel it on that terminal`);
    }
    if (b.REQUEST_TYPE === 'DELETE') {
      await this.deletePayment(found, amount);
      return {};
    }
    const p = await this.cancelApproved(store, found, amount, b.CANCEL_REASON ?? '');
    return { TRANS_SEQNO: p.trans_seqno, MOBILE_NO: p.mobile_no, APPROVAL_AMOUNT: p.amount, TEMP_VALUE: p.temp_value };
  }

  /**
   * Runs `fn` while holding the payment's single open-attempt slot (a partial unique index),
   * waiting briefly when another operation holds it: two cancels, or a cancel and a payment,
   * never act on the same payment at once, on one instance or many.
   */
  private async withSlot<T>(paymentId: string, kind: 'APPROVE' | 'CANCEL' | 'DELETE', extra: { card_bin?: string; card_last4?: string; installment_month?: string }, fn: (attemptId: string) => Promise<T>): Promise<T | 'BUSY'> {
    const attemptId = newId();
    for (let i = 0; i < 100; i++) {
      try {
        await repo.openAttempt(this.db, { id: attemptId, payment_id: paymentId, kind: kind as 'APPROVE', ...extra, now: this.deps.clock.nowMs() });
        break;
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        if (i === 99) return 'BUSY';
        // The holder may be a process that died mid-operation: finish its work first.
        if (i % 20 === 0 && (await this.reconcile(paymentId).catch(() => false))) continue;
        await sleep(50);
      }
    }
    // The slot is released when fn ends (a no-op when fn closed it; SKIPPED means nothing
    // needed doing). An unexpected failure (database or processor gone) may have happened
    // after the processor acted, so that attempt stays open for reconcile() to settle.
    let result: T;
    try {
      result = await fn(attemptId);
    } catch (err) {
      if (err instanceof GatewayError) await repo.closeAttempt(this.db, attemptId, 'ERROR', this.deps.clock.nowMs(), { message: err.message }).catch(() => {});
      throw err;
    }
    await repo.closeAttempt(this.db, attemptId, 'SKIPPED', this.deps.clock.nowMs()).catch(() => {});
    return result;
  }

  private async deletePayment(found: Payment, amount: number): Promise<void> {
    const result = await this.withSlot(found.id, 'DELETE', {}, async (attemptId) => {
      return this.db.transaction().execute(async (trx) => {
        const p = (await repo.findPaymentById(trx, found.id))!;
        if (p.state === 'STORE_DELETE') return 'ALREADY' as const;
        if (p.state !== 'STORE_REQUEST') {
          throw new GatewayError(C.STATE, `REQUEST_TYPE: a payment in ${p.state} cannot be deleted; DELETE is for unpaid requests`);
        }
        if (amount !== p.amount) throw new GatewayError(C.AMOUNT_MISMATCH, `APPROVAL_AMOUNT: does not match the requested amount (${p.amount})`);
        const now = this.deps.clock.nowMs();
        await repo.transition(trx, p.id, ['STORE_REQUEST'], { state: 'STORE_DELETE', updated_at: now });
        await repo.closeAttempt(trx, attemptId, 'DELETED', now);
        const updated = { ...p, state: 'STORE_DELETE', updated_at: now };
        for (const l of this.listeners) await l.onDeleted?.(trx, updated);
        return 'DELETED' as const;
      });
    });
    if (result === 'BUSY') throw new GatewayError(C.STATE, 'TRANS_SEQNO: the payment is being paid right now; try again');
  }

  /** Deletes an unpaid payment on behalf of the invoicing side (same rules as DELETE). */
  async deleteUnpaid(payment: Payment): Promise<void> {
    await this.deletePayment(payment, payment.amount);
  }

  /** Full cancel of an approved payment; CANCEL_FAIL retries the card cancel. Idempotent once complete. */
  async cancelApproved(store: Store, found: Payment, amount: number, reason: string): Promise<Payment> {
    const check = (p: Payment): 'DONE' | 'GO' => {
      if (p.state === 'CANCEL_COMPLETE') {
        if (amount !== p.amount) throw new GatewayError(C.AMOUNT_MISMATCH, `APPROVAL_AMOUNT: the requested cancel amount does not match the original approved amount (${p.amount})`);
        return 'DONE';
      }
      if (p.state !== 'APPROVE_COMPLETE' && p.state !== 'CANCEL_FAIL') {
        throw new GatewayError(C.STATE, `REQUEST_TYPE: a payment in ${p.state} cannot be cancelled; CANCEL is for approved payments`);
      }
      if (amount !== p.amount) throw new GatewayError(C.AMOUNT_MISMATCH, `APPROVAL_AMOUNT: the requested cancel amount does not match the original approved amount (${p.amount})`);
      if (!store.cat_enabled) throw new GatewayError(C.NO_CAT, 'STORE_CODE: the store has no online terminal (CAT) information; card cancels are not possible');
      return 'GO';
    };
    if (check(found) === 'DONE') return found;
    const result = await this.withSlot(found.id, 'CANCEL', {}, async (attemptId) => {
      const p = (await repo.findPaymentById(this.db, found.id))!;
      if (check(p) === 'DONE') return p;
      const r = await this.deps.processor.cancel({
        idempotencyKey: `cancel:${p.id}`, approvalNumber: p.approval_number ?? '', amount: p.amount,
        cardBin: p.card_bin ?? '', cardLast4: p.card_last4 ?? '',
      });
      const done = await this.commitCancel(p, attemptId, r, reason);
      if ('failed' in done) {
        throw new GatewayError(C.CANCEL_FAILED, `TRANS_SEQNO: the card cancel failed (${done.failed}); the payment is CANCEL_FAIL, request CANCEL again to retry`);
      }
      return done;
    });
    if (result === 'BUSY') throw new GatewayError(C.STATE, 'TRANS_SEQNO: another operation on this payment is in progress; try again');
    this.deps.wake();
    return result;
  }

  // ---- the customer pays ---------------------------------------------------------------

  /**
   * The one path by which a customer pays (payment page and sandbox alike). The attempt row
   * is committed before the processor is called and carries its idempotency key; the
   * approval commits with a compare-and-set together with the callback job (design note 2).
   */
  async pay(paymentId: string, card: CardInput, installmentMonth: string): Promise<PayResult> {
    const payment = await repo.findPaymentById(this.db, paymentId);
    if (!payment) throw new GatewayError(C.NOT_FOUND_SEARCH, 'TRANS_SEQNO: no such transaction');
    if (payment.state !== 'STORE_REQUEST') return { outcome: 'STATE', payment };
    if (!/^(00|0[2-9]|1[0-2])$/.test(installmentMonth)) return { outcome: 'INVALID', payment, message: '할부 개월 수가 올바르지 않습니다' };
    if (installmentMonth !== '00' && payment.amount < 50_000) return { outcome: 'INVALID', payment, message: '할부는 50,000원 이상부터 가능합니다' };
    const extra = { card_bin: card.number.slice(0, 6), card_last4: card.number.slice(-4), installment_month: installmentMonth };
    const result = await this.withSlot(paymentId, 'APPROVE', extra, async (attemptId): Promise<PayResult> => {
      const current = (await repo.findPaymentById(this.db, paymentId))!;
      if (current.state !== 'STORE_REQUEST') return { outcome: 'STATE', payment: current };
      const r = await this.deps.processor.approve({ idempotencyKey: attemptId, amount: current.amount, installmentMonth, card });
      const now = this.deps.clock.nowMs();
      if (r.outcome !== 'APPROVED') {
        await repo.closeAttempt(this.db, attemptId, r.outcome, now, { message: r.message });
        return { outcome: r.outcome, payment: current, message: r.message };
      }
      const approved = await this.commitApproval(current, attemptId, r, { ...extra, installment_month: installmentMonth });
      if (!approved) return { outcome: 'STATE', payment: (await repo.findPaymentById(this.db, paymentId))! };
      this.deps.wake();
      return { outcome: 'APPROVED', payment: approved };
    });
    if (result === 'BUSY') return { outcome: 'STATE', payment: (await repo.findPaymentById(this.db, paymentId))! };
    return result;
  }

  /**
   * Commits an approval the processor gave: close the attempt, compare-and-set the payment,
   * enqueue the callback and let listeners act, in one transaction. The attempt is closed with
   * its own compare-and-set first, because a reconcile (another instance's sweep, or one that a
   * moved clock let in while the processor was still answering) may have settled it already:
   * then that decision stands. Settled as APPROVED, the approval is on record and is the
   * payment's; settled otherwise, this charge has no record and is voided. Returns null (and
   * voids the charge) too if the payment is no longer waiting, which the slot prevents.
   */
  private async commitApproval(current: Payment, attemptId: string, r: Extract<ApproveOutcome, { outcome: 'APPROVED' }>, card: { card_bin: string; card_last4: string; installment_month: string }): Promise<Payment | null> {
    const now = this.deps.clock.nowMs();
    const set = {
      state: 'APPROVE_COMPLETE', approval_number: r.approvalNumber, approval_at: now, installment_month: card.installment_month,
      issuer_name: r.issuerName, accepter_name: r.accepterName, method_name: '신용카드', card_bin: card.card_bin,
      card_last4: card.card_last4, pay_path: 'WEB', updated_at: now,
    };
    const notWaiting = new Error('the payment is no longer waiting');
    const approved = await this.db.transaction().execute(async (trx) => {
      if (!(await repo.closeAttempt(trx, attemptId, 'APPROVED', now, { issuer_name: r.issuerName }))) return 'SETTLED' as const;
      // Rolls the attempt's close back with it: the void below closes it as CANCELED.
      if (!(await repo.transition(trx, current.id, ['STORE_REQUEST'], set))) throw notWaiting;
      const updated: Payment = { ...current, ...set };
      await this.enqueueCallback(trx, updated, now);
      for (const l of this.listeners) await l.onApproved?.(trx, updated);
      return updated;
    }).catch((err) => {
      if (err === notWaiting) return null;
      throw err;
    });
    const voidCharge = () => this.deps.processor.cancel({ idempotencyKey: `void:${attemptId}`, approvalNumber: r.approvalNumber, amount: current.amount, cardBin: card.card_bin, cardLast4: card.card_last4 });
    if (approved === 'SETTLED') {
      if ((await repo.attemptStatus(this.db, attemptId)) === 'APPROVED') return (await repo.findPaymentById(this.db, current.id)) ?? null;
      await voidCharge();
      this.deps.log.warn({ payment: current.id, attempt: attemptId }, 'voided an approval whose attempt was settled as abandoned meanwhile');
      return null;
    }
    if (!approved) {
      await voidCharge();
      await repo.closeAttempt(this.db, attemptId, 'CANCELED', now, { message: 'voided: the payment was no longer waiting' });
      return null;
    }
    this.deps.wake();
    return approved;
  }

  /**
   * An attempt left OPEN longer than any processor call takes belongs to a process that died
   * between the processor's answer and our commit. Ask the processor what it did under that
   * idempotency key and finish the job, so the charge is neither lost nor repeated.
   */
  async reconcile(paymentId: string): Promise<boolean> {
    const open = await this.db.selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).where('status', '=', 'OPEN').executeTakeFirst();
    if (!open || this.deps.clock.nowMs() - open.created_at < STALE_ATTEMPT_MS) return false;
    const payment = (await repo.findPaymentById(this.db, paymentId))!;
    const now = this.deps.clock.nowMs();
    if (open.kind === 'APPROVE') {
      const r = await this.deps.processor.lookup(open.id);
      if (r?.outcome === 'APPROVED' && payment.state === 'STORE_REQUEST') {
        await this.commitApproval(payment, open.id, r, { card_bin: open.card_bin ?? '', card_last4: open.card_last4 ?? '', installment_month: open.installment_month ?? '00' });
      } else {
        await repo.closeAttempt(this.db, open.id, r ? r.outcome : 'ERROR', now, { message: r ? null : 'abandoned: the processor has no record of it' });
      }
    } else if (open.kind === 'CANCEL' && (payment.state === 'APPROVE_COMPLETE' || payment.state === 'CANCEL_FAIL')) {
      const r = await this.deps.processor.cancel({ idempotencyKey: `cancel:${payment.id}`, approvalNumber: payment.approval_number ?? '', amount: payment.amount, cardBin: payment.card_bin ?? '', cardLast4: payment.card_last4 ?? '' });
      await this.commitCancel(payment, open.id, r, '');
    } else {
      // DELETE commits its state change and closes its attempt in one transaction: nothing to finish.
      await repo.closeAttempt(this.db, open.id, 'SKIPPED', now, { message: 'reconciled' });
    }
    this.deps.log.warn({ payment: paymentId, attempt: open.id, kind: open.kind }, 'reconciled an attempt left open');
    return true;
  }

  /** Reconciles every stale open attempt (run periodically by the server). */
  async reconcileAll(): Promise<number> {
    const rows = await this.db.selectFrom('payment_attempts').select('payment_id').where('status', '=', 'OPEN')
      .where('created_at', '<', this.deps.clock.nowMs() - STALE_ATTEMPT_MS).limit(100).execute();
    let n = 0;
    for (const r of rows) if (await this.reconcile(r.payment_id).catch(() => false)) n++;
    return n;
  }

  private async commitCancel(p: Payment, attemptId: string, r: CancelOutcome, reason: string): Promise<Payment | { failed: string }> {
    const now = this.deps.clock.nowMs();
    if (r.outcome === 'CANCELED') {
      return this.db.transaction().execute(async (trx) => {
        const set = { state: 'CANCEL_COMPLETE', cancel_at: now, cancel_reason: reason, cancel_amount: p.amount, updated_at: now };
        await repo.transition(trx, p.id, ['APPROVE_COMPLETE', 'CANCEL_FAIL'], set);
        await repo.closeAttempt(trx, attemptId, 'CANCELED', now);
        const updated = { ...p, ...set };
        for (const l of this.listeners) await l.onCanceled?.(trx, updated);
        return updated;
      });
    }
    await this.db.transaction().execute(async (trx) => {
      await repo.transition(trx, p.id, ['APPROVE_COMPLETE', 'CANCEL_FAIL'], { state: 'CANCEL_FAIL', updated_at: now });
      await repo.closeAttempt(trx, attemptId, 'FAILED', now, { message: r.message });
    });
    this.deps.log.warn({ payment: p.id }, 'card cancel failed');
    return { failed: r.message };
  }

  private async enqueueCallback(trx: Transaction<Database>, p: Payment, now: number): Promise<void> {
    if (!p.confirm_url) return;
    await enqueue(trx, {
      kind: CALLBACK_JOB, payload: { paymentId: p.id }, runAt: now,
      maxAttempts: CALLBACK_BACKOFF_SECONDS.length + 1, uniqueKey: `callback:${p.id}`,
    }, now);
  }

  /** Sandbox: a payment approved on a terminal (PAY_PATH KIOSK, VAN or CARD). */
  async recordTerminalPayment(input: { platformCode: string; storeCode: string; transSeqNo: string; amount: number; mobileNo: string; payPath: string }): Promise<Payment> {
    const store = await repo.findStore(this.db, input.platformCode, input.storeCode);
    if (!store) throw new GatewayError(C.STORE, 'PLATFORM_CODE, STORE_CODE: unknown platform or store, or the store is not of this platform');
    return this.db.transaction().execute(async (trx) => {
      const p = await this.createPayment(store, { transSeqNo: input.transSeqNo, amount: input.amount, mobileNo: input.mobileNo, payUserName: '', requestReason: `${input.payPath} 결제` }, trx);
      const now = this.deps.clock.nowMs();
      const set = { state: 'APPROVE_COMPLETE', pay_path: input.payPath, approval_at: now, approval_number: String(10_000_000 + Math.floor(Math.random() * 89_999_999)), installment_month: '00', issuer_name: '신한카드', accepter_name: '신한카드', method_name: '신용카드', updated_at: now };
      await repo.transition(trx, p.id, ['STORE_REQUEST'], set);
      return { ...p, ...set };
    });
  }

  async findById(id: string): Promise<Payment | undefined> {
    return repo.findPaymentById(this.db, id);
  }

  async findByStore(platformCode: string, storeCode: string, transSeqNo: string): Promise<Payment | undefined> {
    return repo.findPayment(this.db, platformCode, storeCode, transSeqNo);
  }
}

function checkUrl(field: string, value: string, httpsOnly: boolean): void {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new GatewayError(C.VALIDATION, `${field}: must be an absolute ${httpsOnly ? 'https' : 'http(s)'} URL`);
  }
  if (httpsOnly ? u.protocol !== 'https:' : u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new GatewayError(C.VALIDATION, httpsOnly ? `${field}: must start with https://` : `${field}: must be an absolute http(s) URL`);
  }
}

/** searchPayment's record (interface "Payment record"). */
export function paymentRecord(p: Payment, store: Store): Record<string, unknown> {
  const approved = p.approval_at !== null;
  return {
    TRANS_SEQNO: p.trans_seqno,
    APPROVE_STATUS: p.state,
    MOBILE_NO: p.mobile_no,
    APPROVAL_DATETIME: approved ? kstCompact(p.approval_at!) : null,
    APPROVAL_AMOUNT: p.amount,
    SUPPLY_AMOUNT: p.supply_amount,
    TAX_CHARGE: p.tax_charge,
    APPROVAL_NUMBER: p.approval_number ?? '',
    INSTALLMENT_MONTH: p.installment_month ?? '',
    ISSUER_NAME: p.issuer_name ?? '',
    ACCEPTER_NAME: p.accepter_name ?? '',
    METHOD_NAME: p.method_name ?? '',
    STORE_NAME: store.name,
    CEO_NAME: store.ceo_name,
    BIZ_REG_NUM: store.biz_reg_num,
    STORE_TEL_NUM: store.tel,
    APPROVAL_CANCEL_DATETIME: p.cancel_at !== null ? kstCompact(p.cancel_at) : null,
    CANCEL_REASON: p.cancel_reason,
    CANCEL_AMOUNT: p.state === 'CANCEL_COMPLETE' ? p.cancel_amount : 0,
    PAY_PATH: p.pay_path,
  };
}

/** Where the customer's browser goes after paying, with the five parameters appended. */
export function returnUrlFor(p: Payment, resultCode: string, resultMsg: string): string | null {
  if (p.return_display_yn !== 'Y' || !p.return_url) return null;
  const u = new URL(p.return_url);
  u.searchParams.append('RESULT_CODE', resultCode);
  u.searchParams.append('RESULT_MSG', resultMsg);
  u.searchParams.append('TRANS_SEQNO', p.trans_seqno);
  u.searchParams.append('APPROVAL_AMOUNT', String(p.amount));
  u.searchParams.append('TEMP_VALUE', p.temp_value ?? '');
  return u.toString();
}

