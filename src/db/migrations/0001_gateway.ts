import { sql, type Kysely } from 'kysely';
import { isPostgres, serialType } from './dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);

  await db.schema.createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema.createTable('platforms')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('platform_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_code', 'text', (c) => c.notNull().references('platforms.code'))
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('platform_keys_platform').on('platform_keys').column('platform_code').execute();

  await db.schema.createTable('stores')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('platform_code', 'text', (c) => c.notNull().references('platforms.code'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('ceo_name', 'text', (c) => c.notNull())
    .addColumn('biz_reg_num', 'text', (c) => c.notNull())
    .addColumn('tel', 'text', (c) => c.notNull())
    .addColumn('cat_enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('payments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_code', 'text', (c) => c.notNull())
    .addColumn('store_code', 'text', (c) => c.notNull().references('stores.code'))
    .addColumn('trans_seqno', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('supply_amount', 'bigint', (c) => c.notNull())
    .addColumn('tax_charge', 'bigint', (c) => c.notNull())
    .addColumn('tax_free_amount', 'bigint', (c) => c.notNull())
    .addColumn('mobile_no', 'text', (c) => c.notNull())
    .addColumn('pay_user_name', 'text', (c) => c.notNull())
    .addColumn('request_reason', 'text', (c) => c.notNull())
    .addColumn('info_message', 'text')
    .addColumn('confirm_url', 'text')
    .addColumn('return_display_yn', 'text', (c) => c.notNull())
    .addColumn('return_url', 'text')
    .addColumn('temp_value', 'text')
    .addColumn('user_id', 'text')
    .addColumn('order_type', 'text', (c) => c.notNull())
    .addColumn('items_json', 'text')
    .addColumn('pay_path', 'text', (c) => c.notNull())
    .addColumn('approval_number', 'text')
    .addColumn('approval_at', 'bigint')
    .addColumn('installment_month', 'text')
    .addColumn('issuer_name', 'text')
    .addColumn('accepter_name', 'text')
    .addColumn('method_name', 'text')
    .addColumn('card_bin', 'text')
    .addColumn('card_last4', 'text')
    .addColumn('cancel_at', 'bigint')
    .addColumn('cancel_reason', 'text', (c) => c.notNull())
    .addColumn('cancel_amount', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('payments_state', sql`state in ('STORE_REQUEST','APPROVE_COMPLETE','CANCEL_COMPLETE','CANCEL_FAIL','STORE_DELETE')`)
    .execute();
  // Invariant 1: one payment per (platform, store, TRANS_SEQNO).
  await db.schema.createIndex('payments_seqno').unique().on('payments').columns(['platform_code', 'store_code', 'trans_seqno']).execute();
  await db.schema.createIndex('payments_state').on('payments').column('state').execute();

  await db.schema.createTable('payment_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('payment_id', 'text', (c) => c.notNull().references('payments.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('card_bin', 'text')
    .addColumn('card_last4', 'text')
    .addColumn('issuer_name', 'text')
    .addColumn('installment_month', 'text')
    .addColumn('message', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('closed_at', 'bigint')
    .execute();
  // Invariant 2: at most one open attempt per payment, whatever its kind.
  await db.schema.createIndex('payment_attempts_open').unique().on('payment_attempts').column('payment_id')
    .where(sql.ref('status'), '=', 'OPEN').execute();
  await db.schema.createIndex('payment_attempts_payment').on('payment_attempts').column('payment_id').execute();

  await db.schema.createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('unique_key', 'text', (c) => c.unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_due').on('jobs').columns(['status', 'run_at']).execute();

  await db.schema.createTable('outbound_attempts')
    .addColumn('id', serialType(db), (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('ref_id', 'text', (c) => c.notNull())
    .addColumn('attempt_no', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('outbound_attempts_ref').on('outbound_attempts').columns(['target', 'ref_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['outbound_attempts', 'jobs', 'payment_attempts', 'payments', 'stores', 'platform_keys', 'platforms', 'settings']) {
    await db.schema.dropTable(t).execute();
  }
}
