import { PostgresAdapter, type Kysely } from 'kysely';

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Column type of an auto-numbered primary key. */
export function serialType(db: Kysely<unknown>) {
  return isPostgres(db) ? ('bigserial' as const) : ('integer' as const);
}
