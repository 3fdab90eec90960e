import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { DeliveryTable, OutboundAttemptTable } from '../db/schema.js';
import { newId } from '../platform/crypto.js';
import { DELIVERY_TRANSITIONS, FAILING_FROM_ATTEMPTS, type AttemptTrigger, type DeliveryEvent, type DeliveryKind, type DeliveryState } from './job-state.js';

/**
 * SQL of the deliveries (src/jobs/README.md, "Deliveries"). Every read a person can reach is
 * filtered by the store: another store's delivery is simply not found.
 */
type Db = Kysely<Database> | Transaction<Database>;

export type Delivery = DeliveryTable;
export type DeliveryAttempt = Pick<OutboundAttemptTable, 'attempt_no' | 'url' | 'status_code' | 'error' | 'duration_ms' | 'created_at' | 'response_body'> & { id: number; trigger: AttemptTrigger };

export interface NewDelivery {
  storeCode: string;
  kind: DeliveryKind;
  number: string;
  refId: string;
  transSeqNo?: string | null;
  billId?: string | null;
  event?: string | null;
  endpointId?: string | null;
  url: string;
  headers: Record<string, string>;
  body: string;
  now: number;
}

/**
 * isFailing (job-state.ts) as SQL, built from the same table: for each state that can fail, that
 * state with at least its number of attempts. The overview's count, the console's "실패" and
 * recovery all read through this condition.
 */
export function failingCondition(eb: ExpressionBuilder<Database, 'deliveries'>) {
  const states = (Object.entries(FAILING_FROM_ATTEMPTS) as [DeliveryState, number | null][]).filter((e): e is [DeliveryState, number] => e[1] !== null);
  return eb.or(states.map(([status, min]) => eb.and([eb('deliveries.status', '=', status), eb('deliveries.attempts', '>=', min)])));
}

export function newDeliveryId(): string {
  return `dlv_${newId().replace(/-/g, '')}`;
}

/**
 * The delivery of a payment's callback or a webhook event, written in the transaction of the
 * change that causes it; once per cause (a second call returns the existing row).
 */
export async function ensureDelivery(db: Db, d: NewDelivery): Promise<Delivery> {
  await db.insertInto('deliveries').values({
    id: newDeliveryId(), store_code: d.storeCode, kind: d.kind, number: d.number, ref_id: d.refId, trans_seqno: d.transSeqNo ?? null,
    bill_id: d.billId ?? null, event: d.event ?? null, endpoint_id: d.endpointId ?? null, url: d.url, request_headers: JSON.stringify(d.headers), body: d.body, status: 'pending',
    attempts: 0, last_attempt_at: null, created_at: d.now, updated_at: d.now,
  }).onConflict((oc) => oc.columns(['kind', 'ref_id']).doNothing()).execute();
  return (await deliveryByRef(db, d.kind, d.refId))!;
}

/** For the delivery's own job (no tenant: the job holds the reference). */
export function deliveryById(db: Db, id: string): Promise<Delivery | undefined> {
  return db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** For the delivery's own job (no tenant: the job holds the reference). */
export function deliveryByRef(db: Db, kind: DeliveryKind, refId: string): Promise<Delivery | undefined> {
  return db.selectFrom('deliveries').selectAll().where('kind', '=', kind).where('ref_id', '=', refId).executeTakeFirst();
}

/** One transition of a delivery (DELIVERY_TRANSITIONS), compare-and-set on its `from`; false when it did not apply. */
export async function transitionDelivery(db: Db, id: string, event: DeliveryEvent, now: number, storeCode?: string): Promise<boolean> {
  const t = DELIVERY_TRANSITIONS[event];
  let q = db.updateTable('deliveries').set({ status: t.to, updated_at: now }).where('id', '=', id).where('status', 'in', [...t.from]);
  if (storeCode !== undefined) q = q.where('store_code', '=', storeCode);
  return Number((await q.executeTakeFirst()).numUpdatedRows) === 1;
}

/**
 * After an attempt: counts it and moves the status; returns the attempt's number in the
 * delivery's one sequence (scheduled and manual attempts alike: a redelivery after attempts 1
 * to 3 is attempt 4). A 2xx delivers; a failure of the job's last
 * attempt fails a pending delivery (a manual redelivery that fails does not undo a delivery the
 * receiver already has); any other failure leaves it pending for the next attempt.
 */
export async function settleDelivery(db: Db, id: string, s: { ok: boolean; final: boolean; now: number }): Promise<number> {
  await db.updateTable('deliveries').set((eb) => ({ attempts: eb('attempts', '+', 1), last_attempt_at: s.now, updated_at: s.now })).where('id', '=', id).execute();
  if (s.ok) await transitionDelivery(db, id, 'deliver', s.now);
  else if (s.final) await transitionDelivery(db, id, 'fail', s.now);
  // Read in the transaction that counted it (the row stays locked to it): this attempt's number.
  const row = await db.selectFrom('deliveries').select('attempts').where('id', '=', id).executeTakeFirst();
  return Number(row?.attempts ?? 0);
}

/** failed → pending (recovery, redelivery); false when it was not failed. */
export function reopenDelivery(db: Db, storeCode: string, id: string, now: number): Promise<boolean> {
  return transitionDelivery(db, id, 'reopen', now, storeCode);
}

export interface DeliveryFilter {
  kind?: DeliveryKind;
  status?: DeliveryState;
  /** Failing ones only (failingCondition): failed, or retrying after a failure. */
  failing?: boolean;
  since?: number;
  transSeqNo?: string;
  billId?: string;
  /** Keyset: the (created_at, id) of the last row of the previous page. */
  after?: { createdAt: number; id: string };
  /** Failing first (failingCondition), then newest first (the console's order); otherwise newest first. */
  failedFirst?: boolean;
  limit: number;
}

/** A store's deliveries, newest first, filtered; one more than `limit` tells the caller there is a next page. */
export async function listDeliveries(db: Db, storeCode: string, f: DeliveryFilter): Promise<Delivery[]> {
  let q = db.selectFrom('deliveries').selectAll().where('store_code', '=', storeCode);
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.failing) q = q.where(failingCondition);
  if (f.since !== undefined) q = q.where('created_at', '>=', f.since);
  if (f.transSeqNo) q = q.where('trans_seqno', '=', f.transSeqNo);
  if (f.billId) q = q.where('bill_id', '=', f.billId);
  if (f.after) {
    const a = f.after;
    q = q.where((eb) => eb.or([eb('created_at', '<', a.createdAt), eb.and([eb('created_at', '=', a.createdAt), eb('id', '<', a.id)])]));
  }
  if (f.failedFirst) q = q.orderBy((eb) => eb.case().when(failingCondition(eb)).then(0).else(1).end());
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit + 1).execute();
}

export function deliveryOfStore(db: Db, storeCode: string, id: string): Promise<Delivery | undefined> {
  return db.selectFrom('deliveries').selectAll().where('store_code', '=', storeCode).where('id', '=', id).executeTakeFirst();
}

/** The attempts of a store's delivery, oldest first. */
export async function attemptsOf(db: Db, storeCode: string, deliveryId: string): Promise<DeliveryAttempt[]> {
  const rows = await db.selectFrom('outbound_attempts')
    .innerJoin('deliveries', 'deliveries.id', 'outbound_attempts.delivery_id')
    .select(['outbound_attempts.id', 'outbound_attempts.attempt_no', 'outbound_attempts.url', 'outbound_attempts.status_code', 'outbound_attempts.error',
      'outbound_attempts.duration_ms', 'outbound_attempts.created_at', 'outbound_attempts.response_body', 'outbound_attempts.trigger'])
    .where('deliveries.store_code', '=', storeCode).where('outbound_attempts.delivery_id', '=', deliveryId)
    .orderBy('outbound_attempts.id').execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), duration_ms: Number(r.duration_ms), created_at: Number(r.created_at) }));
}

/** A store's failing deliveries (failingCondition) created since `since`, oldest first, after the keyset `after`: what recovery re-queues. */
export function failingSince(db: Db, storeCode: string, since: number, limit: number, after?: { createdAt: number; id: string }): Promise<Delivery[]> {
  let q = db.selectFrom('deliveries').selectAll().where('store_code', '=', storeCode).where(failingCondition).where('created_at', '>=', since);
  if (after) q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
  return q.orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** How many of a store's deliveries created since `since` are failing, by kind (an endpoint's webhooks apart); the overview's count. */
export async function countFailing(db: Db, storeCode: string, since: number): Promise<{ callback: number; webhook: number; endpoint: number }> {
  const rows = await db.selectFrom('deliveries')
    .select((eb) => ['kind', eb.fn.countAll<number>().as('n'), eb.fn.sum<number>(eb.case().when('endpoint_id', 'is not', null).then(1).else(0).end()).as('ep')])
    .where('store_code', '=', storeCode).where(failingCondition).where('created_at', '>=', since).groupBy('kind').execute();
  const out = { callback: 0, webhook: 0, endpoint: 0 };
  for (const r of rows) {
    out.endpoint += Number(r.ep ?? 0);
    out[r.kind] += Number(r.n) - Number(r.ep ?? 0);
  }
  return out;
}

/** Retention: drops attempts recorded before `before`; the deliveries stay. Returns how many went. */
export async function pruneAttempts(db: Db, before: number): Promise<number> {
  const r = await db.deleteFrom('outbound_attempts').where('created_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** pending → failed before its job's schedule ends (the endpoint answered 410 Gone, or is disabled). */
export async function failDelivery(db: Db, id: string, now: number): Promise<void> {
  await transitionDelivery(db, id, 'fail', now);
}
