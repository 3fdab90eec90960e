// The same-stack reference: what searchPayment costs on Sunap's own stack with nothing else in
// the way. Fastify 5, ONE prepared statement joining the store, the platform's signing keys and
// the payment (better-sqlite3 on the same database file, opened read-only; or pg with one named
// prepared query), the API_SIGN check as src/gateway/signing.ts makes it (the same checks in the
// same order, with the pure functions of src/platform), and an answer of the same fields in
// the same order as src/gateway/views.ts. No logging, metrics, security headers or schemas.
// Sunap's searchPayment divided by this is the share of the stack's speed Sunap keeps
// (BENCHMARKS.md, "The same-stack reference"). Run as a child process by bench/run.ts:
// BENCH_REFERENCE_PORT, BENCH_REFERENCE_DB (sqlite:<file> or a postgres:// URL), SUNAP_SECRET_KEY,
// BENCH_REFERENCE_PAGE_URL (Sunap's payment page, for requestPayment's REDIRECT_URL).
//
// requestPayment the same way: the store-and-keys lookup, the signature, the fields the row needs, ONE
// prepared INSERT of the row Sunap writes (bench/payment-row.ts), the page token and the same
// answer. On SQLite with synchronous=FULL and the simplest group commit (the inserts of one turn
// of the event loop share one BEGIN IMMEDIATE … COMMIT, each answered after that COMMIT, as
// Sunap's driver does); on PostgreSQL each INSERT commits on its own, as Sunap's does.
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { apiSign, hexEqual, hmacToken, newId, SecretBox } from '../src/platform/crypto.js';
import { fixedPlanParameters } from '../src/db/compiled.js';
import { kstCompact, parseKstCompact } from '../src/platform/kst.js';
import { paymentInsertSql, paymentValues } from './payment-row.js';

const SQL = `select s.name as store_name, s.ceo_name, s.biz_reg_num, s.tel, k.key_sealed, p.trans_seqno, p.state, p.mobile_no,
  p.approval_at, p.amount, p.supply_amount, p.tax_charge, p.approval_number, p.installment_month, p.issuer_name,
  p.accepter_name, p.method_name, p.cancel_at, p.cancel_reason, p.cancel_amount, p.pay_path, p.vbank_name, p.vbank_account, p.vbank_holder, p.vbank_due_at
from stores s
left join platform_keys k on k.platform_code = s.platform_code and (k.retired_at is null or k.retired_at > ?)
left join payments p on p.platform_code = s.platform_code and p.store_code = s.code and p.trans_seqno = ?
where s.platform_code = ? and s.code = ?`;

// requestPayment's lookup: the store and its keys, no payment (a duplicate TRANS_SEQNO is the
// insert's unique violation), as Sunap's findStoreForSigning.
const STORE_SQL = `select s.name as store_name, k.key_sealed
from stores s
left join platform_keys k on k.platform_code = s.platform_code and (k.retired_at is null or k.retired_at > ?)
where s.platform_code = ? and s.code = ?`;

type Row = Record<string, any>;
const url = process.env.BENCH_REFERENCE_DB!;
let lookup: (params: unknown[]) => Promise<Row[]> | Row[];
/** requestPayment's lookup and insert, on a writable connection opened on first use. */
let writer: () => { lookup: (params: unknown[]) => Promise<Row[]> | Row[]; insert: (values: unknown[]) => Promise<void> };
if (url.startsWith('sqlite:')) {
  const file = url.slice('sqlite:'.length);
  const stmt = new SQLite(file, { readonly: true, fileMustExist: true }).prepare(fixedPlanParameters(SQL));
  lookup = (params) => stmt.all(...params) as Row[];
  let w: ReturnType<typeof writer> | undefined;
  writer = () => (w ??= sqliteWriter(file));
} else {
  pg.types.setTypeParser(20, Number); // as src/db/index.ts: bigint columns (times in ms) as numbers
  const pool = new pg.Pool({ connectionString: url, max: 10, options: '-c default_transaction_read_only=on' });
  let n = 0;
  const text = SQL.replace(/\?/g, () => `$${++n}`);
  lookup = async (values) => (await pool.query<Row>({ name: 'reference_search', text, values })).rows;
  let w: ReturnType<typeof writer> | undefined;
  writer = () => (w ??= (() => {
    // Sunap's pool: 10 connections (SUNAP_PG_POOL_SIZE's default), every query prepared by name.
    const rw = new pg.Pool({ connectionString: url, max: 10 });
    const insertText = paymentInsertSql('postgres');
    let m = 0;
    const storeText = STORE_SQL.replace(/\?/g, () => `$${++m}`);
    return {
      lookup: async (values: unknown[]) => (await rw.query<Row>({ name: 'reference_store', text: storeText, values })).rows,
      insert: async (values: unknown[]) => void (await rw.query({ name: 'reference_insert', text: insertText, values })),
    };
  })());
}

/**
 * SQLite as Sunap opens it (WAL, synchronous=FULL, busy_timeout, foreign keys) with the simplest group
 * commit: the first insert of a turn opens BEGIN IMMEDIATE, the turn's inserts run in it (a
 * failing INSERT undoes only itself), and the COMMIT on setImmediate answers them all.
 */
function sqliteWriter(file: string) {
  const db = new SQLite(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 10000');
  // The payment's foreign key to its store is checked, as on Sunap's connection.
  db.pragma('foreign_keys = ON');
  const read = db.prepare(fixedPlanParameters(STORE_SQL));
  const insert = db.prepare(fixedPlanParameters(paymentInsertSql('sqlite')));
  let batch: { done: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | null = null;
  const commit = () => {
    const b = batch!;
    batch = null;
    try {
      db.exec('commit');
      b.resolve();
    } catch (err) {
      if (db.inTransaction) db.exec('rollback');
      b.reject(err);
    }
  };
  return {
    lookup: (params: unknown[]) => read.all(...params) as Row[],
    async insert(values: unknown[]) {
      if (!batch) {
        db.exec('begin immediate');
        let resolve!: () => void;
        let reject!: (e: unknown) => void;
        const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
        done.catch(() => {});
        batch = { done, resolve, reject };
        setImmediate(commit);
      }
      const joined = batch;
      let failed: unknown;
      try {
        insert.run(values);
      } catch (err) {
        failed = err;
      }
      await joined.done;
      if (failed) throw failed;
    },
  };
}
const box = new SecretBox(Buffer.from(process.env.SUNAP_SECRET_KEY!, 'hex'));
const MAX_SKEW_MS = 600_000; // SUNAP_SIGN_MAX_SKEW_SECONDS' default
const SIGNING = ['TRANS_SEQNO', 'PLATFORM_CODE', 'STORE_CODE', 'TRANS_AT', 'API_SIGN'] as const;
const refuse = (code: string, msg: string) => ({ result_code: 0, result_msg: 'SUCCESS', result_data: { RESULT_CODE: code, RESULT_MSG: msg } });

const app = Fastify({ bodyLimit: 1024 * 1024 });
app.get('/ready', async () => ({ ok: true }));
app.post('/api/searchPayment', async (req) => {
  // The checks and their order are signing.ts's: fields (4002), store (4005), signature and window (3001), payment (4003).
  const b = req.body as Record<string, string> | null;
  const bad = SIGNING.find((f) => typeof b?.[f] !== 'string' || b[f].length === 0 || b[f].length > 64);
  if (!b || bad) return refuse('4002', `${bad ?? 'body'}: is missing or malformed`);
  if (!/^[0-9a-fA-F]{64}$/.test(b.API_SIGN!)) return refuse('4002', 'API_SIGN: must be 64 hex characters');
  const transAt = /^\d{14}$/.test(b.TRANS_AT!) ? parseKstCompact(b.TRANS_AT!) : null;
  if (transAt === null) return refuse('4002', 'TRANS_AT: is not a real date and time');
  const now = Date.now();
  const rows = await lookup([now, b.TRANS_SEQNO, b.PLATFORM_CODE, b.STORE_CODE]);
  const p = rows[0];
  if (!p) return refuse('4005', 'PLATFORM_CODE, STORE_CODE: unknown platform or store');
  const signed = rows.some((r) => r.key_sealed !== null
    && hexEqual(apiSign(b.TRANS_SEQNO!, b.PLATFORM_CODE!, b.STORE_CODE!, b.TRANS_AT!, box.open(r.key_sealed)), b.API_SIGN!));
  if (!signed || Math.abs(now - transAt) > MAX_SKEW_MS) return refuse('3001', 'API_SIGN: signature mismatch or TRANS_AT out of window');
  if (p.trans_seqno === null) return refuse('4003', 'TRANS_SEQNO: no such transaction');
  return {
    result_code: 0, result_msg: 'SUCCESS',
    result_data: {
      RESULT_CODE: '0000', RESULT_MSG: '정상 처리되었습니다',
      TRANS_SEQNO: p.trans_seqno, APPROVE_STATUS: p.state, MOBILE_NO: p.mobile_no,
      APPROVAL_DATETIME: p.approval_at !== null ? kstCompact(p.approval_at) : null,
      APPROVAL_AMOUNT: p.amount, SUPPLY_AMOUNT: p.supply_amount, TAX_CHARGE: p.tax_charge,
      APPROVAL_NUMBER: p.approval_number ?? '', INSTALLMENT_MONTH: p.installment_month ?? '', ISSUER_NAME: p.issuer_name ?? '',
      ACCEPTER_NAME: p.accepter_name ?? '', METHOD_NAME: p.method_name ?? '',
      STORE_NAME: p.store_name, CEO_NAME: p.ceo_name, BIZ_REG_NUM: p.biz_reg_num, STORE_TEL_NUM: p.tel,
      APPROVAL_CANCEL_DATETIME: p.cancel_at !== null ? kstCompact(p.cancel_at) : null,
      CANCEL_REASON: p.cancel_reason, CANCEL_AMOUNT: p.state === 'CANCEL_COMPLETE' ? p.cancel_amount : 0, PAY_PATH: p.pay_path,
      VBANK_NAME: p.vbank_name, VBANK_ACCOUNT: p.vbank_account, VBANK_HOLDER: p.vbank_holder, VBANK_DUE: p.vbank_due_at !== null ? kstCompact(Number(p.vbank_due_at)) : null,
    },
  };
});

const pageUrl = process.env.BENCH_REFERENCE_PAGE_URL ?? 'http://127.0.0.1/checkout';
const masterKey = Buffer.from(process.env.SUNAP_SECRET_KEY!, 'hex');
const REQUIRED = ['APPROVAL_AMOUNT', 'MOBILE_NO', 'PAY_USER_NAME', 'REQUEST_REASON', 'CONFIRM_URL'] as const;
app.post('/api/requestPayment', async (req) => {
  const b = req.body as Record<string, string> | null;
  const bad = SIGNING.find((f) => typeof b?.[f] !== 'string' || b[f].length === 0 || b[f].length > 64);
  if (!b || bad) return refuse('4002', `${bad ?? 'body'}: is missing or malformed`);
  if (!/^[0-9a-fA-F]{64}$/.test(b.API_SIGN!)) return refuse('4002', 'API_SIGN: must be 64 hex characters');
  const transAt = /^\d{14}$/.test(b.TRANS_AT!) ? parseKstCompact(b.TRANS_AT!) : null;
  if (transAt === null) return refuse('4002', 'TRANS_AT: is not a real date and time');
  const now = Date.now();
  const w = writer();
  const rows = await w.lookup([now, b.PLATFORM_CODE, b.STORE_CODE]);
  const s = rows[0];
  if (!s) return refuse('4005', 'PLATFORM_CODE, STORE_CODE: unknown platform or store');
  const signed = rows.some((r) => r.key_sealed !== null
    && hexEqual(apiSign(b.TRANS_SEQNO!, b.PLATFORM_CODE!, b.STORE_CODE!, b.TRANS_AT!, box.open(r.key_sealed)), b.API_SIGN!));
  if (!signed || Math.abs(now - transAt) > MAX_SKEW_MS) return refuse('3001', 'API_SIGN: signature mismatch or TRANS_AT out of window');
  // The fields the row needs, present and of their type; not Sunap's per-field messages.
  const missing = REQUIRED.find((f) => typeof b[f] !== 'string' || b[f].length === 0);
  if (missing) return refuse('4002', `${missing}: is required`);
  const amount = Number(b.APPROVAL_AMOUNT);
  if (!Number.isSafeInteger(amount) || amount <= 0) return refuse('4002', 'APPROVAL_AMOUNT: must be a whole number above 0');
  const id = newId();
  try {
    await w.insert(paymentValues({
      platformCode: b.PLATFORM_CODE!, storeCode: b.STORE_CODE!, transSeqNo: b.TRANS_SEQNO!, amount, mobileNo: b.MOBILE_NO!,
      payUserName: b.PAY_USER_NAME!, requestReason: b.REQUEST_REASON!, infoMessage: b.INFO_MESSAGE, confirmUrl: b.CONFIRM_URL,
      tempValue: b.TEMP_VALUE, userId: b.USER_ID,
    }, now, id));
  } catch (err) {
    if (/unique|duplicate/i.test(String((err as Error).message))) return refuse('4001', 'TRANS_SEQNO: a payment with this TRANS_SEQNO already exists');
    throw err;
  }
  const u = new URL(pageUrl);
  u.searchParams.set('tid', id);
  u.searchParams.set('token', hmacToken(masterKey, 'payment-page', id));
  return { result_code: 0, result_msg: 'SUCCESS', result_data: { RESULT_CODE: '0000', RESULT_MSG: '정상 처리되었습니다', REDIRECT_URL: u.toString() } };
});

await app.listen({ port: Number(process.env.BENCH_REFERENCE_PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
