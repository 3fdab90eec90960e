import { sql } from 'kysely';

/**
 * The console's search by what a customer can tell you (docs/console.md, "Search"), the parts
 * both the payments' and the invoices' queries use: the last four digits of a phone through the
 * expression indexes of migration 0014, and a part of a value among the tenant's newest rows.
 */

/** A part of a value is looked for among the tenant's newest rows only: this many (docs/console.md, "Search"). */
export const PARTIAL_WINDOW = 5000;
/** A part shorter than this is not looked for (one character matches nearly everything). */
export const PARTIAL_MIN = 2;

/**
 * The last four characters of a column, written exactly as the (tenant, last four, created_at)
 * indexes of migration 0014 write it, so both engines use them.
 */
export function lastFour(column: string) {
  return sql<string>`substr(${sql.ref(column)}, length(${sql.ref(column)}) - 3)`;
}

/** `%term%` for LIKE, lower-cased, with LIKE's own characters (\\ % _) escaped by a backslash. */
export function containsPattern(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The column, lower-cased, holds the pattern of containsPattern (the escape character said: SQLite has no default). */
export function contains(column: string, pattern: string) {
  return sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

