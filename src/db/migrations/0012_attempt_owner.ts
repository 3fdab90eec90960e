import type { Kysely } from 'kysely';

/**
 * The process that holds an attempt (docs/reliability.md, "An attempt left by a dead process"):
 * `owner` names the host, the process id and a random part of the process that opened or
 * claimed the attempt. A restarted server on the same host sees that the process is gone and
 * settles the attempt at once, instead of waiting until it is stale. Attempts written before
 * this migration have none and are settled once stale, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payment_attempts').addColumn('owner', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payment_attempts').dropColumn('owner').execute();
}
