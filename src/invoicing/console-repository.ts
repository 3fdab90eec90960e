import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { lastFour, lastTwo, newestFirst, searchParts } from '../db/search.js';
import type { AccountTable, BillTemplateTable, RechargeTable } from '../db/schema.js';
import type { AccountRole, InvoiceSendStatus, InvoiceStatus } from './invoice-state.js';
import type { Account, Db } from './repository.js';

/**
 * SQL of what the console asks of the invoicing side beyond the API: templates, the team's
 * accounts, recharges, the ledger, and the invoice search. Every query filters by the team's
 * account (the tenant); the few that do not say who may call them.
 */
export type BillTemplate = Selectable<BillTemplateTable>;
export type Recharge = Selectable<RechargeTable>;

// ---- templates ----------------------------------------------------------------------------

export async function listTemplates(db: Db, accountId: string): Promise<BillTemplate[]> {
  return db.selectFrom('bill_templates').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id').execute();
}

export async function countTemplates(db: Db, accountId: string): Promise<number> {
  const r = await db.selectFrom('bill_templates').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function findTemplate(db: Db, accountId: string, id: string): Promise<BillTemplate | undefined> {
  return db.selectFrom('bill_templates').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

export async function insertTemplate(db: Db, row: Insertable<BillTemplateTable>): Promise<void> {
  await db.insertInto('bill_templates').values(row).execute();
}

export async function updateTemplate(db: Db, accountId: string, id: string, set: Updateable<BillTemplateTable>): Promise<boolean> {
  const r = await db.updateTable('bill_templates').set(set).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deleteTemplate(db: Db, accountId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('bill_templates').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

// ---- the team -----------------------------------------------------------------------------

/** The team's accounts, the first owner first. */
export async function teamAccounts(db: Db, tenantId: string): Promise<Account[]> {
  return db.selectFrom('accounts').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
}

/** A member of the team, or undefined (another team's account reads as unknown). */
export async function teamAccount(db: Db, tenantId: string, accountId: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('tenant_id', '=', tenantId).where('id', '=', accountId).executeTakeFirst();
}

/** A member's account: no wallet of its own (the team's wallet is the tenant's). */
export async function insertMember(db: Db, a: Insertable<AccountTable>): Promise<void> {
  await db.insertInto('accounts').values(a).execute();
}

export async function setRole(db: Db, tenantId: string, accountId: string, role: AccountRole): Promise<boolean> {
  const r = await db.updateTable('accounts').set({ role }).where('tenant_id', '=', tenantId).where('id', '=', accountId).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Locks the team for a change of its owners until the transaction ends: a write to the tenant's
 * own account row (a row lock on PostgreSQL, the write lock on SQLite). Every change that may
 * take an owner away takes it first, so two of them never both count the same owners.
 */
export async function lockTeam(db: Db, tenantId: string): Promise<void> {
  await db.updateTable('accounts').set((eb) => ({ role: eb.ref('role') })).where('id', '=', tenantId).execute();
}

export async function countOwners(db: Db, tenantId: string): Promise<number> {
  const r = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', tenantId).where('role', '=', 'owner').executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function setPasswordHash(db: Db, accountId: string, hash: string): Promise<void> {
  await db.updateTable('accounts').set({ password_hash: hash }).where('id', '=', accountId).execute();
}

/** Removes a member (never the tenant itself): its API tokens first, then the account. */
export async function deleteMember(db: Db, tenantId: string, accountId: string): Promise<boolean> {
  if (tenantId === accountId) return false;
  await db.deleteFrom('auth_tokens').where('account_id', '=', accountId).execute();
  const r = await db.deleteFrom('accounts').where('tenant_id', '=', tenantId).where('id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Revokes every API token of an account (a removed member, a changed password). */
export async function revokeAllTokens(db: Db, accountId: string, now: number): Promise<void> {
  await db.updateTable('auth_tokens').set({ revoked_at: now }).where('account_id', '=', accountId).where('revoked_at', 'is', null).execute();
}

// ---- recharges ----------------------------------------------------------------------------

export async function insertRecharge(db: Db, row: Recharge): Promise<void> {
  await db.insertInto('recharges').values(row).execute();
}

export async function findRecharge(db: Db, accountId: string, id: string): Promise<Recharge | undefined> {
  return db.selectFrom('recharges').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

/** The recharge a payment pays for: the payment listener's lookup (same store only). */
export async function findRechargeByPayment(db: Db, paymentId: string, storeCode: string): Promise<Recharge | undefined> {
  return db.selectFrom('recharges').selectAll().where('payment_id', '=', paymentId).where('store_code', '=', storeCode).executeTakeFirst();
}

/** PENDING → CREDITED, once: false when it was credited already. */
export async function markCredited(db: Db, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('recharges').set({ status: 'CREDITED', credited_at: now }).where('id', '=', id).where('status', '=', 'PENDING').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function recentRecharges(db: Db, accountId: string, limit: number): Promise<Recharge[]> {
  return db.selectFrom('recharges').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

// ---- the ledger ---------------------------------------------------------------------------

/** The key that makes ledger rows one line: their send's batch, or the row alone (no batch). */
const ledgerKey = sql<string>`coalesce(ledger.batch, cast(ledger.id as text))`;

/**
 * A page of the account's ledger as lines, newest first: the RESERVE rows of one send (one
 * `batch`) are one line, every other row a line of its own. Keyset on id: a line is ordered by
 * its newest row, and the next page starts below the oldest row of the page's last line.
 */
export async function ledgerLinesPage(db: Db, accountId: string, opts: { beforeId?: number; limit: number }) {
  let q = db.selectFrom('ledger')
    .select((eb) => [ledgerKey.as('k'), eb.fn.max('ledger.id').as('last_id'), eb.fn.min('ledger.id').as('first_id'),
      eb.fn.countAll().as('n'), eb.fn.sum<number>('ledger.delta').as('delta')])
    .where('ledger.account_id', '=', accountId);
  if (opts.beforeId !== undefined) q = q.where('ledger.id', '<', opts.beforeId);
  const rows = await q.groupBy(ledgerKey).orderBy('last_id', 'desc').limit(opts.limit).execute();
  return rows.map((r) => ({ key: r.k, lastId: Number(r.last_id), firstId: Number(r.first_id), count: Number(r.n), delta: Number(r.delta) }));
}

/**
 * The ledger rows with ids in [fromId, toId], newest first, each with the invoice its send
 * belongs to (RESERVE and REFUND rows name a send) and its line's key.
 */
export async function ledgerRows(db: Db, accountId: string, fromId: number, toId: number) {
  return db.selectFrom('ledger')
    .leftJoin('sends', (j) => j.onRef('sends.id', '=', 'ledger.ref').on('sends.account_id', '=', accountId))
    .leftJoin('invoices', (j) => j.onRef('invoices.id', '=', 'sends.invoice_id').on('invoices.account_id', '=', accountId))
    .select(['ledger.id', 'ledger.delta', 'ledger.kind', 'ledger.ref', 'ledger.memo', 'ledger.created_at', ledgerKey.as('k'),
      'invoices.unique_id as invoice_unique_id', 'invoices.receiver_name as invoice_receiver', 'invoices.reason as invoice_reason'])
    .where('ledger.account_id', '=', accountId).where('ledger.id', '>=', fromId).where('ledger.id', '<=', toId)
    .orderBy('ledger.id', 'desc').execute();
}

// ---- invoices: search, deliveries ---------------------------------------------------------

export interface InvoiceFilter {
  status?: InvoiceStatus;
  sendStatus?: InvoiceSendStatus;
  from?: number;
  to?: number;
  /**
   * One search term: matched whole (name, phone, guardian phone, reason, requestId, TRANS_SEQNO),
   * as a phone's last 4 digits, as the name's last 2 characters, or as a part of any of them
   * (src/db/search.ts: 3 characters or more at any age through the text index, 2 among the
   * account's newest PARTIAL_WINDOW invoices).
   */
  q?: string;
  /** Only the unpaid whose due date is before this day (yyyy-MM-dd, today in KST): the overdue. */
  overdueBefore?: string;
}

const INVOICE_LIST_COLUMNS = [
  'id', 'unique_id', 'trans_seqno', 'status', 'send_status', 'receiver_name', 'receiver_phone', 'guardian_phone', 'amount', 'reason',
  'created_at', 'done_at', 'canceled_at', 'send_count', 'send_channel', 'request_id', 'due_date',
] as const;

/**
 * A page of the account's live invoices matching the filter, newest first, after the keyset
 * cursor (created_at, id). Whole values, last-4 digits and a name's last 2 characters go through
 * their own indexes, and a part through the text index or a bounded window of the newest rows
 * (src/db/search.ts), so a search costs about the same on a thousand invoices or a hundred thousand.
 */
export async function searchInvoices(db: Db, accountId: string, f: InvoiceFilter, opts: { after?: { at: number; id: number }; limit: number }) {
  const page = () => {
    let q = db.selectFrom('invoices').select(INVOICE_LIST_COLUMNS).where('account_id', '=', accountId).where('deleted_at', 'is', null);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.sendStatus) q = q.where('send_status', '=', f.sendStatus);
    if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('created_at', '<', f.to);
    if (f.overdueBefore !== undefined) q = q.where('status', '=', 'PENDING').where('due_date', '<', f.overdueBefore);
    if (opts.after) {
      const a = opts.after;
      q = q.where((eb) => eb.or([eb('created_at', '<', a.at), eb.and([eb('created_at', '=', a.at), eb('id', '<', a.id)])]));
    }
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit);
  };
  if (!f.q) return page().execute();
  // One query per way of matching, each served by an index, merged here (an OR over the
  // columns would walk the account's whole (created_at) index on SQLite).
  const term = f.q.trim();
  const digits = term.replace(/[\s-]/g, '');
  const searches = [page().where('receiver_name', '=', term), page().where('reason', '=', term), page().where('request_id', '=', term), page().where('trans_seqno', '=', term)];
  if (/^\d{9,11}$/.test(digits)) searches.push(page().where('receiver_phone', '=', digits), page().where('guardian_phone', '=', digits));
  if (/^\d{4}$/.test(digits)) searches.push(page().where(lastFour('receiver_phone'), '=', digits), page().where(lastFour('guardian_phone'), '=', digits));
  if ([...term].length === 2) searches.push(page().where(lastTwo('receiver_name'), '=', term));
  const [exact, parts] = await Promise.all([Promise.all(searches.map((q) => q.execute())), searchParts(db, 'invoices', term, opts.limit, {
    page: (cond, r) => {
      let q = page().where(cond);
      if (r.from !== undefined) q = q.where('created_at', '>=', r.from);
      if (r.before !== undefined) q = q.where('created_at', '<', r.before);
      return q.execute();
    },
    nthNewest: async (n) => {
      const row = await db.selectFrom('invoices').select('created_at').where('account_id', '=', accountId)
        .orderBy('created_at', 'desc').limit(1).offset(n - 1).executeTakeFirst();
      return row ? Number(row.created_at) : 0;
    },
  })]);
  return newestFirst([...exact.flat(), ...parts.flat()], opts.limit);
}
export type InvoiceListRow = Awaited<ReturnType<typeof searchInvoices>>[number];

/** The invoice's webhook events with every delivery attempt (for its detail page). */
export async function webhookDeliveries(db: Db, accountId: string, invoiceId: number) {
  const events = await db.selectFrom('webhook_events').select(['id', 'event', 'url', 'status', 'attempts', 'created_at', 'updated_at'])
    .where('account_id', '=', accountId).where('invoice_id', '=', invoiceId).orderBy('id').execute();
  if (events.length === 0) return [];
  const attempts = await db.selectFrom('outbound_attempts').select(['ref_id', 'attempt_no', 'status_code', 'error', 'duration_ms', 'created_at'])
    .where('target', '=', 'WEBHOOK').where('ref_id', 'in', events.map((e) => String(e.id))).orderBy('id').execute();
  return events.map((e) => ({ ...e, attempts: attempts.filter((a) => a.ref_id === String(e.id)) }));
}

/** Every live invoice of the account matching the filter, for an export: one keyset page at a time. */
export async function* allInvoices(db: Db, accountId: string, f: InvoiceFilter, pageSize = 1000): AsyncGenerator<InvoiceListRow> {
  let after: { at: number; id: number } | undefined;
  for (;;) {
    const rows = await searchInvoices(db, accountId, f, { after, limit: pageSize });
    for (const r of rows) yield r;
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1]!;
    after = { at: Number(last.created_at), id: Number(last.id) };
  }
}

/** Sum of the ledger (the points invariant, for the console's own check). */
export async function ledgerSum(db: Db, accountId: string): Promise<number> {
  const r = await db.selectFrom('ledger').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('delta'), sql<number>`0`).as('s')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(r.s);
}
