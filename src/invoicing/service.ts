import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { GatewayService, Payment, PaymentListener } from '../gateway/index.js';
import type { MessagingProvider } from '../ports/messaging.js';
import type { Clock } from '../platform/clock.js';
import type { SecretBox } from '../platform/crypto.js';
import { AppError, GatewayCodes, GatewayError } from '../platform/errors.js';
import { kstDate, kstMonth, kstMonthRange } from '../platform/kst.js';
import type { HttpPolicy } from '../platform/urls.js';
import { checkInvoices, createInvoices } from './creation.js';
import { applyReport } from './delivery.js';
import type { InvoiceEvent } from './invoice-state.js';
import type { Costs } from './points.js';
import * as repo from './repository.js';
import type { Account, Invoice } from './repository.js';
import { resend, type ResendSummary } from './resend.js';
import type { CreateBillBody } from './schemas.js';
import type { SendRunner } from './sends.js';
import { billDetail, billSummary } from './views.js';
import { recordWebhookEvent } from './webhooks.js';

/** The invoice list's page size when none is asked for: 10, as the real service (public clients rely on it). */
export const DEFAULT_PAGE_SIZE = 10;

const notFound = () => new AppError('NOT_FOUND', 'id: no such invoice');

export interface InvoiceDeps {
  gateway: GatewayService;
  messaging: MessagingProvider;
  runner: SendRunner;
  clock: Clock;
  box: SecretBox;
  costs: Costs;
  log: Logger;
  webhookUrlPolicy: HttpPolicy;
  wake: () => void;
}

/**
 * Invoices (docs/reference.md, "Invoicing: authentication and result_code values"): creation (creation.ts), queries, resend
 * (resend.ts), delete, cancel, delivery refresh, and the payment listener that moves an invoice
 * with its gateway payment. Every call is scoped to one account; another account's invoice
 * reads as not found.
 */
export class InvoiceService {
  constructor(private readonly db: Kysely<Database>, private readonly deps: InvoiceDeps) {}

  async create(account: Account, body: CreateBillBody): Promise<void> {
    if (await createInvoices(this.db, this.deps, account, body)) this.deps.wake();
  }

  /** What create would refuse (the same AppError), writing nothing: the console's preview asks before it offers to send. */
  async check(account: Account, body: CreateBillBody): Promise<void> {
    await checkInvoices(this.db, this.deps, account, body);
  }

  // ---- queries -------------------------------------------------------------------------------

  /** totalCount: the account's live-invoice counter without a month; counted over the month with one. */
  async list(accountId: string, q: { month?: string; page?: string; size?: string; overdue?: 'true' | 'false' }) {
    const page = q.page ? Number(q.page) : 1;
    const size = q.size ? Number(q.size) : DEFAULT_PAGE_SIZE;
    const range = q.month ? kstMonthRange(q.month) : undefined;
    const now = this.deps.clock.nowMs();
    const { rows, total } = await repo.listInvoices(this.db, accountId, {
      from: range?.[0], to: range?.[1], offset: (page - 1) * size, limit: size,
      overdue: q.overdue ? { today: kstDate(now), only: q.overdue === 'true' } : undefined,
    });
    return { bills: rows.map((r) => billSummary(r, now)), page, size, totalCount: total };
  }

  async detail(accountId: string, id: string | number) {
    const inv = await repo.findInvoice(this.db, accountId, id);
    if (!inv) throw notFound();
    return this.detailOf(inv);
  }

  private async detailOf(inv: Invoice) {
    const payment = inv.payment_id ? await this.deps.gateway.findById(inv.payment_id) : undefined;
    const sends = await repo.sendsOf(this.db, inv.account_id, inv.id);
    return billDetail(inv, payment, sends, this.deps.clock.nowMs());
  }

  async summary(accountId: string, month?: string) {
    const m = month ?? kstMonth(this.deps.clock.nowMs());
    const [from, to] = kstMonthRange(m);
    const paid = await repo.monthTotals(this.db, accountId, 'done_at', from, to);
    const canceled = await repo.monthTotals(this.db, accountId, 'canceled_at', from, to);
    return {
      month: m, paidCount: paid.count, paidAmount: paid.amount, canceledCount: canceled.count,
      canceledAmount: canceled.amount, netAmount: paid.amount - canceled.amount,
    };
  }

  async balance(accountId: string): Promise<number> {
    return repo.balance(this.db, accountId);
  }

  // ---- actions -------------------------------------------------------------------------------

  resend(account: Account, billIds: (string | number)[]): Promise<ResendSummary[]> {
    return resend(this.db, this.deps, account, billIds);
  }

  /**
   * Deletes an unpaid invoice: its gateway payment first becomes STORE_DELETE (so the customer
   * can no longer pay; a paid one is refused there), then the invoice is hidden and leaves the
   * account's live-invoice count (one transaction).
   */
  async remove(accountId: string, id: string): Promise<void> {
    const hide = (invoiceId: number, now: number, paymentIdIsNull: boolean) =>
      this.db.transaction().execute((trx) => repo.markDeleted(trx, accountId, invoiceId, now, { paymentIdIsNull }));
    for (let i = 0; i < 5; i++) {
      const inv = await repo.findInvoice(this.db, accountId, id);
      if (!inv) throw notFound();
      if (inv.status !== 'PENDING') throw new AppError('STATE', `status: a ${inv.status} invoice cannot be deleted; only PENDING ones can${inv.status === 'DONE' ? ' (cancel it instead)' : ''}`);
      const now = this.deps.clock.nowMs();
      if (!inv.payment_id) {
        // No payment yet: hide it unless the send job issued one meanwhile (then go round again).
        if (await hide(inv.id, now, true)) return;
        continue;
      }
      const payment = await this.deps.gateway.findById(inv.payment_id);
      if (payment) {
        try {
          await this.deps.gateway.deleteUnpaid(payment);
        } catch (err) {
          if (err instanceof GatewayError) {
            throw new AppError('STATE', 'status: the invoice has been paid or is being paid; it cannot be deleted');
          }
          throw err;
        }
      }
      if (await hide(inv.id, now, false)) return;
    }
    throw new AppError('STATE', 'status: the invoice changed while deleting it; try again');
  }

  /**
   * Full cancel (refund) of a DONE invoice through its gateway payment; CANCELED answers again.
   * `onCanceled` runs in the refund's transaction, only for the call that refunded (the console's audit row).
   */
  async cancel(accountId: string, id: string, onCanceled?: (trx: Kysely<Database> | Transaction<Database>) => Promise<void>) {
    const inv = await repo.findInvoice(this.db, accountId, id);
    if (!inv) throw notFound();
    if (inv.status === 'CANCELED') return this.detailOf(inv);
    if (inv.status !== 'DONE') throw new AppError('STATE', `status: a ${inv.status} invoice cannot be cancelled; only a paid (DONE) one can (delete an unpaid one)`);
    const payment = inv.payment_id ? await this.deps.gateway.findById(inv.payment_id) : undefined;
    const store = await this.deps.gateway.findStore(inv.store_code);
    if (!payment || !store) throw new Error(`invoice ${inv.id} has no payment or store`);
    try {
      await this.deps.gateway.cancelApproved(store, payment, payment.amount, '청구 취소', null, onCanceled);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      if (err.resultCode === GatewayCodes.STATE) throw new AppError('STATE', 'status: another operation on this payment is in progress; try again');
      this.deps.log.warn({ invoice: inv.id, code: err.resultCode }, 'invoice cancel refused by the gateway');
      throw new AppError('GATEWAY', `payment: the card cancel failed (${err.resultCode}); the invoice stays DONE, try again later`);
    }
    return this.detail(accountId, inv.id);
  }

  /**
   * Asks the provider for the delivery of each accepted message, then answers the detail. A
   * send whose points waited for its delivery report is settled here when the report is in
   * (delivery.ts), the channel that carried it read back.
   */
  async refreshStatus(accountId: string, id: string) {
    const inv = await repo.findInvoice(this.db, accountId, id);
    if (!inv) throw notFound();
    for (const s of await repo.sendsOf(this.db, accountId, inv.id)) {
      if (!s.provider_message_id || s.delivery_status !== 'ACCEPTED') continue;
      await applyReport({ db: this.db, clock: this.deps.clock, costs: this.deps.costs }, s, await this.deps.messaging.status(s.provider_message_id));
    }
    return this.detail(accountId, inv.id);
  }

  // ---- the invoice follows its payment (in the gateway's transaction) -------------------------

  listener(): PaymentListener {
    return {
      onApproved: async (trx, payment) => this.follow(trx, payment, 'paid', payment.approval_at),
      onCanceled: async (trx, payment) => this.follow(trx, payment, 'canceled', payment.cancel_at),
    };
  }

  /** Moves the payment's invoice (if it has one) and writes its webhook event, only when it really moved. */
  private async follow(trx: Transaction<Database>, payment: Payment, event: InvoiceEvent, at: number | null): Promise<void> {
    const inv = await repo.findInvoiceByPayment(trx, payment.id, payment.store_code);
    if (!inv) return;
    const now = at ?? this.deps.clock.nowMs();
    const updated = await repo.transitionInvoice(trx, inv.id, event, now);
    if (updated) await recordWebhookEvent(trx, updated, event === 'paid' ? 'bill.paid' : 'bill.canceled', now);
  }
}
