// The same-stack reference: what searchPayment costs on Sunap's own stack with nothing else in
// the way. Fastify 5, ONE prepared statement joining the store, the platform's signing keys and
// the payment (better-sqlite3 on the same database file, opened read-only; or pg with one named
// prepared query), the API_SIGN check as src/gateway/signing.ts makes it (the same checks in the
// same order, with the pure functions of src/platform), and an answer of the same fields in
// the same order as src/gateway/views.ts. No logging, metrics, security headers or schemas.
// Sunap's searchPayment divided by this is the share of the stack's speed Sunap keeps
// (BENCHMARKS.md, "The same-stack reference"). Run as a child process by bench/run.ts:
// BENCH_REFERENCE_PORT, BENCH_REFERENCE_DB (sqlite:<file> or a postgres:// URL), SUNAP_SECRET_KEY.
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { apiSign, hexEqual, SecretBox } from '../src/platform/crypto.js';
import { kstCompact, parseKstCompact } from '../src/platform/kst.js';

const SQL = `select s.name as store_name, s.ceo_name, s.biz_reg_num, s.tel, k.key_sealed, p.trans_seqno, p.state, p.mobile_no,
  p.approval_at, p.amount, p.supply_amount, p.tax_charge, p.approval_number, p.installment_month, p.issuer_name,
  p.accepter_name, p.method_name, p.cancel_at, p.cancel_reason, p.cancel_amount, p.pay_path, p.vbank_name, p.vbank_account, p.vbank_holder, p.vbank_due_at
from stores s
left join platform_keys k on k.platform_code = s.platform_code and (k.retired_at is null or k.retired_at > ?)
left join payments p on p.platform_code = s.platform_code and p.store_code = s.code and p.trans_seqno = ?
where s.platform_code = ? and s.code = ?`;

type Row = Record<string, any>;
const url = process.env.BENCH_REFERENCE_DB!;
let lookup: (params: unknown[]) => Promise<Row[]> | Row[];
if (url.startsWith('sqlite:')) {
  const stmt = new SQLite(url.slice('sqlite:'.length), { readonly: true, fileMustExist: true }).prepare(SQL);
  lookup = (params) => stmt.all(...params) as Row[];
} else {
  pg.types.setTypeParser(20, Number); // as src/db/index.ts: bigint columns (times in ms) as numbers
  const pool = new pg.Pool({ connectionString: url, max: 10, options: '-c default_transaction_read_only=on' });
  let n = 0;
  const text = SQL.replace(/\?/g, () => `$${++n}`);
  lookup = async (values) => (await pool.query<Row>({ name: 'reference_search', text, values })).rows;
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

await app.listen({ port: Number(process.env.BENCH_REFERENCE_PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
