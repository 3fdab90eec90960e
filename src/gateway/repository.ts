import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import { compiledOnce } from '../db/compiled.js';
import type { PaymentTable, StoreTable } from '../db/schema.js';

/** SQL for payments, stores and platforms. Tenant data is always filtered by platform and store. */
export type Db = Kysely<Database> | Transaction<Database>;
export type Payment = Selectable<PaymentTable>;
export type Store = Selectable<StoreTable>;

export async function findStore(db: Db, platformCode: string, storeCode: string): Promise<Store | undefined> {
  return db.selectFrom('stores').selectAll().where('platform_code', '=', platformCode).where('code', '=', storeCode).executeTakeFirst();
}

export async function findStoreByCode(db: Db, storeCode: string): Promise<Store | undefined> {
  return db.selectFrom('stores').selectAll().where('code', '=', storeCode).executeTakeFirst();
}

/**
 * Every signed call starts here, in one round trip: the store of the platform, the platform's
 * keys that may sign now (the current one, and a rotated one still inside its grace), and the
 * store's payment with the call's TRANS_SEQNO when there is one. The caller checks the
 * signature before it uses the payment.
 */
const storePaymentForSigning = compiledOnce((db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string) => db.selectFrom('stores')
  .leftJoin('platform_keys', (join) => join.onRef('platform_keys.platform_code', '=', 'stores.platform_code')
    .on((eb) => eb.or([eb('platform_keys.retired_at', 'is', null), eb('platform_keys.retired_at', '>', now)])))
  .leftJoin('payments', (join) => join.onRef('payments.platform_code', '=', 'stores.platform_code')
    .onRef('payments.store_code', '=', 'stores.code').on('payments.trans_seqno', '=', transSeqNo))
  .selectAll('payments')
  .select(['stores.code as s_code', 'stores.platform_code as s_platform_code', 'stores.name as s_name', 'stores.ceo_name as s_ceo_name',
    'stores.biz_reg_num as s_biz_reg_num', 'stores.tel as s_tel', 'stores.cat_enabled as s_cat_enabled', 'stores.created_at as s_created_at',
    'platform_keys.key_sealed as s_key_sealed'])
  .where('stores.platform_code', '=', platformCode).where('stores.code', '=', storeCode));

export async function findStorePaymentForSigning(db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string): Promise<{ store: Store; keys: string[]; payment: Payment | undefined } | undefined> {
  const rows = await storePaymentForSigning(db, platformCode, storeCode, now, transSeqNo);
  const first = rows[0];
  if (!first) return undefined;
  return {
    store: {
      code: first.s_code, platform_code: first.s_platform_code, name: first.s_name, ceo_name: first.s_ceo_name,
      biz_reg_num: first.s_biz_reg_num, tel: first.s_tel, cat_enabled: first.s_cat_enabled, created_at: first.s_created_at,
    },
    keys: rows.flatMap((r) => (r.s_key_sealed === null ? [] : [r.s_key_sealed])),
    // The row itself, its s_* columns left on: copying ~40 columns out with a rest pattern was
    // 8% of a searchPayment's CPU. Callers read payments field by field and never serialize them whole.
    payment: first.id === null ? undefined : (first as unknown as Payment),
  };
}

export async function insertPayment(db: Db, row: Payment): Promise<void> {
  await db.insertInto('payments').values(row).execute();
}

const paymentOfStore = compiledOnce((db: Db, platformCode: string, storeCode: string, transSeqNo: string) => db.selectFrom('payments').selectAll()
  .where('platform_code', '=', platformCode).where('store_code', '=', storeCode).where('trans_seqno', '=', transSeqNo));

export async function findPayment(db: Db, platformCode: string, storeCode: string, transSeqNo: string): Promise<Payment | undefined> {
  return (await paymentOfStore(db, platformCode, storeCode, transSeqNo))[0];
}

/** By internal id: only for callers that proved access another way (page token, own job). */
export async function findPaymentById(db: Db, id: string): Promise<Payment | undefined> {
  return db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function openAttempt(db: Db, row: { id: string; payment_id: string; kind: 'APPROVE' | 'CANCEL'; card_bin?: string | null; card_last4?: string | null; installment_month?: string | null; now: number }): Promise<void> {
  await db.insertInto('payment_attempts').values({
    id: row.id, payment_id: row.payment_id, kind: row.kind, status: 'OPEN', card_bin: row.card_bin ?? null,
    card_last4: row.card_last4 ?? null, issuer_name: null, installment_month: row.installment_month ?? null,
    message: null, created_at: row.now, closed_at: null,
  }).execute();
}

/** Compare-and-set OPEN → status: false when someone (a reconcile) closed the attempt first. */
export async function closeAttempt(db: Db, id: string, status: string, now: number, extra: { message?: string | null; issuer_name?: string | null } = {}): Promise<boolean> {
  const r = await db.updateTable('payment_attempts').set({ status, closed_at: now, message: extra.message ?? null, issuer_name: extra.issuer_name ?? null })
    .where('id', '=', id).where('status', '=', 'OPEN').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function attemptStatus(db: Db, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('payment_attempts').select('status').where('id', '=', id).executeTakeFirst();
  return row?.status;
}

/** Compare-and-set: changes the payment only if it is still in one of `from`. */
export async function transition(db: Db, id: string, from: string[], set: Partial<Payment>): Promise<boolean> {
  const r = await db.updateTable('payments').set(set).where('id', '=', id).where('state', 'in', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
