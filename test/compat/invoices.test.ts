import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { billBody, newAccount, waitSent } from '../invoicing/support.js';

/** The invoice list and the invoice's payment page as the public clients and the interface expect them. */
forEachEngine('compat: invoices', (engine) => {
  const t = withApp(engine);

  test('the list answers 10 invoices when no size is asked for (the real service\'s default); size still goes to 100', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const members = Array.from({ length: 12 }, (_, i) => ({ studentName: `학생${i + 1}`, studentPhone: `010123400${String(i).padStart(2, '0')}` }));
    const created = await t.post('/app/v1/sales/bill', billBody({ members }), a.h);
    assert.equal(created.body.result_code, 0, created.text);
    const d = (await t.get('/app/v1/sales/bill', a.h)).body.result_data;
    assert.equal(d.size, 10);
    assert.equal(d.page, 1);
    assert.equal(d.totalCount, 12);
    assert.equal(d.bills.length, 10);
    const p2 = (await t.get('/app/v1/sales/bill?page=2', a.h)).body.result_data;
    assert.equal(p2.bills.length, 2);
    assert.equal((await t.get('/app/v1/sales/bill?size=11', a.h)).body.result_data.bills.length, 11);
    assert.equal((await t.get('/app/v1/sales/bill?size=100', a.h)).body.result_data.bills.length, 12);
  });

  test('an invoice\'s payment page shows every invoice item (the message lists five)', async () => {
    const a = await newAccount(t, { points: 1000 });
    const items = Array.from({ length: 7 }, (_, i) => ({ name: `교재 ${i + 1}`, price: 10_000, qty: 1 }));
    const created = await t.post('/app/v1/sales/bill', billBody({ amount: 70_000, items }), a.h);
    assert.equal(created.body.result_code, 0, created.text);
    const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
    await waitSent(t, a, id);
    const link = (await t.get(`/sandbox/messages?phone=01012345678`)).body.messages[0].link as string;
    const page = await fetch(link);
    assert.equal(page.status, 200);
    const html = await page.text();
    const table = /<table class="items">[\s\S]*<\/table>/.exec(html)?.[0] ?? '';
    assert.ok(table, 'the item table shows on a BILL payment');
    for (const it of items) assert.ok(table.includes(it.name), `shows ${it.name}`);
    assert.ok(table.includes('70,000원'));
  });
});
