import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { AccountTable, AuthTokenTable, InvoiceTable, LedgerTable, SendTable, WebhookEventTable } from '../db/schema.js';
import type { DeliveryStatus } from '../ports/messaging.js';
import { INVOICE_TRANSITIONS, OPEN_SEND_STATUSES, SEND_TRANSITIONS, type InvoiceEvent, type InvoiceStatus, type SendEvent, type SendStatus, type TokenKind, type WebhookEventName } from './invoice-state.js';

/**
 * SQL of the invoicing side. Every function on tenant data takes the account id and filters
 * by it (one tenant never sees another's rows); the few that do not say who may call them.
 */
export type Db = Kysely<Database> | Transaction<Database>;
export type Account = Selectable<AccountTable>;
export type Invoice = Selectable<InvoiceTable>;
export type Send = Selectable<SendTable>;
export type AuthToken = Selectable<AuthTokenTable>;
export type WebhookEvent = Selectable<WebhookEventTable>;

// ---- accounts and tokens -------------------------------------------------------------------

/** A new account and its empty wallet, in one transaction. */
export async function insertAccount(trx: Transaction<Database>, a: Insertable<AccountTable>, now: number): Promise<void> {
  await trx.insertInto('accounts').values(a).execute();
  await trx.insertInto('wallets').values({ account_id: a.id, balance: 0, updated_at: now }).execute();
}

/** Turns invoicing on or off for an account by email; false when there is no such account. */
export async function setInvoicingEnabled(db: Db, email: string, enabled: boolean): Promise<boolean> {
  const r = await db.updateTable('accounts').set({ invoicing_enabled: enabled ? 1 : 0 }).where('email', '=', email).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function findAccountByEmail(db: Db, email: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findAccountById(db: Db, id: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertTokens(db: Db, rows: Insertable<AuthTokenTable>[]): Promise<void> {
  await db.insertInto('auth_tokens').values(rows).execute();
}

/** A token by its hash, with its account: the hash is the credential, so no tenant filter. */
export async function findToken(db: Db, kind: TokenKind, hash: string) {
  return db.selectFrom('auth_tokens').innerJoin('accounts', 'accounts.id', 'auth_tokens.account_id')
    .selectAll('auth_tokens').select(['accounts.invoicing_enabled'])
    .where('auth_tokens.token_hash', '=', hash).where('auth_tokens.kind', '=', kind)
    .executeTakeFirst();
}

/** Marks a refresh token used, once: false when another request rotated or revoked it first. */
export async function rotateToken(db: Db, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('auth_tokens').set({ rotated_at: now })
    .where('id', '=', id).where('rotated_at', 'is', null).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function revokeFamily(db: Db, accountId: string, familyId: string, now: number): Promise<void> {
  await db.updateTable('auth_tokens').set({ revoked_at: now })
    .where('account_id', '=', accountId).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
}

// ---- sign-in throttles (src/invoicing/accounts.ts says the rules) ----------------------------

const big = (n: number) => sql<number>`cast(${n} as bigint)`;

/**
 * Takes one per-email attempt, atomically: one upsert counts it and sets when the next may
 * start, but only when the key is not locked (or its failures are forgotten). Simultaneous
 * calls each get their own count; a locked key answers null, and the password is not checked.
 * `lockouts` lists, from attempt 1, the wait after each attempt (the last repeats).
 */
export async function takeEmailAttempt(db: Db, key: string, now: number, forgetMs: number, lockouts: readonly number[]): Promise<number | null> {
  const stale = sql<boolean>`sign_in_throttles.last_attempt_at <= ${big(now - forgetMs)}`;
  const n = sql<number>`(case when ${stale} then 1 else sign_in_throttles.attempts + 1 end)`;
  // No wait is 0, not `now`: requests take their `now` before they reach the database, so a
  // later-stamped attempt may land first, and `now` would lock out the earlier-stamped ones.
  const until = (ms: number) => big(ms === 0 ? 0 : now + ms);
  const next = sql<number>`(case ${sql.join(lockouts.slice(0, -1).map((ms, i) => sql`when ${n} = ${i + 1} then ${until(ms)}`), sql` `)} else ${until(lockouts.at(-1)!)} end)`;
  const r = await sql<{ attempts: number | string }>`
    insert into sign_in_throttles (key, attempts, window_started_at, last_attempt_at, next_allowed_at)
    values (${key}, 1, ${big(now)}, ${big(now)}, ${until(lockouts[0]!)})
    on conflict (key) do update set
      attempts = ${n}, next_allowed_at = ${next}, last_attempt_at = ${big(now)},
      window_started_at = (case when ${stale} then ${big(now)} else sign_in_throttles.window_started_at end)
    where sign_in_throttles.next_allowed_at <= ${big(now)} or ${stale}
    returning attempts`.execute(db);
  return r.rows[0] ? Number(r.rows[0].attempts) : null;
}

/**
 * Counts one attempt in a fixed window (the per-address limit), atomically: the count in the
 * current window including this one, and when the window ends.
 */
export async function takeWindowAttempt(db: Db, key: string, now: number, windowMs: number): Promise<{ attempts: number; windowEndsAt: number }> {
  const over = sql<boolean>`sign_in_throttles.window_started_at <= ${big(now - windowMs)}`;
  const r = await sql<{ attempts: number | string; window_started_at: number | string }>`
    insert into sign_in_throttles (key, attempts, window_started_at, last_attempt_at, next_allowed_at)
    values (${key}, 1, ${big(now)}, ${big(now)}, ${big(now)})
    on conflict (key) do update set
      attempts = (case when ${over} then 1 else sign_in_throttles.attempts + 1 end),
      window_started_at = (case when ${over} then ${big(now)} else sign_in_throttles.window_started_at end),
      last_attempt_at = ${big(now)}
    returning attempts, window_started_at`.execute(db);
  const row = r.rows[0]!;
  return { attempts: Number(row.attempts), windowEndsAt: Number(row.window_started_at) + windowMs };
}

export async function getThrottle(db: Db, key: string) {
  return db.selectFrom('sign_in_throttles').selectAll().where('key', '=', key).executeTakeFirst();
}

export async function clearThrottle(db: Db, key: string): Promise<void> {
  await db.deleteFrom('sign_in_throttles').where('key', '=', key).execute();
}

/** Drops throttle rows nobody has touched since `before` (their counts are forgotten anyway). */
export async function purgeThrottles(db: Db, before: number): Promise<number> {
  const r = await db.deleteFrom('sign_in_throttles').where('last_attempt_at', '<=', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}

// ---- wallet and ledger (src/invoicing/points.ts says how they move) -------------------------

export async function balance(db: Db, accountId: string): Promise<number> {
  const w = await db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirst();
  return w ? Number(w.balance) : 0;
}

/** Takes n points if, and only if, the balance covers them (compare-and-set). */
export async function debit(db: Db, accountId: string, n: number, now: number): Promise<boolean> {
  const r = await db.updateTable('wallets').set((eb) => ({ balance: eb('balance', '-', n), updated_at: now }))
    .where('account_id', '=', accountId).where('balance', '>=', n).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function credit(db: Db, accountId: string, n: number, now: number): Promise<void> {
  await db.updateTable('wallets').set((eb) => ({ balance: eb('balance', '+', n), updated_at: now }))
    .where('account_id', '=', accountId).execute();
}

/**
 * Writes ledger rows; a row whose (account, kind, ref) exists already is skipped (the unique
 * index makes a reservation or refund happen once). Returns how many were written.
 */
export async function addLedger(db: Db, rows: Insertable<LedgerTable>[]): Promise<number> {
  if (rows.length === 0) return 0;
  const written = await db.insertInto('ledger').values(rows)
    .onConflict((oc) => oc.columns(['account_id', 'kind', 'ref']).where('ref', 'is not', null).doNothing())
    .returning('id').execute();
  return written.length;
}


// ---- invoices ------------------------------------------------------------------------------

/** An invoice of this account by uniqueId or numeric id; deleted ones only when asked. */
export async function findInvoice(db: Db, accountId: string, id: string | number, opts: { withDeleted?: boolean } = {}): Promise<Invoice | undefined> {
  let q = db.selectFrom('invoices').selectAll().where('account_id', '=', accountId);
  const s = String(id);
  if (/^\d{1,15}$/.test(s)) q = q.where('id', '=', Number(s));
  else q = q.where('unique_id', '=', s);
  if (!opts.withDeleted) q = q.where('deleted_at', 'is', null);
  return q.executeTakeFirst();
}

export async function findInvoiceByRequestId(db: Db, accountId: string, requestId: string): Promise<Invoice | undefined> {
  return db.selectFrom('invoices').selectAll().where('account_id', '=', accountId).where('request_id', '=', requestId).executeTakeFirst();
}

/** The invoice behind a gateway payment; the payment listener's lookup (same store only). */
export async function findInvoiceByPayment(db: Db, paymentId: string, storeCode: string): Promise<Invoice | undefined> {
  return db.selectFrom('invoices').selectAll().where('payment_id', '=', paymentId).where('store_code', '=', storeCode).executeTakeFirst();
}

/**
 * Inserts one account's new invoices and adds them to its live-invoice count, in the caller's
 * transaction (so a rollback takes both back).
 */
export async function insertInvoices(trx: Transaction<Database>, accountId: string, rows: Insertable<InvoiceTable>[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  if (rows.length === 0) return ids;
  if (rows.some((r) => r.account_id !== accountId)) throw new Error('insertInvoices: every row must belong to the given account');
  for (let i = 0; i < rows.length; i += 200) {
    const out = await trx.insertInto('invoices').values(rows.slice(i, i + 200)).returning(['id', 'unique_id']).execute();
    for (const r of out) ids.set(r.unique_id, Number(r.id));
  }
  await addLiveInvoices(trx, accountId, rows.filter((r) => r.deleted_at == null).length);
  return ids;
}

/**
 * Changes the account's live-invoice count by delta, creating its row on the first invoice.
 * Only for the functions here that insert or delete invoices, inside their transaction.
 */
async function addLiveInvoices(trx: Transaction<Database>, accountId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  if (delta > 0) {
    await trx.insertInto('invoice_counts').values({ account_id: accountId, live_invoices: delta })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ live_invoices: sql<number>`invoice_counts.live_invoices + ${delta}` }))
      .execute();
    return;
  }
  await trx.updateTable('invoice_counts').set({ live_invoices: sql<number>`live_invoices + ${delta}` })
    .where('account_id', '=', accountId).execute();
}

/** The account's live invoices, from its counter (one primary-key read; no row yet: 0). */
export async function liveInvoiceCount(db: Db, accountId: string): Promise<number> {
  const r = await db.selectFrom('invoice_counts').select('live_invoices').where('account_id', '=', accountId).executeTakeFirst();
  return r ? Number(r.live_invoices) : 0;
}

/**
 * What a list entry shows (billSummary): a page reads only these columns, because each further
 * column costs a value per row (select * made a page of 100 twice as slow on SQLite).
 */
const SUMMARY_COLUMNS = [
  'id', 'unique_id', 'trans_seqno', 'status', 'send_status', 'template_type', 'receiver_name', 'receiver_phone', 'guardian_phone',
  'amount', 'reason', 'created_at', 'done_at', 'canceled_at', 'first_sent_at', 'last_sent_at', 'send_count', 'send_channel', 'request_id', 'due_date',
] as const satisfies readonly (keyof Invoice)[];
export type InvoiceSummaryRow = Pick<Invoice, (typeof SUMMARY_COLUMNS)[number]>;

/**
 * A page of the account's live invoices, newest first, and how many there are: without a
 * range from the counter; with a (month) range counted by query over that range of the
 * (account_id, created_at) index.
 */
export async function listInvoices(db: Db, accountId: string, opts: { from?: number; to?: number; offset: number; limit: number; overdue?: { today: string; only: boolean } }) {
  let q = db.selectFrom('invoices').where('account_id', '=', accountId).where('deleted_at', 'is', null);
  const ranged = opts.from !== undefined && opts.to !== undefined;
  if (ranged) q = q.where('created_at', '>=', opts.from!).where('created_at', '<', opts.to!);
  // Overdue: unpaid with a due date before today (KST); the due date itself is still on time.
  const o = opts.overdue;
  if (o?.only) q = q.where('status', '=', 'PENDING').where('due_date', '<', o.today);
  else if (o) q = q.where((eb) => eb.or([eb('status', '!=', 'PENDING'), eb('due_date', 'is', null), eb('due_date', '>=', o.today)]));
  const total = ranged || o
    ? Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
    : await liveInvoiceCount(db, accountId);
  const rows = await q.select(SUMMARY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(opts.offset).limit(opts.limit).execute();
  return { rows, total };
}

export async function setPaymentId(db: Db, invoiceId: number, paymentId: string, now: number): Promise<boolean> {
  const r = await db.updateTable('invoices').set({ payment_id: paymentId, updated_at: now })
    .where('id', '=', invoiceId).where('payment_id', 'is', null).where('deleted_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Takes the invoice's row lock (PostgreSQL) while it is still resendable, so two resends of
 * one invoice serialize; false when it is no longer PENDING or was deleted.
 */
export async function touchPending(db: Db, accountId: string, invoiceId: number, now: number): Promise<boolean> {
  const r = await db.updateTable('invoices').set({ updated_at: now })
    .where('id', '=', invoiceId).where('account_id', '=', accountId).where('status', '=', 'PENDING').where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Soft-deletes a PENDING invoice and takes it off the account's live-invoice count, in the
 * caller's transaction. Only a row this UPDATE changed counts: a repeated or concurrent
 * delete of the same invoice changes nothing and decrements nothing.
 */
export async function markDeleted(trx: Transaction<Database>, accountId: string, invoiceId: number, now: number, opts: { paymentIdIsNull: boolean }): Promise<boolean> {
  let q = trx.updateTable('invoices').set({ deleted_at: now, updated_at: now })
    .where('id', '=', invoiceId).where('account_id', '=', accountId).where('status', '=', 'PENDING').where('deleted_at', 'is', null);
  if (opts.paymentIdIsNull) q = q.where('payment_id', 'is', null);
  const r = await q.executeTakeFirst();
  const changed = Number(r.numUpdatedRows);
  await addLiveInvoices(trx, accountId, -changed);
  return changed === 1;
}

/**
 * Applies an invoice event as a compare-and-set on its from-states; returns the updated row
 * (for the webhook body), or undefined when the invoice had moved on and nothing changed.
 */
export async function transitionInvoice(db: Db, invoiceId: number, event: InvoiceEvent, at: number): Promise<Invoice | undefined> {
  const t = INVOICE_TRANSITIONS[event];
  const stamp = event === 'paid' ? { done_at: at } : { canceled_at: at };
  return db.updateTable('invoices').set({ status: t.to as InvoiceStatus, ...stamp, updated_at: at }).where('id', '=', invoiceId)
    .where('status', 'in', t.from as readonly InvoiceStatus[]).returningAll().executeTakeFirst();
}

/** A visible (not deleted) invoice by its transaction number: the public lookup, which needs no account. */
export async function findVisibleInvoiceBySeqNo(db: Db, transSeqNo: string): Promise<Invoice | undefined> {
  return db.selectFrom('invoices').selectAll().where('trans_seqno', '=', transSeqNo).where('deleted_at', 'is', null).executeTakeFirst();
}

/** A send was accepted: the invoice counts it (first and last send times, SENT). */
export async function recordSentMessage(trx: Transaction<Database>, accountId: string, invoiceId: number, now: number): Promise<void> {
  await trx.updateTable('invoices').set((eb) => ({
    send_status: 'SENT', send_count: eb('send_count', '+', 1),
    first_sent_at: eb.fn.coalesce('first_sent_at', eb.val(now)), last_sent_at: now, updated_at: now,
  })).where('id', '=', invoiceId).where('account_id', '=', accountId).execute();
}

/** The first send failed: the invoice shows FAILED while nothing was ever sent (WAITING → FAILED). */
export async function recordFirstSendFailed(trx: Transaction<Database>, accountId: string, invoiceId: number, now: number): Promise<void> {
  await trx.updateTable('invoices').set({ send_status: 'FAILED', updated_at: now })
    .where('id', '=', invoiceId).where('account_id', '=', accountId).where('send_status', '=', 'WAITING').execute();
}

export async function monthTotals(db: Db, accountId: string, column: 'done_at' | 'canceled_at', from: number, to: number): Promise<{ count: number; amount: number }> {
  const r = await db.selectFrom('invoices')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.coalesce(eb.fn.sum<number>('amount'), sql<number>`0`).as('s')])
    .where('account_id', '=', accountId).where(column, '>=', from).where(column, '<', to)
    .executeTakeFirstOrThrow();
  return { count: Number(r.n), amount: Number(r.s) };
}

// ---- sends ---------------------------------------------------------------------------------

export async function insertSends(db: Db, rows: Insertable<SendTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 300) await db.insertInto('sends').values(rows.slice(i, i + 300)).execute();
}

/** A send by id: for the send job, which was handed the id by this service. */
export async function findSend(db: Db, id: string): Promise<Send | undefined> {
  return db.selectFrom('sends').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function sendsOf(db: Db, accountId: string, invoiceId: number): Promise<Send[]> {
  return db.selectFrom('sends').selectAll().where('account_id', '=', accountId).where('invoice_id', '=', invoiceId)
    .orderBy('created_at').orderBy('id').execute();
}

export async function hasOpenSend(db: Db, accountId: string, invoiceId: number): Promise<boolean> {
  const r = await db.selectFrom('sends').select('id').where('account_id', '=', accountId).where('invoice_id', '=', invoiceId)
    .where('status', 'in', OPEN_SEND_STATUSES as readonly SendStatus[]).executeTakeFirst();
  return !!r;
}

/**
 * Applies a send event as a compare-and-set on its from-states (with the columns the event
 * sets); false once the send was settled by someone else.
 */
export async function transitionSend(db: Db, id: string, event: SendEvent, set: Omit<Partial<Send>, 'id' | 'status'> = {}): Promise<boolean> {
  const t = SEND_TRANSITIONS[event];
  const r = await db.updateTable('sends').set({ ...set, status: t.to as SendStatus }).where('id', '=', id)
    .where('status', 'in', t.from as readonly SendStatus[]).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The delivery the provider reports, once it has moved on from ACCEPTED. */
export async function setDeliveryStatus(db: Db, accountId: string, sendId: string, status: DeliveryStatus): Promise<boolean> {
  const r = await db.updateTable('sends').set({ delivery_status: status }).where('id', '=', sendId).where('account_id', '=', accountId)
    .where('delivery_status', '=', 'ACCEPTED').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Settles an accepted send whose points waited for the delivery report: a compare-and-set on
 * `cost_settled IS NULL`, so of refresh-status and the delivery job only one settles it.
 */
export async function settleReportedSend(db: Db, accountId: string, sendId: string, set: Pick<Send, 'delivery_status' | 'cost_settled' | 'channel_used'>): Promise<boolean> {
  const r = await db.updateTable('sends').set(set).where('id', '=', sendId).where('account_id', '=', accountId)
    .where('status', '=', 'SUCCESS').where('cost_settled', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

// ---- webhook events (one per invoice and event) ---------------------------------------------

/** The event's row, once: false when this invoice already has this event. */
export async function insertWebhookEvent(trx: Transaction<Database>, e: { invoiceId: number; accountId: string; event: WebhookEventName; url: string; body: string; now: number }): Promise<number | undefined> {
  const row = await trx.insertInto('webhook_events')
    .values({ invoice_id: e.invoiceId, account_id: e.accountId, event: e.event, url: e.url, body: e.body, status: 'PENDING', attempts: 0, created_at: e.now, updated_at: e.now })
    .onConflict((oc) => oc.columns(['invoice_id', 'event']).doNothing())
    .returning('id').executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

/** An event with its invoice's sealed secret: for its own delivery job. */
export async function webhookForDelivery(db: Db, eventId: number) {
  return db.selectFrom('webhook_events')
    .leftJoin('invoices', 'invoices.id', 'webhook_events.invoice_id')
    .select(['webhook_events.id', 'webhook_events.event', 'webhook_events.body', 'webhook_events.url', 'webhook_events.status', 'invoices.webhook_secret_sealed',
      'invoices.store_code', 'invoices.unique_id', 'invoices.trans_seqno'])
    .where('webhook_events.id', '=', eventId).executeTakeFirst();
}

/** ABANDONED → DELIVERED: a redelivery or recovery reached the receiver after the schedule gave up. */
export async function reviveWebhookEvent(db: Db, id: number, now: number): Promise<void> {
  await db.updateTable('webhook_events').set({ status: 'DELIVERED', updated_at: now }).where('id', '=', id).where('status', '=', 'ABANDONED').execute();
}

/** PENDING → DELIVERED or ABANDONED (or PENDING again with the attempt count); false once settled. */
export async function settleWebhookEvent(db: Db, id: number, status: WebhookEvent['status'], attempts: number, now: number): Promise<boolean> {
  const r = await db.updateTable('webhook_events').set({ status, attempts, updated_at: now }).where('id', '=', id).where('status', '=', 'PENDING').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
