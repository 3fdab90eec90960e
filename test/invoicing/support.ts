import { randomBytes } from 'node:crypto';
import { createAccount, grantPoints } from '../../src/invoicing/accounts.js';
import type { TestApp } from '../helpers/app.js';
import type { Account } from '../../src/invoicing/repository.js';
import type { Insertable } from 'kysely';
import type { InvoiceTable } from '../../src/db/schema.js';

/** Shared by the invoicing suites: an account with points and a token, and request helpers. */
export interface Login {
  accountId: string;
  email: string;
  password: string;
  token: string;
  refreshToken: string;
  h: Record<string, string>;
}

export async function newAccount(t: TestApp, opts: { points?: number; storeCode?: string } = {}): Promise<Login> {
  const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery';
  const now = t.app.sunap.clock.nowMs();
  const { accountId } = await createAccount(t.app.sunap.database.db, now, { email, password, storeCode: opts.storeCode ?? t.storeCode });
  if (opts.points) await grantPoints(t.app.sunap.database.db, now, { email, amount: opts.points });
  const r = await t.post('/app/v1/auth/login', { email, password, loginType: 'EMAIL' });
  if (r.body?.result_code !== 0) throw new Error(`login failed: ${JSON.stringify(r.body)}`);
  const { accessToken, refreshToken } = r.body.result_data;
  return { accountId, email, password, token: accessToken, refreshToken, h: { 'x-access-token': accessToken } };
}


export function billBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    reason: '11월 수강료',
    description: '매월 10일까지 납부 부탁드립니다',
    amount: 128000,
    members: [{ studentName: '홍길동', studentPhone: '01012345678' }],
    ...over,
  };
}

/** Creates one invoice and returns its uniqueId (the newest in the list). */
export async function createOne(t: TestApp, a: Login, over: Record<string, unknown> = {}): Promise<string> {
  const r = await t.post('/app/v1/sales/bill', billBody(over), a.h);
  if (r.body?.result_code !== 0) throw new Error(`create failed: ${JSON.stringify(r.body)}`);
  const list = await t.get('/app/v1/sales/bill?size=1', a.h);
  return list.body.result_data.bills[0].uniqueId;
}

/** Polls the detail until the send left WAITING (the send job ran). */
export async function waitSent(t: TestApp, a: Login, id: string, timeoutMs = 15_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.get(`/app/v1/sales/bill/${id}`, a.h);
    const d = r.body?.result_data;
    if (d && d.bill.sendStatus !== 'WAITING') return d;
    if (Date.now() > until) throw new Error(`invoice ${id} still WAITING: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

export async function points(t: TestApp, a: Login): Promise<number> {
  const r = await t.get('/app/v1/points/me', a.h);
  return r.body.result_data.balance;
}

/** The points invariant (balance = ledger sum), read straight from the database. */
export async function ledgerMatches(t: TestApp, accountId: string): Promise<{ balance: number; ledger: number }> {
  const db = t.app.sunap.database.db;
  const w = await db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow();
  const rows = await db.selectFrom('ledger').select('delta').where('account_id', '=', accountId).execute();
  return { balance: Number(w.balance), ledger: rows.reduce((s, r) => s + Number(r.delta), 0) };
}

/** The account's row, as the services take it. */
export function accountRow(t: TestApp, a: Pick<Login, 'accountId'>): Promise<Account> {
  return t.app.sunap.database.db.selectFrom('accounts').selectAll().where('id', '=', a.accountId).executeTakeFirstOrThrow();
}

/**
 * An invoice row as the creation writes it (PENDING, not sent yet, one recipient), for suites
 * that test the repositories directly; `over` sets what the test is about.
 */
export function invoiceRow(accountId: string, storeCode: string, n: number, at: number, over: Partial<Insertable<InvoiceTable>> = {}): Insertable<InvoiceTable> {
  return {
    unique_id: `u-${storeCode}-${n}`, account_id: accountId, store_code: storeCode, trans_seqno: `INV${storeCode}${n}`, payment_id: null,
    status: 'PENDING', send_status: 'WAITING', deleted_at: null, request_id: null, request_hash: null, template_type: 'SAME',
    receiver_name: '홍길동', receiver_phone: '01012345678', guardian_phone: null, amount: 1000, reason: '11월 수강료', description: null,
    items_json: null, send_channel: 'ALIMTALK', webhook_url: null, webhook_secret_sealed: null, bill_template_id: null,
    related_subject: null, etc: null, student_birth_date: null, classroom_id: null, send_count: 0, first_sent_at: null,
    last_sent_at: null, done_at: null, canceled_at: null, created_at: at, updated_at: at, ...over,
  };
}
