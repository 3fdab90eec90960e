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

    // The overview counts what recovery re-queues, and the list's "실패" shows the same ones.
    assert.ok(textOf((await c.get('/console')).text).includes('실패한 전달 3건'));
    assert.equal([...(await c.get('/console/deliveries?status=failed')).text.matchAll(/href="\/console\/deliveries\/dlv_/g)].length, 3);
    const r = await c.post('/console/deliveries/recover', { since: kstIso(start - 60_000).slice(0, 16) }, { from: '/console/deliveries' });
    assert.equal(r.status, 200, r.text);
    assert.ok(textOf(r.text).includes('실패한 전송 3건을 다시 보내도록 예약했습니다.'), textOf(r.text).slice(0, 1500));
    assert.doesNotMatch(textOf(r.text), /건너뛰었습니다/);
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
    assert.deepEqual([...detail.text.matchAll(/<td>(\d+)회차<\/td>/g)].map((m) => Number(m[1])), [1, 2, 3, 4, 5, 6], 'one sequence: the recovery\'s attempt is the sixth');
    assert.ok(textOf(detail.text).includes('받는 서버가 503 오류로 답했습니다'), 'the failure in Korean');
    assert.match(detail.text, /<details><summary>자세히<\/summary><code>HTTP 503<\/code><\/details>/, 'the raw error behind 자세히');
    assert.ok(textOf((await c.get('/console')).text).includes('실패한 전달 0건'), 'delivered: no longer failing on the overview');
    assert.match(textOf(detail.text), /수동/);
    assert.doesNotMatch(detail.text, /x-service-signature/);
    const again = await c.post(`/console/deliveries/${id}/redeliver`, {}, { from: `/console/deliveries/${id}` });
    assert.equal(again.status, 303);
    await rx.waitFor(3 * 5 + 4);
    await eventually(async () => (await c.get(`/console/deliveries/${id}`)).text.includes('<td>7회차</td>'), 'the redelivery is attempt 7');
    assert.equal((await viewer.c.post(`/console/deliveries/${id}/redeliver`, {}, { from: '/console/account' })).status, 403);
    // Another store's member: not found.
    const other = await newOwner(t);
    const oc = new ConsoleClient(t);
    await oc.signIn(other.email, other.password);
    assert.equal((await oc.get(`/console/deliveries/${id}`)).status, 404);
  });

  test('retrying after its first failure is failing: counted on the overview, listed under 실패, skipped while its endpoint is off (said why, in Korean), then brought forward by 복구', async () => {
    const store = await t.addStore();
    const owner = await newOwner(t, { storeCode: store });
    const c = new ConsoleClient(t);
    await c.signIn(owner.email, owner.password);
    assert.equal((await c.post('/console/deliveries/endpoints', { url: `${rx.url}/ep`, events: 'bill.paid' }, { from: '/console/deliveries/endpoints' })).status, 200);
    const epId = /endpoints\/(we_[0-9a-f]{32})\/test/.exec((await c.get('/console/deliveries/endpoints')).text)![1]!;
    assert.ok(textOf((await c.get('/console')).text).includes('실패한 전달 0건'));
    rx.script.push(503);
    const sent = await c.post(`/console/deliveries/endpoints/${epId}/test`, {}, { from: '/console/deliveries/endpoints' });
    const id = /deliveries\/(dlv_[0-9a-f]{32})/.exec(sent.location!)![1]!;
    await rx.waitFor(1);
    const db = t.app.sunap.database.db;
    await eventually(async () => (await db.selectFrom('deliveries').select('attempts').where('id', '=', id).executeTakeFirstOrThrow()).attempts === 1, 'one failed attempt');
    // Pending, one failed attempt, its retry a minute away: failing.
    assert.ok(textOf((await c.get('/console')).text).includes('실패한 전달 1건'));
    const failedList = await c.get('/console/deliveries?status=failed');
    assert.ok(failedList.text.includes(`/console/deliveries/${id}`));
    assert.match(failedList.text, /<span class="badge bad">재시도 중<\/span>/);

    assert.equal((await c.post(`/console/deliveries/endpoints/${epId}/disable`, {}, { from: '/console/deliveries/endpoints' })).status, 303);
    const eps = (await c.get('/console/deliveries/endpoints')).text;
    assert.ok(textOf(eps).includes('상점에서 껐습니다'), 'why it is off, in Korean');
    assert.match(eps, /<details><summary>자세히<\/summary><code>disabled by the store<\/code><\/details>/, 'the stored reason behind 자세히');
    const skipped = await c.post('/console/deliveries/recover', { since: kstIso(t.app.sunap.clock.nowMs() - 3_600_000).slice(0, 16) }, { from: '/console/deliveries' });
    assert.equal(skipped.status, 200);
    const said = textOf(skipped.text);
    assert.ok(said.includes('실패한 전송 0건을 다시 보내도록 예약했습니다.'), said.slice(0, 1500));
    assert.ok(said.includes('1건은 건너뛰었습니다.'));
    assert.ok(said.includes('엔드포인트가 꺼져 있습니다'));
    assert.doesNotMatch(said, /endpoint_disabled|disabled by the store/);

    assert.equal((await c.post(`/console/deliveries/endpoints/${epId}/enable`, {}, { from: '/console/deliveries/endpoints' })).status, 303);
    const r = await c.post('/console/deliveries/recover', { since: kstIso(t.app.sunap.clock.nowMs() - 3_600_000).slice(0, 16) }, { from: '/console/deliveries' });
    assert.ok(textOf(r.text).includes('실패한 전송 1건을 다시 보내도록 예약했습니다.'));
    // Brought forward, not doubled: the second attempt comes now, without moving the clock, and only once.
    await rx.waitFor(2);
    await eventually(async () => (await db.selectFrom('deliveries').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status === 'delivered', 'delivered');
    await settled(t);
    assert.equal(rx.received.length, 2);
    const detail = await c.get(`/console/deliveries/${id}`);
    assert.deepEqual([...detail.text.matchAll(/<td>(\d+)회차<\/td>/g)].map((m) => Number(m[1])), [1, 2]);
    assert.ok(textOf((await c.get('/console')).text).includes('실패한 전달 0건'));
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
