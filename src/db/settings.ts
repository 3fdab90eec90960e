import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The settings table: small values every instance shares (today the sandbox clock's offset). */
export async function readSetting(db: Kysely<Database>, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

/**
 * Sets a numeric setting to `next(current)` in one write transaction (current 0 when unset),
 * so concurrent changes from several instances apply one after the other.
 */
export async function updateNumericSetting(db: Kysely<Database>, key: string, next: (current: number) => number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // A write first takes the row's lock on PostgreSQL (SQLite's write transaction holds the
    // whole file already), so two read-modify-writes never both read the old value.
    await trx.updateTable('settings').set((eb) => ({ value: eb.ref('value') })).where('key', '=', key).execute();
    const row = await trx.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    const value = next(row ? Number(row.value) : 0);
    if (row) await trx.updateTable('settings').set({ value: String(value) }).where('key', '=', key).execute();
    else await trx.insertInto('settings').values({ key, value: String(value) }).onConflict((oc) => oc.column('key').doUpdateSet({ value: String(value) })).execute();
    return value;
  });
}

/** True when the database answers (readiness). */
export async function ping(db: Kysely<Database>): Promise<void> {
  await db.selectFrom('settings').select('key').limit(1).execute();
}
