import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ENDPOINT_JOB, FAILING_DISABLE_MS } from '../../src/gateway/endpoints.js';
import { AppError } from '../../src/platform/errors.js';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * A store endpoint's delivery job, one run at a time (the worker stays off, so each run here is
 * the only one): when it sends nothing, when it records why it did not send, and its triggers.
 */
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('the endpoint delivery job', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  let rx: Receiver;
  before(async () => {
    rx = await new Receiver().start();
  });
  after(() => rx?.close());

  const db = () => t.app.sunap.database.db;
  const deps = () => ({ db: db(), http: t.app.sunap.http, clock: t.app.sunap.clock, box: t.app.sunap.box });
  const run = (deliveryId: string, opts: { manual?: boolean; attempt?: number } = {}) =>
    ENDPOINT_JOB.run({ deliveryId, ...(opts.manual ? { manual: true } : {}) }, deps(), { jobId: newId(), attempt: opts.attempt ?? 1, final: false });
  const attempts = (deliveryId: string) => db().selectFrom('outbound_attempts').select(['trigger', 'status_code', 'error'])
    .where('delivery_id', '=', deliveryId).orderBy('id').execute();
  const delivery = (id: string) => db().selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** An endpoint of a fresh store listening to payment.approved, and the delivery one approval made for it. */
  async function endpointDelivery(path: string): Promise<{ endpointId: string; deliveryId: string; storeCode: string; paymentId: string }> {
    const storeCode = await t.addStore();
    const ep = await t.app.sunap.invoicing.endpoints.create(storeCode, { url: `${rx.url}${path}`, events: ['payment.approved'] });
    const body = paymentBody({ STORE_CODE: storeCode, CONFIRM_URL: `${rx.url}/cb` });
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    assert.equal((await t.pay(body.TRANS_SEQNO as string, undefined, storeCode)).approved, true);
    const p = (await t.app.sunap.gateway.findByStore(t.platformCode, storeCode, body.TRANS_SEQNO as string))!;
    const d = await db().selectFrom('deliveries').select('id').where('endpoint_id', '=', ep.id).executeTakeFirstOrThrow();
    return { endpointId: ep.id, deliveryId: d.id, storeCode, paymentId: p.id };
  }

  test('a delivery that does not exist, or is not an endpoint\'s, sends nothing', async () => {
    const n = rx.received.length;
    await run(`dl_${newId()}`);
    const { paymentId } = await endpointDelivery('/x');
    const callback = await db().selectFrom('deliveries').select('id').where('kind', '=', 'callback').where('ref_id', '=', paymentId).executeTakeFirstOrThrow();
    await run(callback.id);
    assert.equal(rx.received.length, n);
    assert.deepEqual(await attempts(callback.id), []);
  });

  test('a scheduled run of a settled delivery sends nothing; a manual one sends, as manual only on its first attempt', async () => {
    const { deliveryId } = await endpointDelivery('/settled');
    const n = rx.received.length;
    await run(deliveryId);
    assert.equal(rx.received.length, n + 1);
    assert.equal((await delivery(deliveryId)).status, 'delivered');
    await run(deliveryId, { attempt: 2 });
    assert.equal(rx.received.length, n + 1, 'a scheduled job run again finds it settled');
    rx.script.push(500);
    await assert.rejects(run(deliveryId, { manual: true, attempt: 1 }), /HTTP 500/);
    await run(deliveryId, { manual: true, attempt: 2 });
    assert.equal(rx.received.length, n + 3);
    assert.deepEqual((await attempts(deliveryId)).map((a) => [a.trigger, a.status_code]), [['scheduled', 200], ['manual', 500], ['scheduled', 200]]);
  });

  test('to a disabled or removed endpoint nothing is sent, and the attempt says why', async () => {
    const disabled = await endpointDelivery('/disabled');
    await t.app.sunap.invoicing.endpoints.update(disabled.storeCode, disabled.endpointId, { enabled: false });
    const removed = await endpointDelivery('/removed');
    await t.app.sunap.invoicing.endpoints.remove(removed.storeCode, removed.endpointId);
    const n = rx.received.length;
    await run(disabled.deliveryId);
    await run(removed.deliveryId);
    assert.equal(rx.received.length, n);
    assert.deepEqual(await attempts(disabled.deliveryId), [{ trigger: 'scheduled', status_code: null, error: 'not sent: the endpoint is disabled' }]);
    assert.deepEqual(await attempts(removed.deliveryId), [{ trigger: 'scheduled', status_code: null, error: 'not sent: the endpoint was removed' }]);
    assert.equal((await delivery(disabled.deliveryId)).status, 'failed', 'settled as failed: no retry is coming');
  });

  test('after a rotation both secrets sign until the old one\'s last millisecond, then only the new one', async () => {
    const { deliveryId, storeCode, endpointId } = await endpointDelivery('/rotated');
    await t.app.sunap.invoicing.endpoints.rotate(storeCode, endpointId);
    const ep = await db().selectFrom('webhook_endpoints').select('old_secret_until').where('id', '=', endpointId).executeTakeFirstOrThrow();
    const until = Number(ep.old_secret_until);
    const signatures = async (at: number) => {
      const n = rx.received.length;
      const clock = { nowMs: () => at, now: () => new Date(at) };
      await ENDPOINT_JOB.run({ deliveryId, manual: true }, { ...deps(), clock }, { jobId: newId(), attempt: 1, final: false });
      return String(rx.received[n]!.headers['webhook-signature']).split(' ').length;
    };
    assert.equal(await signatures(until - 1), 2, 'one millisecond before the end: the new and the old secret');
    assert.equal(await signatures(until), 1, 'at the end: the new secret only');
  });

  test('an endpoint whose attempts have failed for exactly 3 days is disabled by the next failure; a millisecond less, not yet', async () => {
    const T = Date.UTC(2026, 10, 23, 4, 0, 0);
    const clock = { nowMs: () => T, now: () => new Date(T) };
    for (const [streak, disabled] of [[FAILING_DISABLE_MS - 1, false], [FAILING_DISABLE_MS, true]] as const) {
      const { deliveryId, endpointId } = await endpointDelivery(`/streak-${streak}`);
      await db().updateTable('webhook_endpoints').set({ failing_since: T - streak }).where('id', '=', endpointId).execute();
      rx.script.push(500);
      await assert.rejects(ENDPOINT_JOB.run({ deliveryId }, { ...deps(), clock }, { jobId: newId(), attempt: 1, final: false }), /HTTP 500/);
      const ep = await db().selectFrom('webhook_endpoints').select(['enabled', 'disabled_reason']).where('id', '=', endpointId).executeTakeFirstOrThrow();
      assert.deepEqual([Number(ep.enabled), ep.disabled_reason], disabled ? [0, 'every attempt failed for 3 days'] : [1, null], `streak ${streak} ms`);
    }
  });

  test('the service refuses an endpoint without events on its own, whoever calls it', async () => {
    const storeCode = await t.addStore();
    const endpoints = t.app.sunap.invoicing.endpoints;
    const refused = (e: unknown) => e instanceof AppError && e.kind === 'VALIDATION' && e.message === 'events: choose at least one event';
    await assert.rejects(endpoints.create(storeCode, { url: `${rx.url}/none`, events: [] }), refused);
    const ep = await endpoints.create(storeCode, { url: `${rx.url}/some`, events: ['bill.paid'] });
    await assert.rejects(endpoints.update(storeCode, ep.id, { events: [] }), refused);
    assert.deepEqual((await endpoints.get(storeCode, ep.id)).events, ['bill.paid']);
  });
});
