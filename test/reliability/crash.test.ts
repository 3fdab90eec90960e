/**
 * Crash safety (docs/reliability.md): the real server as a child process under a mixed
 * workload, SIGKILLed at random moments and restarted on the same database, then drained and
 * checked against the database. Normal profile: ≥ 3 kills per engine; SUNAP_STRESS=1: ≥ 20.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import {
  checkInvariants, Client, createFixture, describeViolations, drain, FaultReceiver, hashNum, newLedger, rand,
  ROOT, ServerProcess, sleep, STRESS, workloadWorker, type Fixture, type Reaction,
} from './harness.js';

const KILLS = STRESS ? 24 : 4;
const WORKERS = STRESS ? 6 : 4;
/** Real time between a restart and the next kill. */
const RUN_MS: [number, number] = STRESS ? [1200, 4000] : [1200, 2500];

/**
 * The merchant's server fails some deliveries the first time or twice, by the delivery's own
 * key so a retry sees the same decision: 500, a redirect (never followed), a reset connection,
 * no answer (the outbound timeout), or a 503 twice. Everything else answers 200.
 */
export function flakyPolicy(d: { key: string; nth: number }): Reaction {
  const h = hashNum(d.key) % 12;
  if (h === 0 && d.nth === 1) return 500;
  if (h === 1 && d.nth === 1) return 302;
  if (h === 2 && d.nth === 1) return 'reset';
  if (h === 3 && d.nth === 1) return 'hang';
  if (h === 4 && d.nth <= 2) return 503;
  return 200;
}

/** The invariant check is not vacuous: break the database (and the receiver's log) one way each, and each is reported. */
async function theCheckCatchesBreakage(fx: Fixture, receiver: FaultReceiver): Promise<void> {
  const db = fx.db;
  const account = fx.accounts[0]!.accountId;
  await db.updateTable('wallets').set((eb) => ({ balance: eb('balance', '+', 1) })).where('account_id', '=', account).execute();
  const ok = await db.selectFrom('sends').selectAll().where('status', '=', 'SUCCESS').limit(2).execute();
  await db.updateTable('sends').set({ status: 'ACCEPTING' }).where('id', '=', ok[0]!.id).execute();
  const failed = await db.selectFrom('sends').selectAll().where('status', '=', 'FAILED').where('receiver_phone', 'not like', '%0000').executeTakeFirst();
  if (failed) {
    await db.insertInto('sandbox_messages').values({ id: newId(), idempotency_key: failed.id, channel: 'SMS', to_phone: failed.receiver_phone, text: 'x', link: null, delivery_status: 'ACCEPTED', sent_at: Date.now() }).execute();
  }
  const approved = await db.selectFrom('payment_attempts').selectAll().where('status', '=', 'APPROVED').limit(2).execute();
  await db.insertInto('payment_attempts').values({ ...approved[0]!, id: newId() }).execute();
  await db.insertInto('sandbox_card_charges').values({ idempotency_key: `void:${approved[1]!.id}`, outcome: JSON.stringify({ outcome: 'CANCELED' }), created_at: Date.now() }).execute();
  const event = await db.selectFrom('webhook_events').select('id').executeTakeFirstOrThrow();
  const kept = receiver.deliveries.filter((d) => d.headers['x-service-delivery'] !== String(event.id));
  receiver.deliveries.length = 0;
  receiver.deliveries.push(...kept);
  const report = await checkInvariants(fx, receiver, null);
  const expect = [/≠ ledger sum/, /ended ACCEPTING/, /APPROVED attempts/, /was voided/, new RegExp(`webhook event ${event.id} .*never answered 2xx`)];
  if (failed) expect.push(/but the provider accepted 1 message/);
  for (const re of expect) assert.ok(report.violations.some((v) => re.test(v)), `the check missed ${re}: ${report.violations.join(' | ')}`);
}

forEachEngine('crash safety: SIGKILL under a mixed workload', (engine) => {
  test(`${KILLS} kills and restarts on one database: nothing lost, nothing done twice`, { timeout: STRESS ? 1_200_000 : 150_000 }, async () => {
    const database = await createTestDatabase(engine);
    const fx = await createFixture(database.url, [5_000_000, 4000]);
    const receiver = await new FaultReceiver().start();
    receiver.policy = flakyPolicy;
    const server = new ServerProcess({ name: `crash-${engine}`, databaseUrl: database.url });
    const started = Date.now();
    try {
      await server.start();
      const client = new Client(fx, () => (server.alive ? [server.url] : []));
      const ledger = newLedger();
      let stop = false;
      const workers = Array.from({ length: WORKERS }, (_, i) => workloadWorker({ client, ledger, receiverUrl: receiver.url, clockMoves: i === 0 }, () => stop));
      const killed: number[] = [];
      for (let k = 0; k < KILLS; k++) {
        await sleep(RUN_MS[0] + rand(RUN_MS[1] - RUN_MS[0]));
        await server.kill();
        killed.push(Date.now() - started);
        // Sometimes the supervisor is slow to restart: the workload meets a refused connection meanwhile.
        await sleep(rand(400));
        await server.start();
      }
      await sleep(1000);
      stop = true;
      await Promise.all(workers);
      const drained = await drain(client, STRESS ? 240_000 : 90_000);
      const report = await checkInvariants(fx, receiver, ledger);
      const figures = {
        engine, profile: STRESS ? 'stress' : 'normal', kills: server.kills, starts: server.starts, requests: client.requests,
        operations: ledger.ops, noAnswer: ledger.noAnswer, serverErrors: ledger.serverErrors.length,
        invariantsChecked: report.checked, violations: report.violations.length, ...report.figures,
        drain: drained, seconds: Math.round((Date.now() - started) / 1000),
      };
      mkdirSync(join(ROOT, '.tmp', 'reliability'), { recursive: true });
      writeFileSync(join(ROOT, '.tmp', 'reliability', `crash-${engine}${STRESS ? '-stress' : ''}.json`), JSON.stringify({ figures, violations: report.violations, serverErrors: ledger.serverErrors }, null, 2));
      console.log(`crash [${engine}]: ${JSON.stringify(figures)}`);
      assert.ok(server.kills >= KILLS, `killed ${server.kills} times`);
      assert.deepEqual(report.violations, [], describeViolations(report));
      assert.deepEqual(ledger.serverErrors, [], 'the service answered 5xx');
      assert.ok(report.figures.approvedPayments > 0 && report.figures.messages > 0 && report.figures.webhookEvents > 0, 'the workload did real work');
      await server.stop();
      await theCheckCatchesBreakage(fx, receiver);
    } finally {
      await server.close();
      await receiver.close();
      await fx.store.close();
      await database.drop();
    }
  });
});
