import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ENDPOINT_JOB, EndpointService, FAILING_DISABLE_MS } from '../../src/gateway/endpoints.js';
import { AppError } from '../../src/platform/errors.js';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { afterEachRead } from '../helpers/db.js';
import { withReceiver } from '../helpers/receiver.js';

/**
 * A store endpoint's delivery job, one run at a time (the worker stays off, so each run here is
 * the only one): when it sends nothing, when it records why it did not send, and its triggers.
 */
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('the endpoint delivery job', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const rx = withReceiver();

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

  test('two rotations at once take turns: the secret the first caller got signs beside the second one\'s, the replaced one no longer', async () => {
    const { deliveryId, storeCode, endpointId } = await endpointDelivery('/rotated-twice');
    const endpoints = t.app.sunap.invoicing.endpoints;
    const before = await endpoints.rotate(storeCode, endpointId);
    const [a, b] = await Promise.all([endpoints.rotate(storeCode, endpointId), endpoints.rotate(storeCode, endpointId)]);
    const n = rx.received.length;
    await run(deliveryId, { manual: true });
    const r = rx.received[n]!;
    const signs = (secret: string) => {
      try {
        new Webhook(secret).verify(r.raw, { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) });
        return true;
      } catch {
        return false;
      }
    };
    assert.notEqual(a.secret, b.secret);
    // Which went first is up to the database: the later one's secret is current, the earlier one's the rotated-out one.
    assert.deepEqual([signs(a.secret), signs(b.secret)], [true, true], 'both secrets handed out sign');
    assert.equal(signs(before.secret), false, 'the secret both replaced no longer signs');
    assert.equal(String(r.headers['webhook-signature']).split(' ').length, 2);
  });

  test('a rotation that another one beats on every read gives up after its fifth, with 4009; beaten four times, the fifth read goes through', async () => {
    for (const [beaten, done] of [[4, true], [5, false]] as const) {
      const storeCode = await t.addStore();
      const ep = await t.app.sunap.invoicing.endpoints.create(storeCode, { url: `${rx.url}/beaten`, events: ['payment.approved'] });
      let left = beaten;
      // After each read of the endpoint, and before the rotation's write, "another rotation" replaces the secret.
      const racing = afterEachRead(db(), async (rows) => {
        if (rows.length === 1 && 'secret_sealed' in (rows[0] as object) && left > 0) {
          left--;
          await db().updateTable('webhook_endpoints').set({ secret_sealed: t.app.sunap.box.seal(`whsec_other${left}`) }).where('id', '=', ep.id).execute();
        }
      });
      const endpoints = new EndpointService(racing, { clock: t.app.sunap.clock, box: t.app.sunap.box, wake: () => undefined });
      const rotation = endpoints.rotate(storeCode, ep.id);
      if (done) {
        const r = await rotation;
        const row = await db().selectFrom('webhook_endpoints').select(['secret_sealed', 'old_secret_sealed']).where('id', '=', ep.id).executeTakeFirstOrThrow();
        assert.equal(t.app.sunap.box.open(row.secret_sealed), r.secret);
        assert.equal(t.app.sunap.box.open(row.old_secret_sealed!), 'whsec_other0', 'it replaced the secret it read last');
      } else {
        await assert.rejects(rotation, (e) => e instanceof AppError && e.kind === 'STATE' && e.message === 'endpoint: its secret is being rotated by another request; try again');
        const row = await db().selectFrom('webhook_endpoints').select(['secret_sealed', 'old_secret_sealed']).where('id', '=', ep.id).executeTakeFirstOrThrow();
        assert.deepEqual([t.app.sunap.box.open(row.secret_sealed), row.old_secret_sealed], ['whsec_other0', null], 'nothing of its own written');
      }
    }
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
