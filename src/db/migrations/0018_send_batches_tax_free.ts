import { sql, type Kysely } from 'kysely';

/**
 * One points line per send, and an invoice's tax-free part (docs/console.md, "Points";
 * docs/invoicing.md, "Tax-free amounts").
 *
 * `ledger.batch`: the send that reserved a row's points. Every RESERVE row written by one
 * creation, resend or reminder shares one batch id, so the console shows a class send of 30 as
 * one line ("청구서 30건 발송 −300P") expandable to its 30 rows; REFUND, GRANT and RECHARGE rows
 * have none and stay lines of their own. Rows reserved before this migration are grouped by
 * what one send always shared: its account (the query's tenant), its millisecond and its
 * memo (INITIAL or RESEND). An index serves the lines of the batches on one page.
 *
 * `invoices.tax_free_amount`: the part of the amount that is VAT-exempt (0 = all taxed, the
 * amount = all tax-free); the invoice's payment carries it to the processor's window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('batch', 'text').execute();
  await sql`update ledger set batch = 'legacy:' || cast(created_at as text) || ':' || coalesce(memo, '') where kind = 'RESERVE'`.execute(db);
  await db.schema.createIndex('ledger_account_batch').on('ledger').columns(['account_id', 'batch']).execute();
  await db.schema.alterTable('invoices').addColumn('tax_free_amount', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('ledger_account_batch').execute();
  await db.schema.alterTable('ledger').dropColumn('batch').execute();
  await db.schema.alterTable('invoices').dropColumn('tax_free_amount').execute();
}
