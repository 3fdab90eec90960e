import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { OutcomeUnknown, type ApproveOutcome, type CancelOutcome, type CardProcessor, type CredentialCheck } from './card-processor.js';
import { obj, ProviderUnreachable, sleepMs, str, type ProviderAnswer } from './provider-http.js';
import { TOSS_SETTLE_PAUSE_MS, TossApi } from './toss-api.js';
import { ALREADY_CANCELED, approveError, cardCompany, CREDENTIAL_ERRORS } from './toss-codes.js';

export interface TossSettings {
  /** `test_sk_…` or `live_sk_…` (SUNAP_TOSS_SECRET_KEY). */
  secretKey: string;
  /** https://api.tosspayments.com unless pointed at the rehearsal fake (SUNAP_TOSS_API_URL). */
  baseUrl: string;
  /** Time limit of one call (SUNAP_OUTBOUND_TIMEOUT_MS). */
  timeoutMs: number;
  /** Sent as TossPayments-Test-Code on approvals, test keys only (SUNAP_TOSS_TEST_CODE). */
  testCode?: string;
}

/**
 * Toss keeps an Idempotency-Key for 15 days from its first use, and the order id with it: within
 * that time a look-up by orderId may still find a charge booked after an earlier look-up found
 * nothing, and a repeated request answers the first result.
 */
export const TOSS_KEEPS_ORDERS_MS = 15 * 24 * 3_600_000;

/**
 * Toss Payments card-number (key-in) payments behind the CardProcessor port
 * (docs/going-live.md, "Toss Payments"). The attempt id is both the orderId and the
 * Idempotency-Key of the approval, so a repeated approval answers the first result and the
 * look-up by orderId finds what happened under that key. The card data goes into the one
 * request body and nowhere else: nothing here logs a request or an answer body.
 */
export class TossCardProcessor implements CardProcessor {
  readonly callLimitMs: number;
  readonly keepsOrdersMs = TOSS_KEEPS_ORDERS_MS;
  private readonly api: TossApi;

  constructor(private readonly s: TossSettings, private readonly log?: Logger) {
    this.api = new TossApi(s);
    this.callLimitMs = this.api.callLimitMs;
  }

  async approve(req: Parameters<CardProcessor['approve']>[0]): Promise<ApproveOutcome> {
    const months = Number(req.installmentMonth);
    const body = {
      amount: req.amount, orderId: req.idempotencyKey, orderName: (req.orderName || '결제').slice(0, 100),
      cardNumber: req.card.number, cardExpirationYear: req.card.expiryYear, cardExpirationMonth: req.card.expiryMonth,
      customerIdentityNumber: req.card.holderId, cardPassword: req.card.passwordDigits,
      ...(months > 1 ? { cardInstallmentPlan: months } : {}),
    };
    const headers: Record<string, string> = { 'idempotency-key': req.idempotencyKey };
    if (this.s.testCode) headers['tosspayments-test-code'] = this.s.testCode;
    let answer: ProviderAnswer;
    try {
      answer = await this.api.call('POST', '/v1/payments/key-in', body, headers);
    } catch (err) {
      if (!(err instanceof ProviderUnreachable)) throw err;
      this.log?.warn({ attempt: req.idempotencyKey, problem: err.message }, 'toss: approval unanswered; looking it up');
      return this.settleByLookup(req.idempotencyKey);
    }
    if (answer.status === 200) return this.fromPayment(answer.body);
    const code = str(answer.body, 'code');
    const kind = approveError(answer.status, code, str(answer.body, 'message'));
    if (CREDENTIAL_ERRORS.has(code)) this.log?.error({ code }, 'toss: the secret key was refused (SUNAP_TOSS_SECRET_KEY); run sunap doctor');
    switch (kind.kind) {
      case 'DECLINED':
        return { outcome: 'DECLINED', message: kind.message };
      case 'ERROR':
        this.log?.warn({ attempt: req.idempotencyKey, code, status: answer.status }, 'toss: approval not made');
        return { outcome: 'ERROR', message: kind.message };
      case 'EXISTS':
      case 'UNKNOWN':
        this.log?.warn({ attempt: req.idempotencyKey, code, status: answer.status }, 'toss: approval outcome open; looking it up');
        return this.settleByLookup(req.idempotencyKey);
    }
  }

  /** After a lost answer: what the look-up says, or OutcomeUnknown when it cannot tell yet. */
  private async settleByLookup(orderId: string): Promise<ApproveOutcome> {
    await sleepMs(TOSS_SETTLE_PAUSE_MS);
    let found: ApproveOutcome | null;
    try {
      found = await this.lookup(orderId);
    } catch (err) {
      throw new OutcomeUnknown(`toss: the approval's answer was lost and the look-up failed (${(err as Error).message})`);
    }
    // Not found: the approval may still be on its way; the reconcile asks again later.
    if (!found) throw new OutcomeUnknown('toss: the approval\'s answer was lost and the order is not known yet');
    return found;
  }

  private fromPayment(p: unknown): ApproveOutcome {
    const status = str(p, 'status');
    if (status === 'DONE') {
      const card = obj(p, 'card');
      return {
        outcome: 'APPROVED', approvalNumber: str(card, 'approveNo'), processorRef: str(p, 'paymentKey'),
        issuerName: cardCompany(str(card, 'issuerCode')), accepterName: cardCompany(str(card, 'acquirerCode') || str(card, 'issuerCode')),
      };
    }
    if (status === 'CANCELED' || status === 'PARTIAL_CANCELED') return { outcome: 'DECLINED', message: '카드사에서 취소된 결제입니다' };
    const failure = obj(p, 'failure');
    if (status === 'ABORTED' || status === 'EXPIRED') {
      const kind = approveError(400, str(failure, 'code'), str(failure, 'message'));
      return { outcome: 'DECLINED', message: kind.kind === 'DECLINED' || kind.kind === 'ERROR' ? kind.message : '카드 결제가 승인되지 않았습니다' };
    }
    throw new OutcomeUnknown(`toss: the order is ${status || 'in an unknown state'}`);
  }

  async lookup(idempotencyKey: string): Promise<ApproveOutcome | null> {
    const answer = await this.api.call('GET', `/v1/payments/orders/${encodeURIComponent(idempotencyKey)}`);
    if (answer.status === 200) return this.fromPayment(answer.body);
    const code = str(answer.body, 'code');
    if (answer.status === 404 && (code === 'NOT_FOUND_PAYMENT' || code === 'NOT_FOUND')) return null;
    throw new Error(`toss: look-up of an order answered ${answer.status} ${code}`);
  }

  async cancel(req: Parameters<CardProcessor['cancel']>[0]): Promise<CancelOutcome> {
    if (!req.processorRef) return { outcome: 'FAILED', message: 'the approval has no Toss paymentKey on record; cancel it in the Toss dashboard' };
    const path = `/v1/payments/${encodeURIComponent(req.processorRef)}/cancel`;
    const body = { cancelReason: (req.reason || '결제 취소').slice(0, 200) };
    // The same Idempotency-Key on the retry: a cancel whose answer was lost is not made twice.
    for (let i = 0; i < 2; i++) {
      let answer: ProviderAnswer;
      try {
        answer = await this.api.call('POST', path, body, { 'idempotency-key': req.idempotencyKey });
      } catch (err) {
        if (!(err instanceof ProviderUnreachable)) throw err;
        this.log?.warn({ key: req.idempotencyKey, problem: err.message }, 'toss: cancel unanswered');
        continue;
      }
      if (answer.status === 200) return { outcome: 'CANCELED' };
      const code = str(answer.body, 'code');
      if (ALREADY_CANCELED.has(code)) return { outcome: 'CANCELED' };
      if (answer.status >= 500 || code === 'IDEMPOTENT_REQUEST_PROCESSING') continue;
      if (CREDENTIAL_ERRORS.has(code)) this.log?.error({ code }, 'toss: the secret key was refused (SUNAP_TOSS_SECRET_KEY); run sunap doctor');
      return { outcome: 'FAILED', message: `${code || answer.status}: ${str(answer.body, 'message') || 'the cancel was refused'}` };
    }
    return { outcome: 'FAILED', message: 'Toss did not confirm the cancel; request it again (the same cancel is never made twice)' };
  }

  /** A look-up of an order that cannot exist: 404 proves the key was accepted, 401 that it was not. */
  async checkCredentials(): Promise<CredentialCheck> {
    const where = `${this.s.secretKey.startsWith('live_') ? 'live' : 'test'} key at ${this.s.baseUrl}`;
    let answer: ProviderAnswer;
    try {
      answer = await this.api.call('GET', `/v1/payments/orders/sunap-doctor-${randomUUID()}`);
    } catch (err) {
      return { ok: false, detail: `${where}: ${(err as Error).message}` };
    }
    const code = str(answer.body, 'code');
    if (answer.status === 404) return { ok: true, detail: `toss ${where}: the secret key was accepted` };
    if (CREDENTIAL_ERRORS.has(code) || answer.status === 401) {
      return { ok: false, detail: `toss ${where}: the secret key was refused (${code || answer.status}); check SUNAP_TOSS_SECRET_KEY` };
    }
    return { ok: false, detail: `toss ${where}: unexpected answer ${answer.status} ${code}` };
  }
}
