/**
 * Live mode against the Solapi fake (docs/going-live.md, docs/invoicing.md "Points"): the
 * invoice message as the approved ALIMTALK template, Solapi's own SMS fallback read back from
 * its delivery report, the points settled once from that report, and no second message when
 * an answer was lost.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INVOICE_TEMPLATE } from '../../src/invoicing/index.js';
import { forEachEngine } from '../helpers/app.js';
import { jobSettled } from '../helpers/jobs.js';
import { eventually } from '../helpers/wait.js';
import { createOne, newAccount, points, waitSent, type Login } from '../invoicing/support.js';
import { FAKE_SOLAPI } from '../fakes/solapi.js';
import { LIVE_TIMEOUT_MS, withFakes, withLiveApp } from './support.js';

const ALIMTALK = 10;
const SMS = 30;

forEachEngine('live invoice messages through Solapi', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f);

  async function invoice(a: Login, phone: string, sendChannel: string) {
    const id = await createOne(t, a, { sendChannel, members: [{ studentName: '홍길동', studentPhone: phone }] });
    const d = await waitSent(t, a, id);
    const send = await t.app.sunap.database.db.selectFrom('sends').selectAll().where('account_id', '=', a.accountId).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    return { id, d, send };
  }
  const refresh = async (a: Login, id: string) => (await t.post(`/app/v1/sales/bill/${id}/refresh-status`, {}, a.h)).body.result_data;
  /** The send of a bill with one recipient. */
  const sendOf = (billId: string) => t.app.sunap.database.db.selectFrom('sends').innerJoin('invoices', 'invoices.id', 'sends.invoice_id').selectAll('sends')
    .where('invoices.unique_id', '=', billId).executeTakeFirstOrThrow();
  /** Waits until the send job of a bill (one send) has let go after its first attempt. */
  const firstSendSettled = async (billId: string) => jobSettled(t.app.sunap.database.db, `send:${(await sendOf(billId)).id}`, 1);
  const ledger = (a: Login, sendId: string) => t.app.sunap.database.db.selectFrom('ledger').select(['kind', 'delta']).where('account_id', '=', a.accountId)
    .where('ref', '=', sendId).orderBy('id').execute();

  test('invoice → ALIMTALK with the approved template and its variables → refresh-status DELIVERED; the ALIMTALK price is kept', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { id, d, send } = await invoice(a, '01012345678', 'ALIMTALK');
    assert.equal(d.sendHistories[0].sendResult, 'SUCCESS');
    assert.equal(d.sendHistories[0].deliveryStatus, 'ACCEPTED');
    const [m] = f.solapi.to('01012345678').filter((x) => x.customFields.sunapKey === send.id);
    assert.ok(m, 'one message, carrying the send id as its custom key');
    assert.equal(send.provider_message_id, m.messageId);
    const req = f.solapi.requests.find((r) => r.json?.messages?.[0]?.customFields?.sunapKey === send.id)!;
    const sent = req.json.messages[0];
    assert.equal(sent.from, FAKE_SOLAPI.sender);
    assert.equal(sent.kakaoOptions.pfId, FAKE_SOLAPI.pfId);
    assert.equal(sent.kakaoOptions.templateId, FAKE_SOLAPI.templateId);
    assert.equal(sent.kakaoOptions.disableSms, true, 'ALIMTALK only: no fallback');
    const filled = INVOICE_TEMPLATE.replace(/#\{[^}]+\}/g, (n) => sent.kakaoOptions.variables[n]);
    assert.equal(sent.text, filled, 'the text is the approved template, filled');
    assert.equal(sent.kakaoOptions.variables['#{청구금액}'], '128,000원');
    assert.match(sent.kakaoOptions.variables['#{결제링크}'], /^https:\/\/pay\.example\.com\/checkout\?tid=/);
    assert.equal(await points(t, a), 1000 - ALIMTALK, 'reserved while the delivery is unknown');

    const r = await refresh(a, id);
    assert.equal(r.sendHistories[0].deliveryStatus, 'DELIVERED');
    assert.equal(r.sendHistories[0].sendChannel, 'ALIMTALK');
    assert.equal(await points(t, a), 1000 - ALIMTALK);
    assert.deepEqual((await ledger(a, send.id)).map((x) => x.kind), ['RESERVE'], 'nothing to refund');
  });

  test('ALIMTALK_THEN_SMS carried by ALIMTALK: Solapi\'s own fallback was allowed, and the difference is refunded once', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { id, d, send } = await invoice(a, '01022223333', 'ALIMTALK_THEN_SMS');
    assert.equal(d.sendHistories[0].sendChannel, 'ALIMTALK_THEN_SMS', 'the channel is not known before the delivery report');
    const req = f.solapi.requests.find((r) => r.json?.messages?.[0]?.customFields?.sunapKey === send.id)!;
    assert.equal(req.json.messages[0].kakaoOptions.disableSms, false, 'one message, with Solapi\'s own SMS fallback');
    assert.equal(await points(t, a), 1000 - SMS, 'the SMS price is reserved');
    const r = await refresh(a, id);
    assert.equal(r.sendHistories[0].sendChannel, 'ALIMTALK');
    assert.equal(r.sendHistories[0].deliveryStatus, 'DELIVERED');
    assert.equal(await points(t, a), 1000 - ALIMTALK);
    await refresh(a, id);
    assert.deepEqual((await ledger(a, send.id)).map((x) => [x.kind, Number(x.delta)]), [['RESERVE', -SMS], ['REFUND', SMS - ALIMTALK]]);
  });

  test('ALIMTALK failure → Solapi\'s SMS fallback: the channel used is read back as SMS and the SMS price is kept', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { id, send } = await invoice(a, '01033339999', 'ALIMTALK_THEN_SMS');
    assert.equal(f.solapi.to('01033339999').length, 1, 'one message: the fallback is Solapi\'s, not a second send');
    const r = await refresh(a, id);
    assert.equal(r.sendHistories[0].sendChannel, 'SMS');
    assert.equal(r.sendHistories[0].deliveryStatus, 'DELIVERED');
    const m = f.solapi.to('01033339999')[0]!;
    assert.equal(m.replacement, true);
    assert.equal(m.type, 'LMS', 'the invoice text is over 90 bytes in EUC-KR');
    assert.equal(await points(t, a), 1000 - SMS);
    assert.deepEqual((await ledger(a, send.id)).map((x) => x.kind), ['RESERVE']);
  });

  test('Solapi\'s fallback reported as a separate replacement message: the delivered LMS is read, never ALIMTALK FAILED; the SMS price is kept, nothing refunded', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { id, send } = await invoice(a, '01033339998', 'ALIMTALK_THEN_SMS');
    assert.equal(f.solapi.to('01033339998').length, 1, 'one message sent by Sunap');
    const r = await refresh(a, id);
    const [original, replacement] = f.solapi.to('01033339998');
    assert.ok(replacement, 'Solapi made a separate replacement message');
    assert.equal(original!.type, 'ATA');
    assert.equal(original!.statusCode, '3104', 'the ALIMTALK record itself stays failed');
    assert.deepEqual(original!.replacements, [replacement.messageId]);
    assert.equal(replacement.type, 'LMS');
    assert.equal(replacement.statusCode, '4000');
    assert.equal(send.provider_message_id, original!.messageId, 'the send points at the original');
    assert.equal(r.sendHistories[0].sendChannel, 'SMS', 'the channel that delivered');
    assert.equal(r.sendHistories[0].deliveryStatus, 'DELIVERED');
    assert.equal(r.bill.sendStatus, 'SENT', 'never FAILED');
    assert.equal(await points(t, a), 1000 - SMS);
    assert.deepEqual((await ledger(a, send.id)).map((x) => x.kind), ['RESERVE'], 'no refund of a delivered LMS');
    const stored = await t.app.sunap.database.db.selectFrom('sends').selectAll().where('id', '=', send.id).executeTakeFirstOrThrow();
    assert.equal(stored.channel_used, 'SMS');
    assert.equal(stored.delivery_status, 'DELIVERED');
  });

  test('the separate replacement shape read by the delivery job (no refresh-status): settled once at the SMS price', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { send } = await invoice(a, '01066669998', 'ALIMTALK_THEN_SMS');
    await t.app.sunap.clock.advance(61);
    t.app.sunap.worker.wake();
    await eventually(async () => (await t.app.sunap.database.db.selectFrom('sends').select('cost_settled').where('id', '=', send.id).executeTakeFirstOrThrow()).cost_settled !== null,
      'the delivery job settled the send');
    const settled = await t.app.sunap.database.db.selectFrom('sends').selectAll().where('id', '=', send.id).executeTakeFirstOrThrow();
    assert.equal(settled.channel_used, 'SMS');
    assert.equal(settled.delivery_status, 'DELIVERED');
    assert.equal(Number(settled.cost_settled), SMS);
    assert.equal(await points(t, a), 1000 - SMS);
    assert.deepEqual((await ledger(a, send.id)).map((x) => x.kind), ['RESERVE']);
  });

  test('an SMS invoice goes as Solapi type SMS when the one line with the short link fits 90 bytes, as LMS (the whole text) when the reason is too long', async () => {
    const a = await newAccount(t, { points: 1000 });
    await invoice(a, '01012120001', 'SMS');
    const [short] = f.solapi.to('01012120001');
    assert.equal(short!.type, 'SMS');
    assert.match(short!.text, /^\[[^\]]+\] 홍길동님 11월 수강료 128,000원 https:\/\/pay\.example\.com\/s\/[0-9A-Za-z]{12}$/);
    const id = await createOne(t, a, { sendChannel: 'SMS', reason: '2026년 겨울 방학 특강 및 교재비 청구', members: [{ studentName: '홍길동', studentPhone: '01012120002' }] });
    await waitSent(t, a, id);
    const [long] = f.solapi.to('01012120002');
    assert.equal(long!.type, 'LMS');
    assert.match(long!.text, /결제하기: https:\/\/pay\.example\.com\/s\/[0-9A-Za-z]{12}$/);
  });

  test('total failure → full refund: delivered on no channel (after acceptance), or refused at once', async () => {
    const a = await newAccount(t, { points: 1000 });
    const failed = await invoice(a, '01044440000', 'ALIMTALK_THEN_SMS');
    const r = await refresh(a, failed.id);
    assert.equal(r.sendHistories[0].deliveryStatus, 'FAILED');
    assert.equal(await points(t, a), 1000, 'every point back');
    assert.deepEqual((await ledger(a, failed.send.id)).map((x) => [x.kind, Number(x.delta)]), [['RESERVE', -SMS], ['REFUND', SMS]]);

    const refused = await invoice(a, '01055551111', 'ALIMTALK');
    assert.equal(refused.d.bill.sendStatus, 'FAILED');
    assert.equal(refused.d.sendHistories[0].sendResult, 'FAILED');
    assert.match(refused.d.sendHistories[0].errorMessage, /1020/);
    assert.equal(await points(t, a), 1000);
  });

  test('without refresh-status the delivery job settles the points; refresh-status and the job together refund once', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { id, send } = await invoice(a, '01066666767', 'ALIMTALK_THEN_SMS');
    await t.app.sunap.clock.advance(61);
    t.app.sunap.worker.wake();
    await eventually(async () => (await t.app.sunap.database.db.selectFrom('sends').select('cost_settled').where('id', '=', send.id).executeTakeFirstOrThrow()).cost_settled !== null,
      'the delivery job settled the send');
    await Promise.all([refresh(a, id), refresh(a, id)]);
    assert.deepEqual((await ledger(a, send.id)).map((x) => [x.kind, Number(x.delta)]), [['RESERVE', -SMS], ['REFUND', SMS - ALIMTALK]]);
    assert.equal(await points(t, a), 1000 - ALIMTALK);
  });

  test('an answer lost after Solapi accepted the message: the retry looks it up and sends nothing twice', async () => {
    const a = await newAccount(t, { points: 1000 });
    const id = await createOne(t, a, { sendChannel: 'ALIMTALK', members: [{ studentName: '홍길동', studentPhone: '01077775555' }] });
    await eventually(async () => f.solapi.to('01077775555').length === 1, 'the message reached Solapi');
    await new Promise((r) => setTimeout(r, LIVE_TIMEOUT_MS + 200));
    const waiting = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
    assert.equal(waiting.sendHistories[0].sendResult, 'WAITING', 'the time limit ran out: retried later');
    await firstSendSettled(id);
    await t.app.sunap.clock.advance(11);
    t.app.sunap.worker.wake();
    const d = await waitSent(t, a, id);
    assert.equal(d.sendHistories[0].sendResult, 'SUCCESS');
    const messages = f.solapi.to('01077775555');
    assert.equal(messages.length, 1, 'one message');
    const send = await sendOf(id);
    assert.equal(send.provider_message_id, messages[0]!.messageId, 'the message found by its key');
  });

  test('a 500 before Solapi acted: the retry finds nothing under the key and sends once', async () => {
    const a = await newAccount(t, { points: 1000 });
    const id = await createOne(t, a, { sendChannel: 'ALIMTALK', members: [{ studentName: '홍길동', studentPhone: '01088887777' }] });
    await eventually(async () => f.solapi.requests.some((r) => r.json?.messages?.[0]?.to === '01088887777'), 'the first request');
    await firstSendSettled(id);
    await t.app.sunap.clock.advance(11);
    t.app.sunap.worker.wake();
    const d = await waitSent(t, a, id);
    assert.equal(d.sendHistories[0].sendResult, 'SUCCESS');
    assert.equal(f.solapi.to('01088887777').length, 1);
    const lookups = f.solapi.requests.filter((r) => r.path === '/messages/v4/list' && r.query.get('to') === '01088887777');
    assert.ok(lookups.length >= 1, 'the retry looked first');
  });
});

forEachEngine('live invoice messages with a wrong Solapi secret', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f, () => ({ SUNAP_SOLAPI_API_SECRET: 'WRONGSECRET0000000000000000000AB' }));

  test('the send fails at once with a clear error naming the variables, the points come back, and the secret is not logged', async () => {
    const a = await newAccount(t, { points: 1000 });
    const id = await createOne(t, a, { sendChannel: 'ALIMTALK' });
    const d = await waitSent(t, a, id);
    assert.equal(d.bill.sendStatus, 'FAILED');
    assert.match(d.sendHistories[0].errorMessage, /refused Sunap's credentials \(SignatureDoesNotMatch/);
    assert.match(d.sendHistories[0].errorMessage, /SUNAP_SOLAPI_API_KEY and SUNAP_SOLAPI_API_SECRET/);
    assert.equal(await points(t, a), 1000);
    assert.equal(f.solapi.messages.length, 0);
    assert.doesNotMatch(t.logs.join(''), /WRONGSECRET/);
  });
});
