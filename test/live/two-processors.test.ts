import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { settingsContextOf } from '../../src/app.js';
import { setSettings } from '../../src/gateway/store-settings.js';
import { FakePortone, fakePortoneStore } from '../fakes/portone.js';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { payOnPage, withFakes, withLiveApp } from './support.js';

/**
 * Live mode with two real adapters side by side: the operator's Toss card-number API
 * (toss-keyin, the Toss fake) for one store, PortOne V2 with its own keys (the PortOne fake)
 * for another store of the same platform. Each payment is paid, looked up and cancelled through
 * the processor that took it, whatever the other store does.
 */
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('live: Toss and PortOne stores side by side', (engine) => {
  const fakes = withFakes();
  const portone = new FakePortone([fakePortoneStore()]);
  before(() => portone.start().then(() => undefined));
  after(() => portone.close());
  const t = withLiveApp(engine, fakes, () => ({ SUNAP_PORTONE_API_URL: portone.url }));
  let portoneStore: string;

  before(async () => {
    portoneStore = await t.addStore();
    const s = portone.store;
    await setSettings(settingsContextOf(t.app.sunap.config, t.app.sunap.database.db, t.app.sunap.box), portoneStore, {
      processor: 'portone', way: 'checkout', keys: { apiSecret: s.apiSecret, storeId: s.storeId, channelKey: s.channels[1]!.key, webhookSecret: s.webhookSecret },
    }, Date.now());
  });

  test('a card on the Toss store (key-in) and a card on the PortOne store (its window): each recorded, looked up and cancelled at its own processor', async () => {
    const a = paymentBody();
    const ra = rd(await t.gw('requestPayment', a));
    const paid = await payOnPage(t, ra.REDIRECT_URL, '4242424242424242');
    assert.equal(paid.status, 303, paid.text.slice(0, 300));

    const b = paymentBody({ STORE_CODE: portoneStore });
    const url = new URL(rd(await t.gw('requestPayment', b)).REDIRECT_URL);
    const begin = await t.request('POST', `${url.pathname}/begin`, new URLSearchParams({ tid: url.searchParams.get('tid')!, token: url.searchParams.get('token')!, method: 'CARD' }).toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    const data = JSON.parse(/<script type="application\/json" id="sunap-checkout"[^>]*>(.*?)<\/script>/s.exec(begin.text)![1]!);
    const sdk = await (await fetch(`${portone.url}/v2/sdk/payments`, { method: 'POST', body: JSON.stringify(data.request) })).json() as { windowUrl: string };
    const back = new URL((await fetch(sdk.windowUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ action: 'approve', issuer: 'HYUNDAI_CARD' }), redirect: 'manual' })).headers.get('location')!);
    await t.get(`${back.pathname}${back.search}`);

    const row = (seq: unknown, store: string) => t.app.sunap.database.db.selectFrom('payments').selectAll().where('trans_seqno', '=', String(seq)).where('store_code', '=', store).executeTakeFirstOrThrow();
    const [pa, pb] = [await row(a.TRANS_SEQNO, t.storeCode), await row(b.TRANS_SEQNO, portoneStore)];
    assert.deepEqual([pa.state, pa.processor, pa.issuer_name, pb.state, pb.processor, pb.issuer_name], ['APPROVE_COMPLETE', 'toss-keyin', '신한카드', 'APPROVE_COMPLETE', 'portone', '현대카드']);
    assert.equal(pb.processor_ref, portone.payments.get(data.request.paymentId)!.transactionId);

    const tossBefore = fakes.toss.requests.length;
    const portoneBefore = portone.calls.filter((c) => c.method === 'POST').length;
    const cancel = (body: Record<string, unknown>, store: string) => t.gw('requestPaymentCancel', { TRANS_SEQNO: body.TRANS_SEQNO, STORE_CODE: store, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
    assert.equal(rd(await cancel(a, t.storeCode)).RESULT_CODE, '0000');
    assert.deepEqual(fakes.toss.requests.slice(tossBefore).map((r) => `${r.method} ${r.path}`), [`POST /v1/payments/${pa.processor_ref}/cancel`]);
    assert.equal(portone.calls.filter((c) => c.method === 'POST').length, portoneBefore, 'the Toss store\'s cancel never reaches PortOne');
    const tossAfter = fakes.toss.requests.length;
    assert.equal(rd(await cancel(b, portoneStore)).RESULT_CODE, '0000');
    assert.equal(fakes.toss.requests.length, tossAfter, 'the PortOne store\'s cancel never reaches Toss');
    assert.deepEqual(portone.calls.filter((c) => c.method === 'POST').slice(portoneBefore).map((c) => c.path), [`/payments/${data.request.paymentId}/cancel`]);
    assert.deepEqual([(await row(a.TRANS_SEQNO, t.storeCode)).state, (await row(b.TRANS_SEQNO, portoneStore)).state], ['CANCEL_COMPLETE', 'CANCEL_COMPLETE']);
  });
});
