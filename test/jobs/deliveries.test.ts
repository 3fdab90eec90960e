import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  attemptsOf, deliveryById, deliveryByRef, deliveryOfStore, countFailing, ensureDelivery, failDelivery, failingSince, listDeliveries, newDeliveryId, pruneAttempts,
  reopenDelivery, settleDelivery, transitionDelivery, type Delivery, type NewDelivery,
} from '../../src/jobs/delivery-repository.js';
import { recordOutboundAttempt } from '../../src/jobs/repository.js';
import { FAILING_FROM_ATTEMPTS, isFailing } from '../../src/jobs/job-state.js';
import { forEachEngine } from '../helpers/app.js';
import { withDatabase } from '../helpers/db.js';

test('a delivery id is dlv_ and 32 hex digits, new each time', () => {
  const a = newDeliveryId();
  assert.match(a, /^dlv_[0-9a-f]{32}$/);
  assert.notEqual(newDeliveryId(), a);
});

test('isFailing: failed always; pending from its first attempt (a 2xx would have delivered it); delivered never', () => {
  assert.deepEqual(FAILING_FROM_ATTEMPTS, { failed: 0, pending: 1, delivered: null });
  assert.equal(isFailing({ status: 'failed', attempts: 0 }), true);
  assert.equal(isFailing({ status: 'failed', attempts: 5 }), true);
  assert.equal(isFailing({ status: 'pending', attempts: 0 }), false);
  assert.equal(isFailing({ status: 'pending', attempts: 1 }), true);
  assert.equal(isFailing({ status: 'delivered', attempts: 1 }), false);
  assert.equal(isFailing({ status: 'delivered', attempts: 0 }), false);
});

forEachEngine('deliveries', (engine) => {
  const store = withDatabase(engine);

  const T = Date.UTC(2026, 0, 1);
  let n = 0;
  const make = (over: Partial<NewDelivery> = {}): Promise<Delivery> => {
    n++;
    return ensureDelivery(store.db, { storeCode: 'S1', kind: 'callback', number: `N${n}`, refId: `ref-${n}`, url: 'https://m.example/cb', headers: { a: 'b' }, body: `{"n":${n}}`, now: T, ...over });
  };
  const statusOf = async (id: string) => (await deliveryById(store.db, id))!.status;

  test('ensureDelivery writes the delivery once per kind and reference; a second call returns the first row', async () => {
    const d = await make({ refId: 'pay-1', transSeqNo: 'T1', billId: 'B1', event: 'invoice.paid', endpointId: 'ep1' });
    assert.match(d.id, /^dlv_/);
    assert.deepEqual({ ...d, id: '' }, {
      id: '', store_code: 'S1', kind: 'callback', number: `N${n}`, ref_id: 'pay-1', trans_seqno: 'T1', bill_id: 'B1', event: 'invoice.paid', endpoint_id: 'ep1',
      url: 'https://m.example/cb', request_headers: '{"a":"b"}', body: `{"n":${n}}`, status: 'pending', attempts: 0, last_attempt_at: null, created_at: T, updated_at: T,
    });
    const again = await make({ refId: 'pay-1', number: 'other', body: 'other' });
    assert.deepEqual(again, d);
    const webhook = await make({ refId: 'pay-1', kind: 'webhook' });
    assert.notEqual(webhook.id, d.id, 'another kind, another delivery');
    const bare = await make();
    assert.deepEqual([bare.trans_seqno, bare.bill_id, bare.event, bare.endpoint_id], [null, null, null, null]);
    assert.deepEqual(await deliveryByRef(store.db, 'callback', 'pay-1'), d);
    assert.equal(await deliveryByRef(store.db, 'callback', 'pay-none'), undefined);
    assert.equal((await deliveryByRef(store.db, 'webhook', 'pay-1'))!.id, webhook.id);
    assert.equal(await deliveryById(store.db, 'dlv_none'), undefined);
    assert.equal(await deliveryOfStore(store.db, 'S1', d.id).then((x) => x?.id), d.id);
    assert.equal(await deliveryOfStore(store.db, 'S2', d.id), undefined, 'another store\'s delivery is not found');
  });

  test('transitions are compare-and-set on their from-states, and keep to the store when one is given', async () => {
    const d = await make();
    assert.equal(await transitionDelivery(store.db, d.id, 'reopen', T + 1), false, 'pending cannot reopen');
    assert.equal(await transitionDelivery(store.db, d.id, 'fail', T + 2, 'S2'), false, 'another store');
    assert.equal(await statusOf(d.id), 'pending');
    assert.equal(await transitionDelivery(store.db, d.id, 'fail', T + 3, 'S1'), true);
    assert.equal(await statusOf(d.id), 'failed');
    assert.equal((await deliveryById(store.db, d.id))!.updated_at, T + 3);
    assert.equal(await transitionDelivery(store.db, d.id, 'fail', T + 4), false, 'failed cannot fail again');
    assert.equal(await reopenDelivery(store.db, 'S2', d.id, T + 5), false);
    assert.equal(await reopenDelivery(store.db, 'S1', d.id, T + 5), true);
    assert.equal(await statusOf(d.id), 'pending');
    assert.equal(await reopenDelivery(store.db, 'S1', d.id, T + 6), false, 'only a failed one reopens');
    assert.equal(await transitionDelivery(store.db, d.id, 'deliver', T + 7), true);
    assert.equal(await transitionDelivery(store.db, d.id, 'deliver', T + 8), true, 'a delivered one stays delivered');
    await failDelivery(store.db, d.id, T + 9);
    assert.equal(await statusOf(d.id), 'delivered', 'a delivery the receiver has is never failed');
    const p = await make();
    await failDelivery(store.db, p.id, T + 9);
    assert.equal(await statusOf(p.id), 'failed');
  });

  test('settleDelivery counts the attempt; a success delivers, a last failure fails a pending one, another failure changes nothing', async () => {
    const d = await make();
    await settleDelivery(store.db, d.id, { ok: false, final: false, now: T + 10 });
    let r = (await deliveryById(store.db, d.id))!;
    assert.deepEqual([r.status, r.attempts, r.last_attempt_at, r.updated_at], ['pending', 1, T + 10, T + 10]);
    await settleDelivery(store.db, d.id, { ok: false, final: true, now: T + 20 });
    r = (await deliveryById(store.db, d.id))!;
    assert.deepEqual([r.status, r.attempts, r.last_attempt_at], ['failed', 2, T + 20]);
    await settleDelivery(store.db, d.id, { ok: true, final: false, now: T + 30 });
    r = (await deliveryById(store.db, d.id))!;
    assert.deepEqual([r.status, r.attempts, r.last_attempt_at], ['delivered', 3, T + 30]);
    await settleDelivery(store.db, d.id, { ok: false, final: true, now: T + 40 });
    r = (await deliveryById(store.db, d.id))!;
    assert.deepEqual([r.status, r.attempts], ['delivered', 4], 'a failed redelivery does not undo a delivery');
  });

  test('listDeliveries: a store\'s, newest first, each filter on both sides, keyset pages, failed first, one more than the limit', async () => {
    const S = 'L1';
    const at = (i: number) => T + 1000 * i;
    const rows: Delivery[] = [];
    for (let i = 0; i < 6; i++) {
      rows.push(await make({ storeCode: S, kind: i % 2 ? 'webhook' : 'callback', now: at(i), transSeqNo: i === 1 ? 'TS1' : null, billId: i === 2 ? 'BL2' : null }));
    }
    // Two more at the same instant as rows[5], to page through a tie.
    const tieA = await make({ storeCode: S, now: at(5) });
    const tieB = await make({ storeCode: S, now: at(5) });
    await make({ storeCode: 'L2', now: at(9) });
    await transitionDelivery(store.db, rows[0]!.id, 'fail', at(0));
    await transitionDelivery(store.db, rows[3]!.id, 'deliver', at(3));
    const ids = (l: Delivery[]) => l.map((d) => d.id);
    const newestFirst = [...rows, tieA, tieB].sort((x, y) => y.created_at - x.created_at || (y.id < x.id ? -1 : 1));
    assert.deepEqual(ids(await listDeliveries(store.db, S, { limit: 50 })), ids(newestFirst));
    assert.equal((await listDeliveries(store.db, S, { limit: 2 })).length, 3, 'limit + 1');
    assert.deepEqual(ids(await listDeliveries(store.db, S, { kind: 'webhook', limit: 50 })), ids(newestFirst.filter((d) => d.kind === 'webhook')));
    assert.deepEqual(ids(await listDeliveries(store.db, S, { status: 'failed', limit: 50 })), [rows[0]!.id]);
    assert.deepEqual(ids(await listDeliveries(store.db, S, { status: 'delivered', limit: 50 })), [rows[3]!.id]);
    assert.deepEqual(ids(await listDeliveries(store.db, S, { since: at(4), limit: 50 })), ids(newestFirst.filter((d) => d.created_at >= at(4))), 'since includes its instant');
    assert.deepEqual(ids(await listDeliveries(store.db, S, { transSeqNo: 'TS1', limit: 50 })), [rows[1]!.id]);
    assert.deepEqual(ids(await listDeliveries(store.db, S, { billId: 'BL2', limit: 50 })), [rows[2]!.id]);
    // Keyset: after the first of the tie, the rest of the tie (smaller ids), then older rows.
    const first = newestFirst[0]!;
    assert.deepEqual(ids(await listDeliveries(store.db, S, { after: { createdAt: first.created_at, id: first.id }, limit: 50 })), ids(newestFirst.slice(1)));
    const third = newestFirst[3]!;
    assert.deepEqual(ids(await listDeliveries(store.db, S, { after: { createdAt: third.created_at, id: third.id }, limit: 50 })), ids(newestFirst.slice(4)));
    const failedFirst = ids(await listDeliveries(store.db, S, { failedFirst: true, limit: 50 }));
    assert.deepEqual(failedFirst, [rows[0]!.id, ...ids(newestFirst.filter((d) => d.id !== rows[0]!.id))]);
    assert.deepEqual(ids(await listDeliveries(store.db, 'L3', { limit: 50 })), []);
  });

  test('failingSince: a store\'s failing deliveries (failed, or pending after an attempt) from `since` on, oldest first, up to the limit', async () => {
    const S = 'F1';
    const ds: Delivery[] = [];
    for (let i = 0; i < 5; i++) ds.push(await make({ storeCode: S, now: T + 100 * i }));
    for (const i of [0, 1, 2, 4]) await transitionDelivery(store.db, ds[i]!.id, 'fail', T);
    const other = await make({ storeCode: 'F2', now: T + 100 });
    await transitionDelivery(store.db, other.id, 'fail', T);
    const ids = (l: Delivery[]) => l.map((d) => d.id);
    assert.deepEqual(ids(await failingSince(store.db, S, T + 100, 10)), [ds[1]!.id, ds[2]!.id, ds[4]!.id]);
    assert.deepEqual(ids(await failingSince(store.db, S, T + 101, 10)), [ds[2]!.id, ds[4]!.id]);
    assert.deepEqual(ids(await failingSince(store.db, S, T, 2)), [ds[0]!.id, ds[1]!.id]);
    // ds[3] is pending and never attempted: not failing. One failed attempt, still retrying: failing.
    assert.equal(ids(await failingSince(store.db, S, T, 10)).includes(ds[3]!.id), false);
    await settleDelivery(store.db, ds[3]!.id, { ok: false, final: false, now: T + 500 });
    assert.equal((await deliveryById(store.db, ds[3]!.id))!.status, 'pending');
    assert.deepEqual(ids(await failingSince(store.db, S, T, 10)), [ds[0]!.id, ds[1]!.id, ds[2]!.id, ds[3]!.id, ds[4]!.id]);
    // Delivered (a 2xx after the failure): no longer failing.
    await settleDelivery(store.db, ds[3]!.id, { ok: true, final: false, now: T + 600 });
    assert.deepEqual(ids(await failingSince(store.db, S, T, 10)), [ds[0]!.id, ds[1]!.id, ds[2]!.id, ds[4]!.id]);
  });

  test('countFailing: the failing ones by kind, an endpoint\'s webhooks apart, from `since` on; list "failing" and the failing-first order read the same rule', async () => {
    const S = 'C1';
    const fresh = await make({ storeCode: S, kind: 'callback' });
    const retrying = await make({ storeCode: S, kind: 'callback' });
    await settleDelivery(store.db, retrying.id, { ok: false, final: false, now: T + 1 });
    const failed = await make({ storeCode: S, kind: 'webhook' });
    await settleDelivery(store.db, failed.id, { ok: false, final: true, now: T + 1 });
    const ep = await make({ storeCode: S, kind: 'webhook', endpointId: 'we_1' });
    await settleDelivery(store.db, ep.id, { ok: false, final: false, now: T + 1 });
    const delivered = await make({ storeCode: S, kind: 'webhook' });
    await settleDelivery(store.db, delivered.id, { ok: false, final: false, now: T + 1 });
    await settleDelivery(store.db, delivered.id, { ok: true, final: false, now: T + 2 });
    assert.deepEqual(await countFailing(store.db, S, T), { callback: 1, webhook: 1, endpoint: 1 });
    assert.deepEqual(await countFailing(store.db, S, T + 1), { callback: 0, webhook: 0, endpoint: 0 }, 'made before since');
    const failingIds = (await listDeliveries(store.db, S, { failing: true, limit: 10 })).map((d) => d.id).sort();
    assert.deepEqual(failingIds, [retrying.id, failed.id, ep.id].sort());
    const ordered = (await listDeliveries(store.db, S, { failedFirst: true, limit: 10 })).map((d) => d.id);
    assert.deepEqual(new Set(ordered.slice(0, 3)), new Set([retrying.id, failed.id, ep.id]));
    assert.deepEqual(new Set(ordered.slice(3)), new Set([fresh.id, delivered.id]));
  });

  test('attemptsOf: a store\'s delivery\'s attempts, oldest first, with numbers as numbers; pruneAttempts drops those before the bound only', async () => {
    const d = await make({ storeCode: 'A1' });
    const d2 = await make({ storeCode: 'A1' });
    const add = (deliveryId: string, no: number, at: number) => recordOutboundAttempt(store.db, {
      jobId: 'j', target: 'CALLBACK', refId: 'r', attemptNo: no, url: 'https://m.example/cb', statusCode: no === 2 ? 200 : 500, error: no === 2 ? null : 'HTTP 500',
      durationMs: 40 + no, at, deliveryId, trigger: no === 2 ? 'manual' : 'scheduled', responseBody: `b${no}`,
    });
    const old = T - 40 * 86_400_000;
    await add(d.id, 1, old);
    await add(d.id, 2, old + 1);
    await add(d2.id, 1, old);
    const got = await attemptsOf(store.db, 'A1', d.id);
    assert.deepEqual(got.map(({ id: _id, ...a }) => a), [
      { attempt_no: 1, url: 'https://m.example/cb', status_code: 500, error: 'HTTP 500', duration_ms: 41, created_at: old, response_body: 'b1', trigger: 'scheduled' },
      { attempt_no: 2, url: 'https://m.example/cb', status_code: 200, error: null, duration_ms: 42, created_at: old + 1, response_body: 'b2', trigger: 'manual' },
    ]);
    assert.equal(typeof got[0]!.id, 'number');
    assert.ok(got[0]!.id < got[1]!.id);
    assert.deepEqual(await attemptsOf(store.db, 'A2', d.id), [], 'another store');
    assert.equal(await pruneAttempts(store.db, old), 0, 'an attempt at the bound stays');
    assert.equal(await pruneAttempts(store.db, old + 1), 2);
    assert.deepEqual((await attemptsOf(store.db, 'A1', d.id)).map((a) => a.attempt_no), [2]);
    assert.equal((await deliveryById(store.db, d.id))!.id, d.id, 'the delivery stays');
  });
});
