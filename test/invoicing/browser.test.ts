import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createAccount, grantPoints } from '../../src/invoicing/accounts.js';
import { forEachEngine, startApp, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, startAll, mobileContext, scrollWidth } from '../helpers/browser.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';

/** Set SUNAP_SCREENSHOTS=/tmp to keep phone-sized screenshots of the pages for a human look. */
const shots = process.env.SUNAP_SCREENSHOTS;
const SECRET = 'whsec_browser_0123456789';
const PHONE = '01024681357';


forEachEngine('invoice to payment in Chromium', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let rx: Receiver;
  let token: string;

  before(async () => {
    await startAll([startApp(engine).then((v) => (t = v)), launchBrowser().then((v) => (browser = v)), new Receiver().start().then((v) => (rx = v))]);
    const now = t.app.sunap.clock.nowMs();
    await createAccount(t.app.sunap.database.db, now, { email: 'teacher@example.com', password: 'correct horse 1', storeCode: t.storeCode });
    await grantPoints(t.app.sunap.database.db, now, { email: 'teacher@example.com', amount: 1000 });
    const login = await t.post('/app/v1/auth/login', { email: 'teacher@example.com', password: 'correct horse 1', loginType: 'EMAIL' });
    assert.equal(login.body.result_code, 0, JSON.stringify(login.body));
    token = login.body.result_data.accessToken;
  });
  after(async () => {
    await browser?.close();
    await rx?.close();
    await t?.close();
  });

  test('invoice → outbox message → payment page → DONE in the API, on the public page and by webhook', async () => {
    const auth = { 'x-access-token': token };
    const created = await t.post('/app/v1/sales/bill', {
      reason: '12월 수강료', description: '겨울 특강 포함', amount: 130000,
      items: [{ name: '피아노 레슨', price: 100000 }, { name: '겨울 특강', price: 30000 }],
      webhookUrl: `${rx.url}/sunap`, webhookSecret: SECRET,
      members: [{ studentName: '김하늘', studentPhone: PHONE }],
    }, auth);
    assert.equal(created.body.result_code, 0, JSON.stringify(created.body));

    // The send job issues the payment and hands the message to the sandbox provider.
    const message = await eventually(async () => {
      const r = await t.get(`/sandbox/messages?phone=${PHONE}`);
      return r.body.messages[0];
    }, 'the invoice message in the sandbox outbox');
    assert.ok(message.link, 'the message carries the payment link');
    const list = await t.get('/app/v1/sales/bill', auth);
    const bill = list.body.result_data.bills[0];
    assert.equal(bill.status, 'PENDING');

    const ctx = await mobileContext(browser);
    const page = await ctx.newPage();
    try {
      // A person reads the outbox and follows the link.
      await page.goto(`${t.url}/sandbox/outbox?phone=${PHONE}`);
      assert.ok((await page.textContent('main'))!.includes('12월 수강료'));
      if (shots) await page.screenshot({ path: join(shots, 'sunap-outbox.png'), fullPage: true });
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('link', { name: '결제 페이지 열기' }).first().click()]);
      assert.ok((await page.textContent('main'))!.includes('130,000원'));

      // The parent pays by virtual account: the window issues one, the page shows it, the bank's deposit pays it.
      await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: /가상계좌/ }).click()]);
      await page.getByLabel('입금할 은행').selectOption({ label: 'KB국민은행' });
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '가상계좌 발급받기' }).click()]);
      await page.getByRole('heading', { name: '가상계좌로 입금해 주세요' }).waitFor();
      assert.ok((await page.textContent('main'))!.includes('KB국민은행'));
      const pending = await t.get(`/app/v1/sales/bill/${bill.uniqueId}`, auth);
      assert.equal(pending.body.result_data.bill.status, 'PENDING', 'an issued account is not a payment');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '130,000원 입금하기' }).click()]);
      await page.getByRole('heading', { name: '결제가 완료되었습니다' }).waitFor();

      // The invoice followed its payment.
      const detail = await eventually(async () => {
        const r = await t.get(`/app/v1/sales/bill/${bill.uniqueId}`, auth);
        return r.body.result_data?.bill?.status === 'DONE' ? r.body.result_data : undefined;
      }, 'the invoice DONE');
      assert.equal(detail.payment.payCompany, 'KB국민은행');

      // The public page shows it paid, without the pay button.
      await page.goto(`${t.url}/pay/${bill.transSeqNo}`);
      const main = (await page.textContent('main'))!;
      assert.ok(main.includes('결제 완료') && main.includes('12월 수강료') && main.includes('130,000원'));
      assert.equal(await page.getByRole('link', { name: /결제하기/ }).count(), 0);
      if (shots) await page.screenshot({ path: join(shots, 'sunap-invoice-paid.png'), fullPage: true });
    } finally {
      await ctx.close();
    }

    // bill.paid reached the partner, signed.
    await rx.waitFor(1, 15_000);
    const hook = rx.received[0]!;
    assert.equal(hook.headers['x-service-event'], 'bill.paid');
    assert.equal(hook.json.billId, bill.uniqueId);
    assert.equal(hook.json.status, 'DONE');
    const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook.headers['x-service-signature']))!;
    const mac = createHmac('sha256', SECRET).update(`${ts}.`).update(hook.raw).digest();
    assert.ok(timingSafeEqual(mac, Buffer.from(v1!, 'hex')));
    assert.ok(Math.abs(Date.now() / 1000 - Number(ts)) <= 300);
  });

  test('the public page on a phone: pay button leads to the payment page; no accessibility violations', async () => {
    const auth = { 'x-access-token': token };
    const created = await t.post('/app/v1/sales/bill', {
      reason: '1월 수강료', amount: 120000, members: [{ studentName: '이바다', studentPhone: '01097531357' }],
    }, auth);
    assert.equal(created.body.result_code, 0, JSON.stringify(created.body));
    const bill = await eventually(async () => {
      const r = await t.get('/app/v1/sales/bill', auth);
      const b = r.body.result_data.bills.find((x: { reason: string; sendStatus: string }) => x.reason === '1월 수강료' && x.sendStatus === 'SENT');
      return b;
    }, 'the invoice sent');

    const ctx = await mobileContext(browser, { bypassCSP: true });
    const page = await ctx.newPage();
    try {
      const res = await page.goto(`${t.url}/pay/${bill.transSeqNo}`);
      assert.equal(res?.status(), 200);
      const width = await scrollWidth(page);
      assert.ok(width <= 390, `no horizontal scroll on a phone (${width}px)`);
      const v = await axeViolations(page);
      assert.deepEqual(v, [], describeViolations(v));
      if (shots) await page.screenshot({ path: join(shots, 'sunap-invoice-pending.png'), fullPage: true });
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('link', { name: /결제하기/ }).click()]);
      assert.ok((await page.textContent('main'))!.includes('120,000원'));

      await page.goto(`${t.url}/sandbox/outbox`);
      const v2 = await axeViolations(page);
      assert.deepEqual(v2, [], describeViolations(v2));
    } finally {
      await ctx.close();
    }
  });
});
