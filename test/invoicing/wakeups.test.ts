import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { approvedPayment } from '../deliveries/support.js';
import { createOne, newAccount, waitSent } from './support.js';

forEachEngine('the invoicing calls that make work due wake the worker', (engine) => {
  // The worker looks for due jobs only once a minute here: each piece of work below starts
  // within seconds only if the call that made it due woke the worker (src/invoicing/index.ts).
  const t = withApp(engine, { SUNAP_JOB_POLL_MS: '60000' });
  let rx: Receiver;
  beforeEach(async () => { rx = await new Receiver().start(); });
  afterEach(async () => rx?.close());
  const asleep = () => new Promise((r) => setTimeout(r, 300)); // the worker's first look is over

  test('a new invoice is sent at once, not at the next poll', async () => {
    const a = await newAccount(t, { points: 10_000 });
    await asleep();
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id, 10_000);
    assert.equal(d.bill.sendStatus, 'SENT');
  });

  test('a redelivery is attempted at once', async () => {
    const a = await newAccount(t, { points: 10_000 });
    await approvedPayment(t, `${rx.url}/callback`);
    await rx.waitFor(1, 10_000); // the approval wakes the worker (test/gateway/approval.test.ts)
    const d = await eventually(async () => (await t.get('/app/v1/deliveries', a.h)).body.result_data.deliveries.find((x: any) => x.status === 'delivered'), 'the callback delivered');
    await asleep();
    const r = await t.post(`/app/v1/deliveries/${d.id}/redeliver`, {}, a.h);
    assert.equal(r.status, 200, r.text);
    await rx.waitFor(2, 10_000);
    assert.deepEqual(rx.received.map((x) => x.url), ['/callback', '/callback']);
  });

  test("an endpoint's test event is sent at once", async () => {
    const a = await newAccount(t, { points: 10_000 });
    const ep = await t.post('/app/v1/webhook-endpoints', { url: `${rx.url}/ep`, events: ['bill.paid'] }, a.h);
    assert.equal(ep.status, 200, ep.text);
    await asleep();
    const r = await t.post(`/app/v1/webhook-endpoints/${ep.body.result_data.id}/test`, {}, a.h);
    assert.equal(r.status, 200, r.text);
    await rx.waitFor(1, 10_000);
    assert.equal(rx.received[0]!.json.event, 'webhook.test');
  });
});
