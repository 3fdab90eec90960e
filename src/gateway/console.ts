import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { GatewayCodes as C, GatewayError } from '../platform/errors.js';
import * as q from './console-repository.js';
import { eventsOfPayment } from './events-repository.js';
import type { AttemptKind } from './payment-state.js';
import type { PaymentFilter, PaymentListRow, StoreKey } from './console-repository.js';
import * as repo from './repository.js';
import type { Payment, Store } from './repository.js';

export type { PaymentFilter, PaymentListRow, StoreKey };

/** A keyset cursor of the payment list: the last row's creation time and id. */
export interface PaymentCursor {
  at: number;
  id: string;
}

/** One step of a payment's life, for the console's timeline. */
export type TimelineEntry =
  | { at: number; kind: 'REQUESTED' }
  | { at: number; kind: 'ATTEMPT'; attempt: AttemptKind; status: string; card: string | null; message: string | null; closedAt: number | null; processor: string | null; method: string | null }
  | { at: number; kind: 'APPROVED'; approvalNumber: string; issuer: string; methodName: string; card: string | null }
  /** A processor's notice about the payment (docs/reference.md, "Processor events"). */
  | { at: number; kind: 'EVENT'; processor: string; type: string; outcome: string; detail: string }
  | { at: number; kind: 'CALLBACK'; attemptNo: number; url: string; statusCode: number | null; error: string | null; durationMs: number }
  | { at: number; kind: 'CANCELED'; reason: string; amount: number }
  /** A charge the processor booked late, refunded because another attempt had paid the payment (src/gateway/late-charge.ts). */
  | { at: number; kind: 'LATE_REFUND'; message: string; card: string | null };

/** A card as the console shows it: the first six and the last four digits, the rest hidden. */
export function maskedCard(bin: string | null, last4: string | null): string | null {
  if (!bin || !last4) return null;
  return `${bin.slice(0, 4)}-${bin.slice(4, 6)}**-****-${last4}`;
}

/**
 * What the console reads of one store's payments (docs/console.md, "Payments"): list and
 * search with keyset pages, the timeline, sales by day, failing callbacks, the store's details.
 * Another store's payment reads as not found.
 */
export class PaymentsConsole {
  constructor(private readonly db: Kysely<Database>) {}

  /** One page and the cursor of the next one (null on the last page). */
  async search(s: StoreKey, f: PaymentFilter, after: PaymentCursor | undefined, size: number): Promise<{ rows: PaymentListRow[]; next: PaymentCursor | null }> {
    const rows = await q.searchPayments(this.db, s, f, { after, limit: size + 1 });
    const more = rows.length > size;
    const page = more ? rows.slice(0, size) : rows;
    const last = page[page.length - 1];
    return { rows: page, next: more && last ? { at: Number(last.created_at), id: last.id } : null };
  }

  /** Every matching payment, a keyset page at a time (the CSV export streams these). */
  async *all(s: StoreKey, f: PaymentFilter, pageSize = 1000): AsyncGenerator<PaymentListRow> {
    let after: PaymentCursor | undefined;
    for (;;) {
      const rows = await q.searchPayments(this.db, s, f, { after, limit: pageSize });
      for (const r of rows) yield r;
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1]!;
      after = { at: Number(last.created_at), id: last.id };
    }
  }

  async payment(s: StoreKey, transSeqNo: string): Promise<Payment | undefined> {
    return repo.findPayment(this.db, s.platformCode, s.storeCode, transSeqNo);
  }

  /** The payment and its timeline: requested, each attempt (card, window, cancel), each processor notice, approved, each callback attempt, cancelled. */
  async timeline(s: StoreKey, transSeqNo: string) {
    const p = await this.payment(s, transSeqNo);
    if (!p) throw new GatewayError(C.NOT_FOUND_SEARCH, 'TRANS_SEQNO: no such transaction');
    const attempts = await q.attemptsOf(this.db, p.id);
    const callbacks = await q.callbackAttemptsOf(this.db, p.id);
    const job = await q.callbackJobOf(this.db, p.id);
    const events = await eventsOfPayment(this.db, p.id);
    const entries: TimelineEntry[] = [{ at: Number(p.created_at), kind: 'REQUESTED' }];
    for (const a of attempts) {
      entries.push({
        at: Number(a.created_at), kind: 'ATTEMPT', attempt: a.kind, status: a.status, card: maskedCard(a.card_bin, a.card_last4), message: a.message,
        closedAt: a.closed_at === null ? null : Number(a.closed_at), processor: a.processor, method: a.method,
      });
      if (a.status === 'REFUNDED' && a.closed_at !== null) entries.push({ at: Number(a.closed_at), kind: 'LATE_REFUND', message: a.message ?? '', card: maskedCard(a.card_bin, a.card_last4) });
    }
    if (p.approval_at !== null) entries.push({ at: Number(p.approval_at), kind: 'APPROVED', approvalNumber: p.approval_number ?? '', issuer: p.issuer_name ?? '', methodName: p.method_name ?? '', card: maskedCard(p.card_bin, p.card_last4) });
    // Numbered in one sequence, in the order they were made: a manual "send again" (whose job
    // counts its own attempts from 1) follows the schedule's attempts instead of repeating "1회차".
    for (const [i, c] of callbacks.entries()) {
      entries.push({ at: Number(c.created_at), kind: 'CALLBACK', attemptNo: i + 1, url: c.url, statusCode: c.status_code, error: c.error, durationMs: c.duration_ms });
    }
    for (const e of events) entries.push({ at: Number(e.received_at), kind: 'EVENT', processor: e.processor, type: e.event_type, outcome: e.outcome, detail: e.detail });
    if (p.cancel_at !== null) entries.push({ at: Number(p.cancel_at), kind: 'CANCELED', reason: p.cancel_reason, amount: Number(p.cancel_amount) });
    // Array.prototype.sort is stable (ES2019): at equal times the order above (an approval before its callback) stands.
    entries.sort((x, y) => x.at - y.at);
    return {
      payment: p, timeline: entries,
      callbackJob: job ? { status: job.status, attempts: job.attempts, maxAttempts: job.max_attempts, nextAt: job.status === 'PENDING' ? Number(job.run_at) : null } : null,
    };
  }

  salesByDay(s: StoreKey, from: number, to: number) {
    return q.salesByDay(this.db, s, from, to);
  }

  async store(s: StoreKey): Promise<Store | undefined> {
    return repo.findStore(this.db, s.platformCode, s.storeCode);
  }

  /** The store's details as its owner edits them (checked by the caller: bizRegNumProblem). */
  async updateStore(s: StoreKey, set: { name: string; ceoName: string; bizRegNum: string; tel: string }): Promise<void> {
    await q.updateStore(this.db, s, { name: set.name, ceo_name: set.ceoName, biz_reg_num: set.bizRegNum, tel: set.tel });
  }
}

/**
 * A Korean business registration number (사업자등록번호): 10 digits whose last is the check
 * digit of the first nine (weights 1 3 7 1 3 7 1 3 5, plus the carry of the ninth). Null when
 * valid; dashes are allowed.
 */
export function bizRegNumProblem(value: string): string | null {
  const d = value.replace(/-/g, '');
  if (!/^\d{10}$/.test(d)) return 'must be 10 digits (dashes allowed)';
  const w = [1, 3, 7, 1, 3, 7, 1, 3, 5];
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += Number(d[i]) * w[i]!;
  sum += Math.floor((Number(d[8]) * 5) / 10);
  const check = (10 - (sum % 10)) % 10;
  return check === Number(d[9]) ? null : 'is not a valid business registration number (its check digit does not match)';
}
