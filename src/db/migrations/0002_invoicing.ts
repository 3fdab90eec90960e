import { sql, type Kysely } from 'kysely';
import { isPostgres, serialType } from './dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const serial = (c: any) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement());

  await db.schema.createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('store_code', 'text', (c) => c.notNull().references('stores.code'))
    .addColumn('invoicing_enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('auth_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('family_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull()) // ACCESS | REFRESH
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('rotated_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('auth_tokens_family').on('auth_tokens').column('family_id').execute();

  await db.schema.createTable('login_throttle')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_failure_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('wallets')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('balance', 'bigint', (c) => c.notNull().check(sql`balance >= 0`))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('ledger')
    .addColumn('id', serialType(db), serial)
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('delta', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull()) // GRANT | RESERVE | REFUND
    .addColumn('ref', 'text')
    .addColumn('memo', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // A reservation or refund happens once per cause (send id): retries cannot double it.
  await db.schema.createIndex('ledger_once').unique().on('ledger').columns(['account_id', 'kind', 'ref'])
    .where(sql.ref('ref'), 'is not', null).execute();

  await db.schema.createTable('invoices')
    .addColumn('id', serialType(db), serial)
    .addColumn('unique_id', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('store_code', 'text', (c) => c.notNull())
    .addColumn('trans_seqno', 'text', (c) => c.notNull().unique())
    .addColumn('payment_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull()) // PENDING | DONE | CANCELED
    .addColumn('send_status', 'text', (c) => c.notNull()) // WAITING | SENT | FAILED
    .addColumn('deleted_at', 'bigint')
    .addColumn('request_id', 'text')
    .addColumn('request_hash', 'text')
    .addColumn('template_type', 'text', (c) => c.notNull())
    .addColumn('receiver_name', 'text', (c) => c.notNull())
    .addColumn('receiver_phone', 'text', (c) => c.notNull())
    .addColumn('guardian_phone', 'text')
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount >= 100`))
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('items_json', 'text')
    .addColumn('send_channel', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret_sealed', 'text')
    .addColumn('bill_template_id', 'text')
    .addColumn('related_subject', 'text')
    .addColumn('etc', 'text')
    .addColumn('student_birth_date', 'text')
    .addColumn('classroom_id', 'text')
    .addColumn('send_count', 'integer', (c) => c.notNull())
    .addColumn('first_sent_at', 'bigint')
    .addColumn('last_sent_at', 'bigint')
    .addColumn('done_at', 'bigint')
    .addColumn('canceled_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('invoices_status', sql`status in ('PENDING','DONE','CANCELED')`)
    .addCheckConstraint('invoices_send_status', sql`send_status in ('WAITING','SENT','FAILED')`)
    .execute();
  // Invariant 4: one invoice per (account, requestId).
  await db.schema.createIndex('invoices_request').unique().on('invoices').columns(['account_id', 'request_id'])
    .where(sql.ref('request_id'), 'is not', null).execute();
  // The list: one account's invoices, newest first.
  await db.schema.createIndex('invoices_account_created').on('invoices').columns(['account_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('invoices_payment').on('invoices').column('payment_id').execute();

  await db.schema.createTable('sends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('invoice_id', 'bigint', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('send_type', 'text', (c) => c.notNull()) // INITIAL | RESEND
    .addColumn('status', 'text', (c) => c.notNull()) // WAITING | ACCEPTING | SUCCESS | FAILED
    .addColumn('channel_requested', 'text', (c) => c.notNull())
    .addColumn('channel_used', 'text')
    .addColumn('receiver_phone', 'text', (c) => c.notNull())
    .addColumn('cost_reserved', 'bigint', (c) => c.notNull())
    .addColumn('cost_settled', 'bigint')
    .addColumn('provider_message_id', 'text')
    .addColumn('delivery_status', 'text')
    .addColumn('error_message', 'text')
    .addColumn('sent_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sends_invoice').on('sends').column('invoice_id').execute();

  await db.schema.createTable('webhook_events')
    .addColumn('id', serialType(db), serial) // the X-Service-Delivery number
    .addColumn('invoice_id', 'bigint', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull()) // PENDING | DELIVERED | ABANDONED
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Invariant 7: bill.paid and bill.canceled exist once per invoice.
  await db.schema.createIndex('webhook_events_once').unique().on('webhook_events').columns(['invoice_id', 'event']).execute();

  // The sandbox messaging provider's own records: the outbox a developer reads.
  await db.schema.createTable('sandbox_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('idempotency_key', 'text', (c) => c.notNull().unique())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('to_phone', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('link', 'text')
    .addColumn('delivery_status', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sandbox_messages_to').on('sandbox_messages').columns(['to_phone', 'sent_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['sandbox_messages', 'webhook_events', 'sends', 'invoices', 'ledger', 'wallets', 'login_throttle', 'auth_tokens', 'accounts']) {
    await db.schema.dropTable(t).execute();
  }
}
