import type { Kysely } from 'kysely';

/**
 * Sign-in throttles that hold under concurrency (docs/security.md, "Sign-in throttling"): one
 * row per key (`email:<address>` for the per-email lockout, `addr:<ip>` for the per-address
 * limit), bumped by one atomic upsert BEFORE the password hash runs, so simultaneous guesses
 * each take their own slot instead of overwriting one another's count. It replaces
 * `login_throttle`, whose read-then-write counter lost failures under a burst; the rows it
 * held are only lockouts in progress, so nothing is carried over. `last_attempt_at` is indexed
 * for the purge job (`invoicing.throttle-purge`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('sign_in_throttles')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .addColumn('last_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('next_allowed_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_throttles_last_attempt').on('sign_in_throttles').column('last_attempt_at').execute();
  await db.schema.dropTable('login_throttle').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('login_throttle')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_failure_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.dropTable('sign_in_throttles').execute();
}
