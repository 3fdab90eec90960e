/**
 * Crash windows reproduced exactly (in process): the state a SIGKILL leaves at one precise
 * moment, or two processes acting on the same leftover at once. The random kills of
 * crash.test.ts hit these windows only sometimes; these tests hit them every time.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { findStoreByCode } from '../../src/gateway/repository.js';
import { STALE_ATTEMPT_MS } from '../../src/gateway/index.js';
import { setPaymentId } from '../../src/invoicing/repository.js';
import type { ApproveOutcome, CardProcessor } from '../../src/ports/card-processor.js';
import { SandboxCardProcessor } from '../../src/ports/sandbox-card-processor.js';
import { SandboxMessaging } from '../../src/ports/sandbox-messaging.js';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { createOne, newAccount, points, waitSent } from '../invoicing/support.js';

const card = { number: '4242424242424242', expiryMonth: '12', expiryYear: '99', holderId: '900101', passwordDigits: '00' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sandbox network with a pause before or after it acts: a slow processor call that a moved clock outlives. */
class SlowProcessor implements CardProcessor {
  inner!: SandboxCardProcessor;
  pause: 'before' | 'after' | null = null;
  ms = 400;
  async approve(req: Parameters<CardProcessor['approve']>[0]): Promise<ApproveOutcome> {
    if (this.pause === 'before') await sleep(this.ms);
    const r = await this.inner.approve(req);
    if (this.pause === 'after') await sleep(this.ms);
    return r;
  }
  lookup(key: string) {
    return this.inner.lookup(key);
  }
  cancel(req: Parameters<CardProcessor['cancel']>[0]) {
    return this.inner.cancel(req);
  }
}

forEachEngine('crash windows reproduced exactly', (engine) => {
  let t: TestApp;
  const slow = new SlowProcessor();
  before(async () => {
    t = await startApp(engine, {}, { processor: slow });
    slow.inner = new SandboxCardProcessor(t.app.sunap.database.db);
  });
  after(async () => t?.close());

  const db = () => t.app.sunap.database.db;
  async function payment() {
    const body = paymentBody();
    await t.gw('requestPayment', body);
    return (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
  }
  const charges = async () => new Map((await db().selectFrom('sandbox_card_charges').selectAll().execute()).map((c) => [c.idempotency_key, JSON.parse(c.outcome)]));
  const attempts = (paymentId: string) => db().selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).execute();

  test('killed after the provider accepted a message, the invoice paid before the send job ran again: the send is SUCCESS and paid for', async () => {
    const a = await newAccount(t, { points: 100 });
    await t.app.sunap.worker.stop();
    let sendId: string;
    try {
      const id = await createOne(t, a, { members: [{ studentName: '홍길동', studentPhone: '01071110001' }] });
      const inv = await db().selectFrom('invoices').selectAll().where('unique_id', '=', id).executeTakeFirstOrThrow();
      const send = await db().selectFrom('sends').selectAll().where('invoice_id', '=', inv.id).executeTakeFirstOrThrow();
      sendId = send.id;
      // What the send job did before the kill: the payment issued, the send ACCEPTING, the provider accepted.
      const store = (await findStoreByCode(db(), inv.store_code))!;
      const p = await t.app.sunap.gateway.createPayment(store, { transSeqNo: inv.trans_seqno, amount: Number(inv.amount), mobileNo: inv.receiver_phone, payUserName: inv.receiver_name, requestReason: inv.reason });
      assert.ok(await setPaymentId(db(), inv.id, p.id, t.app.sunap.clock.nowMs()));
      await db().updateTable('sends').set({ status: 'ACCEPTING' }).where('id', '=', send.id).execute();
      const accepted = await new SandboxMessaging(db(), t.app.sunap.clock).send({ idempotencyKey: send.id, channel: 'ALIMTALK', to: '01071110001', text: 'first', link: '' });
      assert.ok(accepted.accepted);
      // The customer pays from the message before the job is picked up again.
      assert.equal((await t.pay(inv.trans_seqno, undefined, inv.store_code)).approved, true);
    } finally {
      t.app.sunap.worker.start();
    }
    const bills = (await t.get('/app/v1/sales/bill', a.h)).body.result_data.bills;
    const d = await waitSent(t, a, bills[0].uniqueId);
    const send = await db().selectFrom('sends').selectAll().where('id', '=', sendId!).executeTakeFirstOrThrow();
    const msgs = await db().selectFrom('sandbox_messages').select('id').where('idempotency_key', '=', sendId!).execute();
    assert.equal(msgs.length, 1);
    assert.equal(send.status, 'SUCCESS', `the accepted message must be recorded as sent (got ${send.status}: ${send.error_message})`);
    assert.equal(send.provider_message_id, msgs[0]!.id);
    assert.equal(d.bill.sendStatus, 'SENT');
    assert.equal(await points(t, a), 90, 'an accepted message is paid for');
  });

  test('two processes reconcile the same abandoned approval at once: approved once, the charge is not voided', async () => {
    const p = await payment();
    const key = newId();
    await db().insertInto('payment_attempts').values({
      id: key, payment_id: p.id, kind: 'APPROVE', status: 'OPEN', card_bin: '424242', card_last4: '4242', issuer_name: null,
      installment_month: '00', message: null, created_at: t.app.sunap.clock.nowMs() - STALE_ATTEMPT_MS - 1000, closed_at: null,
    }).execute();
    assert.equal((await slow.inner.approve({ idempotencyKey: key, amount: p.amount, installmentMonth: '00', card })).outcome, 'APPROVED');
    await Promise.all([t.app.sunap.gateway.reconcile(p.id), t.app.sunap.gateway.reconcile(p.id), t.app.sunap.gateway.reconcileAll()]);
    const after = (await t.app.sunap.gateway.findById(p.id))!;
    assert.equal(after.state, 'APPROVE_COMPLETE');
    const c = await charges();
    assert.equal(c.has(`void:${key}`), false, 'the approval the payment rests on was voided at the card network');
    assert.deepEqual((await attempts(p.id)).map((x) => x.status), ['APPROVED']);
  });

  test('resends of overlapping lists in opposite orders, next to new sends settling: no deadlock, every answer 200', async () => {
    const a = await newAccount(t, { points: 1_000_000 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await createOne(t, a, { members: [{ studentName: '홍길동', studentPhone: `0107222000${i + 1}` }] }));
    for (const id of ids) await waitSent(t, a, id);
    const statuses: number[] = [];
    for (let round = 0; round < 8; round++) {
      const rs = await Promise.all([
        t.post('/app/v1/sales/bill/resend', { billIds: ids }, a.h),
        t.post('/app/v1/sales/bill/resend', { billIds: [...ids].reverse() }, a.h),
        t.post('/app/v1/sales/bill', { reason: '수강료', amount: 1000, sendChannel: 'ALIMTALK_THEN_SMS', members: [{ studentName: '갑', studentPhone: '01072229999' }, { studentName: '을', studentPhone: '01072220000' }] }, a.h),
      ]);
      statuses.push(...rs.map((r) => r.status));
    }
    assert.deepEqual(statuses.filter((s) => s !== 200), [], 'a request failed (a deadlock answers 500)');
  });

  for (const pause of ['before', 'after'] as const) {
    test(`the clock moves past the staleness while the processor is still answering (${pause} it acts): one approval, on record, never voided`, async () => {
      const p = await payment();
      slow.pause = pause;
      try {
        const paying = t.app.sunap.gateway.pay(p.id, card, '00');
        await sleep(150);
        await t.app.sunap.clock.advance(STALE_ATTEMPT_MS / 1000 + 1);
        await t.app.sunap.gateway.reconcile(p.id);
        const r = await paying;
        const after = (await t.app.sunap.gateway.findById(p.id))!;
        const rows = await attempts(p.id);
        const c = await charges();
        const approved = rows.filter((x) => x.status === 'APPROVED');
        const charged = rows.filter((x) => c.get(x.id)?.outcome === 'APPROVED' && !c.has(`void:${x.id}`));
        if (after.state === 'APPROVE_COMPLETE') {
          assert.equal(approved.length, 1, `approved payment, attempts ${JSON.stringify(rows.map((x) => x.status))}`);
          assert.equal(charged.length, 1, 'exactly one standing charge');
          assert.equal(c.get(approved[0]!.id)?.approvalNumber, after.approval_number);
          assert.equal(r.outcome === 'APPROVED' || r.outcome === 'STATE', true);
        } else {
          assert.equal(after.state, 'STORE_REQUEST');
          assert.equal(charged.length, 0, 'charged without an approval on record');
          assert.notEqual(r.outcome, 'APPROVED');
        }
        assert.equal(rows.filter((x) => x.status === 'OPEN').length, 0);
      } finally {
        slow.pause = null;
      }
    });
  }
});
