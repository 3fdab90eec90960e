import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STALE_ATTEMPT_MS } from '../../src/gateway/index.js';
import { DEFAULT_SANDBOX_CARD } from '../../src/gateway/sandbox-routes.js';
import { SandboxCardProcessor } from '../../src/ports/sandbox-card-processor.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { openAttempt } from '../helpers/attempts.js';

const card = DEFAULT_SANDBOX_CARD;

forEachEngine('recovery of attempts left open by a crash', (engine) => {
  const t = withApp(engine, {}, { keyIn: true });

  async function payment() {
    const body = paymentBody();
    await t.gw('requestPayment', body);
    return (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
  }
  /** What a process killed between the processor's answer and its commit leaves behind. */
  const crashedAttempt = (paymentId: string, kind: 'APPROVE' | 'CANCEL') => openAttempt(t.app.sunap.database.db, {
    paymentId, kind, createdAt: t.app.sunap.clock.nowMs() - STALE_ATTEMPT_MS - 1000, card_bin: '424242', card_last4: '4242', installment_month: '00',
  });
  const attempts = (paymentId: string) => t.app.sunap.database.db.selectFrom('payment_attempts').select(['id', 'kind', 'status'])
    .where('payment_id', '=', paymentId).execute();

  test('the processor approved but we never committed: the next payer finishes that approval, no second charge', async () => {
    const p = await payment();
    const crashed = await crashedAttempt(p.id, 'APPROVE');
    const charged = await new SandboxCardProcessor(t.app.sunap.database.db).approve({ idempotencyKey: crashed, amount: p.amount, installmentMonth: '00', card });
    assert.equal(charged.outcome, 'APPROVED');
    const r = await t.app.sunap.gateway.pay(p.id, card, '00');
    assert.equal(r.outcome, 'STATE', 'the second submission finds the payment already approved');
    assert.equal(r.payment.state, 'APPROVE_COMPLETE');
    assert.equal(r.payment.approval_number, (charged as { approvalNumber: string }).approvalNumber);
    const rows = await attempts(p.id);
    assert.deepEqual(rows.filter((a) => a.status === 'APPROVED').map((a) => a.id), [crashed]);
    const charges = await t.app.sunap.database.db.selectFrom('sandbox_card_charges').select('idempotency_key')
      .where('idempotency_key', 'in', rows.map((a) => a.id)).execute();
    assert.equal(charges.length, 1, 'one charge at the card network');
    const jobs = await t.app.sunap.database.db.selectFrom('jobs').select('id').where('unique_key', '=', `callback:${p.id}`).execute();
    assert.equal(jobs.length, 1, 'the callback was enqueued with the approval');
  });

  test('the processor never saw the attempt: it is closed and the customer can pay', async () => {
    const p = await payment();
    const crashed = await crashedAttempt(p.id, 'APPROVE');
    const r = await t.app.sunap.gateway.pay(p.id, card, '00');
    assert.equal(r.outcome, 'APPROVED');
    const rows = await attempts(p.id);
    assert.equal(rows.find((a) => a.id === crashed)!.status, 'ERROR');
  });

  test('a cancel left open is finished by the periodic sweep', async () => {
    const p = await payment();
    assert.equal((await t.app.sunap.gateway.pay(p.id, card, '00')).outcome, 'APPROVED');
    await crashedAttempt(p.id, 'CANCEL');
    assert.ok((await t.app.sunap.gateway.reconcileAll()) >= 1);
    const after = (await t.app.sunap.gateway.findById(p.id))!;
    assert.equal(after.state, 'CANCEL_COMPLETE');
    assert.deepEqual((await attempts(p.id)).filter((a) => a.kind === 'CANCEL').map((a) => a.status), ['CANCELED']);
  });

  test('a fresh open attempt (in progress elsewhere) is left alone', async () => {
    const p = await payment();
    await openAttempt(t.app.sunap.database.db, { paymentId: p.id, kind: 'APPROVE', createdAt: t.app.sunap.clock.nowMs() });
    assert.equal(await t.app.sunap.gateway.reconcile(p.id), false);
  });
});
