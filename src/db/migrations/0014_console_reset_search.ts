import { sql, type Kysely } from 'kysely';

/**
 * The console's way back in and its search by what a customer can tell you (docs/console.md,
 * "Getting back in" and "Search").
 *
 * `console_password_resets`: one-time links to choose a new password, made by a team's owner
 * or by the operator (`sunap account reset-password`). Only the SHA-256 of the link's token is
 * kept (the token is the credential); a link is used once (`used_at`, set by a conditional
 * update) and expires (`expires_at`); a newer link for the same member revokes the older ones.
 *
 * The last four digits of a phone: an index on the expression `substr(phone, length(phone) - 3)`
 * (the same text on both engines) under the tenant, so "5678" finds a customer without reading
 * the store's other payments or invoices. The queries use the very same expression
 * (src/gateway/console-repository.ts, src/invoicing/console-repository.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('console_password_resets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('console_password_resets_account').on('console_password_resets').columns(['account_id', 'created_at']).execute();

  await sql`create index payments_store_phone_last4 on payments (platform_code, store_code, (substr(mobile_no, length(mobile_no) - 3)), created_at)`.execute(db);
  await sql`create index invoices_account_phone_last4 on invoices (account_id, (substr(receiver_phone, length(receiver_phone) - 3)), created_at)`.execute(db);
  await sql`create index invoices_account_guardian_last4 on invoices (account_id, (substr(guardian_phone, length(guardian_phone) - 3)), created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const i of ['payments_store_phone_last4', 'invoices_account_phone_last4', 'invoices_account_guardian_last4']) await db.schema.dropIndex(i).execute();
  await db.schema.dropTable('console_password_resets').execute();
}
