import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/**
 * The console's search by what a customer can tell you (docs/console.md, "Search"), the parts
 * both the payments' and the invoices' queries use: the last four digits of a phone and the last
 * two characters of a name through the expression indexes of migrations 0014, 0019 and 0020, and a part
 * of a value through the engines' own trigram indexes (migration 0019: PostgreSQL's pg_trgm,
 * SQLite's FTS5 with the trigram tokenizer).
 *
 * How a part is looked for, by its length:
 * - 1 character: not at all (it matches nearly everything);
 * - 2 characters: among the tenant's newest PARTIAL_WINDOW rows (a trigram index has nothing to
 *   offer a part shorter than a trigram), and, at any age, as the last two characters of a name
 *   (a Korean given name: 영희 finds 김영희);
 * - 3 characters or more: at any age. The tenant's newest DENSE_WINDOW rows are read first, newest
 *   first, stopping at a full page, so a part that most rows hold (수강료) costs a page; only when
 *   they do not fill the page is the text index asked for the older rows.
 * - a number of any length (digits, dashes, spaces: 7335123, 1234-56) as a 2-character part: a
 *   whole phone, approval number or TRANS_SEQNO and the last 4 have their own indexes.
 */

/**
 * A part of 2 characters (or a number) is looked for among the tenant's newest rows only: this
 * many, as many as a store of 1,000 holds, so that reading them costs the same at 100,000 rows
 * (5,000 cost 5 times as much: BENCHMARKS.md, "The console's lists").
 */
export const PARTIAL_WINDOW = 1000;
/** A part shorter than this is not looked for (one character matches nearly everything). */
export const PARTIAL_MIN = 2;
/** A part this long or longer goes through the text index (a trigram: three characters). */
export const TRIGRAM_MIN = 3;
/** Newest rows read, newest first, before the text index is asked (a common part fills the page here). */
export const DENSE_WINDOW = 1000;

/** The searched columns of each table, in the order migration 0019 indexes them. */
export const TEXT_COLUMNS = {
  payments: ['pay_user_name', 'trans_seqno', 'request_reason', 'approval_number', 'mobile_no'],
  invoices: ['receiver_name', 'reason', 'trans_seqno', 'request_id', 'receiver_phone', 'guardian_phone'],
} as const;
export type TextTable = keyof typeof TEXT_COLUMNS;

/** Whether the handle (or transaction) talks to PostgreSQL. */
export function onPostgres(db: Kysely<never> | Kysely<unknown> | { getExecutor(): { adapter: unknown } }): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * The last four characters of a column, written exactly as the (tenant, last four, created_at)
 * indexes of migration 0014 write it, so both engines use them.
 */
export function lastFour(column: string) {
  return sql<string>`substr(${sql.ref(column)}, length(${sql.ref(column)}) - 3)`;
}

/** The last two characters of a column (a Korean given name), as migration 0019's name indexes write it. */
export function lastTwo(column: string) {
  return sql<string>`substr(${sql.ref(column)}, length(${sql.ref(column)}) - 1)`;
}

/** `%term%` for LIKE, lower-cased, with LIKE's own characters (\\ % _) escaped by a backslash. */
export function containsPattern(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The column, lower-cased, holds the pattern of containsPattern (the escape character said: SQLite has no default). */
export function contains(column: string, pattern: string) {
  return sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

/**
 * What a search term is looked for as: the term itself and, when it is a number written with
 * dashes or spaces (1234-56), its digits. Control characters are dropped (the unit separator
 * joins the columns in PostgreSQL's index).
 */
export function partsOf(term: string): string[] {
  const t = term.replace(/\p{Cc}/gu, '');
  const digits = t.replace(/[\s-]/g, '');
  return /^\d{2,}$/.test(digits) && digits !== t ? [t, digits] : [t];
}

/**
 * A row's searched columns hold one of the parts, read row by row (no index): for the newest
 * rows, which a walk of the tenant's (created_at) index reaches first.
 */
export function textHolds(table: TextTable, parts: string[]) {
  const conds = parts.flatMap((p) => TEXT_COLUMNS[table].map((c) => contains(c, containsPattern(p))));
  return sql<boolean>`(${sql.join(conds, sql` or `)})`;
}

/** The searched columns as one text, written exactly as migration 0019's pg_trgm index writes it. */
function joinedText(table: TextTable): RawBuilder<string> {
  return sql.raw<string>(`(${TEXT_COLUMNS[table].map((c) => `coalesce(${c}, '')`).join(' || chr(31) || ')})`);
}

/** An FTS5 query for the parts: each a quoted string (a substring, through its trigrams), any of them. */
export function ftsQuery(parts: string[]): string {
  return parts.map((p) => `"${p.replace(/"/g, '""')}"`).join(' OR ');
}

/**
 * A row's searched columns hold one of the parts (each TRIGRAM_MIN characters or more), through
 * the table's text index: pg_trgm's GIN index serves ILIKE on the joined text; on SQLite, the
 * FTS5 table's rowids that match. The tenant is filtered by the caller's query, on the row.
 */
export function textIndexed(db: { getExecutor(): { adapter: unknown } }, table: TextTable, parts: string[]) {
  const long = parts.filter((p) => [...p].length >= TRIGRAM_MIN);
  if (long.length === 0) return sql<boolean>`1 = 0`;
  if (onPostgres(db)) {
    const text = joinedText(table);
    return sql<boolean>`(${sql.join(long.map((p) => sql`${text} ilike ${containsPattern(p)}`), sql` or `)})`;
  }
  const fts = sql.table(`${table}_text`);
  return sql<boolean>`${sql.ref(`${table}.rowid`)} in (select rowid from ${fts} where ${fts} match ${ftsQuery(long)})`;
}

/** What searchParts needs of a list's query: its page with one more condition, and the tenant's newest rows. */
export interface PartQuery<R> {
  /** The list's page (tenant, filters, cursor, order, limit) with the condition, within [from, before) of created_at. */
  page(cond: RawBuilder<boolean>, range: { from?: number; before?: number }): Promise<R[]>;
  /** The created_at of the tenant's n-th newest row, or 0 when it has fewer than n. */
  nthNewest(n: number): Promise<number>;
}

/**
 * The rows a part of a value finds (see the top of this file), as lists for the caller to merge
 * with its other searches: nothing under PARTIAL_MIN characters; the newest PARTIAL_WINDOW rows
 * for a part under TRIGRAM_MIN; for a longer part, the newest DENSE_WINDOW rows and, when they
 * do not fill the page, the older rows through the text index.
 */
export async function searchParts<R>(db: { getExecutor(): { adapter: unknown } }, table: TextTable, term: string, limit: number, q: PartQuery<R>): Promise<R[][]> {
  const parts = partsOf(term);
  const length = [...parts[0]!].length;
  if (length < PARTIAL_MIN) return [];
  // A number (digits, dashes, spaces) is left to the whole-value and last-4 indexes and the window:
  // digit trigrams (010, 000, 123) are held by nearly every phone and approval number, so the
  // text index would read most of its entries for any number.
  if (length < TRIGRAM_MIN || /^[\d\s-]+$/.test(parts[0]!)) return [await q.page(textHolds(table, parts), { from: await q.nthNewest(PARTIAL_WINDOW) })];
  const since = await q.nthNewest(DENSE_WINDOW);
  const recent = await q.page(textHolds(table, parts), { from: since });
  // The window held every row of the tenant, or a full page of the newest matches: nothing older can be on this page.
  if (since === 0 || recent.length >= limit) return [recent];
  return [recent, await q.page(textIndexed(db, table, parts), { before: since })];
}

/** Ids compared as numbers when both are (an invoice's id: a number on SQLite, a bigint's text on PostgreSQL), else as text. */
function compareIds(x: string | number, y: string | number): number {
  const a = Number(x);
  const b = Number(y);
  if (Number.isSafeInteger(a) && Number.isSafeInteger(b)) return a - b;
  return String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
}

/** Rows of several searches as one page: each once, newest first (created_at, then id), at most `limit`. */
export function newestFirst<R extends { id: string | number; created_at: number | string }>(rows: R[], limit: number): R[] {
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(String(r.id)) && seen.add(String(r.id)))
    .sort((x, y) => Number(y.created_at) - Number(x.created_at) || compareIds(y.id, x.id))
    .slice(0, limit);
}

/**
 * Whether the text indexes of migration 0019 are in place (`sunap doctor`'s "text search" line):
 * on PostgreSQL, the pg_trgm extension, its two GIN indexes, and trigrams made of Korean (a
 * database whose LC_CTYPE is C counts no Korean letter, so pg_trgm makes none and a Korean part is
 * looked for row by row); on SQLite, the two FTS5 tables.
 */
export async function textSearchCheck(db: Kysely<unknown>): Promise<{ status: 'ok' | 'warn' | 'fail'; detail: string }> {
  if (onPostgres(db)) {
    const ext = await sql<{ v: string }>`select extversion as v from pg_extension where extname = 'pg_trgm'`.execute(db);
    const idx = await sql<{ n: number }>`select count(*)::int as n from pg_indexes where schemaname = current_schema() and indexname in ('payments_text_trgm', 'invoices_text_trgm')`.execute(db);
    if (!ext.rows[0] || Number(idx.rows[0]?.n) !== 2) {
      return { status: 'fail', detail: `pg_trgm ${ext.rows[0] ? 'is installed but its indexes are missing' : 'is missing'}: the console's search by a part of a name or reason reads every row. As the database's owner (pg_trgm is a trusted extension): create extension pg_trgm; then create the two indexes as docs/console.md ("Search") writes them` };
    }
    const ko = await sql<{ n: number }>`select coalesce(array_length(show_trgm('영희수'), 1), 0)::int as n`.execute(db);
    if (Number(ko.rows[0]?.n) === 0) return { status: 'warn', detail: `pg_trgm ${ext.rows[0].v}, but this database's LC_CTYPE makes no trigrams of Korean: a Korean part is looked for row by row; create the database with a UTF-8 locale (C.UTF-8, ko_KR.UTF-8)` };
    return { status: 'ok', detail: `pg_trgm ${ext.rows[0].v}: payments and invoices indexed, Korean included` };
  }
  const t = await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name in ('payments_text', 'invoices_text')`.execute(db);
  if (Number(t.rows[0]?.n) !== 2) return { status: 'fail', detail: 'the FTS5 tables payments_text and invoices_text are missing: run sunap migrate' };
  return { status: 'ok', detail: 'FTS5 trigram tables for payments and invoices' };
}
