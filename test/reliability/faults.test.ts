/**
 * Dependency faults: a merchant server that hangs, redirects or resets the connection; a
 * messaging provider that errors or never answers; PostgreSQL connections killed under load
 * and the database made unreachable (through a proxy: the machine's cluster is shared and is
 * never restarted). Every fault is recorded, retried, and nothing that was answered is lost.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase, engines } from '../helpers/db.js';
import {
  checkInvariants, Client, CONFIRM_PATH, createFixture, describeViolations, drain, FaultReceiver, newLedger, NoAnswer,
  ServerProcess, sleep, STRESS, TcpProxy, WEBHOOK_PATH, WEBHOOK_SECRET, workloadWorker, type Reaction,
} from './harness.js';
import { eventually } from '../helpers/wait.js';

const TIMEOUT_MS = 600;


forEachEngine('dependency faults: merchant server and messaging provider', (engine) => {
  test('a hanging, redirecting or resetting receiver: each attempt recorded as failed, not followed, retried on schedule', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase(engine);
    const fx = await createFixture(database.url, [100_000]);
    const receiver = await new FaultReceiver().start();
    const server = new ServerProcess({ name: `faults-http-${engine}`, databaseUrl: database.url, env: { SUNAP_OUTBOUND_TIMEOUT_MS: String(TIMEOUT_MS) } });
    try {
      await server.start();
      const client = new Client(fx, () => [server.url]);
      const faults: Reaction[] = ['hang', 302, 'reset'];
      // Each payment's (and each invoice's) first delivery meets one fault; the retry is answered 200.
      const planned = new Map<string, Reaction>();
      receiver.policy = (d) => (d.nth === 1 ? planned.get(d.path === WEBHOOK_PATH ? `bill:${d.json?.billId}` : `pay:${d.key}`) ?? 200 : 200);
      const seqs: string[] = [];
      for (const f of faults) {
        const seq = `FLT${String(f).toUpperCase()}${Date.now().toString(36)}`;
        planned.set(`pay:${seq}`, f);
        const r = await client.gw('requestPayment', {
          TRANS_SEQNO: seq, APPROVAL_AMOUNT: '12000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동', REQUEST_REASON: '수강료',
          CONFIRM_URL: `${receiver.url}${CONFIRM_PATH}`,
        });
        assert.equal(r.body.result_data.RESULT_CODE, '0000');
        assert.equal((await client.sandboxPay(seq, fx.storeCode)).body.approved, true);
        seqs.push(seq);
      }
      const a = fx.accounts[0]!;
      for (const f of faults) {
        const r = await client.app(a, 'POST', '/app/v1/sales/bill', {
          reason: '수강료', description: `fault ${f}`, amount: 30_000, members: [{ studentName: '홍길동', studentPhone: '01055501234' }],
          webhookUrl: `${receiver.url}${WEBHOOK_PATH}`, webhookSecret: WEBHOOK_SECRET,
        });
        assert.equal(r.body.result_code, 0);
      }
      const invoices = await eventually(async () => {
        const rows = await fx.db.selectFrom('invoices').select(['unique_id', 'trans_seqno', 'store_code', 'description']).where('payment_id', 'is not', null).execute();
        return rows.length === faults.length && rows;
      }, 'invoice payments issued');
      for (const inv of invoices) {
        planned.set(`bill:${inv.unique_id}`, faults.find((f) => inv.description === `fault ${f}`)!);
        assert.equal((await client.sandboxPay(inv.trans_seqno, inv.store_code)).body.approved, true);
      }

      // First attempts: each fails its own way and is recorded.
      const attempts = () => fx.db.selectFrom('outbound_attempts').selectAll().orderBy('id').execute();
      const first = await eventually(async () => {
        const rows = await attempts();
        return rows.length >= 6 && rows;
      }, 'six failed first attempts');
      assert.equal(first.length, 6, 'one attempt each until the retry is due');
      for (const row of first) {
        assert.equal(row.attempt_no, 1);
        assert.ok(row.error, `attempt ${row.id} recorded as failed`);
      }
      const errors = first.map((r) => r.error!);
      assert.equal(errors.filter((e) => e === `timed out after ${TIMEOUT_MS} ms`).length, 2, errors.join(' | '));
      assert.equal(errors.filter((e) => e === 'redirect 302 not followed').length, 2, errors.join(' | '));
      assert.equal(errors.filter((e) => /socket hang up|ECONNRESET|other side closed/.test(e)).length, 2, errors.join(' | '));
      const timedOut = first.filter((r) => r.error!.startsWith('timed out'));
      for (const r of timedOut) assert.ok(r.duration_ms >= TIMEOUT_MS - 50 && r.duration_ms < TIMEOUT_MS + 3000, `timeout after ${r.duration_ms} ms`);
      assert.equal(receiver.byPath('/elsewhere').length, 0, 'a redirect was followed');

      // Nothing more happens until the retries are due on the service clock (callbacks 10 s, webhooks 1 min).
      await sleep(500);
      assert.equal((await attempts()).length, 6);
      await client.advanceClock(11);
      await eventually(async () => (await attempts()).filter((r) => r.target === 'CALLBACK' && r.status_code === 200).length === 3, 'callback retries delivered');
      assert.equal((await attempts()).filter((r) => r.target === 'WEBHOOK').length, 3, 'webhooks wait for their own schedule');
      await client.advanceClock(50);
      await eventually(async () => (await attempts()).filter((r) => r.target === 'WEBHOOK' && r.status_code === 200).length === 3, 'webhook retries delivered');
      const all = await attempts();
      assert.equal(all.length, 12);
      for (const r of all.filter((x) => x.status_code === 200)) assert.equal(r.attempt_no, 2);
      // Same delivery number on the retry, and every callback carries its payment.
      for (const seq of seqs) assert.equal(receiver.deliveries.filter((d) => d.key === seq).length, 2);
      await drain(client);
      const report = await checkInvariants(fx, receiver, null);
      assert.deepEqual(report.violations, [], describeViolations(report));
    } finally {
      await server.close();
      await receiver.close();
      await fx.store.close();
      await database.drop();
    }
  });

  test('the messaging provider errors (7777) or never answers (5555): the send waits, retries under its key, one message, paid once', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase(engine);
    const fx = await createFixture(database.url, [1000]);
    const receiver = await new FaultReceiver().start();
    const server = new ServerProcess({ name: `faults-messaging-${engine}`, databaseUrl: database.url, env: { SUNAP_OUTBOUND_TIMEOUT_MS: String(TIMEOUT_MS) } });
    try {
      await server.start();
      const client = new Client(fx, () => [server.url]);
      const a = fx.accounts[0]!;
      const phones = { error: '01012347777', silent: '01012345555', fallback: '01022225555' };
      for (const [name, phone] of Object.entries(phones)) {
        const r = await client.app(a, 'POST', '/app/v1/sales/bill', {
          reason: '수강료', description: name, amount: 30_000, members: [{ studentName: '홍길동', studentPhone: phone }],
          sendChannel: name === 'fallback' ? 'ALIMTALK_THEN_SMS' : 'ALIMTALK',
        });
        assert.equal(r.body.result_code, 0);
      }
      const jobs = () => fx.db.selectFrom('jobs').selectAll().where('kind', '=', 'invoicing.send').execute();
      const failed = await eventually(async () => {
        const rows = await jobs();
        return rows.filter((j) => j.last_error !== null && j.status === 'PENDING').length === 3 && rows;
      }, 'three failed first send attempts');
      const errs = failed.map((j) => j.last_error!).sort();
      assert.match(errs.join('\n'), /sandbox messaging provider error/);
      assert.equal(errs.filter((e) => e.includes(`did not answer within ${TIMEOUT_MS} ms`)).length, 2, errs.join(' | '));
      // Meanwhile: the send is in progress, the invoice WAITING, its points still reserved.
      const sends = await fx.db.selectFrom('sends').selectAll().execute();
      assert.deepEqual(sends.map((s) => s.status), ['ACCEPTING', 'ACCEPTING', 'ACCEPTING']);
      const list = await client.app(a, 'GET', '/app/v1/sales/bill');
      assert.deepEqual(list.body.result_data.bills.map((b: { sendStatus: string }) => b.sendStatus), ['WAITING', 'WAITING', 'WAITING']);
      assert.equal((await client.app(a, 'GET', '/app/v1/points/me')).body.result_data.balance, 1000 - 10 - 10 - 30);
      await client.advanceClock(11);
      await eventually(async () => (await fx.db.selectFrom('sends').select('status').where('status', '=', 'SUCCESS').execute()).length === 3, 'every send settled');
      const msgs = await fx.db.selectFrom('sandbox_messages').selectAll().where('delivery_status', '=', 'ACCEPTED').execute();
      assert.equal(msgs.length, 3, 'one message per send');
      const outbox = await client.send('GET', '/sandbox/messages');
      assert.equal(outbox.body.messages.length, 3, 'the outbox lists the accepted messages, not the faults');
      // The fallback number's ALIMTALK was accepted silently on the first request: no SMS was needed.
      assert.equal(msgs.find((m) => m.to_phone === phones.fallback)!.channel, 'ALIMTALK');
      assert.equal((await client.app(a, 'GET', '/app/v1/points/me')).body.result_data.balance, 1000 - 30);
      await drain(client);
      const report = await checkInvariants(fx, receiver, null);
      assert.deepEqual(report.violations, [], describeViolations(report));
    } finally {
      await server.close();
      await receiver.close();
      await fx.store.close();
      await database.drop();
    }
  });
});

const skipPg = !engines.includes('postgres');
if (skipPg) console.error('!! SUNAP_TEST_SKIP_POSTGRES: the PostgreSQL fault tests (connections killed, database unreachable) are SKIPPED');

describe('dependency faults: PostgreSQL [postgres]', { skip: skipPg ? 'PostgreSQL is not available (SUNAP_TEST_SKIP_POSTGRES)' : false }, () => {
  async function underLoad(client: Client, receiverUrl: string, ms: number, during: (ledger: ReturnType<typeof newLedger>) => Promise<void>) {
    const ledger = newLedger();
    let stop = false;
    // Settled at once, so a worker's failure waits for the end instead of being an unhandled rejection.
    const workers = Array.from({ length: 4 }, () => workloadWorker({ client, ledger, receiverUrl }, () => stop).then(() => null, (err: unknown) => err));
    const started = Date.now();
    try {
      await during(ledger);
      await sleep(Math.max(0, ms - (Date.now() - started)));
    } finally {
      stop = true;
    }
    for (const err of await Promise.all(workers)) if (err) throw err;
    return ledger;
  }

  test('connections killed again and again under load (pg_terminate_backend): the process stays up and recovers, nothing answered is lost', { timeout: 150_000 }, async () => {
    const database = await createTestDatabase('postgres');
    const fx = await createFixture(database.url, [5_000_000, 4000]);
    const receiver = await new FaultReceiver().start();
    const appName = `sunap_rel_${Date.now().toString(36)}`;
    const url = new URL(database.url);
    url.searchParams.set('application_name', appName);
    const server = new ServerProcess({ name: 'faults-pg-terminate', databaseUrl: url.toString() });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await server.start();
      const client = new Client(fx, () => [server.url]);
      let killedBackends = 0;
      const ledger = await underLoad(client, receiver.url, STRESS ? 20_000 : 8_000, async () => {
        await sleep(800);
        for (let i = 0; i < (STRESS ? 40 : 12); i++) {
          const r = await admin.query('select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = $1 and application_name = $2 and pid <> pg_backend_pid()', [url.pathname.slice(1), appName]);
          killedBackends += r.rows.filter((x) => x.ok).length;
          assert.ok(server.alive, `the server died when its connections were killed:\n${server.tail()}`);
          await sleep(250 + Math.floor(Math.random() * 300));
        }
      });
      assert.ok(killedBackends > 0, 'connections were killed');
      assert.ok(server.alive, `the server died:\n${server.tail()}`);
      assert.equal(server.starts, 1, 'never restarted');
      assert.equal((await client.send('GET', '/readyz')).status, 200);
      // After the storm the service works without a restart.
      const r = await client.gw('requestPayment', { TRANS_SEQNO: `AFTER${Date.now()}`, APPROVAL_AMOUNT: '1000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍', REQUEST_REASON: '확인', CONFIRM_URL: `${receiver.url}${CONFIRM_PATH}` });
      assert.equal(r.body.result_data.RESULT_CODE, '0000');
      await drain(client);
      const report = await checkInvariants(fx, receiver, ledger);
      console.log(`pg_terminate_backend: ${JSON.stringify({ killedBackends, requests: client.requests, serverErrors: ledger.serverErrors.length, checked: report.checked, ...report.figures })}`);
      assert.deepEqual(report.violations, [], describeViolations(report));
    } finally {
      await admin.end();
      await server.close();
      await receiver.close();
      await fx.store.close();
      await database.drop();
    }
  });

  test('the database unreachable (a proxy stopped) and back: /readyz 503 then 200, no restart, nothing answered is lost', { timeout: 150_000 }, async () => {
    const database = await createTestDatabase('postgres');
    const fx = await createFixture(database.url, [5_000_000, 4000]);
    const receiver = await new FaultReceiver().start();
    const direct = new URL(database.url);
    const proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    await proxy.up();
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxy.port);
    const server = new ServerProcess({ name: 'faults-pg-proxy', databaseUrl: viaProxy.toString() });
    try {
      await server.start();
      const client = new Client(fx, () => [server.url]);
      const ready = async () => {
        try {
          return (await client.send('GET', '/readyz', undefined, { timeoutMs: 10_000 })).status;
        } catch (err) {
          if (err instanceof NoAnswer) return 0;
          throw err;
        }
      };
      const outages: { downMs: number; readyAfterMs: number }[] = [];
      const ledger = await underLoad(client, receiver.url, 1000, async (l) => {
        for (let i = 0; i < (STRESS ? 6 : 2); i++) {
          await sleep(1200);
          await proxy.down();
          const t0 = Date.now();
          const downAt = await eventually(async () => ((await ready()) === 503 ? Date.now() : false), '/readyz 503', 10_000);
          assert.ok(server.alive, `the server died with its database:\n${server.tail()}`);
          await sleep(1500);
          await proxy.up();
          const t1 = Date.now();
          await eventually(async () => (await ready()) === 200, '/readyz 200', 15_000);
          outages.push({ downMs: downAt - t0, readyAfterMs: Date.now() - t1 });
          void l;
        }
      });
      assert.ok(server.alive && server.starts === 1, 'recovered without a restart');
      await drain(client);
      const report = await checkInvariants(fx, receiver, ledger);
      console.log(`proxy outages: ${JSON.stringify({ outages, requests: client.requests, serverErrors: ledger.serverErrors.length, checked: report.checked, ...report.figures })}`);
      assert.deepEqual(report.violations, [], describeViolations(report));
      assert.ok(report.figures.payments > 0 && report.figures.invoices > 0);
    } finally {
      await server.close();
      await proxy.down();
      await receiver.close();
      await fx.store.close();
      await database.drop();
    }
  });
});

