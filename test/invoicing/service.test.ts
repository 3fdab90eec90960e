import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import * as gatewayRepo from '../../src/gateway/repository.js';
import type { Payment } from '../../src/gateway/index.js';
import { kstSpaced } from '../../src/platform/kst.js';
import type { DeliveryReport, MessageRequest, MessagingProvider, SendOutcome } from '../../src/ports/messaging.js';
import { SandboxMessaging } from '../../src/ports/sandbox-messaging.js';
import { forEachEngine, startApp, type TestApp } from '../helpers/app.js';
import { withFailingInserts } from '../helpers/db.js';
import { createOne, newAccount, waitSent, type Login } from './support.js';

/** The sandbox provider, counting the delivery reports asked of it. */
class CountingMessaging implements MessagingProvider {
  inner: MessagingProvider | undefined;
  readonly asked: string[] = [];
  send(req: MessageRequest): Promise<SendOutcome> {
    return this.inner!.send(req);
  }
  status(messageId: string): Promise<DeliveryReport> {
    this.asked.push(messageId);
    return this.inner!.status(messageId);
  }
}

/**
 * The invoice actions' own rules, each on both sides: what a delete and a cancel refuse and why
 * (in words that name the field and say what to do instead), either while the customer is paying
 * or another operation runs, a delete that keeps losing its race, a card cancel the card company
 * refuses, which sends a delivery refresh asks about, and the invoice following its payment.
 */
forEachEngine('invoice service', (engine) => {
  let t: TestApp;
  let a: Login;
  const messaging = new CountingMessaging();
  before(async () => {
    t = await startApp(engine, {}, { messaging });
    messaging.inner = new SandboxMessaging(t.app.sunap.database.db, t.app.sunap.clock);
    a = await newAccount(t, { points: 100_000 });
  });
  after(async () => t?.close());

  const db = () => t.app.sunap.database.db;
  const del = (id: string) => t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h);
  const refusal = (r: { status: number; body: any }) => [r.status, r.body.result_code, r.body.result_msg];
  const visible = async (id: string) => (await t.get(`/app/v1/sales/bill/${id}`, a.h)).status === 200;

  test('an unknown invoice: 404 / -10 "id: no such invoice" for the detail, the delete, the cancel and the refresh', async () => {
    const words = [404, -10, 'id: no such invoice'];
    assert.deepEqual(refusal(await t.get('/app/v1/sales/bill/999999999', a.h)), words);
    assert.deepEqual(refusal(await del('999999999')), words);
    assert.deepEqual(refusal(await t.request('PUT', '/app/v1/sales/bill/999999999', undefined, a.h)), words);
    assert.deepEqual(refusal(await t.request('POST', '/app/v1/sales/bill/999999999/refresh-status', undefined, a.h)), words);
  });

  test('delete: a paid invoice is refused with the way out (cancel it), a cancelled one without it; both stay', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
    assert.deepEqual(refusal(await del(id)), [409, -24, 'status: a DONE invoice cannot be deleted; only PENDING ones can (cancel it instead)']);
    assert.equal((await t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, a.h)).body.result_code, 0);
    assert.deepEqual(refusal(await del(id)), [409, -24, 'status: a CANCELED invoice cannot be deleted; only PENDING ones can']);
    assert.ok(await visible(id));
  });

  test('delete while the customer is paying: refused, the invoice and its payment stay; once the attempt is over the delete goes through', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    const payment = await db().selectFrom('payments').select('id').where('trans_seqno', '=', d.bill.transSeqNo).executeTakeFirstOrThrow();
    const now = t.app.sunap.clock.nowMs();
    await gatewayRepo.openAttempt(db(), { id: `att-busy-${id}`, payment_id: payment.id, kind: 'APPROVE', now });
    assert.deepEqual(refusal(await del(id)), [409, -24, 'status: the invoice has been paid or is being paid; it cannot be deleted']);
    assert.ok(await visible(id));
    assert.equal((await t.gw('searchPayment', { TRANS_SEQNO: d.bill.transSeqNo })).body.result_data.APPROVE_STATUS, 'STORE_REQUEST');

    assert.equal(await gatewayRepo.closeAttempt(db(), `att-busy-${id}`, 'DECLINED', now + 1), true);
    assert.equal((await del(id)).body.result_code, 0);
    assert.equal(await visible(id), false);
    assert.equal((await t.gw('searchPayment', { TRANS_SEQNO: d.bill.transSeqNo })).body.result_data.APPROVE_STATUS, 'STORE_DELETE');
  });

  test('delete when the database refuses the payment\'s side: a server error (not a refusal of the invoice), and the invoice stays', async () => {
    const id = await createOne(t, a);
    await waitSent(t, a, id);
    const r = await withFailingInserts(db(), engine, 'payment_attempts', () => del(id));
    assert.equal(r.status, 500, JSON.stringify(r.body));
    assert.notEqual(r.body.result_code, -24);
    assert.ok(await visible(id));
    assert.equal((await del(id)).body.result_code, 0);
  });

  test('a delete that loses its race every time gives up after five tries, says so, and changes nothing', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    const row = await db().selectFrom('invoices').select(['id', 'payment_id']).where('unique_id', '=', id).executeTakeFirstOrThrow();
    const live = async () => Number((await db().selectFrom('invoice_counts').select('live_invoices').where('account_id', '=', a.accountId).executeTakeFirstOrThrow()).live_invoices);
    const liveBefore = await live();
    // Every hiding of this invoice is skipped, as if another request changed it first; each try is counted.
    await sql`create table skipped_hides (n integer)`.execute(db());
    const invoiceId = sql.lit(Number(row.id));
    if (engine === 'sqlite') {
      await sql`create trigger keep_invoice before update of deleted_at on invoices when new.deleted_at is not null and old.id = ${invoiceId} begin insert into skipped_hides values (1); select raise(ignore); end`.execute(db());
    } else {
      await sql`create function keep_invoice() returns trigger language plpgsql as $$ begin insert into skipped_hides values (1); return null; end $$`.execute(db());
      await sql`create trigger keep_invoice before update on invoices for each row when (new.deleted_at is not null and old.id = ${invoiceId}) execute function keep_invoice()`.execute(db());
    }
    try {
      assert.deepEqual(refusal(await del(id)), [409, -24, 'status: the invoice changed while deleting it; try again']);
      const tries = await sql<{ n: number }>`select count(*) as n from skipped_hides`.execute(db());
      assert.equal(Number(tries.rows[0]!.n), 5);
      assert.ok(await visible(id));
      assert.equal(await live(), liveBefore);
    } finally {
      await sql`drop trigger keep_invoice${engine === 'postgres' ? sql` on invoices` : sql``}`.execute(db());
      if (engine === 'postgres') await sql`drop function keep_invoice()`.execute(db());
      await sql`drop table skipped_hides`.execute(db());
    }
    // Its payment was deleted on the first try; the next delete finds it so and hides the invoice.
    assert.equal((await t.gw('searchPayment', { TRANS_SEQNO: d.bill.transSeqNo })).body.result_data.APPROVE_STATUS, 'STORE_DELETE');
    assert.equal((await del(id)).body.result_code, 0);
    assert.equal(await live(), liveBefore - 1);
  });

  const cancel = (id: string) => t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, a.h);
  const status = async (id: string) => (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.bill.status;
  const paymentOf = (transSeqNo: string) => db().selectFrom('payments').selectAll().where('trans_seqno', '=', transSeqNo).executeTakeFirstOrThrow();

  test('cancel: an unpaid invoice is refused with the way out (delete it) and stays PENDING; a paid one is cancelled with the reason 청구 취소', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    assert.deepEqual(refusal(await cancel(id)), [409, -24, 'status: a PENDING invoice cannot be cancelled; only a paid (DONE) one can (delete an unpaid one)']);
    assert.equal(await status(id), 'PENDING');
    assert.equal((await paymentOf(d.bill.transSeqNo)).state, 'STORE_REQUEST');
    assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
    // The detail's payment: paid in 3 instalments, not cancelled yet.
    await db().updateTable('payments').set({ installment_month: '03' }).where('trans_seqno', '=', d.bill.transSeqNo).execute();
    const paid = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.payment;
    const approvedRow = await paymentOf(d.bill.transSeqNo);
    assert.deepEqual(paid, {
      acceptNumber: approvedRow.approval_number, payCompany: approvedRow.issuer_name, installmentMonth: 3,
      paymentDateTime: kstSpaced(Number(approvedRow.approval_at)), cancelDateTime: null,
    });
    // A processor that reported no approval number or issuer: empty strings, as the real service answers.
    await db().updateTable('payments').set({ approval_number: null, issuer_name: null }).where('trans_seqno', '=', d.bill.transSeqNo).execute();
    const bare = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.payment;
    assert.deepEqual([bare.acceptNumber, bare.payCompany], ['', '']);
    await db().updateTable('payments').set({ approval_number: approvedRow.approval_number, issuer_name: approvedRow.issuer_name }).where('trans_seqno', '=', d.bill.transSeqNo).execute();
    const r = await cancel(id);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    assert.equal(r.body.result_data.bill.status, 'CANCELED');
    const p = await paymentOf(d.bill.transSeqNo);
    assert.deepEqual([p.state, p.cancel_reason, Number(p.cancel_amount)], ['CANCEL_COMPLETE', '청구 취소', Number(p.amount)]);
    assert.equal(r.body.result_data.payment.cancelDateTime, kstSpaced(Number(p.cancel_at)));
    assert.match(r.body.result_data.payment.cancelDateTime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    // Cancelled already: the same answer again, nothing more happens.
    const again = await cancel(id);
    assert.equal(again.body.result_code, 0);
    assert.equal(again.body.result_data.bill.canceledDateTime, r.body.result_data.bill.canceledDateTime);
  });

  test('cancel refused by the card company: 502 / -30 with its reason, the invoice stays DONE, and the refusal is logged with the invoice and the code', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    assert.equal((await t.pay(d.bill.transSeqNo, '4000000000000259')).approved, true);
    const r = await cancel(id);
    assert.equal(r.status, 502, JSON.stringify(r.body));
    assert.equal(r.body.result_code, -30);
    assert.match(r.body.result_msg, /^payment: the card cancel failed \((\d+)\); the invoice stays DONE, try again later$/);
    const code = /\((\d+)\)/.exec(r.body.result_msg)![1];
    assert.equal(await status(id), 'DONE');
    const logged = t.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'invoice cancel refused by the gateway');
    assert.deepEqual(logged.map((l) => [l.level, l.invoice, l.code]), [[40, Number(d.bill.id), code]]);
  });

  test('cancel while another operation on the payment runs: 409 / -24 "try again", the invoice stays DONE; a database failure is a server error', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
    const p = await paymentOf(d.bill.transSeqNo);
    const now = t.app.sunap.clock.nowMs();
    await gatewayRepo.openAttempt(db(), { id: `att-cancel-${id}`, payment_id: p.id, kind: 'CANCEL', now });
    assert.deepEqual(refusal(await cancel(id)), [409, -24, 'status: another operation on this payment is in progress; try again']);
    assert.equal(await status(id), 'DONE');
    assert.equal(await gatewayRepo.closeAttempt(db(), `att-cancel-${id}`, 'FAILED', now + 1), true);

    const failed = await withFailingInserts(db(), engine, 'payment_attempts', () => cancel(id));
    assert.equal(failed.status, 500, JSON.stringify(failed.body));
    assert.equal(await status(id), 'DONE');
    assert.equal((await cancel(id)).body.result_data.bill.status, 'CANCELED');
  });

  test('refresh-status asks the provider only about accepted messages: not about one never accepted, not again once delivered', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    const sendRows = () => db().selectFrom('sends').select(['provider_message_id', 'delivery_status']).where('invoice_id', '=', Number(d.bill.id)).execute();
    const [accepted] = await sendRows();
    assert.equal(accepted!.delivery_status, 'ACCEPTED');
    messaging.asked.length = 0;
    assert.equal((await t.post(`/app/v1/sales/bill/${id}/refresh-status`, {}, a.h)).body.result_code, 0);
    assert.deepEqual(messaging.asked, [accepted!.provider_message_id]);
    assert.deepEqual((await sendRows()).map((s) => s.delivery_status), ['DELIVERED']);
    messaging.asked.length = 0;
    assert.equal((await t.post(`/app/v1/sales/bill/${id}/refresh-status`, {}, a.h)).body.result_code, 0);
    assert.deepEqual(messaging.asked, [], 'delivered: not asked again');

    // A number that refuses every channel: nothing was accepted, so nothing is asked.
    const failing = await createOne(t, a, { members: [{ studentName: '홍길동', studentPhone: '01012340000' }] });
    const f = await waitSent(t, a, failing);
    const fRows = await db().selectFrom('sends').select(['provider_message_id', 'delivery_status']).where('invoice_id', '=', Number(f.bill.id)).execute();
    assert.ok(fRows.length > 0 && fRows.every((s) => s.provider_message_id === null), JSON.stringify(fRows));
    messaging.asked.length = 0;
    const r = await t.post(`/app/v1/sales/bill/${failing}/refresh-status`, {}, a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    assert.deepEqual(messaging.asked, []);
    assert.deepEqual(r.body.result_data.sendHistories.map((h: any) => h.deliveryStatus), fRows.map((s) => s.delivery_status));
  });

  test('the invoice follows its payment at the payment\'s own time, once: a repeated approval or cancel moves nothing and records no second event', async () => {
    const id = await createOne(t, a, { webhookUrl: 'https://hooks.example.com/sunap' });
    const d = await waitSent(t, a, id);
    const p = await paymentOf(d.bill.transSeqNo);
    const listener = t.app.sunap.invoices.listener();
    const paidAt = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    const canceledAt = paidAt + 60_000;
    const approved: Payment = { ...p, state: 'APPROVE_COMPLETE', approval_at: paidAt };
    const invoice = () => db().selectFrom('invoices').select(['status', 'done_at', 'canceled_at']).where('unique_id', '=', id).executeTakeFirstOrThrow();
    const events = async () => (await db().selectFrom('webhook_events').select('event').where('invoice_id', '=', Number(d.bill.id)).orderBy('id').execute()).map((e) => e.event);

    await db().transaction().execute((trx) => listener.onApproved!(trx, approved));
    assert.deepEqual(await invoice().then((i) => [i.status, Number(i.done_at), i.canceled_at]), ['DONE', paidAt, null]);
    await db().transaction().execute((trx) => listener.onApproved!(trx, { ...approved, approval_at: paidAt + 1 }));
    assert.deepEqual(await invoice().then((i) => [i.status, Number(i.done_at)]), ['DONE', paidAt]);
    assert.deepEqual(await events(), ['bill.paid']);

    const canceled: Payment = { ...approved, state: 'CANCEL_COMPLETE', cancel_at: canceledAt };
    await db().transaction().execute((trx) => listener.onCanceled!(trx, canceled));
    await db().transaction().execute((trx) => listener.onCanceled!(trx, { ...canceled, cancel_at: canceledAt + 1 }));
    assert.deepEqual(await invoice().then((i) => [i.status, Number(i.done_at), Number(i.canceled_at)]), ['CANCELED', paidAt, canceledAt]);
    assert.deepEqual(await events(), ['bill.paid', 'bill.canceled']);
  });
});
