import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * The console's search by a part of a value (docs/console.md, "Search"): the engines' own text
 * indexes, so a part of 3 characters or more is found at any age through an index instead of a
 * scan of the store's rows.
 *
 * PostgreSQL: pg_trgm (a trusted extension since PostgreSQL 13: a database owner without
 * superuser may create it) and one GIN trigram index per table on the searched columns joined
 * by a unit separator (chr(31)), so a part never spans two columns. The queries write the very
 * same expression (src/db/search.ts) and match it with ILIKE, which the index serves.
 *
 * SQLite: an FTS5 table with the trigram tokenizer per table, external content (the text stays
 * in payments/invoices; the index holds only the trigrams), keyed by the row's rowid, kept in
 * step by triggers on insert, delete and an update of a searched column. The queries join it
 * back on rowid and filter by the tenant there. `rebuild` fills it from the rows already there.
 *
 * Two-character parts (a Korean given name, 영희) have no trigram: the last two characters of a
 * name get an expression index beside the last four digits of migration 0014, written the same
 * way (`substr(x, length(x) - 1)`, the same text on both engines).
 */
const PAYMENT_TEXT = ['pay_user_name', 'trans_seqno', 'request_reason', 'approval_number', 'mobile_no'];
const INVOICE_TEXT = ['receiver_name', 'reason', 'trans_seqno', 'request_id', 'receiver_phone', 'guardian_phone'];

/** The searched columns as one text, written exactly as src/db/search.ts writes it. */
const joined = (cols: string[]) => cols.map((c) => `coalesce(${c}, '')`).join(' || chr(31) || ');

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql.raw(`create index payments_text_trgm on payments using gin ((${joined(PAYMENT_TEXT)}) gin_trgm_ops)`).execute(db);
    await sql.raw(`create index invoices_text_trgm on invoices using gin ((${joined(INVOICE_TEXT)}) gin_trgm_ops)`).execute(db);
  } else {
    for (const [table, cols] of [['payments', PAYMENT_TEXT], ['invoices', INVOICE_TEXT]] as const) {
      const fts = `${table}_text`;
      const list = cols.join(', ');
      const vals = (rec: 'new' | 'old') => cols.map((c) => `${rec}.${c}`).join(', ');
      // columnsize=0: no per-row size table (nothing here ranks by length), so the index is trigrams only.
      await sql.raw(`create virtual table ${fts} using fts5(${list}, content='${table}', content_rowid='rowid', tokenize='trigram', columnsize=0)`).execute(db);
      await sql.raw(`create trigger ${fts}_insert after insert on ${table} begin insert into ${fts}(rowid, ${list}) values (new.rowid, ${vals('new')}); end`).execute(db);
      await sql.raw(`create trigger ${fts}_delete after delete on ${table} begin insert into ${fts}(${fts}, rowid, ${list}) values ('delete', old.rowid, ${vals('old')}); end`).execute(db);
      await sql.raw(`create trigger ${fts}_update after update of ${list} on ${table} begin `
        + `insert into ${fts}(${fts}, rowid, ${list}) values ('delete', old.rowid, ${vals('old')}); `
        + `insert into ${fts}(rowid, ${list}) values (new.rowid, ${vals('new')}); end`).execute(db);
      await sql.raw(`insert into ${fts}(${fts}) values ('rebuild')`).execute(db);
    }
  }
  await sql`create index payments_store_name_last2 on payments (platform_code, store_code, (substr(pay_user_name, length(pay_user_name) - 1)), created_at)`.execute(db);
  await sql`create index invoices_account_name_last2 on invoices (account_id, (substr(receiver_name, length(receiver_name) - 1)), created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('payments_store_name_last2').execute();
  await db.schema.dropIndex('invoices_account_name_last2').execute();
  if (isPostgres(db)) {
    await db.schema.dropIndex('payments_text_trgm').execute();
    await db.schema.dropIndex('invoices_text_trgm').execute();
  } else {
    for (const table of ['payments', 'invoices']) {
      for (const t of ['insert', 'delete', 'update']) await sql.raw(`drop trigger ${table}_text_${t}`).execute(db);
      await sql.raw(`drop table ${table}_text`).execute(db);
    }
  }
}
