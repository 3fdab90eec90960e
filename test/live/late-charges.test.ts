/**
 * A charge Toss books after Sunap's look-up found nothing (docs/reliability.md, "A charge booked
 * late"), in live mode against the Toss fake: the attempt rests UNKNOWN, the customer may pay
 * again, and the attempt is looked up again on its schedule for as long as Toss keeps the order
 * (15 days). A late charge pays a payment that still waits; one found after the customer paid
 * through another attempt is refunded automatically, shown in the timeline and the audit log.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LATE_CHARGE_BACKOFF_SECONDS, LATE_CHARGE_FIRST_LOOKUP_SECONDS } from '../../src/gateway/index.js';
import { TOSS_KEEPS_ORDERS_MS } from '../../src/ports/toss-card-processor.js';
import { ConsoleClient, newOwner, textOf } from '../console/support.js';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { jobSettled } from '../helpers/jobs.js';
import { eventually } from '../helpers/wait.js';
import { payOnPage, sleep, withFakes, withLiveApp } from './support.js';

const BOOKED_LATE = '4000000000004004';
const NEVER_ANSWERED = '4000000000001000';
const DAY_S = 86_400;

test('the look-ups of an unknown attempt: 1 min, then 2, 5, 10, 30 min, 1, 2, 4, 8, 12 h, then daily 13 times: 23 looks ending 14 d 3 h 48 min after the first, inside the 15 days Toss keeps an order', () => {
  assert.equal(LATE_CHARGE_FIRST_LOOKUP_SECONDS, 60);
  assert.deepEqual(LATE_CHARGE_BACKOFF_SECONDS, [120, 300, 600, 1800, 3600, 7200, 14400, 28800, 43200, ...Array(13).fill(DAY_S)]);
  const total = LATE_CHARGE_FIRST_LOOKUP_SECONDS + LATE_CHARGE_BACKOFF_SECONDS.reduce((a, b) => a + b, 0);
  assert.equal(total, 14 * DAY_S + 3 * 3600 + 48 * 60);
  assert.equal(TOSS_KEEPS_ORDERS_MS, 15 * DAY_S * 1000);
  assert.ok(total * 1000 < TOSS_KEEPS_ORDERS_MS);
});

forEachEngine('live: a charge Toss books late', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f);
  const db = () => t.app.sunap.database.db;
  const clock = () => t.app.sunap.clock;

  async function newPayment() {
    const body = paymentBody();
    const r = await t.gw('requestPayment', body);
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    const payment = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
    return { body, payment, redirect: r.body.result_data.REDIRECT_URL as string };
  }
  const attempt = (id: string) => db().selectFrom('payment_attempts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const lookupsOf = (orderId: string) => f.toss.requests.filter((r) => r.method === 'GET' && r.path === `/v1/payments/orders/${orderId}`).length;
  const job = (attemptId: string) => db().selectFrom('jobs').selectAll().where('unique_key', '=', `attempt-lookup:${attemptId}`).executeTakeFirstOrThrow();

  /** An approval whose answer was lost and that Toss did not know at the reconcile's look-up: UNKNOWN, the slot free. */
  async function unknownAttempt(card: string) {
    const p = await newPayment();
    const r = await payOnPage(t, p.redirect, card);
    assert.equal(r.status, 202, r.text);
    const open = (await db().selectFrom('payment_attempts').selectAll().where('payment_id', '=', p.payment.id).executeTakeFirstOrThrow());
    assert.equal(open.status, 'OPEN');
    await clock().advance(Math.ceil(t.app.sunap.gateway.staleAttemptMs / 1000) + 1);
    const before = lookupsOf(open.id);
    assert.equal(await t.app.sunap.gateway.reconcile(p.payment.id), true);
    assert.equal(lookupsOf(open.id), before + 1, 'the reconcile looked it up once');
    const a = await attempt(open.id);
    assert.deepEqual([a.status, a.message], ['UNKNOWN', '결제사에 아직 기록이 없어 다시 조회합니다'], 'kept, not closed after one look-up');
    const j = await job(open.id);
    assert.deepEqual([j.kind, j.status, j.attempts, j.max_attempts], ['gateway.attempt-lookup', 'PENDING', 0, 23]);
    assert.equal(Number(j.run_at) - Number(a.closed_at), 60_000, 'the first look again a minute after the one that found nothing');
    return { ...p, attemptId: open.id };
  }

  test('booked late while the payment still waits: the next look finds the charge and the payment is paid by it, once', async () => {
    const { body, attemptId } = await unknownAttempt(BOOKED_LATE);
    assert.equal((await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).body.result_data.APPROVE_STATUS, 'STORE_REQUEST');
    const charge = f.toss.bookLate(attemptId);
    await clock().advance(LATE_CHARGE_FIRST_LOOKUP_SECONDS);
    await eventually(async () => (await attempt(attemptId)).status === 'APPROVED', 'the late charge applied');
    const paid = (await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).body.result_data;
    assert.deepEqual([paid.APPROVE_STATUS, paid.APPROVAL_NUMBER], ['APPROVE_COMPLETE', charge.approveNo]);
    assert.equal(charge.status, 'DONE', 'kept: it is the payment\'s');
    assert.equal(f.toss.approvals.get(attemptId), 1);
    await jobSettled(db(), `attempt-lookup:${attemptId}`, 1);
    assert.equal((await job(attemptId)).status, 'DONE');
  });

  test('booked late after the customer paid again through another attempt: refunded automatically under the attempt\'s void key, shown in the timeline and the audit log; one charge kept', async () => {
    const owner = await newOwner(t);
    const c = new ConsoleClient(t);
    await c.signIn(owner.email, owner.password);
    const { body, payment, redirect, attemptId } = await unknownAttempt(BOOKED_LATE);
    const again = await payOnPage(t, redirect, '4242424242424242');
    assert.equal(again.status, 303, 'the slot was free: the customer paid again');
    const paid = (await t.app.sunap.gateway.findById(payment.id))!;
    assert.equal(paid.state, 'APPROVE_COMPLETE');
    const kept = f.toss.payments.get(paid.processor_order!)!;

    const late = f.toss.bookLate(attemptId);
    await clock().advance(LATE_CHARGE_FIRST_LOOKUP_SECONDS);
    await eventually(async () => (await attempt(attemptId)).status === 'REFUNDED', 'the late charge refunded');
    assert.equal(late.status, 'CANCELED', 'refunded at Toss');
    const cancels = f.toss.requests.filter((r) => r.path === `/v1/payments/${late.paymentKey}/cancel`);
    assert.equal(cancels.length, 1);
    assert.equal(cancels[0]!.headers['idempotency-key'], `void:${attemptId}`);
    assert.equal(kept.status, 'DONE', 'the payment\'s own approval is untouched');
    const done = [...f.toss.payments.values()].filter((x) => x.orderId === attemptId || x.orderId === paid.processor_order).filter((x) => x.status === 'DONE');
    assert.deepEqual(done.map((x) => [x.orderId, x.totalAmount]), [[paid.processor_order, payment.amount]], 'money: exactly one charge of the amount kept');
    const now = (await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).body.result_data;
    assert.deepEqual([now.APPROVE_STATUS, now.APPROVAL_NUMBER], ['APPROVE_COMPLETE', kept.approveNo]);
    const refunded = await attempt(attemptId);
    assert.equal(refunded.message, `늦게 확인된 승인 ${late.approveNo} (${payment.amount.toLocaleString('ko-KR')}원): 이미 다른 시도로 결제된 결제라 자동 환불했습니다`);

    const detail = textOf((await c.get(`/console/payments/${encodeURIComponent(String(body.TRANS_SEQNO))}`)).text);
    assert.match(detail, new RegExp(`늦게 확인된 승인 자동 환불 카드 \\d{4}-\\d{2}\\*\\*-\\*\\*\\*\\*-4004 · 늦게 확인된 승인 ${late.approveNo}`));
    assert.match(detail, /카드 승인 시도: 늦게 확인된 승인, 자동 환불됨/);
    const audit = await db().selectFrom('audit_log').selectAll().where('action', '=', 'payment.late_refund').where('target', '=', String(body.TRANS_SEQNO)).execute();
    assert.equal(audit.length, 1, 'one audit row for one refund');
    assert.deepEqual([audit[0]!.tenant_id, audit[0]!.actor_email, audit[0]!.actor_id], [owner.accountId, 'Sunap (자동)', null]);
    assert.match(audit[0]!.detail ?? '', new RegExp(`승인번호 ${late.approveNo}`));
    const settings = textOf((await c.get('/console/settings')).text);
    assert.match(settings, new RegExp(`Sunap \\(자동\\) 늦게 확인된 승인 자동 환불 ${body.TRANS_SEQNO}`));

    // A crash after Toss refunded and before the close committed: the look runs again, finds the
    // charge cancelled at Toss and refunds nothing twice.
    await db().updateTable('payment_attempts').set({ status: 'UNKNOWN' }).where('id', '=', attemptId).execute();
    await db().updateTable('jobs').set({ status: 'PENDING', run_at: clock().nowMs(), attempts: 0 }).where('unique_key', '=', `attempt-lookup:${attemptId}`).execute();
    await eventually(async () => (await attempt(attemptId)).status === 'DECLINED', 'settled again');
    assert.equal(f.toss.requests.filter((r) => r.path === `/v1/payments/${late.paymentKey}/cancel`).length, 1, 'not asked to refund again');
    assert.equal(f.toss.payments.get(attemptId)!.cancels.length, 1, 'Toss refunded once');
    assert.equal(kept.status, 'DONE');
  });

  test('never booked: looked up at each delay of the schedule, not a second before, and given up after the last look (ABANDONED)', async () => {
    const { payment, attemptId } = await unknownAttempt(NEVER_ANSWERED);
    const key = `attempt-lookup:${attemptId}`;
    const delays = [LATE_CHARGE_FIRST_LOOKUP_SECONDS, ...LATE_CHARGE_BACKOFF_SECONDS];
    let due = Number((await job(attemptId)).run_at);
    for (let i = 0; i < delays.length; i++) {
      const looks = lookupsOf(attemptId);
      // One to two seconds short of the delay: not yet (the exact delay is pinned from run_at below).
      await clock().advance(Math.floor((due - clock().nowMs() - 1000) / 1000));
      await sleep(250);
      assert.equal(lookupsOf(attemptId), looks, `look ${i + 1} not before its time`);
      await clock().advance(2);
      await eventually(async () => lookupsOf(attemptId) === looks + 1, `look ${i + 1} at its time`);
      await jobSettled(db(), key, i + 1);
      const j = await job(attemptId);
      if (i < delays.length - 1) {
        assert.equal(j.status, 'PENDING');
        // The next look is due exactly the next delay after this one ran (run_at - the run's service time).
        assert.equal(Math.round((Number(j.run_at) - Number(j.updated_at) - clock().offset() * 1000) / 1000), delays[i + 1], `delay after look ${i + 1}`);
        assert.equal((await attempt(attemptId)).status, 'UNKNOWN', `still looked up after look ${i + 1}`);
        due = Number(j.run_at);
      } else {
        assert.equal(j.status, 'DONE', 'the last look ends the job');
      }
    }
    assert.equal((await job(attemptId)).attempts, 23);
    const a = await attempt(attemptId);
    assert.deepEqual([a.status, a.message], ['ABANDONED', '결제사가 주문을 보관하는 기간 동안 기록이 없어 조회를 마쳤습니다']);
    assert.equal((await t.app.sunap.gateway.findById(payment.id))!.state, 'STORE_REQUEST', 'nothing was charged: the payment still waits');
    assert.equal(f.toss.approvals.get(attemptId), undefined);
  });

  test('the looks end when Toss no longer keeps the order (15 days after the approval request), whatever is left of the schedule', async () => {
    const { attemptId } = await unknownAttempt(NEVER_ANSWERED);
    const created = Number((await attempt(attemptId)).created_at);
    const looks = lookupsOf(attemptId);
    // The first look 5 to 6 s before the 15 days: still kept, looked up again later.
    await clock().advance(Math.floor((created + TOSS_KEEPS_ORDERS_MS - clock().nowMs()) / 1000) - 5);
    await eventually(async () => lookupsOf(attemptId) === looks + 1, 'the first look');
    await jobSettled(db(), `attempt-lookup:${attemptId}`, 1);
    assert.equal((await attempt(attemptId)).status, 'UNKNOWN', 'inside the 15 days');
    // The next look, past the 15 days: the end.
    await clock().advance(LATE_CHARGE_BACKOFF_SECONDS[0]);
    await eventually(async () => (await attempt(attemptId)).status === 'ABANDONED', 'given up past the 15 days');
    await jobSettled(db(), `attempt-lookup:${attemptId}`, 2);
    assert.equal((await job(attemptId)).status, 'DONE');
    assert.equal((await job(attemptId)).attempts, 2, 'after 2 of its 23 looks');
  });
});
