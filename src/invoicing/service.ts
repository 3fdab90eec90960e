import { randomBytes } from 'node:crypto';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { InvoiceTable, LedgerTable, SendTable } from '../db/schema.js';
import { findStoreByCode } from '../gateway/repository.js';
import type { GatewayService, Payment, PaymentListener } from '../gateway/service.js';
import { enqueue } from '../jobs/queue.js';
import type { MessagingProvider } from '../ports/messaging.js';
import { kstMonth, kstMonthRange, type Clock } from '../platform/clock.js';
import { newId, sha256Hex, type SecretBox } from '../platform/crypto.js';
import { AppError, GatewayCodes, GatewayError, isUniqueViolation } from '../platform/errors.js';
import { netItems, type StoredItem } from './items.js';
import * as repo from './repository.js';
import type { Account, Invoice } from './repository.js';
import type { CreateBillBody, SendChannel } from './schemas.js';
import { reserveCost, SEND_JOB, SEND_MAX_ATTEMPTS, type Costs, type SendRunner } from './sends.js';
import { billDetail, billSummary } from './views.js';
import { recordWebhookEvent } from './webhooks.js';

/** How long a resend's job waits before it stands in for an inline send that did not finish. */
const RESEND_FALLBACK_MS = 60_000;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** 'INV' + 24 base32 characters (120 random bits): unguessable, well within TRANS_SEQNO's 64. */
export function newTransSeqNo(): string {
  const bytes = randomBytes(15);
  let bits = 0;
  let value = 0;
  let out = 'INV';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** JSON with object keys sorted: two requests with the same content hash the same. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The stored fingerprint of a creation request; defaults spelled out, so omitting one is the same content. */
export function requestHash(body: CreateBillBody): string {
  return sha256Hex(canonicalJson({ ...body, templateType: body.templateType ?? 'SAME', sendChannel: body.sendChannel ?? 'ALIMTALK' }));
}

interface Recipient {
  name: string;
  phone: string;
  guardianPhone: string | null;
  birthDate: string | null;
  classroomId: string | null;
  amount: number;
  items: StoredItem[] | null;
  reason: string;
  description: string | null;
}

export interface ResendSummary {
  uniqueId: string;
  status: string | null;
  sendCount: number | null;
  lastSentAt: string | null;
  resendResult: 'SUCCESS' | 'FAILED' | 'SKIPPED';
  reason: string | null;
}

const validation = (msg: string) => new AppError('VALIDATION', msg);
const notFound = () => new AppError('NOT_FOUND', 'id: no such invoice');

/**
 * Invoices: creation (reserve points, queue sends), queries, resend, delete, cancel, and the
 * payment listener that moves an invoice with its gateway payment. Every call is scoped to
 * one account; another account's invoice reads as not found.
 */
export class InvoiceService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: {
      gateway: GatewayService; messaging: MessagingProvider; runner: SendRunner; clock: Clock; box: SecretBox;
      costs: Costs; log: Logger; wake: () => void;
    },
  ) {}

  // ---- creation ------------------------------------------------------------------------------

  private recipients(body: CreateBillBody): Recipient[] {
    const base = (m: CreateBillBody['members'][number]) => ({
      name: m.studentName, phone: m.studentPhone, guardianPhone: m.guardianPhone ?? null,
      birthDate: m.studentBirthDate ?? null, classroomId: m.classroomId === undefined ? null : String(m.classroomId),
    });
    const nets = (items: CreateBillBody['items'], amount: number, path: string): StoredItem[] | null => {
      if (!items) return null;
      const r = netItems(items, amount, path);
      if ('error' in r) throw validation(r.error);
      return r;
    };
    if ((body.templateType ?? 'SAME') === 'SAME') {
      if (body.amount === undefined) throw validation('amount: is required');
      const items = nets(body.items, body.amount, 'items');
      return body.members.map((m) => ({ ...base(m), amount: body.amount!, items, reason: body.reason, description: body.description ?? null }));
    }
    const entries = body.recipientItems;
    if (!entries) throw validation('recipientItems: is required when templateType is INDIVIDUAL');
    if (entries.length !== body.members.length) throw validation('recipientItems: must have exactly one entry per member');
    return body.members.map((m, i) => {
      const matches = entries.flatMap((e, j) => (e.studentName === m.studentName && e.studentPhone === m.studentPhone ? [j] : []));
      if (matches.length !== 1) {
        throw validation(`recipientItems: members[${i}] needs exactly one entry with the same studentName and studentPhone`);
      }
      const j = matches[0]!;
      const e = entries[j]!;
      return {
        ...base(m), amount: e.amount, items: nets(e.items, e.amount, `recipientItems[${j}].items`),
        reason: e.reason ?? body.reason, description: e.description ?? body.description ?? null,
      };
    });
  }

  /**
   * One transaction: the invoices (PENDING, WAITING) and the account's live-invoice count, the
   * points of every recipient (or none: -21), one send row and one send job per invoice. A
   * requestId is unique per account in the database; a concurrent or later repeat lands on
   * that index and is compared by hash.
   */
  async create(account: Account, body: CreateBillBody): Promise<void> {
    if (body.webhookSecret !== undefined && body.webhookUrl === undefined) {
      throw validation('webhookSecret: may only be given together with webhookUrl');
    }
    if (body.webhookUrl !== undefined) {
      let ok = false;
      try {
        const u = new URL(body.webhookUrl);
        ok = u.protocol === 'https:' && u.hostname !== '';
      } catch {}
      if (!ok) throw validation('webhookUrl: must be an absolute https:// URL');
    }
    if (body.requestId !== undefined && body.members.length > 1) {
      throw new AppError('IDEMPOTENCY_MULTI', 'requestId: idempotent sending supports one recipient only');
    }
    const recipients = this.recipients(body);
    const hash = requestHash(body);
    if (body.requestId !== undefined && (await this.sameRequest(account.id, body.requestId, hash))) return;

    const channel: SendChannel = body.sendChannel ?? 'ALIMTALK';
    const cost = reserveCost(channel, this.deps.costs);
    const total = cost * recipients.length;
    const now = this.deps.clock.nowMs();
    const sealed = body.webhookSecret !== undefined ? this.deps.box.seal(body.webhookSecret) : null;
    const rows: Insertable<InvoiceTable>[] = recipients.map((r) => ({
      unique_id: newId(), account_id: account.id, store_code: account.store_code, trans_seqno: newTransSeqNo(),
      payment_id: null, status: 'PENDING', send_status: 'WAITING', deleted_at: null,
      request_id: body.requestId ?? null, request_hash: body.requestId !== undefined ? hash : null,
      template_type: body.templateType ?? 'SAME', receiver_name: r.name, receiver_phone: r.phone, guardian_phone: r.guardianPhone,
      amount: r.amount, reason: r.reason, description: r.description, items_json: r.items ? JSON.stringify(r.items) : null,
      send_channel: channel, webhook_url: body.webhookUrl ?? null, webhook_secret_sealed: sealed,
      bill_template_id: body.billTemplateId === undefined ? null : String(body.billTemplateId),
      related_subject: body.relatedSubject ?? null, etc: body.etc ?? null,
      student_birth_date: r.birthDate, classroom_id: r.classroomId,
      send_count: 0, first_sent_at: null, last_sent_at: null, done_at: null, canceled_at: null, created_at: now, updated_at: now,
    }));
    try {
      await this.db.transaction().execute(async (trx) => {
        const ids = await repo.insertInvoices(trx, account.id, rows);
        if (!(await repo.debit(trx, account.id, total, now))) throw await this.insufficient(trx, account.id, total);
        const sends = rows.map((row, i) => ({
          id: newId(), invoice_id: ids.get(row.unique_id)!, account_id: account.id, send_type: 'INITIAL', status: 'WAITING',
          channel_requested: channel, channel_used: null, receiver_phone: recipients[i]!.guardianPhone ?? recipients[i]!.phone,
          cost_reserved: cost, cost_settled: null, provider_message_id: null, delivery_status: null, error_message: null,
          sent_at: null, created_at: now,
        }));
        await this.reserveAndQueue(trx, account.id, sends, now, now);
      });
    } catch (err) {
      if (body.requestId !== undefined && isUniqueViolation(err) && (await this.sameRequest(account.id, body.requestId, hash))) return;
      throw err;
    }
    this.deps.wake();
  }

  /** True when this requestId already made an invoice from the same content; -22 when from other content. */
  private async sameRequest(accountId: string, requestId: string, hash: string): Promise<boolean> {
    const existing = await repo.findInvoiceByRequestId(this.db, accountId, requestId);
    if (!existing) return false;
    if (existing.request_hash !== hash) {
      throw new AppError('IDEMPOTENCY_CONFLICT', 'requestId: a different invoice cannot be sent with the same requestId');
    }
    return true;
  }

  private async insufficient(db: repo.Db, accountId: string, needed: number): Promise<AppError> {
    const have = await repo.balance(db, accountId);
    return new AppError('INSUFFICIENT_POINTS', `points: insufficient send points to send the invoice (needs ${needed}, balance ${have})`);
  }

  /** Send rows, their RESERVE ledger rows (ref = send id) and their jobs, in the caller's transaction. */
  private async reserveAndQueue(trx: Transaction<Database>, accountId: string, sends: Insertable<SendTable>[], now: number, runAt: number): Promise<void> {
    await repo.insertSends(trx, sends);
    const ledger: Insertable<LedgerTable>[] = sends.map((s) => ({
      account_id: accountId, delta: -Number(s.cost_reserved), kind: 'RESERVE', ref: s.id, memo: s.send_type, created_at: now,
    }));
    await repo.addLedger(trx, ledger);
    for (const s of sends) {
      await enqueue(trx, { kind: SEND_JOB, payload: { sendId: s.id }, runAt, maxAttempts: SEND_MAX_ATTEMPTS, uniqueKey: `send:${s.id}` }, now);
    }
  }

  // ---- queries -------------------------------------------------------------------------------

  /** totalCount: the account's live-invoice counter without a month; counted over the month with one. */
  async list(accountId: string, q: { month?: string; page?: string; size?: string }) {
    const page = q.page ? Number(q.page) : 1;
    const size = q.size ? Number(q.size) : 20;
    const range = q.month ? kstMonthRange(q.month) : undefined;
    const { rows, total } = await repo.listInvoices(this.db, accountId, {
      from: range?.[0], to: range?.[1], offset: (page - 1) * size, limit: size,
    });
    return { bills: rows.map(billSummary), page, size, totalCount: total };
  }

  async detail(accountId: string, id: string | number) {
    const inv = await repo.findInvoice(this.db, accountId, id);
    if (!inv) throw notFound();
    return this.detailOf(inv);
  }

  private async detailOf(inv: Invoice) {
    const payment = inv.payment_id ? await this.deps.gateway.findById(inv.payment_id) : undefined;
    const sends = await repo.sendsOf(this.db, inv.account_id, inv.id);
    return billDetail(inv, payment, sends);
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

  // ---- actions -------------------------------------------------------------------------------

  /**
   * Resends already-sent unpaid invoices with the same link and stored channel. The points of
   * every resendable one are taken in one transaction (or none: -21) together with their send
   * rows and fallback jobs; the sends then run here so the answer carries their result.
   */
  async resend(account: Account, billIds: (string | number)[]): Promise<ResendSummary[]> {
    type Entry = { given: string; inv?: Invoice; skip?: string; sendId?: string };
    const entries: Entry[] = [];
    const seen = new Set<number>();
    for (const raw of billIds) {
      const given = String(raw);
      const inv = await repo.findInvoice(this.db, account.id, given, { withDeleted: true });
      const e: Entry = { given, inv };
      if (!inv) e.skip = 'not found';
      else if (seen.has(inv.id)) e.skip = 'listed more than once in this request';
      else if (inv.deleted_at !== null) e.skip = 'deleted';
      else if (inv.status === 'DONE') e.skip = 'already paid';
      else if (inv.status === 'CANCELED') e.skip = 'cancelled';
      else if (Number(inv.send_count) === 0) {
        e.skip = inv.send_status === 'WAITING' ? 'not sent yet: the first send is in progress' : 'not sent yet: the first send failed';
      }
      if (inv) seen.add(inv.id);
      entries.push(e);
    }
    const now = this.deps.clock.nowMs();
    await this.db.transaction().execute(async (trx) => {
      const sends: Insertable<SendTable>[] = [];
      // Invoice rows are locked in id order, then the wallet (as a send's settlement does):
      // two resends of overlapping lists, or a resend and a settlement, wait for each other
      // instead of deadlocking on PostgreSQL.
      const byId = [...entries].sort((x, y) => (x.inv?.id ?? 0) - (y.inv?.id ?? 0));
      for (const e of byId) {
        if (e.skip || !e.inv) continue;
        if (!(await repo.touchPending(trx, account.id, e.inv.id, now))) {
          e.skip = 'no longer payable';
          continue;
        }
        if (await repo.hasOpenSend(trx, account.id, e.inv.id)) {
          e.skip = 'a send of this invoice is already in progress';
          continue;
        }
        e.sendId = newId();
        sends.push({
          id: e.sendId, invoice_id: e.inv.id, account_id: account.id, send_type: 'RESEND', status: 'WAITING',
          channel_requested: e.inv.send_channel, channel_used: null, receiver_phone: e.inv.guardian_phone ?? e.inv.receiver_phone,
          cost_reserved: reserveCost(e.inv.send_channel as SendChannel, this.deps.costs), cost_settled: null,
          provider_message_id: null, delivery_status: null, error_message: null, sent_at: null, created_at: now,
        });
      }
      if (sends.length === 0) return;
      const total = sends.reduce((s, x) => s + Number(x.cost_reserved), 0);
      if (!(await repo.debit(trx, account.id, total, now))) throw await this.insufficient(trx, account.id, total);
      await this.reserveAndQueue(trx, account.id, sends, now, now + RESEND_FALLBACK_MS);
    });
    for (const e of entries) {
      if (!e.sendId) continue;
      try {
        await this.deps.runner.run(e.sendId);
      } catch (err) {
        // Its job runs it again shortly; the answer reports what is known now.
        this.deps.log.warn({ send: e.sendId, err: (err as Error).message }, 'inline resend did not finish');
      }
    }
    const out: ResendSummary[] = [];
    for (const e of entries) {
      const inv = e.inv && !e.skip ? (await repo.findInvoice(this.db, account.id, e.inv.id, { withDeleted: true })) ?? e.inv : e.inv;
      const visible = inv && e.skip !== 'not found';
      let result: ResendSummary['resendResult'] = 'SKIPPED';
      let reason: string | null = e.skip ?? null;
      if (e.sendId) {
        const s = await repo.findSend(this.db, e.sendId);
        if (s?.status === 'SUCCESS') result = 'SUCCESS';
        else {
          result = 'FAILED';
          reason = s?.error_message ?? 'the send did not complete; it will be retried';
        }
      }
      const sum = visible ? billSummary(inv) : null;
      out.push({
        uniqueId: inv?.unique_id ?? e.given, status: sum?.status ?? null, sendCount: sum?.sendCount ?? null,
        lastSentAt: sum?.lastSentAt ?? null, resendResult: result, reason,
      });
    }
    return out;
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

  /** Full cancel (refund) of a DONE invoice through its gateway payment; CANCELED answers again. */
  async cancel(accountId: string, id: string) {
    const inv = await repo.findInvoice(this.db, accountId, id);
    if (!inv) throw notFound();
    if (inv.status === 'CANCELED') return this.detailOf(inv);
    if (inv.status !== 'DONE') throw new AppError('STATE', `status: a ${inv.status} invoice cannot be cancelled; only a paid (DONE) one can (delete an unpaid one)`);
    const payment = inv.payment_id ? await this.deps.gateway.findById(inv.payment_id) : undefined;
    const store = await findStoreByCode(this.db, inv.store_code);
    if (!payment || !store) throw new Error(`invoice ${inv.id} has no payment or store`);
    try {
      await this.deps.gateway.cancelApproved(store, payment, payment.amount, '청구 취소');
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      if (err.resultCode === GatewayCodes.STATE) throw new AppError('STATE', 'status: another operation on this payment is in progress; try again');
      this.deps.log.warn({ invoice: inv.id, code: err.resultCode }, 'invoice cancel refused by the gateway');
      throw new AppError('GATEWAY', `payment: the card cancel failed (${err.resultCode}); the invoice stays DONE, try again later`);
    }
    return this.detail(accountId, inv.id);
  }

  /** Asks the provider for the delivery of each accepted message, then answers the detail. */
  async refreshStatus(accountId: string, id: string) {
    const inv = await repo.findInvoice(this.db, accountId, id);
    if (!inv) throw notFound();
    for (const s of await repo.sendsOf(this.db, accountId, inv.id)) {
      if (!s.provider_message_id || s.delivery_status !== 'ACCEPTED') continue;
      const status = await this.deps.messaging.status(s.provider_message_id);
      if (status !== s.delivery_status) await repo.setDeliveryStatus(this.db, accountId, s.id, status);
    }
    return this.detail(accountId, inv.id);
  }

  // ---- the invoice follows its payment (in the gateway's transaction) -------------------------

  listener(): PaymentListener {
    return {
      onApproved: async (trx, payment) => this.follow(trx, payment, 'PENDING', 'DONE'),
      onCanceled: async (trx, payment) => this.follow(trx, payment, 'DONE', 'CANCELED'),
    };
  }

  private async follow(trx: Transaction<Database>, payment: Payment, from: 'PENDING' | 'DONE', to: 'DONE' | 'CANCELED'): Promise<void> {
    const inv = await repo.findInvoiceByPayment(trx, payment.id, payment.store_code);
    if (!inv) return;
    const now = (to === 'DONE' ? payment.approval_at : payment.cancel_at) ?? this.deps.clock.nowMs();
    const set = to === 'DONE' ? { status: to, done_at: now, updated_at: now } : { status: to, canceled_at: now, updated_at: now };
    const updated = await repo.transitionInvoice(trx, inv.id, from, set);
    if (updated) await recordWebhookEvent(trx, updated, to === 'DONE' ? 'bill.paid' : 'bill.canceled', now);
  }
}
