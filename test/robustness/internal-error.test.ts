/**
 * The internal error: when the database fails under a request, the invoicing answer is
 * HTTP 500 / -99 and the gateway's 500 / 9999, with a generic message (nothing internal
 * leaks), the failure is logged, and nothing was half-done.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, paymentBody, seqNo, startApp, type TestApp } from '../helpers/app.js';
import { billBody, newAccount, type Login } from '../invoicing/support.js';
import { withFailingInserts } from '../helpers/db.js';
import { dbSnapshot } from './support.js';

const GENERIC = { result_code: -99, result_msg: 'internal error; nothing was changed, try again', result_data: null };

forEachEngine('internal errors', (engine) => {
  let t: TestApp;
  let a: Login;
  before(async () => {
    t = await startApp(engine, {}, { runJobs: false });
    a = await newAccount(t, { points: 1_000 });
  });
  after(async () => t?.close());

  test('a failure in the middle of an invoice creation: 500 / -99, and no invoice, reservation or send is left', async () => {
    const db = t.app.sunap.database.db;
    const before = await dbSnapshot(t);
    const balance = async () => Number((await db.selectFrom('wallets').select('balance').where('account_id', '=', a.accountId).executeTakeFirstOrThrow()).balance);
    const start = await balance();
    // The creation writes invoices, debits the wallet, writes the ledger and the sends, and
    // then its jobs: with the jobs table gone, the last step fails inside the transaction.
    await sql`alter table jobs rename to jobs_away`.execute(db);
    let r;
    try {
      r = await t.post('/app/v1/sales/bill', billBody({ requestId: 'internal-1' }), a.h);
    } finally {
      await sql`alter table jobs_away rename to jobs`.execute(db);
    }
    assert.equal(r.status, 500, JSON.stringify(r.body));
    assert.deepEqual(r.body, GENERIC);
    assert.doesNotMatch(r.text, /jobs|relation|table|sql/i, 'nothing internal in the answer');
    assert.deepEqual(await dbSnapshot(t), before, 'nothing half-done');
    assert.equal(await balance(), start);
    assert.ok(t.logs.some((l) => l.includes('"level":50') && /jobs/.test(l)), 'the failure is logged with its cause');
    // The same request goes through once the database is whole again: the requestId was not taken.
    const again = await t.post('/app/v1/sales/bill', billBody({ requestId: 'internal-1' }), a.h);
    assert.equal(again.body.result_code, 0, JSON.stringify(again.body));
    assert.equal(await balance(), start - 10);
  });

  test('a payment the database fails to write is 500 / 9999, never taken for a duplicate TRANS_SEQNO', async () => {
    const body = paymentBody();
    // The insert alone fails, as a full disk would make it fail.
    const r = await withFailingInserts(t.app.sunap.database.db, engine, 'payments', () => t.gw('requestPayment', body));
    assert.equal(r.status, 500, JSON.stringify(r.body));
    assert.equal(r.body.result_data.RESULT_CODE, '9999');
    // Nothing was written: the same TRANS_SEQNO goes through now.
    assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
  });

  test('the database gone under the app: invoicing 500 / -99, gateway 500 / 9999, readiness 503', async () => {
    // A second app, so that closing its database leaves the suite's own alone.
    const u = await startApp(engine, {}, { runJobs: false });
    try {
      const b = await newAccount(u, { points: 100 });
      const seq = seqNo('GONE');
      assert.equal((await u.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq }))).body.result_data.RESULT_CODE, '0000');
      await u.app.sunap.database.db.destroy();
      for (const [method, path, body] of [
        ['GET', '/app/v1/points/me', undefined], ['GET', '/app/v1/sales/bill', undefined], ['POST', '/app/v1/sales/bill', billBody()],
        ['POST', '/app/v1/auth/login', { email: b.email, password: b.password }],
      ] as const) {
        const r = method === 'GET' ? await u.get(path, b.h) : await u.post(path, body, b.h);
        assert.equal(r.status, 500, `${method} ${path}: ${r.text}`);
        assert.deepEqual(r.body, GENERIC, `${method} ${path}`);
      }
      const g = await u.gw('searchPayment', { TRANS_SEQNO: seq });
      assert.equal(g.status, 500);
      assert.deepEqual(g.body, { result_code: -1, result_msg: 'internal error', result_data: { RESULT_CODE: '9999', RESULT_MSG: 'internal error; nothing was changed, try again' } });
      assert.equal((await u.get('/readyz')).status, 503);
      assert.equal((await u.get('/healthz')).status, 200);
    } finally {
      await u.close();
    }
  });
});
