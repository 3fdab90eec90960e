/**
 * A crash between Toss's approval and Sunap's commit (docs/going-live.md, "What happens when an
 * answer is lost"): the real server in live mode as a child process, SIGKILLed while Toss
 * holds its answer to an approval it made, restarted on the same database. The restarted
 * server settles the open attempt by a look-up under its key: approved once, one charge.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { createPlatform, createStore } from '../../src/gateway/index.js';
import { apiSign, SecretBox } from '../../src/platform/crypto.js';
import { kstCompact } from '../../src/platform/kst.js';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/wait.js';
import { ServerProcess } from '../reliability/harness.js';
import { LIVE_SECRET_KEY, liveEnv, withFakes } from './support.js';

forEachEngine('live mode: a crash between the approval at Toss and the commit', (engine) => {
  const f = withFakes();
  let database: { url: string; drop: () => Promise<void> };
  let handle: DatabaseHandle;
  let server: ServerProcess;
  let merchant: { platformCode: string; apiKey: string; storeCode: string };
  before(async () => {
    database = await createTestDatabase(engine);
    handle = openDatabase(database.url, { poolSize: 2 });
    await migrate(handle.db);
    const now = Date.now();
    const p = await createPlatform(handle.db, new SecretBox(Buffer.from(LIVE_SECRET_KEY, 'hex')), now, { name: '플랫폼' });
    const s = await createStore(handle.db, now, { platformCode: p.platformCode, name: '행복 피아노 학원' });
    merchant = { ...p, storeCode: s.storeCode };
  });
  after(async () => {
    await server?.close();
    await handle.close();
    await database.drop();
  });

  test('SIGKILL while Toss holds the answer; after the restart the attempt is settled by a look-up: approved, one charge, one callback job', { timeout: 120_000 }, async () => {
    server = new ServerProcess({ name: `live-crash-${engine}`, databaseUrl: database.url, env: { ...liveEnv(f), SUNAP_SECRET_KEY: LIVE_SECRET_KEY, LOG_LEVEL: 'info' } });
    await server.start();
    const body: Record<string, unknown> = { ...paymentBody({ CONFIRM_URL: 'https://merchant.example.com/confirm' }), PLATFORM_CODE: merchant.platformCode, STORE_CODE: merchant.storeCode, TRANS_AT: kstCompact(Date.now()) };
    body.API_SIGN = apiSign(String(body.TRANS_SEQNO), merchant.platformCode, merchant.storeCode, String(body.TRANS_AT), merchant.apiKey);
    const created = await (await fetch(`${server.url}/api/requestPayment`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as any;
    const link = new URL(created.result_data.REDIRECT_URL);
    const form = new URLSearchParams({ tid: link.searchParams.get('tid')!, token: link.searchParams.get('token')!, cardNumber: '4000000000003220', expiry: '12/39', birth: '900101', cardPassword: '12' });
    // The customer's post hangs on Toss's held answer; the process dies meanwhile.
    const posted = fetch(`${server.url}${link.pathname}/pay`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form, redirect: 'manual' }).catch(() => null);
    const paymentId = link.searchParams.get('tid')!;
    const attempt = await eventually(async () => handle.db.selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).executeTakeFirst(), 'the attempt row');
    await eventually(async () => f.toss.approvals.has(attempt.id), 'Toss approved it');
    await server.kill();
    await posted;
    assert.equal((await handle.db.selectFrom('payment_attempts').select('status').where('id', '=', attempt.id).executeTakeFirstOrThrow()).status, 'OPEN', 'the crash left the attempt open');
    assert.equal((await handle.db.selectFrom('payments').select('state').where('id', '=', paymentId).executeTakeFirstOrThrow()).state, 'STORE_REQUEST');

    await server.start();
    const settled = await eventually(async () => {
      const p = await handle.db.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirstOrThrow();
      return p.state === 'APPROVE_COMPLETE' ? p : null;
    }, 'the restarted server settled the approval', 60_000, 200);
    const charge = f.toss.payments.get(attempt.id)!;
    assert.equal(settled.processor_ref, charge.paymentKey);
    assert.equal(settled.approval_number, charge.approveNo);
    assert.equal(f.toss.approvals.get(attempt.id), 1, 'one charge');
    assert.equal(f.toss.requests.filter((r) => r.path === '/v1/payments/key-in' && r.json?.orderId === attempt.id).length, 1, 'the approval was never sent again');
    const attempts = await handle.db.selectFrom('payment_attempts').select(['id', 'status']).where('payment_id', '=', paymentId).execute();
    assert.deepEqual(attempts.map((a) => [a.id, a.status]), [[attempt.id, 'APPROVED']]);
    const jobs = await handle.db.selectFrom('jobs').select('id').where('unique_key', '=', `callback:${paymentId}`).execute();
    assert.equal(jobs.length, 1, 'the callback, once');
    assert.equal(charge.status, 'DONE', 'nothing voided');
  });
});
