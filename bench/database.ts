import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql, type Insertable, type Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database, type DatabaseHandle } from '../src/db/index.js';
import type { InvoiceTable } from '../src/db/schema.js';
import { JOBS } from '../src/app.js';
import { createAccount, grantPoints } from '../src/invoicing/accounts.js';
import { insertInvoices } from '../src/invoicing/repository.js';
import { recordWebhookEvent } from '../src/invoicing/webhooks.js';
import type { Engine } from './config.js';

/** A fresh database per target and run: a SQLite file, or a PostgreSQL database dropped afterwards. */
export interface BenchDatabase {
  engine: Engine;
  url: string;
  drop(): Promise<void>;
}

export async function postgresAnswers(adminUrl: string): Promise<true | string> {
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await c.end().catch(() => {});
  }
}

export async function createDatabase(engine: Engine, root: string, adminUrl: string): Promise<BenchDatabase> {
  const name = `sunap_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  if (engine === 'sqlite') {
    const dir = join(root, '.tmp', 'bench', 'db', name);
    mkdirSync(dir, { recursive: true });
    return { engine, url: `sqlite:${join(dir, 'sunap.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    engine,
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** The benchmark's own connection, opened through the same openDatabase() the server uses. */
export function openBenchStore(url: string): DatabaseHandle {
  return openDatabase(url, { poolSize: 2 });
}

/**
 * The durability settings in force, read back rather than assumed. SQLite's synchronous is a
 * per-connection setting: this reads the value openDatabase() (src/db/index.ts) sets on every
 * connection it opens, the server's included; journal_mode=WAL is stored in the file.
 */
export async function durability(store: DatabaseHandle): Promise<Record<string, string>> {
  if (store.engine === 'sqlite') {
    const jm = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    const sy = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
    const names = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];
    const s = Number(sy.rows[0]?.synchronous);
    return { journal_mode: String(jm.rows[0]?.journal_mode), synchronous: `${s} (${names[s] ?? '?'})` };
  }
  const out: Record<string, string> = {};
  for (const name of ['synchronous_commit', 'fsync', 'full_page_writes', 'wal_sync_method', 'server_version']) {
    const r = await sql<Record<string, string>>`${sql.raw(`show ${name}`)}`.execute(store.db);
    out[name] = String(Object.values(r.rows[0] ?? {})[0]);
  }
  return out;
}

export interface BenchAccount {
  accountId: string;
  email: string;
  password: string;
}

/** An invoicing account with points, through the same functions as `sunap account create` / `points grant`. */
export async function seedAccount(store: DatabaseHandle, storeCode: string, label: string, points: number): Promise<BenchAccount> {
  const email = `bench-${label.toLowerCase()}-${randomBytes(3).toString('hex')}@example.com`;
  const password = 'bench password 1';
  const now = Date.now();
  const { accountId } = await createAccount(store.db, now, { email, password, storeCode });
  if (points > 0) await grantPoints(store.db, now, { email, amount: points });
  return { accountId, email, password };
}

/** A phone number that the sandbox provider accepts on every channel (never …0000, …8888 or …9999). */
export function benchPhone(i: number): string {
  return `0107${String(i % 1_000_000).padStart(6, '0')}1`;
}

const SURNAMES = [...'김이박최정강조윤장임한오서신권황안송류홍'];
const GIVEN_FIRST = [...'영민서지수현준예하도승유은태재성나시주건'];
const GIVEN_SECOND = [...'희호연우진아윤빈원훈린율경석민환솔찬결정'];
/**
 * The i-th seeded customer's Korean name: a surname and a two-syllable given name, 20 × 400 names
 * (every name distinct in the first 1,000 rows, each repeated about 12 times in 100,000), so a
 * given name such as 영희 is shared by customers of every surname, as in a real academy.
 */
export function benchName(i: number): string {
  return SURNAMES[i % 20]! + GIVEN_FIRST[Math.floor(i / 20) % 20]! + GIVEN_SECOND[Math.floor(i / 400) % 20]!;
}

/** Classes a seeded bill is for: one in 40 rows per class, so a part of a class name matches 2.5% of a store's rows. */
const CLASSES = [
  '피아노 초급', '피아노 중급', '바이올린 입문', '바이올린 심화', '첼로 기초', '플루트 기초', '성악 개인', '작곡 이론', '미술 소묘', '미술 수채화',
  '수학 심화반', '수학 기초반', '영어 회화반', '영어 문법반', '국어 독해반', '과학 실험반', '코딩 파이썬', '코딩 스크래치', '논술 토론반', '한자 급수반',
  '태권도 품새', '태권도 겨루기', '수영 자유형', '수영 접영반', '발레 기초', '현대무용반', '주산 암산반', '바둑 입문반', '체스 입문반', '로봇 조립반',
  '중국어 회화', '일본어 회화', '독서 토론반', '역사 탐구반', '생명 과학반', '물리 실험반', '화학 실험반', '지구 과학반', '경제 교실반', '사진 촬영반',
];
/** The i-th seeded bill's reason: the month's tuition of one of the 40 classes. */
export function benchReason(i: number): string {
  return `11월 수강료 · ${CLASSES[i % CLASSES.length]!}`;
}

/**
 * Invoices written straight into the table (a seeding shortcut: the rows have the shape
 * InvoiceService.create and a finished send leave, without the sends, ledger and payment rows
 * the list does not read). Batched multi-row inserts, a transaction per 10,000 rows so the
 * server is never locked out for long.
 */
export async function seedInvoices(
  db: Kysely<Database>,
  opts: {
    accountId: string; storeCode: string; count: number; tag: string;
    /** Spread of created_at: the newest is now, the oldest `spanDays` ago. */
    spanDays: number;
    paid?: boolean;
    webhook?: { url: string; secretSealed: string };
  },
): Promise<void> {
  const now = Date.now();
  const span = opts.spanDays * 86_400_000;
  const rowAt = (i: number): Insertable<InvoiceTable> => {
    const created = now - Math.floor((span * (opts.count - 1 - i)) / Math.max(1, opts.count - 1));
    const sent = created + 2_000;
    return {
      unique_id: randomUUID(), account_id: opts.accountId, store_code: opts.storeCode, trans_seqno: `INVB${opts.tag}${i.toString(36).padStart(6, '0')}`,
      payment_id: null, status: opts.paid ? 'DONE' : 'PENDING', send_status: 'SENT', deleted_at: null, request_id: null, request_hash: null,
      template_type: 'SAME', receiver_name: benchName(i), receiver_phone: benchPhone(i), guardian_phone: null, amount: 128_000,
      reason: benchReason(i), description: '매월 10일까지 납부 부탁드립니다', items_json: null, send_channel: 'ALIMTALK',
      webhook_url: opts.webhook?.url ?? null, webhook_secret_sealed: opts.webhook?.secretSealed ?? null,
      bill_template_id: null, related_subject: null, etc: null, student_birth_date: null, classroom_id: null,
      send_count: 1, first_sent_at: sent, last_sent_at: sent, done_at: opts.paid ? sent + 60_000 : null, canceled_at: null,
      created_at: created, updated_at: opts.paid ? sent + 60_000 : sent,
    };
  };
  const PER_INSERT = 500;
  const PER_TX = 10_000;
  for (let tx = 0; tx < opts.count; tx += PER_TX) {
    await db.transaction().execute(async (trx) => {
      for (let i = tx; i < Math.min(opts.count, tx + PER_TX); i += PER_INSERT) {
        const rows: Insertable<InvoiceTable>[] = [];
        for (let j = i; j < Math.min(opts.count, tx + PER_TX, i + PER_INSERT); j++) rows.push(rowAt(j));
        // The repository's insert: it also adds the rows to the account's live-invoice count.
        await insertInvoices(trx, opts.accountId, rows);
      }
    });
  }
}

/** PostgreSQL's statistics after a bulk load, as autovacuum would have them soon after. */
export async function analyze(store: DatabaseHandle): Promise<void> {
  if (store.engine === 'postgres') await sql`analyze`.execute(store.db);
}

/**
 * bill.paid events for the given paid invoices, written with the service's own
 * recordWebhookEvent (event row + delivery job) in one transaction: they all become due at
 * the commit. Returns the commit time (Date.now()).
 */
export async function recordPaidEvents(db: Kysely<Database>, accountId: string, fromId: number, toId: number): Promise<number> {
  await db.transaction().execute(async (trx) => {
    const invoices = await trx.selectFrom('invoices').selectAll()
      .where('account_id', '=', accountId).where('id', '>=', fromId).where('id', '<=', toId).orderBy('id').execute();
    const now = Date.now();
    for (const inv of invoices) await recordWebhookEvent(trx, inv, 'bill.paid', now);
  });
  return Date.now();
}

export async function invoiceIdRange(db: Kysely<Database>, accountId: string): Promise<{ min: number; max: number; n: number }> {
  const r = await db.selectFrom('invoices')
    .select((eb) => [eb.fn.min<number>('id').as('min'), eb.fn.max<number>('id').as('max'), eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return { min: Number(r.min), max: Number(r.max), n: Number(r.n) };
}

export async function webhookCounts(db: Kysely<Database>, accountId: string, fromInvoiceId: number, toInvoiceId: number): Promise<Record<string, number>> {
  const rows = await db.selectFrom('webhook_events').select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId).where('invoice_id', '>=', fromInvoiceId).where('invoice_id', '<=', toInvoiceId)
    .groupBy('status').execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** Jobs still to run (due or retrying), by kind: the work a scenario left behind. */
/**
 * Housekeeping that reschedules itself for later (the definitions' `housekeeping` flag): always
 * one pending, never a scenario's leftover work.
 */
const HOUSEKEEPING_JOBS = JOBS.filter((j) => j.housekeeping).map((j) => j.kind);

export async function pendingJobs(db: Kysely<Database>): Promise<Record<string, number>> {
  const rows = await db.selectFrom('jobs').select((eb) => ['kind', eb.fn.countAll<number>().as('n')])
    .where('status', '=', 'PENDING').where('kind', 'not in', HOUSEKEEPING_JOBS).groupBy('kind').execute();
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
}

export async function failedAttempts(db: Kysely<Database>, sinceMs: number): Promise<{ n: number; example: string | null }> {
  const rows = await db.selectFrom('outbound_attempts').select(['error', 'url']).where('error', 'is not', null).where('created_at', '>=', sinceMs).limit(1000).execute();
  return { n: rows.length, example: rows[0] ? `${rows[0].url}: ${rows[0].error}` : null };
}

export async function sendStatusCounts(db: Kysely<Database>, accountId: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('invoices').select((eb) => ['send_status', eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId).groupBy('send_status').execute();
  return Object.fromEntries(rows.map((r) => [r.send_status, Number(r.n)]));
}
