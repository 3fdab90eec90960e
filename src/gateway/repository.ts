import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { compiledOnce } from '../db/compiled.js';
import { isUniqueViolation } from '../platform/errors.js';
import { INSTANCE_ID } from '../platform/instance.js';
import type { Database } from '../db/index.js';
import type { PaymentAttemptTable, PaymentTable, StoreTable } from '../db/schema.js';
import type { PayMethod, ProcessorId } from '../ports/checkout.js';
import { accountGuard, PAYMENT_TRANSITIONS, type AttemptKind, type AttemptStatus, type ClosedAttemptStatus, type PaymentEvent, type PaymentState, type RestingStatus } from './payment-state.js';

/**
 * All SQL of the gateway: platforms, keys, stores, payments and their attempts. A payment is
 * tenant data: every lookup a caller can steer filters by platform and store; the lookups by
 * internal id are for callers that proved access another way (the page token, their own job,
 * the invoicing side's own invoice).
 */
export type Db = Kysely<Database> | Transaction<Database>;
export type Payment = Selectable<PaymentTable>;
export type Store = Selectable<StoreTable>;
export type Attempt = Selectable<PaymentAttemptTable>;
/** What a transition may change besides the state. */
export type PaymentChanges = Omit<Updateable<PaymentTable>, 'state' | 'id' | 'platform_code' | 'store_code' | 'trans_seqno'>;

/** Every column of a payment, in one fixed order: the insert and the lookups name them all (src/db/compiled.ts). */
export const PAYMENT_COLUMNS = ['id', 'platform_code', 'store_code', 'trans_seqno', 'state', 'amount', 'supply_amount', 'tax_charge', 'tax_free_amount',
  'mobile_no', 'pay_user_name', 'request_reason', 'info_message', 'confirm_url', 'return_display_yn', 'return_url', 'temp_value', 'user_id',
  'order_type', 'items_json', 'pay_path', 'approval_number', 'approval_at', 'installment_month', 'issuer_name', 'accepter_name', 'method_name',
  'card_bin', 'card_last4', 'processor_ref', 'cancel_at', 'cancel_reason', 'cancel_amount', 'created_at', 'updated_at',
  'processor', 'processor_order', 'method', 'vbank_code', 'vbank_name', 'vbank_account', 'vbank_holder', 'vbank_due_at', 'vbank_secret_sealed'] as const satisfies readonly (keyof Payment)[];
/** A column added to the payments table but not to PAYMENT_COLUMNS fails to compile here. */
type AllListed<Missing extends never> = Missing;
export type PaymentColumnsComplete = AllListed<Exclude<keyof Payment, (typeof PAYMENT_COLUMNS)[number]>>;

// ---- platforms, keys and stores ------------------------------------------------------------

export async function platformExists(db: Db, code: string): Promise<boolean> {
  return !!(await db.selectFrom('platforms').select('code').where('code', '=', code).executeTakeFirst());
}

export async function insertPlatform(trx: Transaction<Database>, p: { code: string; name: string; keyId: string; keySealed: string; now: number }): Promise<void> {
  await trx.insertInto('platforms').values({ code: p.code, name: p.name, created_at: p.now }).execute();
  await trx.insertInto('platform_keys').values({ id: p.keyId, platform_code: p.code, key_sealed: p.keySealed, retired_at: null, created_at: p.now }).execute();
}

/**
 * A new current key for the platform. The current one retires at `retireAt` (its grace); a
 * key still inside an earlier grace retires now, so at most one previous key ever signs.
 */
export async function rotatePlatformKey(trx: Transaction<Database>, k: { platformCode: string; keyId: string; keySealed: string; now: number; retireAt: number }): Promise<void> {
  await trx.updateTable('platform_keys').set({ retired_at: k.now }).where('platform_code', '=', k.platformCode)
    .where('retired_at', 'is not', null).where('retired_at', '>', k.now).execute();
  await trx.updateTable('platform_keys').set({ retired_at: k.retireAt })
    .where('platform_code', '=', k.platformCode).where('retired_at', 'is', null).execute();
  await trx.insertInto('platform_keys').values({ id: k.keyId, platform_code: k.platformCode, key_sealed: k.keySealed, retired_at: null, created_at: k.now }).execute();
}

export async function insertStore(db: Db, s: Store): Promise<void> {
  await db.insertInto('stores').values(s).execute();
}

export async function findStore(db: Db, platformCode: string, storeCode: string): Promise<Store | undefined> {
  return db.selectFrom('stores').selectAll().where('platform_code', '=', platformCode).where('code', '=', storeCode).executeTakeFirst();
}

/** A store by its code alone: store codes are unique across platforms. */
export async function findStoreByCode(db: Db, storeCode: string): Promise<Store | undefined> {
  return db.selectFrom('stores').selectAll().where('code', '=', storeCode).executeTakeFirst();
}

/** What every signed-call lookup gives: the store, the keys that may sign now, and the payment if any. */
export interface SignedLookup<P> {
  store: Store;
  keys: string[];
  payment: P | undefined;
}

const STORE_FOR_SIGNING = ['stores.code as s_code', 'stores.platform_code as s_platform_code', 'stores.name as s_name', 'stores.ceo_name as s_ceo_name',
  'stores.biz_reg_num as s_biz_reg_num', 'stores.tel as s_tel', 'stores.cat_enabled as s_cat_enabled', 'stores.created_at as s_created_at',
  'platform_keys.key_sealed as s_key_sealed'] as const;

/**
 * Every signed call starts here, in one round trip: the store of the platform, the platform's
 * keys that may sign now (the current one, and a rotated one still inside its grace), and the
 * store's payment with the call's TRANS_SEQNO when there is one. The caller checks the
 * signature before it uses the payment.
 */
const signingJoin = (db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string) => db.selectFrom('stores')
  .leftJoin('platform_keys', (join) => join.onRef('platform_keys.platform_code', '=', 'stores.platform_code')
    .on((eb) => eb.or([eb('platform_keys.retired_at', 'is', null), eb('platform_keys.retired_at', '>', now)])))
  .leftJoin('payments', (join) => join.onRef('payments.platform_code', '=', 'stores.platform_code')
    .onRef('payments.store_code', '=', 'stores.code').on('payments.trans_seqno', '=', transSeqNo))
  .where('stores.platform_code', '=', platformCode).where('stores.code', '=', storeCode);

// Every column named (PAYMENT_COLUMNS, below), not `payments.*`: the same row, and a statement
// PostgreSQL may keep prepared (src/db/compiled.ts says why `*` may not be).
const storePaymentForSigning = compiledOnce((db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string) =>
  signingJoin(db, platformCode, storeCode, now, transSeqNo).select(PAYMENT_COLUMNS.map((c) => `payments.${c}` as const)).select(STORE_FOR_SIGNING),
{ prepareAs: 'payment_for_signing' });

/** The columns searchPayment's record shows (src/gateway/views.ts), and no more. */
export const PAYMENT_VIEW_COLUMNS = ['trans_seqno', 'state', 'mobile_no', 'approval_at', 'amount', 'supply_amount', 'tax_charge', 'approval_number',
  'installment_month', 'issuer_name', 'accepter_name', 'method_name', 'cancel_at', 'cancel_reason', 'cancel_amount', 'pay_path',
  'vbank_name', 'vbank_account', 'vbank_holder', 'vbank_due_at'] as const;
export type PaymentView = Pick<Payment, (typeof PAYMENT_VIEW_COLUMNS)[number]>;

// searchPayment, the call every waiting customer's screen repeats, reads only what it shows:
// each column better-sqlite3 turns into a JavaScript value costs, and a payment has ~40.
const storePaymentViewForSigning = compiledOnce((db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string) =>
  signingJoin(db, platformCode, storeCode, now, transSeqNo).select(PAYMENT_VIEW_COLUMNS.map((c) => `payments.${c}` as const)).select(STORE_FOR_SIGNING),
{ prepareAs: 'payment_view_for_signing' });

// requestPayment needs the store and its keys only: a payment already holding the TRANS_SEQNO is
// refused by the insert's unique index. Without the payments join SQLite makes no payment columns
// (44 nulls, each a JavaScript value) and PostgreSQL reads one index less.
const storeForSigning = compiledOnce((db: Db, platformCode: string, storeCode: string, now: number) => db.selectFrom('stores')
  .leftJoin('platform_keys', (join) => join.onRef('platform_keys.platform_code', '=', 'stores.platform_code')
    .on((eb) => eb.or([eb('platform_keys.retired_at', 'is', null), eb('platform_keys.retired_at', '>', now)])))
  .where('stores.platform_code', '=', platformCode).where('stores.code', '=', storeCode).select(STORE_FOR_SIGNING),
{ prepareAs: 'store_for_signing' });

type SigningRow = { [K in (typeof STORE_FOR_SIGNING)[number] as K extends `${string} as ${infer A}` ? A : never]: unknown };

function signedLookup<P>(rows: readonly SigningRow[], payment: (first: SigningRow) => P | undefined): SignedLookup<P> | undefined {
  const first = rows[0];
  if (!first) return undefined;
  return {
    store: {
      code: first.s_code, platform_code: first.s_platform_code, name: first.s_name, ceo_name: first.s_ceo_name,
      biz_reg_num: first.s_biz_reg_num, tel: first.s_tel, cat_enabled: first.s_cat_enabled, created_at: first.s_created_at,
    } as Store,
    keys: rows.flatMap((r) => (r.s_key_sealed === null ? [] : [r.s_key_sealed as string])),
    payment: payment(first),
  };
}

export async function findStorePaymentForSigning(db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string): Promise<SignedLookup<Payment> | undefined> {
  const rows = await storePaymentForSigning(db, platformCode, storeCode, now, transSeqNo);
  // The row itself, its s_* columns left on: copying ~40 columns out with a rest pattern was
  // 8% of a searchPayment's CPU. Callers read payments field by field and never serialize them whole.
  return signedLookup(rows, (first) => ((first as unknown as Payment).id === null ? undefined : (first as unknown as Payment)));
}

/** As findStorePaymentForSigning, without the payment (requestPayment): `payment` is always undefined. */
export async function findStoreForSigning(db: Db, platformCode: string, storeCode: string, now: number): Promise<SignedLookup<undefined> | undefined> {
  return signedLookup(await storeForSigning(db, platformCode, storeCode, now), () => undefined);
}

/** As findStorePaymentForSigning, with only the payment's PAYMENT_VIEW_COLUMNS (searchPayment). */
export async function findStorePaymentViewForSigning(db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string): Promise<SignedLookup<PaymentView> | undefined> {
  const rows = await storePaymentViewForSigning(db, platformCode, storeCode, now, transSeqNo);
  // trans_seqno is NOT NULL in payments: null here is the left join finding no payment.
  return signedLookup(rows, (first) => ((first as unknown as PaymentView).trans_seqno === null ? undefined : (first as unknown as PaymentView)));
}

// ---- payments ------------------------------------------------------------------------------


// requestPayment's insert: building and compiling it with Kysely on every call was ~7% of a
// requestPayment's CPU.
const paymentInsert = compiledOnce((db: Db, ...values: unknown[]) =>
  db.insertInto('payments').values(Object.fromEntries(PAYMENT_COLUMNS.map((c, i) => [c, values[i]])) as unknown as Payment), { prepareAs: 'payment_insert' });

export async function insertPayment(db: Db, row: Payment): Promise<void> {
  await paymentInsert(db, ...PAYMENT_COLUMNS.map((c) => row[c] ?? null));
}

const paymentOfStore = compiledOnce((db: Db, platformCode: string, storeCode: string, transSeqNo: string) => db.selectFrom('payments').selectAll()
  .where('platform_code', '=', platformCode).where('store_code', '=', storeCode).where('trans_seqno', '=', transSeqNo));

/** The hot lookups, by name, with a call's arguments: test/db/store.test.ts reads their SQL and plans. */
export const HOT_LOOKUPS = {
  storePaymentForSigning: (db: Db) => storePaymentForSigning.sqlOn(db, 'P', 'S', 0, 'T'),
  storePaymentViewForSigning: (db: Db) => storePaymentViewForSigning.sqlOn(db, 'P', 'S', 0, 'T'),
  storeForSigning: (db: Db) => storeForSigning.sqlOn(db, 'P', 'S', 0),
  paymentOfStore: (db: Db) => paymentOfStore.sqlOn(db, 'P', 'S', 'T'),
};

export async function findPayment(db: Db, platformCode: string, storeCode: string, transSeqNo: string): Promise<Payment | undefined> {
  return (await paymentOfStore(db, platformCode, storeCode, transSeqNo))[0];
}

/** By internal id: only for callers that proved access another way (page token, own job). */
export async function findPaymentById(db: Db, id: string): Promise<Payment | undefined> {
  return db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Applies a state-machine event as a compare-and-set: the payment changes only if it is in one
 * of the event's from-states. Returns the payment as it now is, or undefined when nothing
 * changed (it had moved on); callers must look at the answer.
 */
export async function transition(db: Db, payment: Payment, event: PaymentEvent, changes: PaymentChanges): Promise<Payment | undefined> {
  const t = PAYMENT_TRANSITIONS[event];
  const set = { ...changes, state: t.to as PaymentState };
  let q = db.updateTable('payments').set(set).where('id', '=', payment.id).where('state', 'in', t.from as readonly PaymentState[]);
  // An open virtual account is one with an account number (src/gateway/payment-state.ts, AccountGuard).
  const guard = accountGuard(event);
  if (guard === 'none') q = q.where('vbank_account', '=', '');
  if (guard === 'open') q = q.where('vbank_account', '<>', '');
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1 ? ({ ...payment, ...set } as Payment) : undefined;
}

/**
 * A payment whose account closed (or never opened): the VBANK fields empty, and nothing of the
 * order that issued it (its processor, method and keys), since no processor took the payment.
 */
export const NO_ACCOUNT = {
  vbank_code: '', vbank_name: '', vbank_account: '', vbank_holder: '', vbank_due_at: null, vbank_secret_sealed: null,
  processor: null, processor_order: null, processor_ref: null, method: null, method_name: null,
} as const;

/** True when a virtual account is open on the payment. */
export function accountOpen(p: Pick<Payment, 'state' | 'vbank_account'>): boolean {
  return p.state === 'STORE_REQUEST' && p.vbank_account !== '';
}

export async function countPaymentsByState(db: Db): Promise<{ key: string; n: number }[]> {
  const rows = await db.selectFrom('payments').select((eb) => [eb.ref('state').as('key'), eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
  return rows.map((r) => ({ key: r.key, n: Number(r.n) }));
}

// ---- attempts ------------------------------------------------------------------------------

/** Opens the payment's one attempt slot; a second open attempt fails on the partial unique index. A CHECKOUT attempt may start resting (WINDOW), without the slot. */
export async function openAttempt(db: Db, row: {
  id: string; payment_id: string; kind: AttemptKind; card_bin?: string | null; card_last4?: string | null; installment_month?: string | null; now: number;
  status?: 'OPEN' | 'WINDOW'; processor?: ProcessorId | null; method?: PayMethod | null; refund_sealed?: string | null;
}): Promise<void> {
  await db.insertInto('payment_attempts').values({
    id: row.id, payment_id: row.payment_id, kind: row.kind, status: row.status ?? 'OPEN', card_bin: row.card_bin ?? null,
    card_last4: row.card_last4 ?? null, issuer_name: null, installment_month: row.installment_month ?? null,
    message: null, created_at: row.now, closed_at: null, processor: row.processor ?? null, method: row.method ?? null, processor_ref: null,
    refund_sealed: row.refund_sealed ?? null, owner: INSTANCE_ID,
  }).execute();
}

/**
 * Compare-and-set OPEN (or one of `from`) → status: false when someone (a reconcile) closed the
 * attempt first. A refund account kept for the attempt goes with its close.
 */
export async function closeAttempt(db: Db, id: string, status: ClosedAttemptStatus | 'ISSUED' | 'UNKNOWN', now: number, extra: { message?: string | null; issuer_name?: string | null; from?: readonly AttemptStatus[] } = {}): Promise<boolean> {
  const r = await db.updateTable('payment_attempts').set({ status, closed_at: now, message: extra.message ?? null, issuer_name: extra.issuer_name ?? null, refund_sealed: null })
    .where('id', '=', id).where('status', 'in', extra.from ?? ['OPEN']).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Takes the payment's slot for an order that rests (WINDOW, ISSUED): compare-and-set to OPEN.
 * 'TAKEN' when another operation holds the slot (the partial unique index), 'MOVED' when the
 * attempt is no longer in `from`.
 */
export async function claimAttempt(db: Db, id: string, from: RestingStatus, processorRef?: string | null): Promise<'CLAIMED' | 'MOVED' | 'TAKEN'> {
  try {
    const r = await db.updateTable('payment_attempts').set({ status: 'OPEN', owner: INSTANCE_ID, ...(processorRef ? { processor_ref: processorRef } : {}) })
      .where('id', '=', id).where('status', '=', from).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? 'CLAIMED' : 'MOVED';
  } catch (e) {
    if (isUniqueViolation(e)) return 'TAKEN';
    throw e;
  }
}

/** Gives the slot back: OPEN → the resting status the order was in. */
export async function releaseAttempt(db: Db, id: string, to: RestingStatus): Promise<boolean> {
  const r = await db.updateTable('payment_attempts').set({ status: to }).where('id', '=', id).where('status', '=', 'OPEN').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function attemptStatus(db: Db, id: string): Promise<Attempt['status'] | undefined> {
  const row = await db.selectFrom('payment_attempts').select('status').where('id', '=', id).executeTakeFirst();
  return row?.status;
}

/** An attempt by its id (a checkout's order id). */
export async function findAttempt(db: Db, id: string): Promise<Attempt | undefined> {
  if (id.length > 64) return undefined;
  return db.selectFrom('payment_attempts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The payment's open attempt, if any (there is at most one). */
export async function openAttemptOf(db: Db, paymentId: string): Promise<Attempt | undefined> {
  return db.selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).where('status', '=', 'OPEN').executeTakeFirst();
}

/** Payments whose open attempt is older than `before`: left by a process that died. */
export async function paymentsWithStaleAttempts(db: Db, before: number, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('payment_attempts').select('payment_id').where('status', '=', 'OPEN')
    .where('created_at', '<', before).limit(limit).execute();
  return rows.map((r) => r.payment_id);
}

/**
 * This process takes over an open attempt from its owner that is gone (compare-and-set on the
 * owner): false when another process took it first, or it closed meanwhile, so one process
 * settles it and the others wait for that one as for any live holder.
 */
export async function takeOverAttempt(db: Db, id: string, from: string): Promise<boolean> {
  const r = await db.updateTable('payment_attempts').set({ owner: INSTANCE_ID }).where('id', '=', id).where('status', '=', 'OPEN')
    .where('owner', '=', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Open attempts held by processes of this host other than this one (`ownerHost`: the host part
 * with its slash): the caller keeps those whose process is gone (src/platform/instance.ts).
 */
export async function openAttemptsOfHost(db: Db, ownerHost: string, limit: number): Promise<{ payment_id: string; owner: string }[]> {
  const rows = await db.selectFrom('payment_attempts').select(['payment_id', 'owner']).where('status', '=', 'OPEN')
    .where('owner', 'like', `${ownerHost}%`).where('owner', '<>', INSTANCE_ID).orderBy('created_at').limit(limit).execute();
  return rows.map((r) => ({ payment_id: r.payment_id, owner: r.owner! }));
}

/** Windows opened before `before` that nobody came back from (the sweep looks them up once). */
export async function staleWindows(db: Db, before: number, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('payment_attempts').select('id').where('status', '=', 'WINDOW')
    .where('created_at', '<', before).orderBy('created_at').limit(limit).execute();
  return rows.map((r) => r.id);
}
