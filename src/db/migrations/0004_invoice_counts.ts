import { sql, type Kysely } from 'kysely';

/**
 * How many live (not deleted) invoices each account has, so the invoice list reads its
 * totalCount from one primary-key row instead of counting the account's invoices on every
 * page. The invoice code keeps it in the transactions that insert and soft-delete invoices.
 *
 * A table of its own rather than a column of `accounts`: every authenticated request reads the
 * accounts row (token lookup and account load), and this counter is written by every create
 * and delete; on PostgreSQL each write leaves a dead version of the row it changes, so the
 * churn stays on this narrow table. It also keeps the counter out of the account object the
 * app passes around (where it would be a stale copy), and an account needs no row here until
 * its first invoice: the create upserts it, and a missing row reads as 0.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('invoice_counts')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('live_invoices', 'integer', (c) => c.notNull().defaultTo(0).check(sql`live_invoices >= 0`))
    .execute();
  // Backfill: one row per existing account, counted from its invoices as they are now.
  await sql`
    insert into invoice_counts (account_id, live_invoices)
    select a.id, (select count(*) from invoices i where i.account_id = a.id and i.deleted_at is null)
    from accounts a
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('invoice_counts').execute();
}
