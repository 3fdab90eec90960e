import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { kstIso } from '../../src/platform/kst.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { paidInvoice, settled } from '../deliveries/support.js';
import { newAccount } from '../invoicing/support.js';
import { addMember, ConsoleClient, newOwner, textOf } from './support.js';

forEachEngine('console: callbacks and webhooks', (engine) => {
  const t = withApp(engine);
  let rx: Receiver;
  beforeEach(async () => { rx = await new Receiver().start(); });
  afterEach(async () => rx?.close());

  test('receiver down, three invoices paid: the console shows three failed deliveries; recover delivers them; a viewer only reads', async () => {
    const store = await t.addStore();
    const owner = await newOwner(t, { storeCode: store });
    const api = await newAccount(t, { points: 10_000, storeCode: store });
    const start = t.app.sunap.clock.nowMs();
    rx.defaultStatus = 503;
    for (let i = 0; i < 3; i++) await paidInvoice(t, api, `${rx.url}/hooks`, undefined, store);
    await rx.waitFor(3);
    for (let s = 0; s < 14; s++) {
      await settled(t);
      await t.post('/sandbox/clock', { advanceSeconds: 900 });
    }
    await settled(t);
    rx.defaultStatus = 200;

    const c = new ConsoleClient(t);
    await c.signIn(owner.email, owner.password);
    const list = await c.get('/console/deliveries');
    assert.equal(list.status, 200);
    assert.equal((textOf(list.text).match(/실패/g) ?? []).length >= 3, true);
    assert.equal([...list.text.matchAll(/class="badge bad"/g)].length, 3, 'three failed deliveries');
    assert.match(list.text, /action="\/console\/deliveries\/recover"/);

    const viewer = await addMember(t, c, 'viewer');
    const vl = await viewer.c.get('/console/deliveries');
    assert.equal(vl.status, 200);
    assert.equal([...vl.text.matchAll(/class="badge bad"/g)].length, 3, 'a viewer sees them');
    assert.doesNotMatch(vl.text, /action="\/console\/deliveries\/recover"/, 'but no recover button');
    const refused = await viewer.c.post('/console/deliveries/recover', { since: kstIso(start - 60_000).slice(0, 16) }, { from: '/console/account' });
    assert.equal(refused.status, 403);
    assert.equal((await c.post('/console/deliveries/recover', { since: kstIso(start).slice(0, 16) }, { csrf: false })).status, 403, 'no CSRF token');

    const r = await c.post('/console/deliveries/recover', { since: kstIso(start - 60_000).slice(0, 16) }, { from: '/console/deliveries' });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/console/deliveries?notice=recovered-3');
    await rx.waitFor(3 * 5 + 3);
    const after = await eventually(async () => {
      const p = await c.get('/console/deliveries');
      return [...p.text.matchAll(/class="badge ok"/g)].length === 3 ? p : null;
    }, 'three delivered');
    assert.equal([...after.text.matchAll(/class="badge bad"/g)].length, 0);

    // One delivery: the request and its six attempts; send again.
    const id = /href="\/console\/deliveries\/(dlv_[0-9a-f]{32})"/.exec(after.text)![1]!;
    const detail = await c.get(`/console/deliveries/${id}`);
    assert.equal(detail.status, 200);
    assert.match(textOf(detail.text), /시도 6회/);
    assert.match(textOf(detail.text), /수동/);
    assert.doesNotMatch(detail.text, /x-service-signature/);
    const again = await c.post(`/console/deliveries/${id}/redeliver`, {}, { from: `/console/deliveries/${id}` });
    assert.equal(again.status, 303);
    await rx.waitFor(3 * 5 + 4);
    assert.equal((await viewer.c.post(`/console/deliveries/${id}/redeliver`, {}, { from: '/console/account' })).status, 403);
    // Another store's member: not found.
    const other = await newOwner(t);
    const oc = new ConsoleClient(t);
    await oc.signIn(other.email, other.password);
    assert.equal((await oc.get(`/console/deliveries/${id}`)).status, 404);
  });

  test('endpoints: the secret shown once, rotation, test event, disable and enable', async () => {
    const store = await t.addStore();
    const owner = await newOwner(t, { storeCode: store });
    const c = new ConsoleClient(t);
    await c.signIn(owner.email, owner.password);
    const made = await c.post('/console/deliveries/endpoints', { url: `${rx.url}/ep`, events: 'bill.paid' }, { from: '/console/deliveries/endpoints' });
    assert.equal(made.status, 200, made.text);
    const secret = /(whsec_[A-Za-z0-9+/=]+)/.exec(made.text)![1]!;
    const page = await c.get('/console/deliveries/endpoints');
    assert.doesNotMatch(page.text, /whsec_/, 'shown once');
    const epId = /endpoints\/(we_[0-9a-f]{32})\/test/.exec(page.text)![1]!;
    const rot = await c.post(`/console/deliveries/endpoints/${epId}/rotate`, {}, { from: '/console/deliveries/endpoints' });
    const fresh = /(whsec_[A-Za-z0-9+/=]+)/.exec(rot.text)![1]!;
    assert.notEqual(fresh, secret);
    const test1 = await c.post(`/console/deliveries/endpoints/${epId}/test`, {}, { from: '/console/deliveries/endpoints' });
    assert.equal(test1.status, 303);
    assert.match(test1.location!, /^\/console\/deliveries\/dlv_[0-9a-f]{32}\?notice=test$/);
    await rx.waitFor(1);
    assert.equal(rx.received[0]!.json.event, 'webhook.test');
    assert.equal(String(rx.received[0]!.headers['webhook-signature']).split(' ').length, 2);
    const bad = await c.post('/console/deliveries/endpoints', { url: 'http://insecure.example', events: 'bill.paid' }, { from: '/console/deliveries/endpoints' });
    assert.equal(bad.status, 400);
    assert.equal((await c.post(`/console/deliveries/endpoints/${epId}/disable`, {}, { from: '/console/deliveries/endpoints' })).location, '/console/deliveries/endpoints?notice=disabled');
    assert.match(textOf((await c.get('/console/deliveries/endpoints')).text), /꺼짐/);
    assert.equal((await c.post(`/console/deliveries/endpoints/${epId}/enable`, {}, { from: '/console/deliveries/endpoints' })).status, 303);
    assert.match(textOf((await c.get('/console/deliveries/endpoints')).text), /켜짐/);
    const viewer = await addMember(t, c, 'viewer');
    const vp = await viewer.c.get('/console/deliveries/endpoints');
    assert.equal(vp.status, 200);
    assert.doesNotMatch(vp.text, /rotate/);
    assert.equal((await viewer.c.post(`/console/deliveries/endpoints/${epId}/rotate`, {}, { from: '/console/account' })).status, 403);
  });
});
