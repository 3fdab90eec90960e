import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { schedulePrune } from '../../src/jobs/retention.js';
import { kstIso } from '../../src/platform/kst.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { newAccount } from '../invoicing/support.js';
import { approvedPayment, paidInvoice, relogin, settled } from './support.js';

forEachEngine('deliveries', (engine) => {
  const t = withApp(engine);
  let rx: Receiver;
  beforeEach(async () => { rx = await new Receiver().start(); });
  afterEach(async () => rx?.close());

  test('a receiver down for 3 hours: every delivery fails; recover sends them again with the same numbers and they are delivered', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const start = t.app.sunap.clock.nowMs();
    rx.defaultStatus = 503;
    const bills = [];
    for (let i = 0; i < 3; i++) bills.push(await paidInvoice(t, a, `${rx.url}/hooks/${i}`, 'whsec_test_0123456789abcdef'));
    const seq = await approvedPayment(t, `${rx.url}/callback`);
    await rx.waitFor(4);

    // Three hours on the service clock, in steps, every due retry run before the next step.
    for (let s = 0; s < 14; s++) {
      await settled(t);
      await t.post('/sandbox/clock', { advanceSeconds: 900 });
    }
    await settled(t);
    // The access token lived an hour; sign in again on the moved clock.
    a.h = await relogin(t, a);
    const failed = await t.get('/app/v1/deliveries?status=failed', a.h);
    assert.equal(failed.status, 200);
    const list = failed.body.result_data.deliveries as any[];
    assert.equal(list.length, 4, JSON.stringify(list));
    assert.deepEqual(list.map((d) => d.kind).sort(), ['callback', 'webhook', 'webhook', 'webhook']);
    assert.ok(list.every((d) => d.status === 'failed'));
    assert.equal(list.find((d) => d.kind === 'callback').attempts, 5);
    assert.ok(list.filter((d) => d.kind === 'webhook').every((d) => d.attempts === 5));
    assert.deepEqual(list.filter((d) => d.kind === 'webhook').map((d) => d.billId).sort(), bills.map((b) => b.billId).sort());
    assert.equal(list.find((d) => d.kind === 'callback').number, seq);
    const sentBefore = rx.received.length;
    assert.equal(sentBefore, 20);

    // Back up. A recovery from after they were made re-queues nothing; one from before, all four.
    rx.defaultStatus = 200;
    const late = await t.post('/app/v1/deliveries/recover', { since: kstIso(t.app.sunap.clock.nowMs()) }, a.h);
    assert.deepEqual(late.body.result_data, { requeued: 0, more: false, skipped: [] });
    const r = await t.post('/app/v1/deliveries/recover', { since: kstIso(start - 1000) }, a.h);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.result_data, { requeued: 4, more: false, skipped: [] });
    await rx.waitFor(sentBefore + 4);
    await eventually(async () => (await t.get('/app/v1/deliveries?status=delivered', a.h)).body.result_data.deliveries.length === 4, 'all four delivered');
    const again = rx.received.slice(sentBefore);
    const webhookNumbers = again.filter((x) => x.url.startsWith('/hooks/')).map((x) => String(x.headers['x-service-delivery'])).sort();
    assert.deepEqual(webhookNumbers, list.filter((d) => d.kind === 'webhook').map((d) => d.number).sort(), 'same delivery numbers');
    assert.equal(again.find((x) => x.url === '/callback')!.json.TRANS_SEQNO, seq);

    const detail = await t.get(`/app/v1/deliveries/${list.find((d) => d.kind === 'webhook').id}`, a.h);
    const d = detail.body.result_data;
    assert.equal(d.status, 'delivered');
    assert.deepEqual(d.attemptLog.map((x: any) => [x.trigger, x.statusCode]), [...Array(5).fill(['scheduled', 503]), ['manual', 200]]);
    assert.deepEqual(d.attemptLog.map((x: any) => x.attemptNo), [1, 2, 3, 4, 5, 6], 'one sequence: the recovery\'s attempt is the sixth');
    assert.equal(d.attemptLog[5].responseBody, '{}');
    assert.equal(d.attemptLog[0].error, 'HTTP 503');
    // The request as sent, without the signature.
    assert.equal(d.request.headers['x-service-delivery'], d.number);
    assert.equal(d.request.headers['x-service-signature'], undefined);
    assert.equal(JSON.parse(d.request.body).event, 'bill.paid');
    // The invoice's webhook event is delivered too.
    const bill = await t.get(`/app/v1/sales/bill/${d.billId}`, a.h);
    assert.equal(bill.status, 200);
    const ev = await t.app.sunap.database.db.selectFrom('webhook_events').select('status').where('id', '=', Number(d.number)).executeTakeFirstOrThrow();
    assert.equal(ev.status, 'DELIVERED');
    // Nothing is failed any more: a second recovery finds nothing.
    assert.equal((await t.post('/app/v1/deliveries/recover', { since: kstIso(start - 1000) }, a.h)).body.result_data.requeued, 0);
  });

  test('redeliver: a manual attempt with the same number and body, signed afresh; a viewer may not', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const { billId } = await paidInvoice(t, a, `${rx.url}/h`, 'whsec_test_0123456789abcdef');
    await rx.waitFor(1);
    const list = await eventually(async () => {
      const l = (await t.get(`/app/v1/deliveries?billId=${billId}`, a.h)).body.result_data.deliveries;
      return l.length === 1 && l[0].status === 'delivered' ? l : null;
    }, 'delivered');
    const id = list[0].id;
    const r = await t.post(`/app/v1/deliveries/${id}/redeliver`, {}, a.h);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.result_data.id, id);
    await rx.waitFor(2);
    const [first, second] = rx.received;
    assert.equal(second!.headers['x-service-delivery'], first!.headers['x-service-delivery']);
    assert.ok(second!.raw.equals(first!.raw), 'the same bytes');
    assert.ok(second!.headers['x-service-signature'], 'signed');
    const d = await eventually(async () => {
      const x = (await t.get(`/app/v1/deliveries/${id}`, a.h)).body.result_data;
      return x.attemptLog.length === 2 && x.attempts === 2 ? x : null;
    }, 'two attempts');
    assert.deepEqual(d.attemptLog.map((x: any) => x.trigger), ['scheduled', 'manual']);
    assert.deepEqual(d.attemptLog.map((x: any) => x.attemptNo), [1, 2], 'the redelivery is attempt 2, not 1 again');
    assert.equal(d.status, 'delivered');
    assert.equal(d.attempts, 2);

    await t.app.sunap.database.db.updateTable('accounts').set({ role: 'viewer' }).where('id', '=', a.accountId).execute();
    const viewer = await t.post(`/app/v1/deliveries/${id}/redeliver`, {}, a.h);
    assert.equal(viewer.status, 403);
    assert.equal(viewer.body.result_code, -4);
    assert.equal((await t.post('/app/v1/deliveries/recover', { since: '2026-01-01T00:00:00' }, a.h)).status, 403);
    assert.equal((await t.get(`/app/v1/deliveries/${id}`, a.h)).status, 200, 'a viewer reads');
  });

  test('another store\'s deliveries answer 404 and are not listed', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const { billId } = await paidInvoice(t, a, `${rx.url}/h`);
    const [mine] = await eventually(async () => {
      const l = (await t.get(`/app/v1/deliveries?billId=${billId}`, a.h)).body.result_data.deliveries;
      return l.length === 1 ? l : null;
    }, 'listed');
    const otherStore = await t.addStore();
    const b = await newAccount(t, { points: 10_000, storeCode: otherStore });
    for (const [method, path] of [['GET', `/app/v1/deliveries/${mine.id}`], ['POST', `/app/v1/deliveries/${mine.id}/redeliver`]] as const) {
      const r = await t.request(method, path, method === 'POST' ? {} : undefined, b.h);
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(r.body.result_code, -10);
    }
    assert.equal((await t.get(`/app/v1/deliveries/${mine.id}`, a.h)).status, 200, 'its own store sees it');
    assert.equal((await t.get(`/app/v1/deliveries?billId=${billId}`, b.h)).body.result_data.deliveries.length, 0);
    assert.equal((await t.get('/app/v1/deliveries', b.h)).body.result_data.deliveries.length, 0);
    assert.equal((await t.get('/app/v1/deliveries')).status, 401);
  });

  test('list: filters, keyset pages and clear errors', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const store = await t.addStore();
    const c = await newAccount(t, { points: 10_000, storeCode: store });
    const seqs = [];
    for (let i = 0; i < 3; i++) seqs.push(await approvedPayment(t, `${rx.url}/cb`, store));
    await rx.waitFor(3);
    const all = (await t.get('/app/v1/deliveries?kind=callback', c.h)).body.result_data;
    assert.equal(all.deliveries.length, 3);
    assert.equal(all.nextCursor, null);
    assert.deepEqual(all.deliveries.map((d: any) => d.transSeqNo), [...seqs].reverse(), 'newest first');
    assert.equal((await t.get('/app/v1/deliveries?kind=webhook', c.h)).body.result_data.deliveries.length, 0);
    assert.equal((await t.get(`/app/v1/deliveries?transSeqNo=${seqs[1]}`, c.h)).body.result_data.deliveries[0].transSeqNo, seqs[1]);
    const p1 = (await t.get('/app/v1/deliveries?size=2', c.h)).body.result_data;
    assert.equal(p1.deliveries.length, 2);
    assert.ok(p1.nextCursor);
    const p2 = (await t.get(`/app/v1/deliveries?size=2&cursor=${p1.nextCursor}`, c.h)).body.result_data;
    assert.deepEqual(p2.deliveries.map((d: any) => d.transSeqNo), [seqs[0]]);
    assert.equal(p2.nextCursor, null);
    const exact = (await t.get('/app/v1/deliveries?size=3', c.h)).body.result_data;
    assert.deepEqual([exact.deliveries.length, exact.nextCursor], [3, null], 'exactly a page: no next page');
    const future = kstIso(t.app.sunap.clock.nowMs() + 60_000);
    assert.equal((await t.get(`/app/v1/deliveries?since=${future}`, c.h)).body.result_data.deliveries.length, 0);

    const cursor = (text: string) => `cursor=${Buffer.from(text).toString('base64url')}`;
    const id0 = `dlv_${'0'.repeat(32)}`;
    assert.equal((await t.get(`/app/v1/deliveries?${cursor(`1:${id0}`)}`, a.h)).status, 200, 'a cursor of the right form');
    for (const [q, field] of [['kind=email', 'kind'], ['status=lost', 'status'], ['since=yesterday', 'since'], ['cursor=abc', 'cursor'],
      [cursor(`x1:${id0}`), 'cursor'], [cursor(`1:${id0}0`), 'cursor'], [cursor(`1:${id0}\n`), 'cursor'], ['size=101', 'size']]) {
      const r = await t.get(`/app/v1/deliveries?${q}`, a.h);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.result_code, -20);
      assert.match(r.body.result_msg, new RegExp(field), q);
    }
    assert.equal((await t.get('/app/v1/deliveries/not-an-id', a.h)).status, 400);
    const missing = await t.get(`/app/v1/deliveries/dlv_${'0'.repeat(32)}`, a.h);
    assert.deepEqual([missing.status, missing.body.result_msg], [404, 'delivery: not found']);
    const bad = await t.post('/app/v1/deliveries/recover', {}, a.h);
    assert.equal(bad.status, 400);
    assert.match(bad.body.result_msg, /since/);
  });

  test('retention: attempts older than 30 days are pruned by the daily job; the delivery stays', async () => {
    const store = await t.addStore();
    const c = await newAccount(t, { storeCode: store });
    const seq = await approvedPayment(t, `${rx.url}/cb`, store);
    await rx.waitFor(1);
    const [d] = await eventually(async () => {
      const l = (await t.get(`/app/v1/deliveries?transSeqNo=${seq}`, c.h)).body.result_data.deliveries;
      return l.length === 1 && l[0].status === 'delivered' ? l : null;
    }, 'delivered');
    await t.post('/sandbox/clock', { advanceSeconds: 20 * 86_400 });
    c.h = await relogin(t, c);
    await t.post(`/app/v1/deliveries/${d.id}/redeliver`, {}, c.h);
    await rx.waitFor(2);
    await eventually(async () => (await t.get(`/app/v1/deliveries/${d.id}`, c.h)).body.result_data.attempts === 2, 'second attempt');
    await t.post('/sandbox/clock', { advanceSeconds: 11 * 86_400 });
    c.h = await relogin(t, c);

    const db = t.app.sunap.database.db;
    const now = t.app.sunap.clock.nowMs();
    await schedulePrune(db, now, now);
    t.app.sunap.worker.wake();
    await eventually(async () => {
      const j = await db.selectFrom('jobs').select('status').where('unique_key', '=', `prune-attempts:${Math.floor(now / 86_400_000)}`).executeTakeFirst();
      return j?.status === 'DONE';
    }, 'the prune job ran');
    const after = (await t.get(`/app/v1/deliveries/${d.id}`, c.h)).body.result_data;
    assert.equal(after.status, 'delivered');
    assert.equal(after.attempts, 2, 'the delivery keeps its count');
    assert.deepEqual(after.attemptLog.map((x: any) => x.trigger), ['manual'], 'the 31-day-old attempt went, the 11-day-old one stayed');
  });
});
