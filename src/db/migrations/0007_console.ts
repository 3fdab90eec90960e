import { sql, type Kysely } from 'kysely';
import { isPostgres, serialType } from './dialect.js';

/**
 * The merchant console (docs/console.md): teams on the invoicing accounts, sessions in the
 * database, invites, the audit log, invoice templates, points recharges, and the indexes that
 * keep the console's lists and searches fast as a store's payments and invoices grow.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const serial = (c: any) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement());

  // A team: every account works on the invoices, wallet and templates of its tenant (the
  // account of the team's first owner; itself for that owner). Existing accounts are owners
  // of their own team.
  await db.schema.alterTable('accounts').addColumn('role', 'text', (c) => c.notNull().defaultTo('owner')).execute();
  await db.schema.alterTable('accounts').addColumn('tenant_id', 'text').execute();
  await sql`update accounts set tenant_id = id`.execute(db);
  await db.schema.createIndex('accounts_tenant').on('accounts').column('tenant_id').execute();

  // Console sign-ins: the cookie holds a random token, the row its SHA-256 (the id).
  await db.schema.createTable('console_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_account').on('console_sessions').columns(['account_id', 'created_at']).execute();

  await db.schema.createTable('console_invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('console_invites_tenant').on('console_invites').columns(['tenant_id', 'created_at']).execute();

  // Who did what, when and from where; actor email kept as text so it outlives a removed member.
  await db.schema.createTable('audit_log')
    .addColumn('id', serialType(db), serial)
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_email', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('detail', 'text')
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_tenant').on('audit_log').columns(['tenant_id', 'id']).execute();

  await db.schema.createTable('bill_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('amount', 'bigint')
    .addColumn('items_json', 'text')
    .addColumn('send_channel', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('bill_templates_account').on('bill_templates').columns(['account_id', 'created_at']).execute();

  // Points bought by card: credited once, by the approval of its payment (a RECHARGE ledger row
  // whose ref is the recharge id, unique through ledger_once).
  await db.schema.createTable('recharges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('points', 'bigint', (c) => c.notNull().check(sql`points > 0`))
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('store_code', 'text')
    .addColumn('payment_id', 'text', (c) => c.unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('credited_at', 'bigint')
    .addCheckConstraint('recharges_status', sql`status in ('PENDING','CREDITED')`)
    .execute();
  await db.schema.createIndex('recharges_account').on('recharges').columns(['account_id', 'created_at']).execute();

  // The console's payment list (newest first, keyset) and its one search box: each searched
  // column is matched whole within the store, through its own index.
  await db.schema.createIndex('payments_store_created').on('payments').columns(['platform_code', 'store_code', 'created_at', 'id']).execute();
  for (const col of ['mobile_no', 'pay_user_name', 'approval_number', 'card_last4']) {
    await db.schema.createIndex(`payments_store_${col}`).on('payments').columns(['platform_code', 'store_code', col, 'created_at', 'id']).execute();
  }
  // Sales by day (overview): approvals and cancels of a store over a time range.
  await db.schema.createIndex('payments_store_approval').on('payments').columns(['store_code', 'approval_at']).execute();
  await db.schema.createIndex('payments_store_cancel').on('payments').columns(['store_code', 'cancel_at']).execute();

  // The console's invoice search: name, phone, guardian phone, reason, requestId (whole values).
  for (const col of ['receiver_name', 'receiver_phone', 'guardian_phone', 'reason']) {
    await db.schema.createIndex(`invoices_account_${col}`).on('invoices').columns(['account_id', col, 'created_at', 'id']).execute();
  }
  // The points ledger, newest first.
  await db.schema.createIndex('ledger_account').on('ledger').columns(['account_id', 'id']).execute();
  // Webhook events of an invoice (its detail page).
  await db.schema.createIndex('webhook_events_invoice').on('webhook_events').columns(['invoice_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const i of ['webhook_events_invoice', 'ledger_account', 'invoices_account_receiver_name', 'invoices_account_receiver_phone',
    'invoices_account_guardian_phone', 'invoices_account_reason', 'payments_store_cancel', 'payments_store_approval',
    'payments_store_mobile_no', 'payments_store_pay_user_name', 'payments_store_approval_number', 'payments_store_card_last4',
    'payments_store_created', 'accounts_tenant']) {
    await db.schema.dropIndex(i).execute();
  }
  for (const t of ['recharges', 'bill_templates', 'audit_log', 'console_invites', 'console_sessions']) await db.schema.dropTable(t).execute();
  await db.schema.alterTable('accounts').dropColumn('tenant_id').execute();
  await db.schema.alterTable('accounts').dropColumn('role').execute();
}
