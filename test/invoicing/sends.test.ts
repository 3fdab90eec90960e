import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESEND_FALLBACK_MS, resend } from '../../src/invoicing/resend.js';
import { SendRunner } from '../../src/invoicing/sends.js';
import { SandboxMessaging } from '../../src/ports/sandbox-messaging.js';
import { clearOfKstMidnight, forEachEngine, withApp } from '../helpers/app.js';
import { afterEachRead } from '../helpers/db.js';
import { captureLog } from '../helpers/log.js';
import { accountRow, createOne, ledgerMatches, newAccount, points, waitSent } from './support.js';

const KST_SPACED = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

forEachEngine('invoice sends and payments', (engine) => {
  const t = withApp(engine);

  const messagesTo = async (phone: string) => (await t.get(`/sandbox/messages?phone=${phone}`)).body.messages as any[];
  const member = (phone: string, over: Record<string, unknown> = {}) => ({ members: [{ studentName: '홍길동', studentPhone: phone, ...over }] });

  test('ALIMTALK: the message carries business, recipient, reason, amount, 5 items, description and the payment link', async () => {
    const a = await newAccount(t, { points: 100 });
    const items = Array.from({ length: 7 }, (_, i) => ({ name: `항목${i + 1}`, price: 1000 }));
    const id = await createOne(t, a, { ...member('01070000001'), amount: 7000, items });
    const d = await waitSent(t, a, id);
    assert.equal(d.bill.sendStatus, 'SENT');
    assert.equal(d.sendInfo.sendCount, 1);
    assert.deepEqual({ ...d.sendHistories[0], sentAt: undefined }, {
      sendType: 'INITIAL', sendResult: 'SUCCESS', sendChannel: 'ALIMTALK', sentAt: undefined,
      receiverPhone: '01070000001', errorMessage: null, deliveryStatus: 'ACCEPTED',
    });
    assert.equal(await points(t, a), 90);
    const [m, ...rest] = await messagesTo('01070000001');
    assert.equal(rest.length, 0);
    assert.equal(m.channel, 'ALIMTALK');
    for (const s of ['행복 피아노 학원', '홍길동', '11월 수강료', '7,000원', '청구 항목', '항목1', '항목5', '매월 10일까지 납부 부탁드립니다', m.link]) {
      assert.ok(m.text.includes(s), `message should include ${s}:\n${m.text}`);
    }
    assert.ok(!m.text.includes('항목6'), 'only the first five items are listed');
    // The link is the gateway's payment page for this invoice, and it opens.
    const pub = await t.get(`/app/v1/sales/public/bill/${d.bill.transSeqNo}`);
    assert.equal(pub.body.result_data.paymentUrl, m.link);
    const page = await fetch(m.link);
    assert.equal(page.status, 200);
    await page.text();
  });

  test('a 9999 number under ALIMTALK_THEN_SMS falls back to SMS; the SMS price is kept', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, { ...member('01070009999'), sendChannel: 'ALIMTALK_THEN_SMS' });
    assert.equal(await points(t, a), 70);
    const d = await waitSent(t, a, id);
    assert.equal(d.bill.sendStatus, 'SENT');
    assert.equal(d.bill.sendChannel, 'ALIMTALK_THEN_SMS');
    assert.equal(d.sendHistories[0].sendChannel, 'SMS');
    assert.equal(d.sendHistories[0].sendResult, 'SUCCESS');
    assert.equal(await points(t, a), 70);
    const msgs = await messagesTo('01070009999');
    assert.deepEqual(msgs.map((m) => m.channel), ['SMS']);
  });

  test('ALIMTALK_THEN_SMS carried by ALIMTALK refunds the difference; SMS keeps the SMS price', async () => {
    const a = await newAccount(t, { points: 100 });
    const id1 = await createOne(t, a, { ...member('01070000002'), sendChannel: 'ALIMTALK_THEN_SMS' });
    await waitSent(t, a, id1);
    assert.equal(await points(t, a), 90);
    const id2 = await createOne(t, a, { ...member('01070000003'), sendChannel: 'SMS' });
    const d2 = await waitSent(t, a, id2);
    assert.equal(d2.sendHistories[0].sendChannel, 'SMS');
    assert.equal(await points(t, a), 60);
  });

  test('a 9999 number under ALIMTALK only fails: send FAILED, points returned', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070019999'));
    const d = await waitSent(t, a, id);
    assert.equal(d.bill.sendStatus, 'FAILED');
    assert.equal(d.bill.status, 'PENDING');
    assert.equal(d.sendHistories[0].sendResult, 'FAILED');
    assert.ok(d.sendHistories[0].errorMessage);
    assert.equal(await points(t, a), 100);
  });

  test('a 0000 number fails on every channel: FAILED, full refund, nothing in the outbox', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, { ...member('01070000000'), sendChannel: 'ALIMTALK_THEN_SMS' });
    const d = await waitSent(t, a, id);
    assert.equal(d.bill.sendStatus, 'FAILED');
    assert.equal(d.sendInfo.sendCount, 0);
    assert.equal(d.sendInfo.firstSentAt, null);
    assert.equal(d.sendHistories.length, 1);
    assert.equal(d.sendHistories[0].sendResult, 'FAILED');
    assert.equal(typeof d.sendHistories[0].errorMessage, 'string');
    assert.equal(d.sendHistories[0].deliveryStatus, null);
    assert.equal(await points(t, a), 100);
    assert.deepEqual(await messagesTo('01070000000'), []);
    const db = t.app.sunap.database.db;
    const refunds = await db.selectFrom('ledger').selectAll().where('account_id', '=', a.accountId).where('kind', '=', 'REFUND').execute();
    assert.equal(refunds.length, 1);
    assert.equal(Number(refunds[0]!.delta), 30);
  });

  test('guardianPhone: the message goes to the guardian', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000004', { guardianPhone: '01080000004' }));
    const d = await waitSent(t, a, id);
    assert.deepEqual(d.bill.receiver, { name: '홍길동', phone: '01070000004' });
    assert.equal(d.bill.guardianPhone, '01080000004');
    assert.equal(d.sendHistories[0].receiverPhone, '01080000004');
    assert.equal((await messagesTo('01080000004')).length, 1);
    assert.equal((await messagesTo('01070000004')).length, 0);
  });

  test('refresh-status: an 8888 ALIMTALK turns FAILED, others DELIVERED', async () => {
    const a = await newAccount(t, { points: 100 });
    const bad = await createOne(t, a, member('01070008888'));
    const good = await createOne(t, a, member('01070000005'));
    await waitSent(t, a, bad);
    await waitSent(t, a, good);
    const r1 = await t.request('POST', `/app/v1/sales/bill/${bad}/refresh-status`, undefined, a.h);
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.equal(r1.body.result_data.sendHistories[0].deliveryStatus, 'FAILED');
    assert.equal(r1.body.result_data.sendHistories[0].sendResult, 'SUCCESS');
    const r2 = await t.request('POST', `/app/v1/sales/bill/${good}/refresh-status`, undefined, a.h);
    assert.equal(r2.body.result_data.sendHistories[0].deliveryStatus, 'DELIVERED');
    assert.equal((await messagesTo('01070008888'))[0].deliveryStatus, 'FAILED');
    // Accepted is charged: a failed delivery is not refunded.
    assert.equal(await points(t, a), 80);
  });

  test('a send that crashed after the provider accepted it is not sent twice', async () => {
    const a = await newAccount(t, { points: 100 });
    const db = t.app.sunap.database.db;
    await t.app.sunap.worker.stop();
    let firstId: string;
    try {
      const id = await createOne(t, a, member('01070000006'));
      const inv = await db.selectFrom('invoices').select('id').where('unique_id', '=', id).executeTakeFirstOrThrow();
      const send = await db.selectFrom('sends').selectAll().where('invoice_id', '=', inv.id).executeTakeFirstOrThrow();
      // The provider accepted, then the process died before the result was committed.
      const accepted = await new SandboxMessaging(db, t.app.sunap.clock).send({ idempotencyKey: send.id, channel: 'ALIMTALK', to: '01070000006', text: 'first', link: '' });
      assert.ok(accepted.accepted);
      firstId = accepted.messageId;
      await db.updateTable('sends').set({ status: 'ACCEPTING' }).where('id', '=', send.id).execute();
    } finally {
      t.app.sunap.worker.start();
    }
    const bills = (await t.get('/app/v1/sales/bill', a.h)).body.result_data.bills;
    const d = await waitSent(t, a, bills[0].uniqueId);
    assert.equal(d.sendHistories[0].sendResult, 'SUCCESS');
    const msgs = await messagesTo('01070000006');
    assert.equal(msgs.length, 1);
    const row = await db.selectFrom('sends').select('provider_message_id').where('account_id', '=', a.accountId).executeTakeFirstOrThrow();
    assert.equal(row.provider_message_id, firstId!);
    assert.equal(await points(t, a), 90);
  });

  test('resend: already-sent unpaid invoices only; SKIPPED with reasons; -21 when points fall short', async () => {
    const a = await newAccount(t, { points: 45 });
    const sent = await createOne(t, a, member('01070000007'));
    const failed = await createOne(t, a, member('01070010000'));
    const paid = await createOne(t, a, member('01070000008'));
    const deleted = await createOne(t, a, member('01070000009'));
    for (const id of [sent, failed, paid, deleted]) await waitSent(t, a, id);
    const paidDetail = (await t.get(`/app/v1/sales/bill/${paid}`, a.h)).body.result_data;
    assert.equal((await t.pay(paidDetail.bill.transSeqNo)).approved, true);
    assert.equal((await t.request('DELETE', `/app/v1/sales/bill/${deleted}`, undefined, a.h)).body.result_code, 0);
    assert.equal(await points(t, a), 15); // 45 − 3 × 10 (the failed one came back)

    const r = await t.post('/app/v1/sales/bill/resend', { billIds: [sent, failed, paid, deleted, 'no-such-bill'] }, a.h);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [s, f, p, del, unknown] = r.body.result_data;
    assert.equal(s.uniqueId, sent);
    assert.equal(s.resendResult, 'SUCCESS');
    assert.equal(s.status, 'PENDING');
    assert.equal(s.sendCount, 2);
    assert.match(s.lastSentAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    assert.equal(s.reason, null);
    assert.deepEqual([f.resendResult, p.resendResult, del.resendResult, unknown.resendResult], ['SKIPPED', 'SKIPPED', 'SKIPPED', 'SKIPPED']);
    assert.match(f.reason, /not sent yet/);
    assert.equal(p.reason, 'already paid');
    assert.equal(p.status, 'DONE');
    assert.equal(del.reason, 'deleted');
    assert.deepEqual(unknown, { uniqueId: 'no-such-bill', status: null, sendCount: null, lastSentAt: null, resendResult: 'SKIPPED', reason: 'not found' });
    assert.equal(await points(t, a), 5);

    const d = (await t.get(`/app/v1/sales/bill/${sent}`, a.h)).body.result_data;
    assert.deepEqual(d.sendHistories.map((h: any) => h.sendType), ['INITIAL', 'RESEND']);
    const msgs = await messagesTo('01070000007');
    assert.equal(msgs.length, 2);
    assert.equal(msgs[0].link, msgs[1].link, 'a resend carries the same link');

    // 5 points left, 10 needed: the whole request is refused.
    const short = await t.post('/app/v1/sales/bill/resend', { billIds: [sent, paid] }, a.h);
    assert.equal(short.status, 409);
    assert.equal(short.body.result_code, -21);
    assert.equal(await points(t, a), 5);
    // A failing resend returns its points and leaves the invoice SENT.
    assert.equal((await t.post('/app/v1/sales/bill/resend', { billIds: [] }, a.h)).body.result_code, -20);
    assert.equal((await t.post('/app/v1/sales/bill/resend', { billIds: Array.from({ length: 101 }, () => sent) }, a.h)).body.result_code, -20);
    assert.equal((await t.post('/app/v1/sales/bill/resend', {}, a.h)).body.result_msg, 'billIds: is required');
    const sum = await ledgerMatches(t, a.accountId);
    assert.equal(sum.balance, sum.ledger);
  });

  test('an invoice listed twice in one resend (by uniqueId and by number) is sent and charged once; an unknown one first changes nothing', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000021'));
    const d0 = await waitSent(t, a, id);
    const r = await t.post('/app/v1/sales/bill/resend', { billIds: ['no-such-bill', id, d0.bill.id, id] }, a.h);
    assert.deepEqual(r.body.result_data.map((x: any) => [x.uniqueId, x.resendResult, x.reason]), [
      ['no-such-bill', 'SKIPPED', 'not found'], [id, 'SUCCESS', null], [id, 'SKIPPED', 'listed more than once in this request'], [id, 'SKIPPED', 'listed more than once in this request'],
    ]);
    assert.equal(await points(t, a), 80, 'the first send and one resend');
    assert.equal((await messagesTo('01070000021')).length, 2);
  });

  test('an invoice paid between the resend\'s look-up and its transaction is skipped as no longer payable, and nothing is taken', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000022'));
    await waitSent(t, a, id);
    const db = t.app.sunap.database.db;
    const account = await accountRow(t, a);
    let paid = false;
    // Right after the resend has read the invoice (still payable), its payment is approved.
    const racing = afterEachRead(db, async () => {
      if (!paid) {
        paid = true;
        await db.updateTable('invoices').set({ status: 'DONE' }).where('unique_id', '=', id).execute();
      }
    });
    const { clock, log } = t.app.sunap;
    const costs = t.app.sunap.config.costs;
    const runner = new SendRunner(db, { gateway: t.app.sunap.gateway, messaging: new SandboxMessaging(db, clock), clock, costs, log, timeoutMs: 5000 });
    const logged = captureLog();
    const [r] = await resend(racing, { clock, costs, log: logged.log, runner }, account, [id]);
    assert.deepEqual([r!.resendResult, r!.reason, r!.status], ['SKIPPED', 'no longer payable', 'DONE']);
    assert.equal(await points(t, a), 90, 'only the first send');
    assert.equal((await messagesTo('01070000022')).length, 1);
    assert.deepEqual(logged.lines, [], 'nothing was run for it');
  });

  test('a resend whose inline run does not finish answers FAILED "will be retried", keeps its points and leaves its job a minute later', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000023'));
    await waitSent(t, a, id);
    const db = t.app.sunap.database.db;
    const account = await accountRow(t, a);
    // A clock a day ahead, standing still: the app's worker, on the real clock, leaves the job alone.
    const T = t.app.sunap.clock.nowMs() + 86_400_000;
    const clock = { nowMs: () => T, now: () => new Date(T) };
    const runner = { run: () => Promise.reject(new Error('provider timed out')) } as unknown as SendRunner;
    const logged = captureLog();
    const [r] = await resend(db, { clock, costs: t.app.sunap.config.costs, log: logged.log, runner }, account, [id]);
    assert.deepEqual([r!.resendResult, r!.reason, r!.sendCount], ['FAILED', 'the send did not complete; it will be retried', 1]);
    const send = await db.selectFrom('sends').select(['id', 'status']).where('account_id', '=', a.accountId).where('send_type', '=', 'RESEND').executeTakeFirstOrThrow();
    assert.equal(send.status, 'WAITING');
    assert.deepEqual(logged.msgs('inline resend did not finish').map((l) => [l.send, l.err]), [[send.id, 'provider timed out']]);
    assert.equal(await points(t, a), 80, 'reserved until its job settles it');
    const job = await db.selectFrom('jobs').select('run_at').where('unique_key', '=', `send:${send.id}`).executeTakeFirstOrThrow();
    assert.equal(Number(job.run_at), T + RESEND_FALLBACK_MS);
  });

  test('a resend while a send of the invoice is still open (a crashed run\'s ACCEPTING send) is skipped, and nothing is taken', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000024'));
    const d0 = await waitSent(t, a, id);
    const db = t.app.sunap.database.db;
    await db.updateTable('sends').set({ status: 'ACCEPTING' }).where('account_id', '=', a.accountId).execute();
    const r = await t.post('/app/v1/sales/bill/resend', { billIds: [id] }, a.h);
    assert.deepEqual(r.body.result_data.map((x: any) => [x.resendResult, x.reason]), [['SKIPPED', 'a send of this invoice is already in progress']]);
    assert.equal(await points(t, a), 90);
    assert.equal((await t.get(`/app/v1/sales/bill/${d0.bill.id}`, a.h)).body.result_data.sendHistories.length, 1);
  });

  test('a resend that fails returns its points and leaves the invoice sent', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000010'));
    const d0 = await waitSent(t, a, id);
    // The number stops receiving anything (the sandbox fails numbers ending in 0000).
    const db = t.app.sunap.database.db;
    await db.updateTable('invoices').set({ receiver_phone: '01070020000' }).where('unique_id', '=', id).execute();
    const r = await t.post('/app/v1/sales/bill/resend', { billIds: [d0.bill.id] }, a.h);
    const [s] = r.body.result_data;
    assert.equal(s.resendResult, 'FAILED');
    assert.equal(s.sendCount, 1);
    const d = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
    assert.equal(s.reason, d.sendHistories[1].errorMessage, 'the provider\'s refusal, as the send recorded it');
    assert.ok(s.reason);
    assert.equal(d.bill.sendStatus, 'SENT');
    assert.deepEqual(d.sendHistories.map((h: any) => h.sendResult), ['SUCCESS', 'FAILED']);
    assert.equal(await points(t, a), 90);
  });

  test('pay → DONE with the payment; cancel (PUT) → CANCELED; a second PUT answers again; summary counts both', async () => {
    // The summary's default month is the month at its call: the payment's must not have ended.
    await clearOfKstMidnight(t);
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, { ...member('01070000011'), webhookUrl: 'https://127.0.0.1:9/hook' });
    const d = await waitSent(t, a, id);
    const pay = await t.post(`/sandbox/payments/${d.bill.transSeqNo}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, cardNumber: '5555555555554444' });
    assert.equal(pay.body.approved, true, JSON.stringify(pay.body));
    const done = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
    assert.equal(done.bill.status, 'DONE');
    assert.match(done.bill.doneDateTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    assert.equal(done.payment.payCompany, 'KB국민카드');
    assert.equal(done.payment.installmentMonth, 0);
    assert.match(done.payment.acceptNumber, /^\d+$/);
    assert.match(done.payment.paymentDateTime, KST_SPACED);
    const db = t.app.sunap.database.db;
    const inv = await db.selectFrom('invoices').select('id').where('unique_id', '=', id).executeTakeFirstOrThrow();
    const events = async () => (await db.selectFrom('webhook_events').select('event').where('invoice_id', '=', inv.id).orderBy('id').execute()).map((e) => e.event);
    assert.deepEqual(await events(), ['bill.paid']);

    const c = await t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, a.h);
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.result_code, 0);
    assert.equal(c.body.result_data.bill.status, 'CANCELED');
    assert.match(c.body.result_data.bill.canceledDateTime, /^\d{4}-\d{2}-\d{2}T/);
    assert.deepEqual(await events(), ['bill.paid', 'bill.canceled']);
    const s = await t.gw('searchPayment', { TRANS_SEQNO: d.bill.transSeqNo });
    assert.equal(s.body.result_data.APPROVE_STATUS, 'CANCEL_COMPLETE');
    const again = await t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, a.h);
    assert.equal(again.body.result_code, 0);
    assert.equal(again.body.result_data.bill.status, 'CANCELED');
    expectDeleteRefused(await t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h));

    const sum = (await t.get('/app/v1/sales/summary', a.h)).body.result_data;
    assert.deepEqual({ ...sum, month: undefined }, { month: undefined, paidCount: 1, paidAmount: 128000, canceledCount: 1, canceledAmount: 128000, netAmount: 0 });
    assert.equal(sum.month, done.bill.doneDateTime.slice(0, 7));
  });

  test('a direct gateway cancel moves the invoice to CANCELED', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000012'));
    const d = await waitSent(t, a, id);
    assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
    const r = await t.gw('requestPaymentCancel', { TRANS_SEQNO: d.bill.transSeqNo, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01070000012' });
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    const after = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
    assert.equal(after.bill.status, 'CANCELED');
    const sum = (await t.get('/app/v1/sales/summary', a.h)).body.result_data;
    assert.equal(sum.paidCount, 1);
    assert.equal(sum.canceledCount, 1);
  });

  test('a card cancel failure: 502 / -30 and the invoice stays DONE', async () => {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, member('01070000013'));
    const d = await waitSent(t, a, id);
    assert.equal((await t.pay(d.bill.transSeqNo, '4000000000000259')).approved, true);
    const r = await t.request('PUT', `/app/v1/sales/bill/${id}`, undefined, a.h);
    assert.equal(r.status, 502, JSON.stringify(r.body));
    assert.equal(r.body.result_code, -30);
    assert.equal(r.body.result_data, null);
    assert.equal((await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.bill.status, 'DONE');
  });

  test('the balance equals the ledger sum after a mixed run of sends, failures, fallbacks and resends', async () => {
    const a = await newAccount(t, { points: 1000 });
    const phones = ['01071000001', '01071009999', '01071000000', '01071008888', '01071000002'];
    const channels = ['ALIMTALK', 'SMS', 'ALIMTALK_THEN_SMS'];
    const ids: string[] = [];
    for (const [i, phone] of phones.entries()) {
      for (const channel of channels) ids.push(await createOne(t, a, { ...member(phone, { studentName: `학생${i}` }), sendChannel: channel }));
    }
    for (const id of ids) await waitSent(t, a, id);
    await t.post('/app/v1/sales/bill/resend', { billIds: ids }, a.h);
    await t.post('/app/v1/sales/bill/resend', { billIds: ids.slice(0, 5) }, a.h);
    await t.app.sunap.worker.drain();
    const sum = await ledgerMatches(t, a.accountId);
    assert.equal(sum.balance, sum.ledger);
    assert.equal(await points(t, a), sum.balance);
    // Every reservation of a settled send was settled: no send is left open.
    const open = await t.app.sunap.database.db.selectFrom('sends').select('id').where('account_id', '=', a.accountId).where('status', 'in', ['WAITING', 'ACCEPTING']).execute();
    assert.equal(open.length, 0);
    // Expected consumption, by hand: per phone, what each channel costs when it succeeds.
    //   normal (x3 phones: …0001, …8888, …0002): ALIMTALK 10, SMS 30, fallback 10 → 50 each, sent twice for the first five ids
    const sends = await t.app.sunap.database.db.selectFrom('sends').select(['status', 'cost_settled']).where('account_id', '=', a.accountId).execute();
    const consumed = sends.reduce((s, x) => s + Number(x.cost_settled ?? 0), 0);
    assert.equal(1000 - sum.balance, consumed);
  });
});

function expectDeleteRefused(r: { status: number; body: any }) {
  assert.equal(r.status, 409, JSON.stringify(r.body));
  assert.equal(r.body.result_code, -24);
}
