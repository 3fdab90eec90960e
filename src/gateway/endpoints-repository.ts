import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { WebhookEndpointTable } from '../db/schema.js';

/** SQL of a store's webhook endpoints; every query names the store, except the delivery job's own read. */
type Db = Kysely<Database> | Transaction<Database>;
export type Endpoint = WebhookEndpointTable;

export async function insertEndpoint(db: Db, e: Endpoint): Promise<void> {
  await db.insertInto('webhook_endpoints').values(e).execute();
}

export function endpointsOfStore(db: Db, storeCode: string): Promise<Endpoint[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('store_code', '=', storeCode).orderBy('created_at').orderBy('id').execute();
}

export function endpointOfStore(db: Db, storeCode: string, id: string): Promise<Endpoint | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('store_code', '=', storeCode).where('id', '=', id).executeTakeFirst();
}

/** For the endpoint delivery job, which holds the id. */
export function endpointById(db: Db, id: string): Promise<Endpoint | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

export function enabledEndpointsOfStore(db: Db, storeCode: string): Promise<Endpoint[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('store_code', '=', storeCode).where('enabled', '=', 1).execute();
}

/**
 * Changes the store's endpoint. Callers read the endpoint before and after, so one removed in
 * between answers 404 from that second read; nothing here needs to tell.
 */
export async function updateEndpoint(db: Db, storeCode: string, id: string, set: Partial<Omit<Endpoint, 'id' | 'store_code' | 'created_at'>>): Promise<void> {
  await db.updateTable('webhook_endpoints').set(set).where('store_code', '=', storeCode).where('id', '=', id).execute();
}

/**
 * A rotation's compare-and-set: the new secret goes in only while the secret it replaces is still
 * the current one. False when another rotation got there first.
 */
export async function rotateSecret(db: Db, storeCode: string, id: string, replaced: string, set: Pick<Endpoint, 'secret_sealed' | 'old_secret_until' | 'updated_at'>): Promise<boolean> {
  const r = await db.updateTable('webhook_endpoints').set({ ...set, old_secret_sealed: replaced })
    .where('store_code', '=', storeCode).where('id', '=', id).where('secret_sealed', '=', replaced).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deleteEndpoint(db: Db, storeCode: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('webhook_endpoints').where('store_code', '=', storeCode).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** After an attempt failed: start the failing streak if none runs; returns when it started. */
export async function noteFailure(db: Db, id: string, now: number): Promise<number> {
  await db.updateTable('webhook_endpoints').set({ failing_since: now }).where('id', '=', id).where('failing_since', 'is', null).execute();
  const row = await db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', id).executeTakeFirst();
  return Number(row?.failing_since ?? now);
}

export async function noteSuccess(db: Db, id: string): Promise<void> {
  await db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', id).where('failing_since', 'is not', null).execute();
}

export async function disableEndpoint(db: Db, id: string, reason: string, now: number): Promise<void> {
  await db.updateTable('webhook_endpoints').set({ enabled: 0, disabled_reason: reason, updated_at: now }).where('id', '=', id).where('enabled', '=', 1).execute();
}
