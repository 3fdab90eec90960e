/**
 * A crash between Toss's approval and Sunap's commit (docs/going-live.md, "What happens when an
 * answer is lost"; docs/reliability.md, "An attempt left by a dead process"): the real server
 * in live mode as a child process, SIGKILLed while Toss holds its answer to an approval it
 * made, restarted on the same database. The restarted server sees that the attempt's process
 * is gone and settles it at once by a look-up under its key (not once it is stale: 61.5 s with
 * the default 10 s time limit): approved once, one charge. A customer who pays again while the
 * look-up runs reads that the payment is being confirmed.
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
import { staleAttemptMs } from '../../src/gateway/reconcile.js';
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

  test('SIGKILL while Toss holds the answer; the restarted server settles the attempt at once by a look-up: approved, one charge, one callback job; a customer paying meanwhile reads "being confirmed"', { timeout: 120_000 }, async () => {
    // The default time limit (10 s): an attempt is stale only after 3 × (2 × 10 s + 0.5 s) = 61.5 s.
    const timeoutMs = 10_000;
    const stale = staleAttemptMs({ callLimitMs: 2 * timeoutMs + 500 });
    assert.equal(stale, 61_500);
    server = new ServerProcess({ name: `live-crash-${engine}`, databaseUrl: database.url, env: { ...liveEnv(f), SUNAP_SECRET_KEY: LIVE_SECRET_KEY, LOG_LEVEL: 'info', SUNAP_OUTBOUND_TIMEOUT_MS: String(timeoutMs) } });
    await server.start();
    const body: Record<string, unknown> = { ...paymentBody({ CONFIRM_URL: 'https://merchant.example.com/confirm' }), PLATFORM_CODE: merchant.platformCode, STORE_CODE: merchant.storeCode, TRANS_AT: kstCompact(Date.now()) };
    body.API_SIGN = apiSign(String(body.TRANS_SEQNO), merchant.platformCode, merchant.storeCode, String(body.TRANS_AT), merchant.apiKey);
    const created = await (await fetch(`${server.url}/api/requestPayment`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as any;
    const link = new URL(created.result_data.REDIRECT_URL);
    const form = (cardNumber: string) => new URLSearchParams({ tid: link.searchParams.get('tid')!, token: link.searchParams.get('token')!, cardNumber, expiry: '12/39', birth: '900101', cardPassword: '12' });
    const post = (cardNumber: string) => fetch(`${server.url}${link.pathname}/pay`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(cardNumber), redirect: 'manual' });
    // The customer's post hangs on Toss's held answer; the process dies meanwhile.
    const posted = post('4000000000003220').catch(() => null);
    const paymentId = link.searchParams.get('tid')!;
    const attempt = await eventually(async () => handle.db.selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).executeTakeFirst(), 'the attempt row');
    await eventually(async () => f.toss.approvals.has(attempt.id), 'Toss approved it');
    await server.kill();
    await posted;
    const left = await handle.db.selectFrom('payment_attempts').select(['status', 'owner']).where('id', '=', attempt.id).executeTakeFirstOrThrow();
    assert.equal(left.status, 'OPEN', 'the crash left the attempt open');
    assert.match(left.owner ?? '', /\/\d+\/[0-9a-f]{12}$/, 'held by the killed process');
    assert.equal((await handle.db.selectFrom('payments').select('state').where('id', '=', paymentId).executeTakeFirstOrThrow()).state, 'STORE_REQUEST');

    // Toss answers the restarted server's look-up only when the test says so.
    let answer!: () => void;
    f.toss.lookupGate = new Promise<void>((r) => (answer = r));
    const restartedAt = Date.now();
    await server.start();
    const taken = await eventually(async () => {
      const a = await handle.db.selectFrom('payment_attempts').select(['status', 'owner']).where('id', '=', attempt.id).executeTakeFirstOrThrow();
      return a.owner !== left.owner ? a : null;
    }, 'the restarted server took the attempt over', 20_000, 50);
    assert.equal(taken.status, 'OPEN', 'its look-up is on its way');
    assert.ok(Date.now() - Number(attempt.created_at) < stale, 'taken over before the attempt was stale');

    const again = await post('4242424242424242');
    const page = await again.text();
    assert.equal(again.status, 202, page);
    assert.match(page, /앞선 결제 시도의 결과를 확인하고 있습니다/);
    assert.doesNotMatch(page, /이미 처리된/);
    assert.equal(f.toss.requests.filter((r) => r.path === '/v1/payments/key-in').length, 1, 'the second card never reached Toss');

    answer();
    f.toss.lookupGate = null;
    const settled = await eventually(async () => {
      const p = await handle.db.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirstOrThrow();
      return p.state === 'APPROVE_COMPLETE' ? p : null;
    }, 'the restarted server settled the approval', 20_000, 50);
    const settledIn = Date.now() - restartedAt;
    assert.ok(Date.now() - Number(attempt.created_at) < stale, `settled before the attempt was stale (${settledIn} ms after the restart)`);
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
