import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { StoreProcessorKeyTable, StoreProcessorTable } from '../db/schema.js';
import type { SecretBox } from '../platform/crypto.js';
import { PAY_METHODS, PUBLIC_KEY_FIELDS, SECRET_KEY_FIELDS, type CheckoutProcessorId, type PayMethod, type ProcessorKeys } from '../ports/checkout.js';

/**
 * The SQL of a store's processor settings (`store_processors`) and its keys per processor
 * (`store_processor_keys`: the public parts as JSON, the secrets as one sealed JSON). Every
 * query takes the store.
 */
type Db = Kysely<Database> | Transaction<Database>;
export type StoreProcessorRow = Selectable<StoreProcessorTable>;
export type StoreKeysRow = Selectable<StoreProcessorKeyTable>;

export async function storeProcessor(db: Db, storeCode: string): Promise<StoreProcessorRow | undefined> {
  return db.selectFrom('store_processors').selectAll().where('store_code', '=', storeCode).executeTakeFirst();
}

export async function storeKeys(db: Db, storeCode: string, processor: CheckoutProcessorId): Promise<StoreKeysRow | undefined> {
  return db.selectFrom('store_processor_keys').selectAll().where('store_code', '=', storeCode).where('processor', '=', processor).executeTakeFirst();
}

export async function allStoreKeys(db: Db, storeCode: string): Promise<StoreKeysRow[]> {
  return db.selectFrom('store_processor_keys').selectAll().where('store_code', '=', storeCode).orderBy('processor').execute();
}

/** Stores with settings of their own on a live processor (sunap doctor proves their keys), at most `limit`. */
export async function storesOnLiveProcessors(db: Db, limit: number): Promise<Pick<StoreProcessorRow, 'store_code' | 'processor' | 'way'>[]> {
  return db.selectFrom('store_processors').select(['store_code', 'processor', 'way']).where('processor', '!=', 'sandbox').orderBy('store_code').limit(limit).execute();
}

/** Methods as stored (a JSON array), in the one canonical order; anything unknown is dropped. */
export function parseMethods(json: string): PayMethod[] {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return [];
  }
  return Array.isArray(v) ? PAY_METHODS.filter((m) => v.includes(m)) : [];
}

export async function upsertStoreProcessor(db: Db, row: StoreProcessorRow): Promise<void> {
  await db.insertInto('store_processors').values(row)
    .onConflict((oc) => oc.column('store_code').doUpdateSet({ processor: row.processor, way: row.way, methods: row.methods, updated_at: row.updated_at })).execute();
}

export async function upsertStoreKeys(db: Db, row: StoreKeysRow): Promise<void> {
  await db.insertInto('store_processor_keys').values(row)
    .onConflict((oc) => oc.columns(['store_code', 'processor']).doUpdateSet({ public_keys: row.public_keys, secrets_sealed: row.secrets_sealed, updated_at: row.updated_at })).execute();
}

/** Back to the operator's configuration: the settings and every key of the store go. */
export async function deleteStoreSettings(db: Db, storeCode: string): Promise<void> {
  await db.deleteFrom('store_processors').where('store_code', '=', storeCode).execute();
  await db.deleteFrom('store_processor_keys').where('store_code', '=', storeCode).execute();
}

/** The keys of a row, the secrets opened (for an adapter only; never shown). */
export function openKeys(box: SecretBox, row: StoreKeysRow): ProcessorKeys {
  return { ...publicKeys(row), ...(JSON.parse(box.open(row.secrets_sealed)) as ProcessorKeys) };
}

/** The parts that may be shown again (a client key, a store id, a channel key). */
export function publicKeys(row: Pick<StoreKeysRow, 'public_keys'>): ProcessorKeys {
  const v = JSON.parse(row.public_keys) as Record<string, unknown>;
  const out: ProcessorKeys = {};
  for (const f of PUBLIC_KEY_FIELDS) if (typeof v[f] === 'string') out[f] = v[f];
  return out;
}

/** Which secrets a row holds, without opening them: the names only. */
export function secretNames(box: SecretBox, row: StoreKeysRow): (typeof SECRET_KEY_FIELDS)[number][] {
  const v = JSON.parse(box.open(row.secrets_sealed)) as Record<string, unknown>;
  return SECRET_KEY_FIELDS.filter((f) => typeof v[f] === 'string' && v[f] !== '');
}
