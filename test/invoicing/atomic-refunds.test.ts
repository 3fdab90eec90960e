/**
 * Money moves under a failure injected between their statements (issue 28, item 9): a refund of
 * points commits with the state change that causes it, or neither does. The failure is a write
 * that fails inside the transaction (`withFailingInserts` on the ledger, after the state change
 * was written in it; the audit log after a payment's cancel); afterwards nothing of the move is
 * left, and the next run makes it exactly once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyReport } from '../../src/invoicing/delivery.js';
import type { Send } from '../../src/invoicing/repository.js';
import { SendRunner } from '../../src/invoicing/sends.js';
import type { MessagingProvider } from '../../src/ports/messaging.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { withFailingInserts } from '../helpers/db.js';
import { captureLog } from '../helpers/log.js';
import { ownerClient } from '../console/support.js';
import { createOne, newAccount, points } from './support.js';

forEachEngine('refunds commit with their state change', (engine) => {
  const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' }, { runJobs: false });
  const db = () => t.app.sunap.database.db;
  const sendRow = (id: string) => db().selectFrom('sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const ledger = async (ref: string) => (await db().selectFrom('ledger').select(['kind', 'delta']).where('ref', '=', ref).orderBy('id').execute()).map((r) => [r.kind, Number(r.delta)]);

  async function waitingSend(phone: string, channel = 'ALIMTALK') {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, { sendChannel: channel, members: [{ studentName: '홍길동', studentPhone: phone }] });
    const inv = await db().selectFrom('invoices').select(['id', 'send_status']).where('unique_id', '=', id).executeTakeFirstOrThrow();
    const send = await db().selectFrom('sends').selectAll().where('invoice_id', '=', Number(inv.id)).executeTakeFirstOrThrow();
    return { a, invoiceId: Number(inv.id), send };
  }
  const refusing: MessagingProvider = {
    send: async () => ({ accepted: false, error: '수신할 수 없는 번호입니다' }),
    status: async () => ({ delivery: 'FAILED' }),
  };
  const runner = (messaging: MessagingProvider) => new SendRunner(db(), {
    gateway: t.app.sunap.gateway, messaging, clock: t.app.sunap.clock, costs: t.app.sunap.config.costs, log: captureLog().log, timeoutMs: 5000,
  });

  test('a refused send: its FAILED state, the invoice\'s send status and the refund commit together or not at all', async () => {
    const { a, invoiceId, send } = await waitingSend('01073330001');
    assert.equal(await points(t, a), 90);
    const before = await db().selectFrom('invoices').select(['send_status', 'send_count']).where('id', '=', invoiceId).executeTakeFirstOrThrow();
    await assert.rejects(withFailingInserts(db(), engine, 'ledger', () => runner(refusing).run(send.id, true)), /simulated write failure/);
    const broken = await sendRow(send.id);
    assert.notEqual(broken.status, 'FAILED', 'not FAILED without its refund');
    assert.equal(broken.error_message, null);
    assert.equal(await points(t, a), 90, 'no refund');
    assert.deepEqual(await ledger(send.id), [['RESERVE', -10]]);
    assert.deepEqual(await db().selectFrom('invoices').select(['send_status', 'send_count']).where('id', '=', invoiceId).executeTakeFirstOrThrow(), before, 'the invoice unchanged');
    // The next run settles it, once.
    await runner(refusing).run(send.id, true);
    assert.equal((await sendRow(send.id)).status, 'FAILED');
    assert.equal(await points(t, a), 100);
    assert.deepEqual(await ledger(send.id), [['RESERVE', -10], ['REFUND', 10]]);
    await runner(refusing).run(send.id, true);
    assert.deepEqual(await ledger(send.id), [['RESERVE', -10], ['REFUND', 10]], 'a second run refunds nothing');
  });

  test('a delivery report: the settled channel and cost and the refund of the difference commit together or not at all', async () => {
    for (const [report, cost] of [[{ delivery: 'DELIVERED', channel: 'ALIMTALK' }, 10], [{ delivery: 'FAILED', channel: 'SMS' }, 0]] as const) {
      const { a, send } = await waitingSend(`0107333${cost === 10 ? '0002' : '0003'}`, 'ALIMTALK_THEN_SMS');
      await db().updateTable('sends').set({ status: 'SUCCESS', provider_message_id: `m-${send.id}`, delivery_status: 'ACCEPTED', cost_settled: null, sent_at: t.app.sunap.clock.nowMs() })
        .where('id', '=', send.id).execute();
      const accepted: Send = await sendRow(send.id);
      const deps = { db: db(), clock: t.app.sunap.clock, costs: t.app.sunap.config.costs };
      assert.equal(await points(t, a), 70, 'the SMS price reserved');
      await assert.rejects(withFailingInserts(db(), engine, 'ledger', () => applyReport(deps, accepted, report)), /simulated write failure/);
      const broken = await sendRow(send.id);
      assert.deepEqual([broken.cost_settled, broken.delivery_status, broken.channel_used], [null, 'ACCEPTED', accepted.channel_used], `${report.delivery}: nothing settled`);
      assert.equal(await points(t, a), 70);
      await applyReport(deps, accepted, report);
      const settled = await sendRow(send.id);
      assert.equal(Number(settled.cost_settled), cost);
      assert.equal(settled.delivery_status, report.delivery);
      assert.equal(await points(t, a), 100 - cost);
      assert.deepEqual(await ledger(send.id), [['RESERVE', -30], ['REFUND', 30 - cost]]);
      await applyReport(deps, accepted, report);
      assert.deepEqual(await ledger(send.id), [['RESERVE', -30], ['REFUND', 30 - cost]], 'once');
    }
  });

  test('a console cancel: CANCEL_COMPLETE and its audit row commit together or not at all; the refund the processor made is then settled by the look-up, once', async () => {
    const { c } = await ownerClient(t);
    const body = paymentBody() as { TRANS_SEQNO: string };
    const r = await t.gw('requestPayment', body);
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    assert.equal((await t.pay(body.TRANS_SEQNO)).approved, true);
    const path = `/console/payments/${encodeURIComponent(body.TRANS_SEQNO)}/cancel`;
    const row = () => db().selectFrom('payments').selectAll().where('trans_seqno', '=', body.TRANS_SEQNO).where('store_code', '=', t.storeCode).executeTakeFirstOrThrow();
    const audits = () => db().selectFrom('audit_log').select('action').where('action', '=', 'payment.cancel').where('target', '=', body.TRANS_SEQNO).execute();
    const csrf = await c.csrf(path);
    const failed = await withFailingInserts(db(), engine, 'audit_log', () => c.post(path, { reason: '고객 요청', confirm: 'yes' }, { csrf }));
    assert.equal(failed.status, 500, 'the cancel did not complete');
    const p = await row();
    assert.equal(p.state, 'APPROVE_COMPLETE', 'not cancelled without its audit row');
    assert.equal(p.cancel_at, null);
    assert.equal((await audits()).length, 0);
    const open = await db().selectFrom('payment_attempts').select(['kind', 'status']).where('payment_id', '=', p.id).where('kind', '=', 'CANCEL').execute();
    assert.deepEqual(open.map((x) => x.status), ['OPEN'], 'the cancel attempt stays open: the processor may have refunded');
    // The processor did refund: the look-up that settles open attempts finds it and commits the cancel once.
    await t.app.sunap.clock.advance(600);
    await t.app.sunap.gateway.reconcile(p.id);
    const settled = await row();
    assert.equal(settled.state, 'CANCEL_COMPLETE');
    assert.equal(Number(settled.cancel_amount), Number(p.amount));
    await t.app.sunap.gateway.reconcile(p.id);
    const attempts = await db().selectFrom('payment_attempts').select('status').where('payment_id', '=', p.id).where('kind', '=', 'CANCEL').execute();
    assert.equal(attempts.length, 1, 'one cancel, settled once');
    assert.notEqual(attempts[0]!.status, 'OPEN');
  });
});
