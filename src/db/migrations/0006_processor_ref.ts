import type { Kysely } from 'kysely';

/**
 * The card processor's own key of an approval (a Toss paymentKey), kept with the payment: a
 * live processor cancels by that key, not by the approval number. Null for sandbox approvals
 * and terminal payments, which need none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payments').addColumn('processor_ref', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payments').dropColumn('processor_ref').execute();
}
