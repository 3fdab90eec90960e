/**
 * Races: two or more operations on one payment or invoice at the same moment, many rounds, on
 * both engines (PostgreSQL, with real concurrent transactions, is where they bite). Every round
 * must end in one consistent outcome: the answers agree with the final state, the card network's
 * records agree with the payment (never a charge kept on a deleted payment, a refund at most
 * once), the invoice agrees with its payment, and the points ledger sums to the balance.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CardProcessor } from '../../src/ports/card-processor.js';
import { SandboxCardProcessor } from '../../src/ports/sandbox-card-processor.js';
import { forEachEngine, paymentBody, seqNo, startApp, type TestApp } from '../helpers/app.js';
import { billBody, createOne, ledgerMatches, newAccount, waitSent, type Login } from '../invoicing/support.js';
import { runs, sleep } from './support.js';

const ROUNDS = runs(8, 150);

/**
 * The sandbox card network, with a little jitter so that the interleavings vary, and a count of
 * the cancels the service asked for (a real network would be idempotent on the key; the
 * service must not lean on that).
 */
class JitteryNetwork implements CardProcessor {
  inner!: SandboxCardProcessor;
  readonly cancelCalls = new Map<string, number>();
  /** The idempotency key (the attempt) of every approval asked for. */
  readonly approveCalls: string[] = [];
  private jitter = () => sleep(Math.floor(Math.random() * 6));
  async approve(req: Parameters<CardProcessor['approve']>[0]) {
    this.approveCalls.push(req.idempotencyKey);
    await this.jitter();
    return this.inner.approve(req);
  }
  lookup(key: string) {
    return this.inner.lookup(key);
  }
  async cancel(req: Parameters<CardProcessor['cancel']>[0]) {
    this.cancelCalls.set(req.idempotencyKey, (this.cancelCalls.get(req.idempotencyKey) ?? 0) + 1);
    await this.jitter();
    return this.inner.cancel(req);
  }
}

const rd = (r: { body: any }) => r.body?.result_data;
/** Starts `fn` after 0–`max` ms, so that which side of a race arrives first varies from round to round. */
const later = <T>(max: number, fn: () => Promise<T>): Promise<T> => sleep(Math.floor(Math.random() * (max + 1))).then(fn);

forEachEngine('races', (engine) => {
  let t: TestApp;
  let a: Login;
  const network = new JitteryNetwork();

  before(async () => {
    t = await startApp(engine, {}, { processor: network });
    network.inner = new SandboxCardProcessor(t.app.sunap.database.db);
    a = await newAccount(t, { points: 1_000_000 });
  });
  after(async () => t?.close());

  const db = () => t.app.sunap.database.db;
  const paymentBySeq = (seq: string) => db().selectFrom('payments').selectAll().where('trans_seqno', '=', seq).where('store_code', '=', t.storeCode).executeTakeFirstOrThrow();

  /** What the card network holds for a payment: approvals kept (not voided) and refunds. */
  async function network_(paymentId: string) {
    const attempts = await db().selectFrom('payment_attempts').select(['id', 'kind', 'status']).where('payment_id', '=', paymentId).execute();
    const keys = [...attempts.map((x) => x.id), ...attempts.map((x) => `void:${x.id}`), `cancel:${paymentId}`];
    const rows = await db().selectFrom('sandbox_card_charges').select(['idempotency_key', 'outcome']).where('idempotency_key', 'in', keys).execute();
    const approved = rows.filter((r) => attempts.some((x) => x.id === r.idempotency_key) && JSON.parse(r.outcome).outcome === 'APPROVED').map((r) => r.idempotency_key);
    const voided = new Set(rows.filter((r) => r.idempotency_key.startsWith('void:')).map((r) => r.idempotency_key.slice(5)));
    const kept = approved.filter((k) => !voided.has(k));
    const refunded = rows.some((r) => r.idempotency_key === `cancel:${paymentId}`);
    const open = attempts.filter((x) => x.status === 'OPEN').length;
    return { kept: kept.length, refunded, open, cancelCalls: network.cancelCalls.get(`cancel:${paymentId}`) ?? 0 };
  }

  async function newPayment(): Promise<{ seq: string; tid: string; token: string }> {
    const seq = seqNo('RACE');
    const r = await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq }));
    assert.equal(rd(r).RESULT_CODE, '0000', JSON.stringify(r.body));
    const u = new URL(rd(r).REDIRECT_URL);
    return { seq, tid: u.searchParams.get('tid')!, token: u.searchParams.get('token')! };
  }
  const del = (seq: string) => t.gw('requestPaymentCancel', { TRANS_SEQNO: seq, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
  const cancel = (seq: string) => t.gw('requestPaymentCancel', { TRANS_SEQNO: seq, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
  const pageForm = (p: { tid: string; token: string }) => fetch(`${t.url}/checkout/pay`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ tid: p.tid, token: p.token, cardNumber: '4242 4242 4242 4242', expiry: '12/39', birth: '900101', cardPassword: '00', installment: '00' }).toString(),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

  test('pay vs delete: paid or deleted, never both, and never a charge kept on a deleted payment', async (tc) => {
    const seen: Record<string, number> = {};
    for (let i = 0; i < ROUNDS; i++) {
      const p = await newPayment();
      const viaPage = i % 2 === 1;
      const [paid, deleted] = await Promise.all([later(i % 3 === 0 ? 0 : 8, () => (viaPage ? pageForm(p) : t.pay(p.seq))), later(i % 3 === 1 ? 0 : 12, () => del(p.seq))]);
      const state = (await paymentBySeq(p.seq)).state;
      const net = await network_((await paymentBySeq(p.seq)).id);
      const ctx = `round ${i} (${viaPage ? 'page' : 'sandbox'}): state ${state}, pay ${JSON.stringify(paid).slice(0, 200)}, delete ${JSON.stringify(rd(deleted))}`;
      seen[state] = (seen[state] ?? 0) + 1;
      assert.equal(net.open, 0, ctx);
      if (state === 'APPROVE_COMPLETE') {
        assert.equal(rd(deleted).RESULT_CODE, '4009', ctx);
        if (!viaPage) assert.equal((paid as any).approved, true, ctx);
        assert.equal(net.kept, 1, `one charge: ${ctx}`);
      } else {
        assert.equal(state, 'STORE_DELETE', ctx);
        assert.equal(rd(deleted).RESULT_CODE, '0000', ctx);
        if (!viaPage) assert.equal((paid as any).approved, false, ctx);
        else assert.equal((paid as any).status, 303, ctx);
        assert.equal(net.kept, 0, `no charge on a deleted payment: ${ctx}`);
      }
      assert.equal(net.refunded, false, ctx);
    }
    // Both outcomes are legitimate; the point is that each round picked exactly one.
    tc.diagnostic(`outcomes: ${JSON.stringify(seen)}`);
  });

  test('five pays of one payment at once: the network is asked to approve once (the slot\'s re-check), one charge kept, one answer approved', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const p = await newPayment();
      const before = network.approveCalls.length;
      const answers = await Promise.all(Array.from({ length: 5 }, (_, k) => later(k === i % 5 ? 0 : 6, () => t.pay(p.seq))));
      const row = await paymentBySeq(p.seq);
      const attemptIds = new Set((await db().selectFrom('payment_attempts').select('id').where('payment_id', '=', row.id).execute()).map((x) => x.id));
      const asked = network.approveCalls.slice(before).filter((k) => attemptIds.has(k));
      const net = await network_(row.id);
      const ctx = `round ${i}: ${JSON.stringify(answers.map((x: any) => x.approved))}, asked ${asked.length}`;
      assert.equal(row.state, 'APPROVE_COMPLETE', ctx);
      assert.equal(asked.length, 1, `the processor charged once: ${ctx}`);
      assert.equal(net.kept, 1, ctx);
      assert.equal(net.open, 0, ctx);
      assert.equal(answers.filter((x: any) => x.approved === true).length, 1, ctx);
    }
  });

  test('pay vs cancel: the cancel either finds nothing to cancel (4009) or cancels the approval once', async (tc) => {
    const seen: Record<string, number> = {};
    for (let i = 0; i < ROUNDS; i++) {
      const p = await newPayment();
      const [paid, canceled] = await Promise.all([t.pay(p.seq), later(i % 2 === 0 ? 4 : 25, () => cancel(p.seq))]);
      const pay = await paymentBySeq(p.seq);
      const net = await network_(pay.id);
      const ctx = `round ${i}: state ${pay.state}, pay ${JSON.stringify(paid)}, cancel ${JSON.stringify(rd(canceled))}`;
      seen[pay.state] = (seen[pay.state] ?? 0) + 1;
      assert.equal(paid.approved, true, ctx);
      assert.equal(net.kept, 1, ctx);
      assert.equal(net.open, 0, ctx);
      if (rd(canceled).RESULT_CODE === '0000') {
        assert.equal(pay.state, 'CANCEL_COMPLETE', ctx);
        assert.equal(net.refunded, true, ctx);
        assert.equal(net.cancelCalls, 1, ctx);
      } else {
        assert.equal(rd(canceled).RESULT_CODE, '4009', ctx);
        assert.equal(pay.state, 'APPROVE_COMPLETE', ctx);
        assert.equal(net.refunded, false, ctx);
        assert.equal(net.cancelCalls, 0, ctx);
      }
    }
    tc.diagnostic(`outcomes: ${JSON.stringify(seen)}`);
  });

  test('double (and fivefold) cancel: every answer 0000, one refund; a DELETE among them is refused', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const p = await newPayment();
      assert.equal((await t.pay(p.seq)).approved, true);
      const n = i % 2 === 0 ? 2 : 5;
      const answers = await Promise.all([...Array.from({ length: n }, () => cancel(p.seq)), del(p.seq)]);
      const pay = await paymentBySeq(p.seq);
      const net = await network_(pay.id);
      const ctx = `round ${i}: ${JSON.stringify(answers.map((x) => rd(x)))}`;
      for (const x of answers.slice(0, n)) assert.equal(rd(x).RESULT_CODE, '0000', ctx);
      assert.equal(rd(answers[n]!).RESULT_CODE, '4009', ctx);
      assert.equal(pay.state, 'CANCEL_COMPLETE', ctx);
      assert.equal(pay.cancel_amount, 128000);
      assert.equal(net.cancelCalls, 1, `refunded once: ${ctx}`);
      assert.equal(net.open, 0, ctx);
    }
  });

  /** An invoice as the database holds it, with its payment and the points around it. */
  async function invoiceState(uniqueId: string) {
    const inv = await db().selectFrom('invoices').selectAll().where('unique_id', '=', uniqueId).executeTakeFirstOrThrow();
    const pay = inv.payment_id ? await db().selectFrom('payments').selectAll().where('id', '=', inv.payment_id).executeTakeFirst() : undefined;
    const sends = await db().selectFrom('sends').selectAll().where('invoice_id', '=', inv.id).orderBy('created_at').execute();
    const events = await db().selectFrom('webhook_events').select('event').where('invoice_id', '=', inv.id).execute();
    return { inv, pay, sends, events: events.map((e) => e.event).sort() };
  }

  /** The invoice agrees with its payment (they commit together), whatever order things happened in. */
  function agrees(s: Awaited<ReturnType<typeof invoiceState>>, ctx: string) {
    const { inv, pay } = s;
    const expected: Record<string, [string, boolean]> = {
      STORE_REQUEST: ['PENDING', false], APPROVE_COMPLETE: ['DONE', false], CANCEL_COMPLETE: ['CANCELED', false], STORE_DELETE: ['PENDING', true],
    };
    assert.ok(pay, `the invoice has its payment: ${ctx}`);
    const [status, deleted] = expected[pay!.state]!;
    assert.equal(inv.status, status, `payment ${pay!.state} ↔ invoice ${inv.status}: ${ctx}`);
    assert.equal(inv.deleted_at !== null, deleted, `payment ${pay!.state} ↔ invoice deleted ${inv.deleted_at !== null}: ${ctx}`);
    const events = inv.status === 'DONE' ? ['bill.paid'] : inv.status === 'CANCELED' ? ['bill.canceled', 'bill.paid'] : [];
    assert.deepEqual(s.events, events, `webhook events once each: ${ctx}`);
  }

  async function ledgerOk(ctx: string) {
    const l = await ledgerMatches(t, a.accountId);
    assert.equal(l.balance, l.ledger, `balance equals the ledger sum: ${ctx}`);
    assert.ok(l.balance >= 0);
  }

  test('two resends of the same invoices listed in opposite orders, at once: both answer, neither deadlocks, one send each that ran', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const ids = [await createOne(t, a, { sendChannel: 'ALIMTALK' }), await createOne(t, a, { sendChannel: 'ALIMTALK' }), await createOne(t, a, { sendChannel: 'ALIMTALK' })];
      for (const id of ids) await waitSent(t, a, id);
      const answers = await Promise.all([ids, [...ids].reverse()].map((billIds) => t.post('/app/v1/sales/bill/resend', { billIds }, a.h)));
      const ctx = `round ${i}: ${JSON.stringify(answers.map((x) => x.body))}`;
      for (const x of answers) assert.equal(x.body.result_code, 0, ctx);
      for (const id of ids) {
        const results = answers.map((x) => rd(x).find((r: any) => r.uniqueId === id));
        const sent = results.filter((r: any) => r.resendResult === 'SUCCESS').length;
        assert.ok(sent >= 1, ctx);
        assert.equal((await invoiceState(id)).sends.filter((x) => x.send_type === 'RESEND').length, sent, ctx);
      }
      await ledgerOk(ctx);
    }
  });

  test('parallel resends of one invoice: points taken once per actual send, the ledger sums to the balance', async () => {
    for (let i = 0; i < Math.max(3, Math.ceil(ROUNDS / 2)); i++) {
      const id = await createOne(t, a, { sendChannel: 'ALIMTALK' });
      await waitSent(t, a, id);
      const before = (await ledgerMatches(t, a.accountId)).balance;
      const n = 6;
      const answers = await Promise.all(Array.from({ length: n }, () => t.post('/app/v1/sales/bill/resend', { billIds: [id] }, a.h)));
      const results = answers.map((x) => { assert.equal(x.body.result_code, 0, JSON.stringify(x.body)); return rd(x)[0]; });
      const ctx = `round ${i}: ${JSON.stringify(results.map((r: any) => [r.resendResult, r.reason]))}`;
      for (const r of results) {
        assert.ok(['SUCCESS', 'SKIPPED'].includes(r.resendResult), ctx);
        if (r.resendResult === 'SKIPPED') assert.equal(r.reason, 'a send of this invoice is already in progress', ctx);
      }
      const sent = results.filter((r: any) => r.resendResult === 'SUCCESS').length;
      assert.ok(sent >= 1, ctx);
      const s = await invoiceState(id);
      const resends = s.sends.filter((x) => x.send_type === 'RESEND');
      assert.equal(resends.length, sent, `one send row per resend that ran: ${ctx}`);
      assert.ok(resends.every((x) => x.status === 'SUCCESS'), ctx);
      assert.equal(Number(s.inv.send_count), 1 + sent, ctx);
      const reserves = await db().selectFrom('ledger').select(['delta', 'kind']).where('account_id', '=', a.accountId).where('ref', 'in', resends.map((x) => x.id)).execute();
      assert.equal(reserves.filter((x) => x.kind === 'RESERVE').length, sent, ctx);
      assert.equal((await ledgerMatches(t, a.accountId)).balance, before - 10 * sent, `10 points per resend actually sent: ${ctx}`);
      await ledgerOk(ctx);
    }
  });

  test('parallel duplicates of one requestId: one invoice, one deduction; other content with that requestId -22', async () => {
    for (let i = 0; i < Math.max(3, Math.ceil(ROUNDS / 2)); i++) {
      const requestId = `race-${i}-${Date.now().toString(36)}`;
      const before = (await ledgerMatches(t, a.accountId)).balance;
      const bodyA = billBody({ requestId, amount: 10000 });
      const bodyB = billBody({ requestId, amount: 20000 });
      const answers = await Promise.all(Array.from({ length: 16 }, (_, k) => t.post('/app/v1/sales/bill', k % 4 === 3 ? bodyB : bodyA, a.h).then((r) => ({ k, r }))));
      const invoices = await db().selectFrom('invoices').selectAll().where('account_id', '=', a.accountId).where('request_id', '=', requestId).execute();
      const ctx = `round ${i}: ${JSON.stringify(answers.map(({ r }) => r.body.result_code))}`;
      assert.equal(invoices.length, 1, `one invoice: ${ctx}`);
      const winnerIsA = Number(invoices[0]!.amount) === 10000;
      for (const { k, r } of answers) {
        const isA = k % 4 !== 3;
        assert.equal(r.body.result_code, isA === winnerIsA ? 0 : -22, `${k}: ${ctx}`);
        if (r.body.result_code === -22) assert.equal(r.status, 400);
      }
      const sends = await db().selectFrom('sends').select('id').where('invoice_id', '=', invoices[0]!.id).execute();
      assert.equal(sends.length, 1, ctx);
      const reserves = await db().selectFrom('ledger').select('delta').where('account_id', '=', a.accountId).where('kind', '=', 'RESERVE').where('ref', '=', sends[0]!.id).execute();
      assert.equal(reserves.length, 1, `one deduction: ${ctx}`);
      await waitSent(t, a, invoices[0]!.unique_id);
      assert.equal((await ledgerMatches(t, a.accountId)).balance, before - 10, ctx);
      await ledgerOk(ctx);
    }
  });

  test('pay vs PUT cancel vs DELETE of one invoice: one outcome, invoice and payment agree', async (tc) => {
    const tally: Record<string, number> = {};
    for (let i = 0; i < ROUNDS; i++) {
      const id = await createOne(t, a, { webhookUrl: 'https://127.0.0.1:9/hooks', sendChannel: 'ALIMTALK' });
      const d = await waitSent(t, a, id);
      const payFirst = i % 3 === 2;
      if (payFirst) assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
      const [paid, put, removed] = await Promise.all([
        later(8, () => t.pay(d.bill.transSeqNo)),
        later(25, () => t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, a.h)),
        later(12, () => t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h)),
      ]);
      const s = await invoiceState(id);
      const ctx = `round ${i}${payFirst ? ' (paid before)' : ''}: pay ${JSON.stringify(paid)}, PUT ${put.status}/${put.body.result_code}, DELETE ${removed.status}/${removed.body.result_code}, payment ${s.pay?.state}, invoice ${s.inv.status}${s.inv.deleted_at ? ' deleted' : ''}`;
      agrees(s, ctx);
      for (const r of [put, removed]) assert.ok([0, -24, -10].includes(r.body.result_code), ctx);
      if (removed.body.result_code === 0) assert.ok(s.inv.deleted_at !== null && s.pay!.state === 'STORE_DELETE', ctx);
      if (put.body.result_code === 0) assert.equal(s.inv.status, 'CANCELED', ctx);
      if (s.inv.status === 'CANCELED') assert.equal(put.body.result_code, 0, ctx);
      if (s.inv.deleted_at !== null) assert.equal(removed.body.result_code, 0, ctx);
      const net = await network_(s.pay!.id);
      assert.equal(net.kept, s.pay!.state === 'STORE_DELETE' || s.pay!.state === 'STORE_REQUEST' ? 0 : 1, ctx);
      assert.equal(net.cancelCalls, s.pay!.state === 'CANCEL_COMPLETE' ? 1 : 0, ctx);
      tally[`${s.pay!.state}`] = (tally[`${s.pay!.state}`] ?? 0) + 1;
      await ledgerOk(ctx);
    }
    tc.diagnostic(`outcomes: ${JSON.stringify(tally)}`);
  });

  test('parallel PUT cancels of one paid invoice: one refund, CANCELED once, bill.canceled once', async () => {
    for (let i = 0; i < Math.max(3, Math.ceil(ROUNDS / 2)); i++) {
      const id = await createOne(t, a, { webhookUrl: 'https://127.0.0.1:9/hooks' });
      const d = await waitSent(t, a, id);
      assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
      const answers = await Promise.all(Array.from({ length: 4 }, () => t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, a.h)));
      const s = await invoiceState(id);
      const ctx = `round ${i}: ${JSON.stringify(answers.map((x) => [x.status, x.body.result_code]))}`;
      for (const x of answers) {
        assert.ok(x.body.result_code === 0 || x.body.result_code === -24, ctx);
        if (x.body.result_code === 0) assert.equal(x.body.result_data.bill.status, 'CANCELED', ctx);
      }
      assert.ok(answers.some((x) => x.body.result_code === 0), ctx);
      agrees(s, ctx);
      assert.equal(s.inv.status, 'CANCELED', ctx);
      assert.equal((await network_(s.pay!.id)).cancelCalls, 1, `refunded once: ${ctx}`);
      await ledgerOk(ctx);
    }
  });

  test('DELETE vs the first send: the invoice is deleted, its payment (if issued) is STORE_DELETE, points settle once', async (tc) => {
    const seen: Record<string, number> = {};
    for (let i = 0; i < ROUNDS; i++) {
      const before = (await ledgerMatches(t, a.accountId)).balance;
      const r = await t.post('/app/v1/sales/bill', billBody({ sendChannel: 'SMS', requestId: `delsend-${i}-${Date.now().toString(36)}` }), a.h);
      assert.equal(r.body.result_code, 0);
      const inv0 = await db().selectFrom('invoices').select(['unique_id']).where('account_id', '=', a.accountId).orderBy('id', 'desc').executeTakeFirstOrThrow();
      if (i % 2 === 1) await sleep(Math.floor(Math.random() * 30));
      const removed = await t.request('DELETE', `/app/v1/sales/bill/${inv0.unique_id}`, undefined, a.h);
      assert.equal(removed.body.result_code, 0, JSON.stringify(removed.body));
      // Let the send job finish whatever it was doing.
      let s = await invoiceState(inv0.unique_id);
      for (let k = 0; k < 200 && s.sends.some((x) => x.status === 'WAITING' || x.status === 'ACCEPTING'); k++) {
        await sleep(25);
        s = await invoiceState(inv0.unique_id);
      }
      const ctx = `round ${i}: payment ${s.pay?.state ?? 'never issued'}, send ${s.sends.map((x) => `${x.status}/${x.error_message ?? ''}`).join(',')}`;
      assert.ok(s.inv.deleted_at !== null, ctx);
      if (s.pay) assert.equal(s.pay.state, 'STORE_DELETE', ctx);
      assert.equal(s.sends.length, 1, ctx);
      const send = s.sends[0]!;
      const k = `${s.pay ? 'payment issued' : 'no payment'}, send ${send.status}`;
      seen[k] = (seen[k] ?? 0) + 1;
      assert.ok(send.status === 'SUCCESS' || send.status === 'FAILED', ctx);
      // A message the provider accepted is paid for; otherwise the points came back.
      assert.equal((await ledgerMatches(t, a.accountId)).balance, before - (send.status === 'SUCCESS' ? 30 : 0), ctx);
      await ledgerOk(ctx);
    }
    tc.diagnostic(`outcomes: ${JSON.stringify(seen)}`);
  });
});
