import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { kstIso } from '../../src/platform/kst.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { Receiver, type Received } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { newAccount, type Login } from '../invoicing/support.js';
import { approvedPayment, paidInvoice, relogin, settled } from './support.js';

/** What a receiver does with the standardwebhooks package: throws unless one signature verifies. */
function verify(secret: string, r: Received): unknown {
  const h = r.headers;
  return new Webhook(secret).verify(r.raw, { 'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']) });
}

forEachEngine('webhook endpoints', (engine) => {
  const t = withApp(engine);
  let rx: Receiver;
  beforeEach(async () => { rx = await new Receiver().start(); });
  afterEach(async () => rx?.close());

  const register = async (a: Login, events: string[], path = '/ep') => {
    const r = await t.post('/app/v1/webhook-endpoints', { url: `${rx.url}${path}`, events }, a.h);
    assert.equal(r.status, 200, r.text);
    return r.body.result_data as { id: string; secret: string };
  };
  const endpoint = async (a: Login, id: string) => (await t.get(`/app/v1/webhook-endpoints/${id}`, a.h)).body.result_data;

  test('events reach the endpoints that listen to them, signed the Standard Webhooks way', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const ep = await register(a, ['bill.paid', 'payment.approved'], '/all');
    const other = await register(a, ['payment.canceled'], '/cancels');
    assert.match(ep.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal((await t.get('/app/v1/webhook-endpoints', a.h)).body.result_data.some((e: any) => 'secret' in e), false, 'the secret is shown once');

    const { billId, transSeqNo } = await paidInvoice(t, a, `${rx.url}/invoice-hook`);
    await rx.waitFor(3);
    await new Promise((r) => setTimeout(r, 200));
    const toEndpoint = rx.received.filter((x) => x.url === '/all');
    assert.deepEqual(toEndpoint.map((x) => x.json.event).sort(), ['bill.paid', 'payment.approved']);
    assert.equal(rx.received.filter((x) => x.url === '/cancels').length, 0, 'not listening to these events');
    for (const r of toEndpoint) {
      assert.doesNotThrow(() => verify(ep.secret, r));
      assert.throws(() => verify(other.secret, r), /signature/i);
      assert.equal(r.headers['x-service-delivery'], r.headers['webhook-id']);
      assert.equal(r.headers['x-service-event'], r.json.event);
      assert.match(String(r.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
      for (const h of ['event', 'delivery', 'signature']) assert.equal(r.headers[`x-caripay-${h}`], r.headers[`x-service-${h}`], `X-CariPay-${h}`);
    }
    const paid = toEndpoint.find((x) => x.json.event === 'bill.paid')!;
    assert.equal(paid.json.billId, billId);
    assert.equal(toEndpoint.find((x) => x.json.event === 'payment.approved')!.json.transSeqNo, transSeqNo);
    // The invoice's own webhookUrl gets its bill.paid exactly as before: no Standard Webhooks headers.
    const own = rx.received.find((x) => x.url === '/invoice-hook')!;
    assert.equal(own.json.event, 'bill.paid');
    assert.equal(own.headers['webhook-id'], undefined);
    // Both are in the delivery log; the endpoint's names its endpoint.
    const logged = await eventually(async () => {
      const l = (await t.get(`/app/v1/deliveries?billId=${billId}`, a.h)).body.result_data.deliveries;
      return l.length === 2 && l.every((d: any) => d.status === 'delivered') ? l : null;
    }, 'two webhooks of the bill delivered');
    assert.deepEqual(logged.map((d: any) => d.endpointId).sort(), [ep.id, null].sort());
    assert.equal(logged.find((d: any) => d.endpointId === ep.id).number, paid.headers['webhook-id']);
  });

  test('rotation: both secrets sign for 24 hours, then only the new one; a redelivery is signed afresh', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const ep = await register(a, ['bill.paid']);
    const rot = await t.post(`/app/v1/webhook-endpoints/${ep.id}/rotate-secret`, {}, a.h);
    assert.equal(rot.status, 200);
    const fresh = rot.body.result_data.secret as string;
    assert.notEqual(fresh, ep.secret);
    assert.equal(rot.body.result_data.rotating, true);
    const test1 = await t.post(`/app/v1/webhook-endpoints/${ep.id}/test`, {}, a.h);
    assert.equal(test1.status, 200, test1.text);
    await rx.waitFor(1);
    const r1 = rx.received[0]!;
    assert.equal(r1.json.event, 'webhook.test');
    assert.equal(String(r1.headers['webhook-signature']).split(' ').length, 2);
    assert.doesNotThrow(() => verify(fresh, r1));
    assert.doesNotThrow(() => verify(ep.secret, r1));

    await t.post('/sandbox/clock', { advanceSeconds: 86_400 + 60 });
    a.h = await relogin(t, a);
    assert.equal((await endpoint(a, ep.id)).rotating, false);
    await t.post(`/app/v1/deliveries/${test1.body.result_data.deliveryId}/redeliver`, {}, a.h);
    await rx.waitFor(2);
    const r2 = rx.received[1]!;
    assert.equal(r2.headers['webhook-id'], r1.headers['webhook-id'], 'same delivery number');
    assert.equal(String(r2.headers['webhook-signature']).split(' ').length, 1);
    assert.doesNotThrow(() => verify(fresh, r2));
    assert.throws(() => verify(ep.secret, r2));
  });

  test('410 Gone disables the endpoint; a disabled endpoint sends nothing until enabled', async () => {
    // A store of its own: the other tests' endpoints (their receivers gone) get nothing of it.
    const store = await t.addStore();
    const a = await newAccount(t, { points: 10_000, storeCode: store });
    const since = kstIso(t.app.sunap.clock.nowMs());
    const ep = await register(a, ['bill.paid']);
    rx.script.push(410);
    const { deliveryId } = (await t.post(`/app/v1/webhook-endpoints/${ep.id}/test`, {}, a.h)).body.result_data;
    await rx.waitFor(1);
    const e = await eventually(async () => { const x = await endpoint(a, ep.id); return x.enabled ? null : x; }, 'disabled');
    assert.match(e.disabledReason, /410/);
    const d = await eventually(async () => { const x = (await t.get(`/app/v1/deliveries/${deliveryId}`, a.h)).body.result_data; return x.status === 'failed' ? x : null; }, 'failed');
    assert.equal(d.attemptLog.length, 1);
    assert.equal(d.attemptLog[0].statusCode, 410);
    const refused = await t.post(`/app/v1/webhook-endpoints/${ep.id}/test`, {}, a.h);
    assert.deepEqual([refused.status, refused.body.result_msg], [409, 'endpoint: disabled; enable it first']);
    // An invoice paid meanwhile is not delivered to it.
    await paidInvoice(t, a, `${rx.url}/own`, undefined, store);
    await rx.waitFor(2);
    await settled(t);
    assert.deepEqual(rx.received.map((x) => x.url), ['/ep', '/own']);
    // Recovery leaves the failed delivery of a disabled endpoint alone, and says why.
    const off = await t.post('/app/v1/deliveries/recover', { since }, a.h);
    assert.deepEqual(off.body.result_data, { requeued: 0, more: false, skipped: [{ id: deliveryId, number: d.number, kind: 'webhook', event: 'webhook.test', reason: 'endpoint_disabled' }] });
    // Enabled again: deliveries resume.
    const on = await t.request('PATCH', `/app/v1/webhook-endpoints/${ep.id}`, { enabled: true }, a.h);
    assert.equal(on.body.result_data.enabled, true);
    assert.equal((await t.post(`/app/v1/webhook-endpoints/${ep.id}/test`, {}, a.h)).status, 200);
    await rx.waitFor(3);
    // And now recovered: the attempt is the delivery's second, in one sequence with the first.
    const back = await t.post('/app/v1/deliveries/recover', { since }, a.h);
    assert.deepEqual(back.body.result_data, { requeued: 1, more: false, skipped: [] });
    await rx.waitFor(4);
    const again = await eventually(async () => { const x = (await t.get(`/app/v1/deliveries/${deliveryId}`, a.h)).body.result_data; return x.status === 'delivered' ? x : null; }, 'delivered');
    assert.deepEqual(again.attemptLog.map((x: { trigger: string; attemptNo: number }) => [x.trigger, x.attemptNo]), [['scheduled', 1], ['manual', 2]]);
  });

  test('Retry-After on 429 is honoured; every attempt failing for 3 days disables the endpoint', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const ep = await register(a, ['bill.paid']);
    rx.defaultStatus = 429;
    rx.responseHeaders = { 'retry-after': '900' };
    const { deliveryId } = (await t.post(`/app/v1/webhook-endpoints/${ep.id}/test`, {}, a.h)).body.result_data;
    await rx.waitFor(1);
    await settled(t);
    const db = t.app.sunap.database.db;
    const job = await db.selectFrom('jobs').select('run_at').where('unique_key', '=', `endpoint:${deliveryId}`).executeTakeFirstOrThrow();
    const wait = Number(job.run_at) - t.app.sunap.clock.nowMs();
    assert.ok(wait > 800_000 && wait <= 900_000, `next attempt in ${wait} ms, not the schedule's 60 s`);
    // Not yet at 2 days of failures.
    rx.responseHeaders = {};
    rx.defaultStatus = 500;
    await t.post('/sandbox/clock', { advanceSeconds: 2 * 86_400 });
    await rx.waitFor(2);
    await settled(t);
    a.h = await relogin(t, a);
    assert.equal((await endpoint(a, ep.id)).enabled, true);
    assert.ok((await endpoint(a, ep.id)).failingSince);
    // Another day of failures: disabled.
    await t.post('/sandbox/clock', { advanceSeconds: 86_400 });
    await rx.waitFor(3);
    await settled(t);
    a.h = await relogin(t, a);
    const e = await endpoint(a, ep.id);
    assert.equal(e.enabled, false);
    assert.match(e.disabledReason, /3 days/);
  });

  test('payment events: one delivery per payment and event, each under its own msg_ id, found in the log by TRANS_SEQNO', async () => {
    const storeCode = await t.addStore();
    const a = await newAccount(t, { storeCode });
    await register(a, ['payment.approved', 'payment.canceled'], '/payments');
    const first = await approvedPayment(t, `${rx.url}/cb`, storeCode);
    const second = await approvedPayment(t, `${rx.url}/cb`, storeCode);
    const c = await t.gw('requestPaymentCancel', { STORE_CODE: storeCode, TRANS_SEQNO: first, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
    assert.equal(c.body.result_data.RESULT_CODE, '0000');
    const events = await eventually(async () => {
      const got = rx.received.filter((x) => x.url === '/payments');
      return got.length >= 3 ? got : null;
    }, 'three payment events');
    await settled(t);
    assert.equal(rx.received.filter((x) => x.url === '/payments').length, 3, 'nothing twice');
    assert.deepEqual(events.map((x) => `${x.json.event} ${x.json.transSeqNo}`).sort(),
      [`payment.approved ${first}`, `payment.approved ${second}`, `payment.canceled ${first}`].sort());
    for (const x of events) {
      assert.match(String(x.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
      assert.equal(x.headers['content-type'], 'application/json');
    }
    assert.equal(new Set(events.map((x) => x.headers['webhook-id'])).size, 3);
    const logged = (await t.get(`/app/v1/deliveries?kind=webhook&transSeqNo=${first}`, a.h)).body.result_data.deliveries;
    assert.deepEqual(logged.map((d: { event: string }) => d.event).sort(), ['payment.approved', 'payment.canceled']);
  });

  test('bill events: each invoice\'s bill.paid reaches the endpoint, under its own msg_ id', async () => {
    const storeCode = await t.addStore();
    const a = await newAccount(t, { storeCode, points: 1000 });
    await register(a, ['bill.paid'], '/bills');
    const first = await paidInvoice(t, a, `${rx.url}/own`, undefined, storeCode);
    const second = await paidInvoice(t, a, `${rx.url}/own`, undefined, storeCode);
    const got = await eventually(async () => {
      const r = rx.received.filter((x) => x.url === '/bills');
      return r.length >= 2 ? r : null;
    }, 'two bill.paid events');
    await settled(t);
    assert.equal(rx.received.filter((x) => x.url === '/bills').length, 2, 'nothing twice');
    assert.deepEqual(got.map((x) => `${x.json.event} ${x.json.billId}`).sort(), [`bill.paid ${first.billId}`, `bill.paid ${second.billId}`].sort());
    assert.equal(new Set(got.map((x) => x.headers['webhook-id'])).size, 2);
  });

  test('a success ends the failing streak: failingSince is set by a failure and cleared by the next delivery', async () => {
    const a = await newAccount(t, { storeCode: await t.addStore() });
    const ep = await register(a, ['bill.paid']);
    assert.equal((await endpoint(a, ep.id)).failingSince, null);
    rx.script.push(500);
    await t.post(`/app/v1/webhook-endpoints/${ep.id}/test`, {}, a.h);
    await rx.waitFor(1);
    const failing = await eventually(async () => (await endpoint(a, ep.id)).failingSince, 'the streak started');
    assert.match(failing, /^\d{4}-\d\d-\d\dT/);
    await t.post(`/app/v1/webhook-endpoints/${ep.id}/test`, {}, a.h);
    await rx.waitFor(2);
    await eventually(async () => (await endpoint(a, ep.id)).failingSince === null, 'the streak ended');
    assert.equal((await endpoint(a, ep.id)).enabled, true);
  });

  test('PATCH changes the url and the events it was given and nothing else; a store has at most 10 endpoints', async () => {
    const a = await newAccount(t, { storeCode: await t.addStore() });
    const ep = await register(a, ['bill.paid']);
    const moved = await t.request('PATCH', `/app/v1/webhook-endpoints/${ep.id}`, { url: `${rx.url}/moved` }, a.h);
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual([moved.body.result_data.url, moved.body.result_data.events, moved.body.result_data.enabled], [`${rx.url}/moved`, ['bill.paid'], true]);
    const retuned = await t.request('PATCH', `/app/v1/webhook-endpoints/${ep.id}`, { events: ['payment.approved', 'payment.approved', 'bill.paid'] }, a.h);
    assert.deepEqual([retuned.body.result_data.url, retuned.body.result_data.events], [`${rx.url}/moved`, ['payment.approved', 'bill.paid']]);
    const off = await t.request('PATCH', `/app/v1/webhook-endpoints/${ep.id}`, { enabled: false }, a.h);
    assert.deepEqual([off.body.result_data.enabled, off.body.result_data.disabledReason, off.body.result_data.url], [false, 'disabled by the store', `${rx.url}/moved`]);
    for (let i = 1; i < 10; i++) await register(a, ['bill.paid'], `/n${i}`);
    const eleventh = await t.post('/app/v1/webhook-endpoints', { url: `${rx.url}/n10`, events: ['bill.paid'] }, a.h);
    assert.equal(eleventh.status, 400);
    assert.equal(eleventh.body.result_msg, 'url: a store has at most 10 endpoints');
    assert.equal((await t.get('/app/v1/webhook-endpoints', a.h)).body.result_data.length, 10);
  });

  test('the store deletes its endpoint: it leaves the list, and a second delete is 404', async () => {
    const a = await newAccount(t, { storeCode: await t.addStore() });
    const keep = await register(a, ['bill.paid']);
    const ep = await register(a, ['bill.paid']);
    assert.equal((await t.request('DELETE', `/app/v1/webhook-endpoints/${ep.id}`, undefined, a.h)).status, 200);
    assert.deepEqual((await t.get('/app/v1/webhook-endpoints', a.h)).body.result_data.map((e: { id: string }) => e.id), [keep.id]);
    const again = await t.request('DELETE', `/app/v1/webhook-endpoints/${ep.id}`, undefined, a.h);
    assert.deepEqual([again.status, again.body.result_msg], [404, 'endpoint: not found']);
    const gone = await t.get(`/app/v1/webhook-endpoints/${ep.id}`, a.h);
    assert.deepEqual([gone.status, gone.body.result_msg], [404, 'endpoint: not found']);
  });

  test('another store\'s endpoints answer 404; bad input names the field', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const ep = await register(a, ['bill.paid']);
    const b = await newAccount(t, { storeCode: await t.addStore() });
    for (const [m, p, body] of [['GET', '', undefined], ['PATCH', '', { enabled: false }], ['DELETE', '', undefined], ['POST', '/rotate-secret', {}], ['POST', '/test', {}]] as const) {
      const r = await t.request(m, `/app/v1/webhook-endpoints/${ep.id}${p}`, body, b.h);
      assert.equal(r.status, 404, `${m} ${p}`);
    }
    assert.deepEqual((await t.get('/app/v1/webhook-endpoints', b.h)).body.result_data, []);
    assert.equal((await endpoint(a, ep.id)).enabled, true);
    for (const [body, field] of [[{ url: 'http://x.example', events: ['bill.paid'] }, 'url'], [{ url: 'https://x.example', events: ['bill.lost'] }, 'events'], [{ url: 'https://x.example', events: [] }, 'events']] as const) {
      const r = await t.post('/app/v1/webhook-endpoints', body, a.h);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.result_msg, new RegExp(field));
    }
  });
});
