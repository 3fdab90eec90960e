import type { Kysely } from 'kysely';

/**
 * The sandbox card network's own records of what it approved under each idempotency key, so
 * that a repeated request and a crash-recovery lookup get the first answer (as a real
 * processor's would), across restarts and instances.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('sandbox_card_charges')
    .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sandbox_card_charges').execute();
}
