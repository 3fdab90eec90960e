import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { LedgerKind } from './invoice-state.js';
import { AppError } from '../platform/errors.js';
import * as q from './console-repository.js';
import type { InvoiceFilter, InvoiceListRow } from './console-repository.js';
import * as repo from './repository.js';

export type { InvoiceFilter, InvoiceListRow };

/** A row of the points ledger, with the invoice its send belongs to (RESERVE and REFUND rows). */
export interface LedgerRow {
  id: number;
  delta: number;
  kind: LedgerKind;
  ref: string | null;
  memo: string | null;
  created_at: number;
  invoice_unique_id: string | null;
  invoice_receiver: string | null;
  invoice_reason: string | null;
}

/** A line of the points page: the rows of one send (count > 1 possible), or one row alone. `id` is its newest row's. */
export interface LedgerLine {
  id: number;
  delta: number;
  count: number;
  rows: LedgerRow[];
}

/** A keyset cursor of the invoice list: the last row's creation time and id. */
export interface InvoiceCursor {
  at: number;
  id: number;
}

/**
 * What the console reads of the invoicing side beyond the API: the invoice search (keyset
 * pages, whole-value matches through indexes), exports, webhook deliveries of an invoice, the
 * points ledger, failing webhooks. Every call is scoped to one team's account.
 */
export class InvoicingConsole {
  constructor(private readonly db: Kysely<Database>) {}

  /** One page and the cursor of the next one (null on the last page). */
  async search(accountId: string, f: InvoiceFilter, after: InvoiceCursor | undefined, size: number): Promise<{ rows: InvoiceListRow[]; next: InvoiceCursor | null }> {
    const rows = await q.searchInvoices(this.db, accountId, f, { after, limit: size + 1 });
    const more = rows.length > size;
    const page = more ? rows.slice(0, size) : rows;
    const last = page[page.length - 1];
    return { rows: page, next: more && last ? { at: Number(last.created_at), id: Number(last.id) } : null };
  }

  /** Every matching invoice, a page at a time (for the CSV export). */
  all(accountId: string, f: InvoiceFilter): AsyncGenerator<InvoiceListRow> {
    return q.allInvoices(this.db, accountId, f);
  }

  /** The invoice's numeric id and its webhook events with their delivery attempts. */
  async deliveries(accountId: string, id: string) {
    const inv = await repo.findInvoice(this.db, accountId, id);
    if (!inv) throw new AppError('NOT_FOUND', 'id: no such invoice');
    return q.webhookDeliveries(this.db, accountId, inv.id);
  }

  /**
   * The invoice a payment of the store belongs to: its uniqueId when it is this team's, 'OTHER'
   * when another team of the same store sent it, undefined when none does.
   */
  async invoiceOfPayment(accountId: string, paymentId: string, storeCode: string): Promise<string | 'OTHER' | undefined> {
    const inv = await repo.findInvoiceByPayment(this.db, paymentId, storeCode);
    if (!inv || inv.deleted_at !== null) return undefined;
    return inv.account_id === accountId ? inv.unique_id : 'OTHER';
  }

  /**
   * A page of `size` ledger lines (docs/console.md, "Points"): one line per send, whose delta
   * is the sum of its rows (all of them in `rows`, newest first); any other row is a line alone.
   * `next` is the id the next page starts below.
   */
  async ledger(accountId: string, beforeId: number | undefined, size: number): Promise<{ lines: LedgerLine[]; next: number | null }> {
    const groups = await q.ledgerLinesPage(this.db, accountId, { beforeId, limit: size + 1 });
    const more = groups.length > size;
    const page = more ? groups.slice(0, size) : groups;
    if (page.length === 0) return { lines: [], next: null };
    const from = Math.min(...page.map((g) => g.firstId));
    const to = Math.max(...page.map((g) => g.lastId));
    const byKey = new Map<string, LedgerLine>(page.map((g) => [g.key, { id: g.lastId, delta: g.delta, count: g.count, rows: [] }]));
    for (const r of await q.ledgerRows(this.db, accountId, from, to)) {
      if (beforeId !== undefined && Number(r.id) >= beforeId) continue;
      const { k, ...row } = r;
      byKey.get(k)?.rows.push({ ...row, id: Number(row.id), delta: Number(row.delta), created_at: Number(row.created_at) });
    }
    return { lines: [...byKey.values()], next: more ? Math.min(...page.map((g) => g.firstId)) : null };
  }

  /** Balance and the ledger's sum: equal, always (docs/architecture.md, invariant 5). */
  async points(accountId: string): Promise<{ balance: number; ledgerSum: number }> {
    return { balance: await repo.balance(this.db, accountId), ledgerSum: await q.ledgerSum(this.db, accountId) };
  }
}
