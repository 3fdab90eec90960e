import { sql, type Kysely } from 'kysely';

/**
 * Checkout (docs/architecture.md, "The checkout port"): the processor's own payment window,
 * easy pays, transfers and virtual accounts, chosen per store.
 *
 * - Every payment records the processor and the way that took it (`processor`: sandbox,
 *   sandbox-keyin, toss, toss-keyin, portone; `processor_order`: the order id the processor
 *   knows it by; `method`), so a cancel or a look-up goes to that processor whatever the
 *   configuration says later. Payments approved before this migration were key-in approvals:
 *   Toss's when it gave a paymentKey (processor_ref), the sandbox card network's otherwise.
 * - A virtual account waiting for its deposit is kept on the payment (`vbank_*`), its secret
 *   (a processor's proof on the deposit notice) sealed under the master key.
 * - Attempts record the processor and method they went to, the key the window returned
 *   (`processor_ref`), and for a cancel of a paid virtual account the refund account, sealed,
 *   only while the attempt is open (`refund_sealed`, cleared when it closes).
 * - A store's processor settings (`store_processors`) and keys per processor
 *   (`store_processor_keys`, secrets sealed); without a row the operator's configuration applies.
 * - Every notice a processor posted (`processor_events`), once per (processor, key).
 * - The sandbox's window and its orders (`sandbox_checkouts`), as a processor keeps them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const c of ['processor', 'processor_order', 'method', 'vbank_secret_sealed']) await db.schema.alterTable('payments').addColumn(c, 'text').execute();
  for (const c of ['vbank_code', 'vbank_name', 'vbank_account', 'vbank_holder']) {
    await db.schema.alterTable('payments').addColumn(c, 'text', (col) => col.notNull().defaultTo('')).execute();
  }
  await db.schema.alterTable('payments').addColumn('vbank_due_at', 'bigint').execute();
  await sql`update payments set method = 'CARD' where approval_at is not null`.execute(db);
  await sql`update payments set processor = case when processor_ref is not null then 'toss-keyin' else 'sandbox-keyin' end,
    processor_order = (select a.id from payment_attempts a where a.payment_id = payments.id and a.kind = 'APPROVE' and a.status = 'APPROVED' order by a.created_at limit 1)
    where approval_at is not null and pay_path in ('WEB', 'EPAY')`.execute(db);

  for (const c of ['processor', 'method', 'processor_ref', 'refund_sealed']) await db.schema.alterTable('payment_attempts').addColumn(c, 'text').execute();
  // The sweep finds windows nobody came back from.
  await db.schema.createIndex('payment_attempts_status').on('payment_attempts').columns(['status', 'created_at']).execute();

  await db.schema.createTable('store_processors')
    .addColumn('store_code', 'text', (c) => c.primaryKey())
    .addColumn('processor', 'text', (c) => c.notNull())
    .addColumn('way', 'text', (c) => c.notNull())
    // JSON array of the methods the page offers.
    .addColumn('methods', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('store_processors_processor', sql`processor in ('sandbox','toss','portone')`)
    .addCheckConstraint('store_processors_way', sql`way in ('checkout','key-in')`)
    .execute();

  await db.schema.createTable('store_processor_keys')
    .addColumn('store_code', 'text', (c) => c.notNull())
    .addColumn('processor', 'text', (c) => c.notNull())
    // JSON of the parts that are not secret (a client key, a store id, a channel key).
    .addColumn('public_keys', 'text', (c) => c.notNull())
    // The sealed JSON of the secrets (a secret key, an API secret, a webhook secret).
    .addColumn('secrets_sealed', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('store_processor_keys_pk', ['store_code', 'processor'])
    .execute();

  await db.schema.createTable('processor_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('processor', 'text', (c) => c.notNull())
    .addColumn('store_code', 'text')
    // The processor's id of the notice, or the SHA-256 of its body.
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text')
    .addColumn('payment_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('processor_events_outcome', sql`outcome in ('RECEIVED','APPLIED','IGNORED','REFUSED','FAILED')`)
    .execute();
  await db.schema.createIndex('processor_events_once').unique().on('processor_events').columns(['processor', 'event_key']).execute();
  await db.schema.createIndex('processor_events_payment').on('processor_events').columns(['payment_id', 'received_at']).execute();

  await db.schema.createTable('sandbox_checkouts')
    .addColumn('order_id', 'text', (c) => c.primaryKey())
    .addColumn('payment_key', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    // JSON: what the window was opened with and what the customer chose (never a card number).
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sandbox_checkouts').execute();
  await db.schema.dropTable('processor_events').execute();
  await db.schema.dropTable('store_processor_keys').execute();
  await db.schema.dropTable('store_processors').execute();
  await db.schema.dropIndex('payment_attempts_status').execute();
  for (const c of ['processor', 'method', 'processor_ref', 'refund_sealed']) await db.schema.alterTable('payment_attempts').dropColumn(c).execute();
  for (const c of ['processor', 'processor_order', 'method', 'vbank_secret_sealed', 'vbank_code', 'vbank_name', 'vbank_account', 'vbank_holder', 'vbank_due_at']) {
    await db.schema.alterTable('payments').dropColumn(c).execute();
  }
}
