import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PaymentsConsole } from '../../src/gateway/index.js';
import type { SandboxCheckout } from '../../src/ports/sandbox-checkout.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';

/**
 * Where processors post their notices (docs/reference.md, "Processor events"), over HTTP with
 * the sandbox processor: verified (a deposit's secret), recorded once per notice, confirmed by
 * a look-up (never by the body), shown in the payment's timeline; unknown processors, stores
 * and orders answered without acting.
 */
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('processor events', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;
  const sandbox = async () => (await t.app.sunap.gateway.context.processors.checkout('sandbox', t.storeCode)) as SandboxCheckout;
  const post = (path: string, body: unknown, contentType = 'application/json') =>
    t.request('POST', path, typeof body === 'string' ? body : JSON.stringify(body), { 'content-type': contentType });
  async function issued() {
    const body = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    const seq = body.TRANS_SEQNO as string;
    await t.post(`/sandbox/payments/${seq}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, method: 'VIRTUAL_ACCOUNT' });
    const p = await db().selectFrom('payments').selectAll().where('trans_seqno', '=', seq).executeTakeFirstOrThrow();
    return { seq, p, secret: t.app.sunap.box.open(p.vbank_secret_sealed!) };
  }
  const state = async (id: string) => (await db().selectFrom('payments').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
  const events = (paymentId: string) => db().selectFrom('processor_events').select(['event_type', 'outcome', 'detail']).where('payment_id', '=', paymentId).orderBy('received_at').orderBy('id').execute();

  test('an unknown processor or store is 404; a processor without keys (toss, in a sandbox without Toss keys) is 404 saying so', async () => {
    const a = await post('/processor-events/paypal', {});
    assert.deepEqual([a.status, a.body], [404, { received: false, outcome: 'UNKNOWN', detail: 'processor: no such processor (sandbox, toss, portone)' }]);
    const b = await post('/processor-events/sandbox/SDNOSUCH', {});
    assert.deepEqual([b.status, b.body.detail], [404, 'storeCode: no such store']);
    const c = await post('/processor-events/toss', {});
    assert.deepEqual([c.status, c.body.detail], [404, 'processor: toss: no client key and secret key (SUNAP_TOSS_CLIENT_KEY and SUNAP_TOSS_SECRET_KEY, or the store\'s own: sunap store set-processor)']);
    assert.equal((await db().selectFrom('processor_events').select('id').execute()).length, 0, 'nothing recorded');
  });

  test('an unreadable notice is refused (401) and recorded; the same bytes again answer as before', async () => {
    const a = await post('/processor-events/sandbox', 'not json at all', 'text/plain');
    assert.deepEqual([a.status, a.body], [401, { received: false, outcome: 'REFUSED', detail: 'body: not JSON' }]);
    const b = await post('/processor-events/sandbox', 'not json at all', 'text/plain');
    assert.deepEqual([b.status, b.body], [401, { received: false, outcome: 'DUPLICATE', detail: 'seen before: body: not JSON' }]);
    const rows = await db().selectFrom('processor_events').select(['event_type', 'outcome']).where('event_type', '=', 'UNREADABLE').execute();
    assert.deepEqual(rows, [{ event_type: 'UNREADABLE', outcome: 'REFUSED' }]);
  });

  test('a deposit notice: a wrong secret is refused; the right one is only a hint, the look-up decides; the real deposit pays once', async () => {
    const { p, secret } = await issued();
    const forged = await post('/processor-events/sandbox', { orderId: p.processor_order, secret: 'guessed', status: 'DONE' });
    assert.deepEqual([forged.status, forged.body.outcome, forged.body.detail], [401, 'REFUSED', 'secret: does not match the virtual account\'s']);
    assert.equal(await state(p.id), 'STORE_REQUEST');
    // The right secret, but no money arrived: the processor says it still waits.
    const early = await post('/processor-events/sandbox', { orderId: p.processor_order, secret, status: 'DONE', createdAt: '2026-11-23T12:00:00' });
    assert.deepEqual([early.status, early.body.outcome, early.body.detail], [200, 'APPLIED', 'looked up: PENDING']);
    assert.equal(await state(p.id), 'STORE_REQUEST');
    const notice = (await (await sandbox()).deposit(p.processor_order!))!;
    const paid = await post(`/processor-events/sandbox/${t.storeCode}`, notice.body.toString('utf8'));
    assert.deepEqual([paid.status, paid.body.outcome, paid.body.detail], [200, 'APPLIED', 'looked up: APPROVED']);
    assert.equal(await state(p.id), 'APPROVE_COMPLETE');
    const again = await post(`/processor-events/sandbox/${t.storeCode}`, notice.body.toString('utf8'));
    assert.deepEqual([again.status, again.body.outcome], [200, 'DUPLICATE']);
    assert.deepEqual((await events(p.id)).map((e) => [e.event_type, e.outcome]), [['DEPOSIT_CALLBACK', 'REFUSED'], ['DEPOSIT_CALLBACK', 'APPLIED'], ['DEPOSIT_CALLBACK', 'APPLIED']]);
    const { timeline } = await new PaymentsConsole(db()).timeline({ platformCode: t.platformCode, storeCode: t.storeCode }, p.trans_seqno);
    assert.deepEqual(timeline.filter((e) => e.kind === 'EVENT').map((e) => (e as { outcome: string }).outcome), ['REFUSED', 'APPLIED', 'APPLIED'], 'every notice in the timeline');
  });

  test('a status notice is never trusted: a paid payment stays paid unless the processor says it was cancelled', async () => {
    const body = paymentBody();
    await t.gw('requestPayment', body);
    await t.pay(body.TRANS_SEQNO as string);
    const p = await db().selectFrom('payments').selectAll().where('trans_seqno', '=', body.TRANS_SEQNO as string).executeTakeFirstOrThrow();
    const lie = await post('/processor-events/sandbox', { eventType: 'PAYMENT_STATUS_CHANGED', data: { orderId: p.processor_order, status: 'CANCELED' } });
    assert.deepEqual([lie.status, lie.body.outcome, lie.body.detail], [200, 'APPLIED', 'looked up: nothing to change']);
    assert.equal(await state(p.id), 'APPROVE_COMPLETE');
  });

  test('notices about no order, an unknown order or another store\'s order change nothing and are not sent again (200)', async () => {
    const none = await post('/processor-events/sandbox', { eventType: 'PAYMENT_STATUS_CHANGED', data: {} });
    assert.deepEqual([none.status, none.body.outcome, none.body.detail], [200, 'IGNORED', 'not about a payment']);
    const unknown = await post('/processor-events/sandbox', { eventType: 'PAYMENT_STATUS_CHANGED', data: { orderId: 'f00d' } });
    assert.deepEqual([unknown.status, unknown.body.outcome, unknown.body.detail], [200, 'IGNORED', 'no such order']);
    const { p } = await issued();
    const other = await t.addStore();
    const elsewhere = await post(`/processor-events/sandbox/${other}`, { eventType: 'PAYMENT_STATUS_CHANGED', data: { orderId: p.processor_order } });
    assert.deepEqual([elsewhere.status, elsewhere.body.outcome, elsewhere.body.detail], [200, 'IGNORED', 'the order is not this processor\'s or this store\'s']);
    assert.equal(await state(p.id), 'STORE_REQUEST');
  });

  test('a notice larger than 256 KB is refused before anything is read', async () => {
    const big = await post('/processor-events/sandbox', `{"pad":"${'x'.repeat(256 * 1024)}"}`);
    assert.equal(big.status, 413);
    const fits = await post('/processor-events/sandbox', `{"pad":"${'x'.repeat(256 * 1024 - 20)}"}`);
    assert.equal(fits.status, 401, 'just under the limit it is read (and refused as no notice)');
  });
});
