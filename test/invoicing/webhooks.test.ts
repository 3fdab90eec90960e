import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { Insertable } from 'kysely';
import type { InvoiceTable } from '../../src/db/schema.js';
import { createAccount, grantPoints } from '../../src/invoicing/accounts.js';
import { DeliveryDetailSchema } from '../../src/invoicing/delivery-schemas.js';
import * as repo from '../../src/invoicing/repository.js';
import { recordWebhookEvent, WEBHOOK_JOB } from '../../src/invoicing/webhooks.js';
import { kstIso } from '../../src/platform/kst.js';
import { newId, webhookSignature, type SecretBox } from '../../src/platform/crypto.js';
import { seqNo, startApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/db.js';
import { jobSettled } from '../helpers/jobs.js';
import { Receiver, type Received } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';

const SECRET = 'whsec_test_0123456789abcdef';

/** What a receiver does (interface "Webhook signature"): recompute, compare in constant time, check |now - t| <= 300. */
function verify(r: Received, secret: string, nowSec = Math.floor(Date.now() / 1000)): boolean {
  const header = String(r.headers['x-service-signature'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const t = Number(m[1]);
  const expected = createHmac('sha256', secret).update(`${t}.`).update(r.raw).digest();
  const got = Buffer.from(m[2]!, 'hex');
  return got.length === expected.length && timingSafeEqual(got, expected) && Math.abs(nowSec - t) <= 300;
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An account of the test store, and an invoice of it in the given state (set up in the database: the core API is another suite's subject). */
async function makeInvoice(t: TestApp, over: Partial<Insertable<InvoiceTable>> = {}) {
  const db = t.app.sunap.database.db;
  const now = t.app.sunap.clock.nowMs();
  let account = await db.selectFrom('accounts').select('id').where('store_code', '=', t.storeCode).executeTakeFirst();
  if (!account) {
    account = { id: newId() };
    await db.insertInto('accounts').values({ id: account.id, email: `${account.id}@example.com`, password_hash: 'x', store_code: t.storeCode, invoicing_enabled: 1, created_at: now }).execute();
  }
  const row = await db.insertInto('invoices').values({
    unique_id: newId(), account_id: account.id, store_code: t.storeCode, trans_seqno: seqNo('B'), payment_id: null,
    status: 'DONE', send_status: 'SENT', deleted_at: null, request_id: null, request_hash: null, template_type: 'SAME',
    receiver_name: '홍길동', receiver_phone: '01012345678', guardian_phone: null, amount: 128000, reason: '11월 수강료',
    description: null, items_json: null, send_channel: 'ALIMTALK', webhook_url: null, webhook_secret_sealed: null,
    bill_template_id: null, related_subject: null, etc: null, student_birth_date: null, classroom_id: null, send_count: 1,
    first_sent_at: now, last_sent_at: now, done_at: now, canceled_at: null, created_at: now, updated_at: now, ...over,
  }).returningAll().executeTakeFirstOrThrow();
  return row;
}

async function record(t: TestApp, invoice: Awaited<ReturnType<typeof makeInvoice>>, event: 'bill.paid' | 'bill.canceled') {
  const now = t.app.sunap.clock.nowMs();
  await t.app.sunap.database.db.transaction().execute((trx) => recordWebhookEvent(trx, invoice, event, now));
  t.app.sunap.worker.wake();
}

const events = (t: TestApp, invoiceId: number) =>
  t.app.sunap.database.db.selectFrom('webhook_events').selectAll().where('invoice_id', '=', invoiceId).orderBy('id').execute();

const attempts = (t: TestApp, eventId: number) =>
  t.app.sunap.database.db.selectFrom('outbound_attempts').selectAll().where('target', '=', 'WEBHOOK').where('ref_id', '=', String(eventId)).orderBy('attempt_no').execute();

const settled = (t: TestApp, eventId: number, n: number) => jobSettled(t.app.sunap.database.db, `webhook:${eventId}`, n);

test('webhook signature: the published test vector', () => {
  assert.equal(
    webhookSignature('whsec_0123456789abcdef', 1758430800, Buffer.from('{"event":"bill.paid"}')),
    't=1758430800,v1=ae201a94ae2764a1f463601781a180495c5cdd9de3b7a29c09004cca3a251387',
  );
});

for (const engine of engines) {
  describe(`invoicing webhooks [${engine}]`, () => {
    let t: TestApp;
    let rx: Receiver;
    before(async () => { t = await startApp(engine); });
    after(async () => t?.close());
    beforeEach(async () => { rx = await new Receiver().start(); });
    afterEach(async () => rx?.close());

    test('bill.paid is signed over the exact bytes and verifies at the receiver', async () => {
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/hooks/sunap`, webhook_secret_sealed: t.app.sunap.box.seal(SECRET), request_id: 'req_0001abcd' });
      await record(t, inv, 'bill.paid');
      await rx.waitFor(1);
      const r = rx.received[0]!;
      assert.equal(r.method, 'POST');
      assert.equal(r.url, '/hooks/sunap');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['x-service-event'], 'bill.paid');
      const [ev] = await events(t, inv.id);
      assert.equal(r.headers['x-service-delivery'], String(ev!.id));
      assert.match(String(r.headers['x-service-delivery']), /^\d+$/);
      assert.ok(verify(r, SECRET), `signature ${r.headers['x-service-signature']} must verify`);
      assert.equal(verify(r, SECRET + 'x'), false, 'another secret must not verify');
      // The X-CariPay-* aliases carry exactly the same values.
      for (const h of ['event', 'delivery', 'signature']) assert.equal(r.headers[`x-caripay-${h}`], r.headers[`x-service-${h}`], `x-caripay-${h}`);
      // Only the X-Service-* headers get an alias: no other header is renamed into one.
      assert.deepEqual(Object.keys(r.headers).filter((h) => h.startsWith('x-')).sort(),
        ['x-caripay-delivery', 'x-caripay-event', 'x-caripay-signature', 'x-service-delivery', 'x-service-event', 'x-service-signature']);
      // t is wall-clock seconds at send time.
      const t0 = Number(/^t=(\d+)/.exec(String(r.headers['x-service-signature']))![1]);
      assert.ok(Math.abs(t0 - Math.floor(r.at / 1000)) <= 2);
      // The stored bytes are the bytes sent.
      assert.equal(r.raw.toString('utf8'), ev!.body);
      assert.deepEqual(r.json, {
        event: 'bill.paid', billId: inv.unique_id, requestId: 'req_0001abcd', transSeqNo: inv.trans_seqno, status: 'DONE',
        amount: 128000, reason: '11월 수강료', paidAt: kstIso(inv.done_at!), canceledAt: null, occurredAt: r.json.occurredAt,
      });
      assert.match(r.json.occurredAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      // The delivery /docs shows as an example is one like this: the same body fields in the same
      // order, an invoice's number, headers that a real delivery carries, with the body's event.
      const shown = (DeliveryDetailSchema.examples as { request: { headers: Record<string, string>; body: string } }[])[0]!.request;
      const shownBody = JSON.parse(shown.body);
      assert.deepEqual(Object.keys(shownBody), Object.keys(r.json));
      assert.match(shownBody.transSeqNo, /^INV[A-Z2-7]{24}$/);
      assert.deepEqual(Object.keys(shown.headers).filter((h) => !(h in r.headers)), [], 'every documented header is sent');
      assert.deepEqual([shown.headers['content-type'], shown.headers['x-service-event']], [r.headers['content-type'], shownBody.event]);
      const done = await eventually(async () => (await events(t, inv.id)).find((e) => e.status === 'DELIVERED'), 'DELIVERED');
      assert.equal(done.attempts, 1);
      const a = await attempts(t, ev!.id);
      assert.equal(a.length, 1);
      assert.equal(a[0]!.status_code, 200);
      assert.equal(a[0]!.error, null);
      assert.equal(a[0]!.url, `${rx.url}/hooks/sunap`);
      // The secret is stored sealed, never in clear.
      const sealed = await t.app.sunap.database.db.selectFrom('invoices').select('webhook_secret_sealed').where('id', '=', inv.id).executeTakeFirstOrThrow();
      assert.ok(!sealed.webhook_secret_sealed!.includes(SECRET));
    });

    test('no signature header without a secret; bill.canceled carries canceledAt', async () => {
      const now = t.app.sunap.clock.nowMs();
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/h`, status: 'CANCELED', canceled_at: now });
      await record(t, inv, 'bill.canceled');
      await rx.waitFor(1);
      const r = rx.received[0]!;
      assert.equal(r.headers['x-service-signature'], undefined);
      assert.equal(r.headers['x-caripay-signature'], undefined);
      assert.equal(r.headers['x-service-event'], 'bill.canceled');
      assert.equal(r.headers['x-caripay-event'], 'bill.canceled');
      assert.equal(r.json.event, 'bill.canceled');
      assert.equal(r.json.status, 'CANCELED');
      assert.equal(r.json.requestId, null);
      assert.equal(r.json.canceledAt, kstIso(now));
      assert.equal(r.json.paidAt, kstIso(inv.done_at!));
    });

    test('no webhook_url: no event is written', async () => {
      const inv = await makeInvoice(t);
      await record(t, inv, 'bill.paid');
      assert.equal((await events(t, inv.id)).length, 0);
    });

    test('bill.paid exists once even when recorded twice; bill.canceled is a second delivery', async () => {
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/once` });
      await record(t, inv, 'bill.paid');
      await record(t, inv, 'bill.paid');
      await t.app.sunap.database.db.transaction().execute(async (trx) => {
        await recordWebhookEvent(trx, inv, 'bill.paid', t.app.sunap.clock.nowMs());
        await recordWebhookEvent(trx, inv, 'bill.paid', t.app.sunap.clock.nowMs());
      });
      await rx.waitFor(1);
      await sleep(400);
      assert.equal(rx.received.length, 1);
      const evs = await events(t, inv.id);
      assert.equal(evs.length, 1);
      const jobs = await t.app.sunap.database.db.selectFrom('jobs').select('id').where('kind', '=', WEBHOOK_JOB.kind).where('unique_key', '=', `webhook:${evs[0]!.id}`).execute();
      assert.equal(jobs.length, 1);
      const deliveries = await t.app.sunap.database.db.selectFrom('deliveries').select('ref_id').where('kind', '=', 'webhook').where('bill_id', '=', inv.unique_id).execute();
      assert.deepEqual(deliveries, [{ ref_id: String(evs[0]!.id) }], 'one delivery, of that event');

      const canceled = { ...inv, status: 'CANCELED' as const, canceled_at: t.app.sunap.clock.nowMs() };
      await record(t, canceled, 'bill.canceled');
      await rx.waitFor(2);
      const ids = rx.received.map((r) => r.headers['x-service-delivery']);
      assert.notEqual(ids[0], ids[1]);
      assert.deepEqual(rx.received.map((r) => r.json.event), ['bill.paid', 'bill.canceled']);
    });

    test('500s are retried after 1 min, 5 min, 30 min and 2 h with the same delivery number, then abandoned', async () => {
      rx.defaultStatus = 500;
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/fails`, webhook_secret_sealed: t.app.sunap.box.seal(SECRET) });
      await record(t, inv, 'bill.paid');
      await rx.waitFor(1);
      const [ev] = await events(t, inv.id);
      await eventually(async () => (await attempts(t, ev!.id)).length === 1, 'first attempt recorded');
      await settled(t, ev!.id, 1);

      // Not before its time: half the first delay changes nothing.
      await t.post('/sandbox/clock', { advanceSeconds: 30 });
      await sleep(300);
      assert.equal(rx.received.length, 1);

      const delays = [30, 300, 1800, 7200]; // the first one completes the 60 s
      for (let i = 0; i < delays.length; i++) {
        await eventually(async () => (await attempts(t, ev!.id)).length === i + 1, `attempt ${i + 1} recorded`);
        await settled(t, ev!.id, i + 1);
        const r = await t.post('/sandbox/clock', { advanceSeconds: delays[i] });
        assert.equal(r.status, 200);
        await rx.waitFor(i + 2);
      }
      assert.equal(rx.received.length, 5);
      assert.deepEqual(new Set(rx.received.map((r) => r.headers['x-service-delivery'])), new Set([String(ev!.id)]));
      assert.ok(rx.received.every((r) => r.raw.equals(rx.received[0]!.raw)), 'every attempt carries the same bytes');
      assert.ok(rx.received.every((r) => verify(r, SECRET)), 'every attempt is freshly signed');

      const gone = await eventually(async () => (await events(t, inv.id)).find((e) => e.status === 'ABANDONED'), 'ABANDONED');
      assert.equal(gone.attempts, 5);
      await t.post('/sandbox/clock', { advanceSeconds: 86_400 });
      await sleep(500);
      assert.equal(rx.received.length, 5, 'no sixth attempt');
      const a = await attempts(t, ev!.id);
      assert.deepEqual(a.map((x) => x.attempt_no), [1, 2, 3, 4, 5]);
      assert.ok(a.every((x) => x.status_code === 500 && x.error === 'HTTP 500'));
      const job = await t.app.sunap.database.db.selectFrom('jobs').select(['status', 'attempts']).where('unique_key', '=', `webhook:${ev!.id}`).executeTakeFirstOrThrow();
      assert.deepEqual(job, { status: 'DEAD', attempts: 5 });
    });

    test('a redirect is a failure and is not followed; the retry then succeeds', async () => {
      rx.script.push(302);
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/moved` });
      await record(t, inv, 'bill.paid');
      await rx.waitFor(1);
      const [ev] = await events(t, inv.id);
      const first = await eventually(async () => (await attempts(t, ev!.id))[0], 'attempt 1 recorded');
      assert.equal(first.status_code, 302);
      assert.match(first.error ?? '', /redirect/);
      assert.equal(rx.received.length, 1);
      assert.equal((await events(t, inv.id))[0]!.status, 'PENDING');
      await settled(t, ev!.id, 1);
      await t.post('/sandbox/clock', { advanceSeconds: 60 });
      await rx.waitFor(2);
      const done = await eventually(async () => (await events(t, inv.id)).find((e) => e.status === 'DELIVERED'), 'DELIVERED');
      assert.equal(done.attempts, 2);
      assert.deepEqual((await attempts(t, ev!.id)).map((x) => x.status_code), [302, 200]);
      assert.equal(rx.received[0]!.headers['x-service-delivery'], rx.received[1]!.headers['x-service-delivery']);
    });

    test('a secret that cannot be opened: nothing is sent unsigned, the failure is recorded', async () => {
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/sealed`, webhook_secret_sealed: 'v1.deadbeef.x.y.z' });
      await record(t, inv, 'bill.paid');
      const [ev] = await events(t, inv.id);
      const a = await eventually(async () => (await attempts(t, ev!.id))[0], 'attempt recorded');
      assert.match(a.error ?? '', /^not sent: the webhook secret cannot be opened/);
      assert.equal(rx.received.length, 0);
    });

    /** The job's own run, as the worker calls it, for the cases the worker's timing does not reach. */
    const runJob = (payload: { eventId: number; manual?: boolean }, attempt: number, final = false, box: SecretBox = t.app.sunap.box) =>
      WEBHOOK_JOB.run(payload, { db: t.app.sunap.database.db, http: t.app.sunap.http, clock: t.app.sunap.clock, box }, { jobId: `test-${payload.eventId}-${attempt}`, attempt, final });

    test('a secret that cannot be opened for a long reason: the recorded failure is cut at 300 characters', async () => {
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/long`, webhook_secret_sealed: t.app.sunap.box.seal(SECRET) });
      const eventId = await t.app.sunap.database.db.transaction().execute((trx) =>
        repo.insertWebhookEvent(trx, { invoiceId: inv.id, accountId: inv.account_id, event: 'bill.paid', url: inv.webhook_url!, body: '{}', now: t.app.sunap.clock.nowMs() }));
      const reason = 'z'.repeat(400);
      const broken = { seal: (s: string) => s, open: () => { throw new Error(reason); } } as unknown as SecretBox;
      await assert.rejects(runJob({ eventId: eventId! }, 1, false, broken), { message: reason });
      const [a] = await attempts(t, eventId!);
      assert.equal(a!.error, `not sent: the webhook secret cannot be opened (${reason})`.slice(0, 300));
      assert.equal(rx.received.length, 0);
    });

    test('a run of an event already delivered sends nothing again unless it is a redelivery', async () => {
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/again` });
      await record(t, inv, 'bill.paid');
      const [ev] = await events(t, inv.id);
      await eventually(async () => (await events(t, inv.id))[0]!.status === 'DELIVERED' || undefined, 'DELIVERED');
      // A job that runs twice (a crash after its request): the second run sends nothing.
      await runJob({ eventId: ev!.id }, 2);
      assert.equal(rx.received.length, 1);
      await runJob({ eventId: ev!.id, manual: true }, 1);
      assert.equal(rx.received.length, 2);
      // An event that no longer exists: nothing to send, and no error to retry.
      await runJob({ eventId: ev!.id + 1_000_000 }, 1);
      assert.equal(rx.received.length, 2);
    });

    test('an event written without its delivery (a job from before deliveries existed) gets it on its first run, numbered by the event', async () => {
      const db = t.app.sunap.database.db;
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/old` });
      const body = JSON.stringify({ event: 'bill.paid', billId: inv.unique_id });
      const eventId = await db.transaction().execute((trx) => repo.insertWebhookEvent(trx, { invoiceId: inv.id, accountId: inv.account_id, event: 'bill.paid', url: inv.webhook_url!, body, now: t.app.sunap.clock.nowMs() }));
      assert.ok(eventId);
      await runJob({ eventId }, 1);
      assert.equal(rx.received.length, 1);
      assert.equal(rx.received[0]!.raw.toString('utf8'), body);
      const d = await db.selectFrom('deliveries').selectAll().where('kind', '=', 'webhook').where('ref_id', '=', String(eventId)).executeTakeFirstOrThrow();
      assert.deepEqual([d.number, d.bill_id, d.url, d.status], [String(eventId), inv.unique_id, `${rx.url}/old`, 'delivered']);
    });

    test('a redelivery\'s first attempt is recorded as manual, its retries as scheduled', async () => {
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/manual` });
      rx.defaultStatus = 500;
      await record(t, inv, 'bill.paid');
      const [ev] = await events(t, inv.id);
      await eventually(async () => (await attempts(t, ev!.id))[0], 'first scheduled attempt');
      rx.script.push(500, 200);
      await assert.rejects(runJob({ eventId: ev!.id, manual: true }, 1));
      await runJob({ eventId: ev!.id, manual: true }, 2);
      const rows = await attempts(t, ev!.id);
      // Numbered in the delivery's one sequence: after the scheduled attempt 1, the redelivery is 2 and its retry 3.
      assert.deepEqual(rows.filter((a) => a.job_id.startsWith('test-')).map((a) => [a.attempt_no, a.trigger, a.status_code]), [[2, 'manual', 500], [3, 'scheduled', 200]]);
      assert.deepEqual(rows.map((a) => a.attempt_no), [1, 2, 3]);
    });

    test('a connection failure is recorded and retried', async () => {
      const inv = await makeInvoice(t, { webhook_url: 'https://127.0.0.1:1/nothing-listens' });
      await record(t, inv, 'bill.paid');
      const [ev] = await events(t, inv.id);
      const a = await eventually(async () => (await attempts(t, ev!.id))[0], 'attempt recorded');
      assert.equal(a.status_code, null);
      assert.ok(a.error);
      const job = await eventually(async () => {
        const j = await t.app.sunap.database.db.selectFrom('jobs').selectAll().where('unique_key', '=', `webhook:${ev!.id}`).executeTakeFirst();
        return j && j.lease_owner === null && j.status === 'PENDING' ? j : undefined;
      }, 'job rescheduled');
      assert.equal(job.attempts, 1);
      assert.ok(job.run_at >= t.app.sunap.clock.nowMs() + 50_000, 'next attempt in about a minute');
    });
  });

  describe(`invoicing webhooks, private targets refused [${engine}]`, () => {
    let t: TestApp;
    let rx: Receiver;
    before(async () => {
      t = await startApp(engine, { SUNAP_ALLOW_PRIVATE_TARGETS: 'false' });
      rx = await new Receiver().start();
    });
    after(async () => {
      await rx?.close();
      await t?.close();
    });

    test('a loopback webhook URL is refused at connect time and recorded', async () => {
      const inv = await makeInvoice(t, { webhook_url: `${rx.url}/inside` });
      await record(t, inv, 'bill.paid');
      const [ev] = await events(t, inv.id);
      const a = await eventually(async () => (await attempts(t, ev!.id))[0], 'attempt recorded');
      assert.equal(a.status_code, null);
      assert.match(a.error ?? '', /private|not allowed/i);
      assert.equal(rx.received.length, 0);
    });
  });

  describe(`invoicing webhooks through the API [${engine}]`, () => {
    let t: TestApp;
    let rx: Receiver;
    let auth: Record<string, string>;
    before(async () => {
      [t, rx] = await Promise.all([startApp(engine), new Receiver().start()]);
      const now = t.app.sunap.clock.nowMs();
      await createAccount(t.app.sunap.database.db, now, { email: 'hooks@example.com', password: 'password-123', storeCode: t.storeCode });
      await grantPoints(t.app.sunap.database.db, now, { email: 'hooks@example.com', amount: 1000 });
      const login = await t.post('/app/v1/auth/login', { email: 'hooks@example.com', password: 'password-123', loginType: 'EMAIL' });
      auth = { 'x-access-token': login.body.result_data.accessToken };
    });
    after(async () => {
      await rx?.close();
      await t?.close();
    });

    test('paid through the sandbox, then cancelled with PUT: bill.paid and bill.canceled once each, signed', async () => {
      const created = await t.post('/app/v1/sales/bill', {
        requestId: 'hook_req_0001', reason: '3월 수강료', amount: 90000, webhookUrl: `${rx.url}/partner`, webhookSecret: SECRET,
        members: [{ studentName: '박하늘', studentPhone: '01055553333' }],
      }, auth);
      assert.equal(created.body.result_code, 0, JSON.stringify(created.body));
      const bill = await eventually(async () => {
        const r = await t.get('/app/v1/sales/bill', auth);
        return r.body.result_data.bills.find((b: { requestId: string; sendStatus: string }) => b.requestId === 'hook_req_0001' && b.sendStatus === 'SENT');
      }, 'the invoice sent');

      const pay = () => t.post(`/sandbox/payments/${bill.transSeqNo}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode });
      assert.equal((await pay()).body.approved, true);
      await rx.waitFor(1);
      const paid = rx.received[0]!;
      assert.ok(verify(paid, SECRET));
      assert.equal(paid.headers['x-service-event'], 'bill.paid');
      const detail = (await t.get(`/app/v1/sales/bill/${bill.uniqueId}`, auth)).body.result_data;
      assert.equal(detail.bill.status, 'DONE');
      assert.deepEqual({ ...paid.json, occurredAt: undefined }, {
        event: 'bill.paid', billId: bill.uniqueId, requestId: 'hook_req_0001', transSeqNo: bill.transSeqNo, status: 'DONE',
        amount: 90000, reason: '3월 수강료', paidAt: detail.bill.doneDateTime, canceledAt: null, occurredAt: undefined,
      });
      // A second pay attempt changes nothing and sends nothing.
      assert.equal((await pay()).body.approved, false);

      const put = await fetch(`${t.url}/app/v1/sales/bill/${bill.uniqueId}`, { method: 'PUT', headers: auth });
      assert.equal(put.status, 200);
      await rx.waitFor(2);
      const canceled = rx.received[1]!;
      assert.ok(verify(canceled, SECRET));
      assert.equal(canceled.json.event, 'bill.canceled');
      assert.equal(canceled.json.status, 'CANCELED');
      assert.equal(canceled.json.paidAt, detail.bill.doneDateTime);
      assert.match(canceled.json.canceledAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      assert.notEqual(canceled.headers['x-service-delivery'], paid.headers['x-service-delivery']);

      // Cancelling again answers the detail again and records no second event.
      const again = await fetch(`${t.url}/app/v1/sales/bill/${bill.uniqueId}`, { method: 'PUT', headers: auth });
      assert.equal(again.status, 200);
      await sleep(400);
      assert.equal(rx.received.length, 2);
      const evs = await eventually(async () => {
        const rows = await t.app.sunap.database.db.selectFrom('webhook_events').select(['event', 'status', 'attempts']).orderBy('id').execute();
        return rows.every((r) => r.status === 'DELIVERED') ? rows : undefined;
      }, 'both events DELIVERED');
      assert.deepEqual(evs, [
        { event: 'bill.paid', status: 'DELIVERED', attempts: 1 },
        { event: 'bill.canceled', status: 'DELIVERED', attempts: 1 },
      ]);
    });
  });
}
