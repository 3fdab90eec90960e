import { sql, type Kysely } from 'kysely';

/**
 * Deliveries (docs/reference.md, "Deliveries"): every callback and webhook a store is owed, with
 * the request as sent and its status, so a merchant can see, replay and recover them. The
 * attempts stay in `outbound_attempts` (one row per POST since 0001), which gains the delivery
 * it belongs to, what triggered it and the start of the receiver's answer. Jobs gain the store
 * they work for, so the queue can share its slots fairly between stores.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // A store's own webhook endpoints (besides an invoice's webhookUrl), signed the Standard
  // Webhooks way. After a rotation the old secret keeps signing until old_secret_until.
  await db.schema.createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_code', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('old_secret_sealed', 'text')
    .addColumn('old_secret_until', 'bigint')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    // Since when every attempt failed (null after any success): 3 days of it disable the endpoint.
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_store').on('webhook_endpoints').columns(['store_code', 'created_at']).execute();

  await db.schema.createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_code', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    // What the receiver deduplicates by: X-Service-Delivery for a webhook, TRANS_SEQNO for a callback.
    .addColumn('number', 'text', (c) => c.notNull())
    // The payment (callback) or webhook event (webhook) the delivery is for.
    .addColumn('ref_id', 'text', (c) => c.notNull())
    .addColumn('trans_seqno', 'text')
    .addColumn('bill_id', 'text')
    .addColumn('event', 'text')
    // A store endpoint's delivery (null: a callback, or an invoice's webhookUrl).
    .addColumn('endpoint_id', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('request_headers', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('deliveries_kind', sql`kind in ('callback','webhook')`)
    .addCheckConstraint('deliveries_status', sql`status in ('pending','delivered','failed')`)
    .execute();
  await db.schema.createIndex('deliveries_once').unique().on('deliveries').columns(['kind', 'ref_id']).execute();
  // The list (newest first, keyset) and its filters; recovery's "failed since".
  await db.schema.createIndex('deliveries_store').on('deliveries').columns(['store_code', 'created_at', 'id']).execute();
  await db.schema.createIndex('deliveries_store_status').on('deliveries').columns(['store_code', 'status', 'created_at']).execute();

  await db.schema.alterTable('outbound_attempts').addColumn('delivery_id', 'text').execute();
  await db.schema.alterTable('outbound_attempts').addColumn('trigger', 'text', (c) => c.notNull().defaultTo('scheduled')).execute();
  await db.schema.alterTable('outbound_attempts').addColumn('response_body', 'text').execute();
  await db.schema.createIndex('outbound_attempts_delivery').on('outbound_attempts').columns(['delivery_id', 'id']).execute();
  await db.schema.createIndex('outbound_attempts_created').on('outbound_attempts').column('created_at').execute();

  // The store a job works for (null: not a store's work): the claim limits running jobs per store.
  await db.schema.alterTable('jobs').addColumn('store_code', 'text').execute();
  await db.schema.createIndex('jobs_store_running').on('jobs').columns(['store_code', 'status', 'lease_until']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_store_running').execute();
  await db.schema.alterTable('jobs').dropColumn('store_code').execute();
  await db.schema.dropIndex('outbound_attempts_created').execute();
  await db.schema.dropIndex('outbound_attempts_delivery').execute();
  for (const c of ['response_body', 'trigger', 'delivery_id']) await db.schema.alterTable('outbound_attempts').dropColumn(c).execute();
  await db.schema.dropTable('deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
