import { sql, type Kysely } from 'kysely';

/**
 * The name's last-2 indexes of migration 0019 and the phone's last-4 indexes of 0014 again, with
 * `id` at the end: the console's lists are
 * ordered by (created_at, id), and without `id` SQLite's planner preferred walking the store's
 * whole (created_at, id) index to sorting the matches, which read 100,000 payments to find a given
 * name (measured: 69 ms against a few). With it, the index gives the list's own order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('payments_store_name_last2').execute();
  await db.schema.dropIndex('invoices_account_name_last2').execute();
  await sql`create index payments_store_name_last2 on payments (platform_code, store_code, (substr(pay_user_name, length(pay_user_name) - 1)), created_at, id)`.execute(db);
  await sql`create index invoices_account_name_last2 on invoices (account_id, (substr(receiver_name, length(receiver_name) - 1)), created_at, id)`.execute(db);
  for (const i of ['payments_store_phone_last4', 'invoices_account_phone_last4', 'invoices_account_guardian_last4']) await db.schema.dropIndex(i).execute();
  await sql`create index payments_store_phone_last4 on payments (platform_code, store_code, (substr(mobile_no, length(mobile_no) - 3)), created_at, id)`.execute(db);
  await sql`create index invoices_account_phone_last4 on invoices (account_id, (substr(receiver_phone, length(receiver_phone) - 3)), created_at, id)`.execute(db);
  await sql`create index invoices_account_guardian_last4 on invoices (account_id, (substr(guardian_phone, length(guardian_phone) - 3)), created_at, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('payments_store_name_last2').execute();
  await db.schema.dropIndex('invoices_account_name_last2').execute();
  await sql`create index payments_store_name_last2 on payments (platform_code, store_code, (substr(pay_user_name, length(pay_user_name) - 1)), created_at)`.execute(db);
  await sql`create index invoices_account_name_last2 on invoices (account_id, (substr(receiver_name, length(receiver_name) - 1)), created_at)`.execute(db);
  for (const i of ['payments_store_phone_last4', 'invoices_account_phone_last4', 'invoices_account_guardian_last4']) await db.schema.dropIndex(i).execute();
  await sql`create index payments_store_phone_last4 on payments (platform_code, store_code, (substr(mobile_no, length(mobile_no) - 3)), created_at)`.execute(db);
  await sql`create index invoices_account_phone_last4 on invoices (account_id, (substr(receiver_phone, length(receiver_phone) - 3)), created_at)`.execute(db);
  await sql`create index invoices_account_guardian_last4 on invoices (account_id, (substr(guardian_phone, length(guardian_phone) - 3)), created_at)`.execute(db);
}
