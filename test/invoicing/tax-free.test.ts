import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { settingsContextOf } from '../../src/app.js';
import { breakdown } from '../../src/gateway/amounts.js';
import { setSettings } from '../../src/gateway/store-settings.js';
import { TossCheckout } from '../../src/ports/toss-checkout.js';
import { FakePortone, fakePortoneStore } from '../fakes/portone.js';
import { FAKE_TOSS_SECRET_KEY } from '../fakes/toss.js';
import { FAKE_TOSS_CLIENT_KEY, TossWindow } from '../fakes/toss-window.js';
import { forEachEngine, startApp, withApp, type TestApp } from '../helpers/app.js';
import { docExample } from '../helpers/openapi.js';
import { billBody, newAccount, waitSent } from './support.js';

/**
 * An invoice's tax-free (면세) part (docs/invoicing.md, "Tax-free amounts"): taxFreeAmount, 0 to
 * the amount, on both sides of each end; kept on the invoice and shown in its detail; carried to
 * its payment (supply, VAT and tax-free parts) and from there to the processors' windows as
 * their own taxFreeAmount, which the fakes record.
 */
const rd = (r: { body: any }) => r.body.result_data;

test('breakdown with a tax-free amount: the rest taxed at 10%; 0 and the amount are the ends; outside them refused; items still checked', () => {
  assert.deepEqual(breakdown(110_000, undefined, 50_000), { supplyAmount: 54_545, taxCharge: 5_455, taxFreeAmount: 50_000, lines: [] });
  assert.deepEqual(breakdown(110_000, undefined, 110_000), { supplyAmount: 0, taxCharge: 0, taxFreeAmount: 110_000, lines: [] });
  assert.deepEqual(breakdown(110_000, undefined, 0), { supplyAmount: 100_000, taxCharge: 10_000, taxFreeAmount: 0, lines: [] });
  assert.deepEqual(breakdown(110_000, undefined, 110_001), { error: 'taxFreeAmount: must be from 0 to APPROVAL_AMOUNT (110000)' });
  assert.deepEqual(breakdown(110_000, undefined, -1), { error: 'taxFreeAmount: must be from 0 to APPROVAL_AMOUNT (110000)' });
  assert.deepEqual(breakdown(100_000, [{ unitPrice: 15_000 }, { unitPrice: 85_000 }], 85_000), { supplyAmount: 13_636, taxCharge: 1_364, taxFreeAmount: 85_000, lines: [15_000, 85_000] });
  assert.deepEqual(breakdown(100_000, [{ unitPrice: 15_000 }], 85_000), { error: 'APPROVAL_AMOUNT: must equal the sum of ITEMS (15000)' });
});

forEachEngine('invoicing: taxFreeAmount', (engine) => {
  const t = withApp(engine);
  const paymentOf = async (seq: string) => t.app.sunap.database.db.selectFrom('payments').selectAll().where('trans_seqno', '=', seq).executeTakeFirstOrThrow();

  test('0..amount accepted (both ends), amount + 1 and -1 refused with the field named; the detail shows it; the payment carries supply, VAT and tax-free parts', async () => {
    const a = await newAccount(t, { points: 1000 });
    const over = await t.post('/app/v1/sales/bill', billBody({ amount: 110_000, taxFreeAmount: 110_001 }), a.h);
    assert.deepEqual([over.status, over.body.result_code, over.body.result_msg], [400, -20, 'taxFreeAmount: must be at most the amount (110000)']);
    const negative = await t.post('/app/v1/sales/bill', billBody({ amount: 110_000, taxFreeAmount: -1 }), a.h);
    assert.deepEqual([negative.status, negative.body.result_code], [400, -20]);
    assert.match(negative.body.result_msg, /^taxFreeAmount: /);
    const fraction = await t.post('/app/v1/sales/bill', billBody({ amount: 110_000, taxFreeAmount: 1.5 }), a.h);
    assert.deepEqual([fraction.status, fraction.body.result_code], [400, -20]);
    assert.equal(await t.get('/app/v1/sales/bill', a.h).then((r) => rd(r).totalCount), 0, 'a refused request makes nothing');

    const made: Record<string, number> = {};
    for (const [tag, taxFreeAmount] of [['part', 50_000], ['whole', 110_000], ['zero', 0], ['absent', undefined]] as const) {
      const body = billBody({ reason: `면세 ${tag}`, amount: 110_000, ...(taxFreeAmount !== undefined ? { taxFreeAmount } : {}) });
      assert.equal((await t.post('/app/v1/sales/bill', body, a.h)).body.result_code, 0, tag);
      const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
      const d = await waitSent(t, a, id);
      assert.equal(d.bill.taxFreeAmount, taxFreeAmount ?? 0, tag);
      const p = await paymentOf(d.bill.transSeqNo);
      made[tag] = Number(p.tax_free_amount);
      assert.equal(Number(p.supply_amount) + Number(p.tax_charge) + Number(p.tax_free_amount), 110_000);
    }
    assert.deepEqual(made, { part: 50_000, whole: 110_000, zero: 0, absent: 0 });
    const part = await paymentOf((await t.get('/app/v1/sales/bill?size=10', a.h)).body.result_data.bills.find((b: { reason: string }) => b.reason === '면세 part').transSeqNo);
    assert.deepEqual([Number(part.supply_amount), Number(part.tax_charge)], [54_545, 5_455]);
  });

  test('/docs: taxFreeAmount documented with an example, and the documented creation example is accepted as written', async () => {
    const spec = JSON.parse((await t.get('/docs/json')).text);
    const media = spec.paths['/app/v1/sales/bill'].post.requestBody.content['application/json'];
    const body = media.schema;
    assert.equal(body.properties.taxFreeAmount.minimum, 0);
    assert.match(body.properties.taxFreeAmount.description, /면세/);
    const example = docExample(media) as Record<string, unknown>;
    assert.equal(example.taxFreeAmount, 120_000);
    assert.match(JSON.stringify(spec.paths['/app/v1/sales/bill/{id}'].get.responses['200']), /"taxFreeAmount":\{[^}]*"type":"integer"/);
    const a = await newAccount(t, { points: 1000 });
    const due = new Date(t.app.sunap.clock.nowMs() + 9 * 3600_000 + 7 * 86400_000).toISOString().slice(0, 10);
    const r = await t.post('/app/v1/sales/bill', { ...example, dueDate: due }, a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const d = await waitSent(t, a, rd(await t.get('/app/v1/sales/bill?size=1', a.h)).bills[0].uniqueId);
    assert.deepEqual([d.bill.amount, d.bill.taxFreeAmount], [135_000, 120_000]);
    const p = await paymentOf(d.bill.transSeqNo);
    assert.deepEqual([Number(p.supply_amount), Number(p.tax_charge), Number(p.tax_free_amount)], [13_636, 1_364, 120_000], 'as docs/invoicing.md works it out');
  });

  test('INDIVIDUAL: each entry\'s own taxFreeAmount, at most its own amount; the same requestId with another taxFreeAmount is another invoice (-22)', async () => {
    const a = await newAccount(t, { points: 1000 });
    const members = [{ studentName: '김영희', studentPhone: '01022223333' }, { studentName: '이철수', studentPhone: '01044445555' }];
    const entries = (second: number) => [
      { studentName: '김영희', studentPhone: '01022223333', amount: 100_000, taxFreeAmount: 100_000 },
      { studentName: '이철수', studentPhone: '01044445555', amount: 50_000, taxFreeAmount: second },
    ];
    const bad = await t.post('/app/v1/sales/bill', billBody({ templateType: 'INDIVIDUAL', amount: undefined, members, recipientItems: entries(50_001) }), a.h);
    assert.deepEqual([bad.status, bad.body.result_msg], [400, 'recipientItems[1].taxFreeAmount: must be at most the amount (50000)']);
    assert.equal((await t.post('/app/v1/sales/bill', billBody({ templateType: 'INDIVIDUAL', amount: undefined, members, recipientItems: entries(50_000) }), a.h)).body.result_code, 0);
    const bills = rd(await t.get('/app/v1/sales/bill?size=10', a.h)).bills as { uniqueId: string; receiver: { name: string } }[];
    const by = Object.fromEntries(await Promise.all(bills.map(async (b) => [b.receiver.name, rd(await t.get(`/app/v1/sales/bill/${b.uniqueId}`, a.h)).bill.taxFreeAmount])));
    assert.deepEqual(by, { 김영희: 100_000, 이철수: 50_000 });

    const once = billBody({ requestId: 'taxfree-0001', amount: 20_000, taxFreeAmount: 20_000 });
    assert.equal((await t.post('/app/v1/sales/bill', once, a.h)).body.result_code, 0);
    assert.equal((await t.post('/app/v1/sales/bill', once, a.h)).body.result_code, 0, 'the same request again: nothing new');
    const other = await t.post('/app/v1/sales/bill', { ...once, taxFreeAmount: 0 }, a.h);
    assert.deepEqual([other.status, other.body.result_code], [400, -22]);
  });
});

forEachEngine('invoicing: taxFreeAmount reaches PortOne\'s window', (engine) => {
  const fake = new FakePortone([fakePortoneStore()]);
  let t: TestApp;
  let store: string;
  before(async () => {
    await fake.start();
    t = await startApp(engine, { SUNAP_PORTONE_API_URL: fake.url, SUNAP_OUTBOUND_TIMEOUT_MS: '1500' });
    store = await t.addStore();
    const s = fake.store;
    await setSettings(settingsContextOf(t.app.sunap.config, t.app.sunap.database.db, t.app.sunap.box), store, {
      processor: 'portone', way: 'checkout', keys: { apiSecret: s.apiSecret, storeId: s.storeId, channelKey: s.channels[0]!.key, webhookSecret: s.webhookSecret },
    }, Date.now());
    fake.store.webhookUrl = `${t.url}/processor-events/portone/${store}`;
  });
  after(async () => {
    await t?.close();
    await fake.close();
  });

  test('an invoice of 128,000원 with 100,000원 tax-free: the page hands PortOne taxFreeAmount 100000, pre-registered and requested so', async () => {
    const a = await newAccount(t, { points: 1000, storeCode: store });
    assert.equal((await t.post('/app/v1/sales/bill', billBody({ amount: 128_000, taxFreeAmount: 100_000 }), a.h)).body.result_code, 0);
    const id = rd(await t.get('/app/v1/sales/bill?size=1', a.h)).bills[0].uniqueId;
    const d = await waitSent(t, a, id);
    const url = new URL(rd(await t.get(`/app/v1/sales/public/bill/${d.bill.transSeqNo}`)).paymentUrl);
    const page = await t.request('GET', `${url.pathname}${url.search}`);
    assert.ok(page.text.includes('면세금액'), 'the payment page shows the tax-free part');
    const begin = await t.request('POST', `${url.pathname}/begin`, new URLSearchParams({ tid: url.searchParams.get('tid')!, token: url.searchParams.get('token')!, method: 'CARD' }).toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    const data = JSON.parse(/<script type="application\/json" id="sunap-checkout"[^>]*>(.*?)<\/script>/s.exec(begin.text)![1]!);
    assert.deepEqual([data.request.totalAmount, data.request.taxFreeAmount], [128_000, 100_000]);
    assert.deepEqual([fake.payments.get(data.request.paymentId)!.total, fake.payments.get(data.request.paymentId)!.taxFree], [128_000, 100_000], 'pre-registered with its tax-free part');
    const sdk = await (await fetch(`${fake.url}/v2/sdk/payments`, { method: 'POST', body: JSON.stringify(data.request) })).json() as { windowUrl?: string };
    assert.ok(sdk.windowUrl, 'the window opens: the request matches what was pre-registered');
  });
});

test('Toss\'s window gets taxFreeAmount only when there is one, and the fake window reports it back in the Payment object', async () => {
  const adapter = new TossCheckout({ clientKey: FAKE_TOSS_CLIENT_KEY, secretKey: FAKE_TOSS_SECRET_KEY, baseUrl: 'https://toss.invalid', sdkUrl: 'https://toss.invalid/v2/standard', timeoutMs: 300 });
  const win = new TossWindow(() => 'https://toss.invalid', FAKE_TOSS_CLIENT_KEY, FAKE_TOSS_SECRET_KEY);
  const open = async (orderId: string, taxFreeAmount: number) => {
    const w = await adapter.begin({
      orderId, amount: 110_000, taxFreeAmount, orderName: '11월 수강료', storeName: '피아노 학원', method: 'CARD', customer: { name: '홍길동', phone: '01012345678' },
      successUrl: 'https://pay.example.com/s', failUrl: 'https://pay.example.com/f', accountHours: 168,
    });
    const request = (w as unknown as { params: { request: Record<string, unknown> } }).params.request;
    const r = await win.browser({ method: 'POST', path: '/v2/sessions', query: new URLSearchParams(), headers: {}, raw: JSON.stringify({ clientKey: FAKE_TOSS_CLIENT_KEY, request }), json: null });
    return { request, status: (r as { status: number }).status, order: win.orders.get(orderId) };
  };
  const part = await open('order_taxfree_1', 50_000);
  assert.deepEqual([part.request.taxFreeAmount, part.status, part.order?.taxFree], [50_000, 200, 50_000]);
  assert.deepEqual([win.view(part.order!).taxFreeAmount, win.view(part.order!).suppliedAmount, win.view(part.order!).vat], [50_000, 54_545, 5_455]);
  const none = await open('order_taxfree_0', 0);
  assert.deepEqual(['taxFreeAmount' in none.request, none.order?.taxFree], [false, 0]);
});
