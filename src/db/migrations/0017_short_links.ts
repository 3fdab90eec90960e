import type { Kysely } from 'kysely';

/**
 * Short payment links (docs/invoicing.md, "SMS or LMS"): `/s/<code>` redirects to a payment's
 * page, so an SMS invoice can fit 90 bytes. The code is random (12 characters of [0-9A-Za-z],
 * about 71 bits) and says nothing about the payment or its tenant; the row is the only link
 * between them. One link per payment (`payment_id` unique), made when its first message goes
 * out; `store_code` records the tenant the link belongs to.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('short_links')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('store_code', 'text', (c) => c.notNull())
    .addColumn('payment_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('short_links').execute();
}
