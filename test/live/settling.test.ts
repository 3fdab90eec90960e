/**
 * Settling an approval whose outcome is open, in live mode against the Toss fake
 * (docs/reliability.md, "An attempt left by a dead process"; docs/going-live.md, "What happens
 * when an answer is lost"): an attempt held by a process of this host that is gone is settled
 * at once, one held by a live process only once stale; a customer who pays meanwhile reads that
 * the payment is being confirmed and the card is not sent.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { test } from 'node:test';
import { INSTANCE_ID } from '../../src/platform/instance.js';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { payOnPage, withFakes, withLiveApp } from './support.js';

async function deadOwner(): Promise<string> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return `${hostname()}/${child.pid}/0123456789ab`;
}

forEachEngine('live: settling an approval whose outcome is open', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f);
  const db = () => t.app.sunap.database.db;

  async function newPayment() {
    const body = paymentBody();
    const r = await t.gw('requestPayment', body);
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    const payment = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
    return { body, payment, redirect: r.body.result_data.REDIRECT_URL as string };
  }
  const attempts = (paymentId: string) => db().selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).orderBy('created_at').execute();
  /** An approval Toss made whose answer and first look-up were lost: the attempt stays OPEN, held by this process. */
  async function openApproval() {
    const p = await newPayment();
    f.toss.failLookups = 1;
    const r = await payOnPage(t, p.redirect, '4000000000003220');
    assert.equal(r.status, 202, r.text);
    const [open] = await attempts(p.payment.id);
    assert.deepEqual([open!.status, open!.owner], ['OPEN', INSTANCE_ID], 'the attempt is open and this process holds it');
    return { ...p, attempt: open! };
  }

  test('held by a process of this host that is gone, an open attempt is settled by the sweep at once; held by a live one, not before it is stale', async () => {
    const { payment, attempt } = await openApproval();
    assert.equal(await t.app.sunap.gateway.reconcileAll(), 0, 'a live holder, not stale: left alone');
    assert.equal((await attempts(payment.id))[0]!.status, 'OPEN');
    const gone = await deadOwner();
    await db().updateTable('payment_attempts').set({ owner: gone }).where('id', '=', attempt.id).execute();
    assert.ok(t.app.sunap.clock.nowMs() - Number(attempt.created_at) < t.app.sunap.gateway.staleAttemptMs, 'far from stale');
    assert.equal(await t.app.sunap.gateway.reconcileAll(), 1, 'a gone holder: settled now');
    const [settled] = await attempts(payment.id);
    assert.deepEqual([settled!.status, settled!.owner], ['APPROVED', INSTANCE_ID], 'taken over by this process, then settled');
    assert.equal((await t.app.sunap.gateway.findById(payment.id))!.state, 'APPROVE_COMPLETE');
    assert.equal(f.toss.approvals.get(attempt.id), 1, 'one charge');
  });

  test('a gone holder\'s attempt is taken over by one process: a second takeover from the same owner finds it taken', async () => {
    const { payment, attempt } = await openApproval();
    const gone = await deadOwner();
    await db().updateTable('payment_attempts').set({ owner: gone }).where('id', '=', attempt.id).execute();
    // Another process took it first: it now names that (live) process, so this one waits.
    await db().updateTable('payment_attempts').set({ owner: `${hostname()}/${process.ppid}/fedcba987654` }).where('id', '=', attempt.id).execute();
    assert.equal(await t.app.sunap.gateway.reconcile(payment.id), false, 'the live taker settles it, not this process');
    assert.equal((await attempts(payment.id))[0]!.status, 'OPEN');
    await db().updateTable('payment_attempts').set({ owner: gone }).where('id', '=', attempt.id).execute();
    assert.equal(await t.app.sunap.gateway.reconcile(payment.id), true);
    assert.equal((await t.app.sunap.gateway.findById(payment.id))!.state, 'APPROVE_COMPLETE');
  });

  test('paying again while an approval is being confirmed: 202 "being confirmed", never "already processed"; the card is not sent; searchPayment says STORE_REQUEST until it settles', async () => {
    const { body, payment, redirect, attempt } = await openApproval();
    // Toss stays unreachable for look-ups while the customer pays again: on a loaded machine a
    // look-up made meanwhile (the page's or the sweep's) would otherwise settle the approval first.
    f.toss.failLookups = 1_000;
    const keyIns = () => f.toss.requests.filter((r) => r.path === '/v1/payments/key-in').length;
    const before = keyIns();
    const again = await payOnPage(t, redirect, '4242424242424242');
    assert.equal(again.status, 202, again.text);
    assert.match(again.text, /앞선 결제 시도의 결과를 확인하고 있습니다\. 이 카드로는 결제하지 않았습니다/);
    assert.doesNotMatch(again.text, /이미 처리된/);
    assert.equal(keyIns(), before, 'the second card never reached Toss');
    const search = (await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).body.result_data;
    assert.deepEqual([search.APPROVE_STATUS, search.APPROVAL_NUMBER ?? ''], ['STORE_REQUEST', ''], 'not paid until the look-up settles it');
    f.toss.failLookups = 0;
    await t.app.sunap.clock.advance(Math.ceil(t.app.sunap.gateway.staleAttemptMs / 1000) + 1);
    assert.equal(await t.app.sunap.gateway.reconcile(payment.id), true);
    const paid = (await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).body.result_data;
    assert.deepEqual([paid.APPROVE_STATUS, paid.APPROVAL_NUMBER], ['APPROVE_COMPLETE', f.toss.payments.get(attempt.id)!.approveNo]);
  });
});
