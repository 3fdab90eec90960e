import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { GatewayContext } from '../../src/gateway/context.js';
import { ProcessorRegistry } from '../../src/gateway/processors.js';
import { reconcile, STALE_ATTEMPT_MS, staleAttemptMs } from '../../src/gateway/reconcile.js';
import type { Payment } from '../../src/gateway/repository.js';
import { DEFAULT_SANDBOX_CARD } from '../../src/gateway/sandbox-routes.js';
import type { CardProcessor } from '../../src/ports/card-processor.js';
import { SandboxCardProcessor } from '../../src/ports/sandbox-card-processor.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { openAttempt } from '../helpers/attempts.js';
import { captureLog } from '../helpers/log.js';

/**
 * The reconcile of one payment (src/gateway/reconcile.ts) on a clock that stands still, so the
 * age at which an open attempt counts as abandoned is tested to the millisecond. Payments are
 * made through the app; the reconcile runs with a context of its own.
 */
const rd = (r: { body: any }) => r.body.result_data;

test('an attempt counts as abandoned after three times the processor\'s longest call, never under 10 s, 60 s when it does not say', () => {
  assert.equal(staleAttemptMs({}), STALE_ATTEMPT_MS);
  assert.equal(STALE_ATTEMPT_MS, 60_000);
  assert.equal(staleAttemptMs({ callLimitMs: 20_000 }), 60_000);
  assert.equal(staleAttemptMs({ callLimitMs: 4_000 }), 12_000);
  assert.equal(staleAttemptMs({ callLimitMs: 3_000 }), 10_000);
  assert.equal(staleAttemptMs({ callLimitMs: 1_000 }), 10_000);
});

forEachEngine('the reconcile of one payment', (engine) => {
  const t = withApp(engine, {}, { runJobs: false, keyIn: true });
  const NOW = Date.UTC(2026, 10, 23, 3, 0, 0);
  const cancels: Parameters<CardProcessor['cancel']>[0][] = [];
  let network: SandboxCardProcessor;
  let ctx: GatewayContext;
  let log: ReturnType<typeof captureLog>;
  before(() => {
    network = new SandboxCardProcessor(t.app.sunap.database.db);
    log = captureLog();
    const processor: CardProcessor = {
      approve: (r) => network.approve(r),
      lookup: (k) => network.lookup(k),
      cancel: (r) => {
        cancels.push(r);
        return network.cancel(r);
      },
    };
    const processors = new ProcessorRegistry(t.app.sunap.database.db, t.app.sunap.box, {
      global: { processor: 'sandbox', way: 'key-in' }, globalKeys: {}, live: false, checkout: {}, keyIn: { 'sandbox-keyin': () => processor },
    });
    ctx = {
      db: t.app.sunap.database.db, clock: { nowMs: () => NOW, now: () => new Date(NOW) }, processors, box: t.app.sunap.box, log: log.log, listeners: [],
      wake: () => {}, staleAttemptMs: staleAttemptMs(processor), reconcile: async () => false,
    };
  });

  const db = () => t.app.sunap.database.db;
  async function payment(pay = false): Promise<Payment> {
    const body = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    if (pay) assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
    return (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
  }
  const open = (paymentId: string, kind: 'APPROVE' | 'CANCEL' | 'DELETE', ageMs: number, facts: { card_bin?: string; card_last4?: string; installment_month?: string } = {}) =>
    openAttempt(db(), { paymentId, kind, createdAt: NOW - ageMs, ...facts });
  const attempt = (id: string) => db().selectFrom('payment_attempts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('open one millisecond short of the limit it is left alone; at the limit it is settled', async () => {
    const p = await payment();
    const young = await open(p.id, 'APPROVE', STALE_ATTEMPT_MS - 1);
    assert.equal(await reconcile(ctx, p.id), false);
    assert.equal((await attempt(young)).status, 'OPEN');
    await db().deleteFrom('payment_attempts').where('id', '=', young).execute();
    const old = await open(p.id, 'APPROVE', STALE_ATTEMPT_MS);
    assert.equal(await reconcile(ctx, p.id), true);
    const a = await attempt(old);
    assert.deepEqual([a.status, a.message, Number(a.closed_at)], ['ERROR', 'abandoned: the processor has no record of it', NOW]);
    const line = log.msgs('reconciled an attempt left open').find((l) => l.attempt === old);
    assert.deepEqual(line && [line.payment, line.kind], [p.id, 'APPROVE']);
    assert.equal(await reconcile(ctx, p.id), false, 'nothing open any more');
  });

  test('an approval the network made is committed with the card facts the attempt kept', async () => {
    const p = await payment();
    const id = await open(p.id, 'APPROVE', STALE_ATTEMPT_MS, { card_bin: '555555', card_last4: '4444', installment_month: '03' });
    const card = { ...DEFAULT_SANDBOX_CARD, number: '5555555555554444' };
    assert.equal((await network.approve({ idempotencyKey: id, amount: p.amount, installmentMonth: '03', card })).outcome, 'APPROVED');
    assert.equal(await reconcile(ctx, p.id), true);
    const after = (await t.app.sunap.gateway.findById(p.id))!;
    assert.deepEqual([after.state, after.card_bin, after.card_last4, after.installment_month, after.issuer_name], ['APPROVE_COMPLETE', '555555', '4444', '03', 'KB국민카드']);
    assert.equal((await attempt(id)).status, 'APPROVED');
  });

  test('a decline the network recorded closes the attempt as DECLINED, with no message of ours', async () => {
    const p = await payment();
    const id = await open(p.id, 'APPROVE', STALE_ATTEMPT_MS, { card_bin: '400000', card_last4: '0002', installment_month: '00' });
    const card = { ...DEFAULT_SANDBOX_CARD, number: '4000000000000002' };
    assert.equal((await network.approve({ idempotencyKey: id, amount: p.amount, installmentMonth: '00', card })).outcome, 'DECLINED');
    assert.equal(await reconcile(ctx, p.id), true);
    const a = await attempt(id);
    assert.deepEqual([a.status, a.message], ['DECLINED', null]);
    assert.equal((await t.app.sunap.gateway.findById(p.id))!.state, 'STORE_REQUEST');
  });

  test('an open cancel is finished at the network with an empty reason of record', async () => {
    const p = await payment(true);
    const id = await open(p.id, 'CANCEL', STALE_ATTEMPT_MS);
    const n = cancels.length;
    assert.equal(await reconcile(ctx, p.id), true);
    assert.deepEqual(cancels.slice(n).map((c) => [c.idempotencyKey, c.reason]), [[`cancel:${p.id}`, '결제 취소']]);
    const after = (await t.app.sunap.gateway.findById(p.id))!;
    assert.deepEqual([after.state, after.cancel_reason, Number(after.cancel_at)], ['CANCEL_COMPLETE', '', NOW]);
    assert.equal((await attempt(id)).status, 'CANCELED');
  });

  test('an open DELETE, or a CANCEL of a payment that cannot be cancelled, is closed as SKIPPED without asking the network', async () => {
    const waiting = await payment();
    const del = await open(waiting.id, 'DELETE', STALE_ATTEMPT_MS);
    const n = cancels.length;
    assert.equal(await reconcile(ctx, waiting.id), true);
    assert.deepEqual([(await attempt(del)).status, (await attempt(del)).message], ['SKIPPED', 'reconciled']);
    const cancelOfUnpaid = await open(waiting.id, 'CANCEL', STALE_ATTEMPT_MS);
    assert.equal(await reconcile(ctx, waiting.id), true);
    assert.equal((await attempt(cancelOfUnpaid)).status, 'SKIPPED');
    // A DELETE never refunds, whatever state the payment is found in.
    const paid = await payment(true);
    const delOfPaid = await open(paid.id, 'DELETE', STALE_ATTEMPT_MS);
    assert.equal(await reconcile(ctx, paid.id), true);
    assert.equal((await attempt(delOfPaid)).status, 'SKIPPED');
    assert.equal(cancels.length, n, 'the network was not asked');
    assert.equal((await t.app.sunap.gateway.findById(waiting.id))!.state, 'STORE_REQUEST');
    assert.equal((await t.app.sunap.gateway.findById(paid.id))!.state, 'APPROVE_COMPLETE');
  });
});
