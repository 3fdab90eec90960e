import { sql } from 'kysely';
import type { OrderType, PayPath, PaymentState } from './payment-state.js';
import { lastFour, lastTwo, newestFirst, searchParts } from '../db/search.js';
import type { Db, Payment, Store } from './repository.js';

/**
 * SQL of what the console asks of the gateway: the payment list and search of one store, a
 * payment's timeline, sales by day, failing callbacks, the store's details. Every query filters
 * by platform and store.
 */
export interface PaymentFilter {
  state?: PaymentState;
  payPath?: PayPath;
  orderType?: OrderType;
  /** Requested at or after (epoch ms). */
  from?: number;
  /** Requested before (epoch ms). */
  to?: number;
  /**
   * One search term within the store: matched whole (TRANS_SEQNO, payer name, approval
   * number, phone with or without dashes), as the last 4 digits of the phone or the card, as
   * the last 2 characters of the name, or as a part of the name, TRANS_SEQNO, reason, approval
   * number or phone (src/db/search.ts: 3 characters or more at any age through the text index,
   * 2 among the store's newest PARTIAL_WINDOW payments).
   */
  q?: string;
}

export interface StoreKey {
  platformCode: string;
  storeCode: string;
}

const LIST_COLUMNS = [
  'id', 'trans_seqno', 'state', 'amount', 'mobile_no', 'pay_user_name', 'request_reason', 'order_type', 'pay_path', 'approval_number',
  'approval_at', 'issuer_name', 'installment_month', 'card_bin', 'card_last4', 'cancel_at', 'cancel_reason', 'cancel_amount', 'created_at',
] as const;
export type PaymentListRow = Pick<Payment, (typeof LIST_COLUMNS)[number]>;

/**
 * A page of the store's payments matching the filter, newest first, after the keyset cursor
 * (created_at, id). Each searched column has its own (store, column, created_at) index, so a
 * search reads only the matching rows however many payments the store has.
 */
export async function searchPayments(db: Db, s: StoreKey, f: PaymentFilter, opts: { after?: { at: number; id: string }; limit: number }): Promise<PaymentListRow[]> {
  const page = () => {
    let q = db.selectFrom('payments').select(LIST_COLUMNS).where('platform_code', '=', s.platformCode).where('store_code', '=', s.storeCode);
    if (f.state) q = q.where('state', '=', f.state);
    if (f.payPath) q = q.where('pay_path', '=', f.payPath);
    if (f.orderType) q = q.where('order_type', '=', f.orderType);
    if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('created_at', '<', f.to);
    if (opts.after) {
      const a = opts.after;
      q = q.where((eb) => eb.or([eb('created_at', '<', a.at), eb.and([eb('created_at', '=', a.at), eb('id', '<', a.id)])]));
    }
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit);
  };
  if (!f.q) return page().execute();
  // One query per way of matching, each served by an index, merged here: a single OR over the
  // columns lets the planner walk the store's whole (created_at) index and test every row
  // instead (SQLite does).
  const term = f.q.trim();
  const digits = term.replace(/[\s-]/g, '');
  const searches = [page().where('trans_seqno', '=', term), page().where('pay_user_name', '=', term), page().where('approval_number', '=', term)];
  if (/^\d{9,11}$/.test(digits)) searches.push(page().where('mobile_no', '=', digits));
  if (/^\d{4}$/.test(digits)) searches.push(page().where('card_last4', '=', digits), page().where(lastFour('mobile_no'), '=', digits));
  if ([...term].length === 2) searches.push(page().where(lastTwo('pay_user_name'), '=', term));
  const [exact, parts] = await Promise.all([Promise.all(searches.map((q) => q.execute())), searchParts(db, 'payments', term, opts.limit, {
    page: (cond, r) => {
      let q = page().where(cond);
      if (r.from !== undefined) q = q.where('created_at', '>=', r.from);
      if (r.before !== undefined) q = q.where('created_at', '<', r.before);
      return q.execute();
    },
    nthNewest: (n) => nthNewest(db, s, n),
  })]);
  return newestFirst([...exact.flat(), ...parts.flat()], opts.limit);
}

/** The created_at of the store's n-th newest payment (0 when it has fewer): where a window of the newest begins. */
async function nthNewest(db: Db, s: StoreKey, n: number): Promise<number> {
  const row = await db.selectFrom('payments').select('created_at').where('platform_code', '=', s.platformCode).where('store_code', '=', s.storeCode)
    .orderBy('created_at', 'desc').limit(1).offset(n - 1).executeTakeFirst();
  return row ? Number(row.created_at) : 0;
}

/** Rows of several searches as one page (src/db/search.ts). */
export { newestFirst } from '../db/search.js';

/** A payment's attempts at the card processor, oldest first. */
export async function attemptsOf(db: Db, paymentId: string) {
  return db.selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).orderBy('created_at').orderBy('id').execute();
}

/** Every CONFIRM_URL callback attempt of a payment, oldest first. */
export async function callbackAttemptsOf(db: Db, paymentId: string) {
  return db.selectFrom('outbound_attempts').select(['attempt_no', 'url', 'status_code', 'error', 'duration_ms', 'created_at'])
    .where('target', '=', 'CALLBACK').where('ref_id', '=', paymentId).orderBy('id').execute();
}

/** The payment's callback job, if any: whether more attempts will come, and when. */
export async function callbackJobOf(db: Db, paymentId: string) {
  return db.selectFrom('jobs').select(['status', 'attempts', 'max_attempts', 'run_at']).where('unique_key', '=', `callback:${paymentId}`).executeTakeFirst();
}

const DAY_MS = 86_400_000;
const KST_MS = 9 * 3_600_000;

/** Approvals (count, amount) and cancels (count, amount) of the store per KST day in [from, to). */
export async function salesByDay(db: Db, s: StoreKey, from: number, to: number) {
  // Literals, not parameters: SQLite binds a JS number as a float, which would make this a
  // fractional day per payment instead of an integer division.
  const day = (col: 'approval_at' | 'cancel_at') => sql<number>`(${sql.ref(col)} + ${sql.lit(KST_MS)}) / ${sql.lit(DAY_MS)}`;
  const paid = await db.selectFrom('payments')
    .select((eb) => [day('approval_at').as('day'), eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('amount').as('total')])
    .where('store_code', '=', s.storeCode).where('platform_code', '=', s.platformCode)
    .where('approval_at', '>=', from).where('approval_at', '<', to).groupBy(day('approval_at')).execute();
  const canceled = await db.selectFrom('payments')
    .select((eb) => [day('cancel_at').as('day'), eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('cancel_amount').as('total')])
    .where('store_code', '=', s.storeCode).where('platform_code', '=', s.platformCode)
    .where('cancel_at', '>=', from).where('cancel_at', '<', to).groupBy(day('cancel_at')).execute();
  const num = (rows: { day: number; n: number; total: number | null }[]) => rows.map((r) => ({ day: Number(r.day), n: Number(r.n), total: Number(r.total ?? 0) }));
  return { paid: num(paid), canceled: num(canceled) };
}

export async function updateStore(db: Db, s: StoreKey, set: Pick<Store, 'name' | 'ceo_name' | 'biz_reg_num' | 'tel'>): Promise<boolean> {
  const r = await db.updateTable('stores').set(set).where('platform_code', '=', s.platformCode).where('code', '=', s.storeCode).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
