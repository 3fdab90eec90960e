import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { forEachEngine, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { axeViolations, computedStyle, describeViolations, launchBrowser, startAll, mobileContext, scrollWidth } from '../helpers/browser.js';

/** Set SUNAP_SCREENSHOTS=/tmp to keep phone-sized screenshots of the pages for a human look. */
const shots = process.env.SUNAP_SCREENSHOTS;

/** A merchant's RETURN_URL: a plain HTTP page on 127.0.0.1 that records where the browser landed. */
async function startMerchant(): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="ko"><title>shop</title><h1>주문 완료</h1></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, hits, server };
}

async function fillCard(page: Page, card: { number: string; installment?: string }) {
  await page.getByLabel('카드번호', { exact: true }).fill(card.number);
  await page.getByLabel('유효기간 (MM/YY)').fill('12/35');
  await page.getByLabel('비밀번호 앞 2자리').fill('12');
  await page.getByLabel('생년월일 6자리 또는 사업자등록번호 10자리').fill('920817');
  if (card.installment) await page.getByLabel('할부 기간').selectOption(card.installment);
}

forEachEngine('payment page in Chromium', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let merchant: Awaited<ReturnType<typeof startMerchant>>;

  before(async () => {
    await startAll([startApp(engine, {}, { keyIn: true }).then((v) => (t = v)), launchBrowser().then((v) => (browser = v)), startMerchant().then((v) => (merchant = v))]);
  });
  after(async () => {
    await browser?.close();
    merchant?.server.close();
    await t?.close();
  });

  async function create(over: Record<string, unknown> = {}) {
    const body = paymentBody(over);
    const r = await t.gw('requestPayment', body);
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    return { body, url: r.body.result_data.REDIRECT_URL as string };
  }

  test('fill the form on a phone, a decline first, then pay and see the receipt', async () => {
    const { body, url } = await create({ INFO_MESSAGE: '수업료는 매월 10일까지 납부해 주세요.' });
    const ctx = await mobileContext(browser);
    const page = await ctx.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy|Refused/i.test(m.text())) blocked.push(m.text()); });
    try {
      const res = await page.goto(url);
      assert.equal(res?.status(), 200);
      assert.ok((await page.textContent('main'))!.includes('128,000원'));
      // The stylesheet loads under the page's CSP.
      assert.equal(await computedStyle(page, 'button[type=submit]', 'backgroundColor'), 'rgb(11, 87, 208)');
      const width = await scrollWidth(page);
      assert.ok(width <= 390, `no horizontal scroll on a phone (${width}px)`);
      if (shots) await page.screenshot({ path: join(shots, 'sunap-form.png'), fullPage: true });

      await fillCard(page, { number: '4000 0000 0000 0002' });
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: /결제하기/ }).click()]);
      await page.getByRole('alert').waitFor();
      assert.ok((await page.getByRole('alert').textContent())!.includes('카드사에서 승인을 거절했습니다'));
      assert.equal(await page.getByLabel('카드번호', { exact: true }).inputValue(), '', 'the card number is not filled back in');
      if (shots) await page.screenshot({ path: join(shots, 'sunap-declined.png'), fullPage: true });

      await fillCard(page, { number: '4242 4242 4242 4242', installment: '03' });
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: /결제하기/ }).click()]);
      await page.getByRole('heading', { name: '결제가 완료되었습니다' }).waitFor();
      const text = (await page.textContent('main'))!;
      for (const s of ['4242-42**-****-4242', '신한카드', '3개월', '128,000원', '김대표']) assert.ok(text.includes(s), `receipt shows ${s}`);
      assert.equal(await page.locator('form').count(), 0);
      if (shots) await page.screenshot({ path: join(shots, 'sunap-receipt.png'), fullPage: true });
      assert.deepEqual(blocked, [], 'nothing blocked by the CSP');

      const s = await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO });
      assert.equal(s.body.result_data.APPROVE_STATUS, 'APPROVE_COMPLETE');
    } finally {
      await ctx.close();
    }
  });

  test('RETURN_DISPLAY_YN=Y: the browser lands on RETURN_URL with the five parameters, its query kept', async () => {
    const { body, url } = await create({ RETURN_DISPLAY_YN: 'Y', RETURN_URL: `${merchant.url}/return?order=7`, TEMP_VALUE: 'cart-7' });
    const ctx = await mobileContext(browser);
    const page = await ctx.newPage();
    try {
      await page.goto(url);
      await fillCard(page, { number: '5555555555554444' });
      await Promise.all([page.waitForURL(`${merchant.url}/return?**`), page.getByRole('button', { name: /결제하기/ }).click()]);
      const landed = new URL(page.url());
      assert.equal(landed.origin + landed.pathname, `${merchant.url}/return`);
      assert.equal(landed.searchParams.get('order'), '7');
      assert.equal(landed.searchParams.get('RESULT_CODE'), '0000');
      assert.equal(landed.searchParams.get('RESULT_MSG'), '승인되었습니다');
      assert.equal(landed.searchParams.get('TRANS_SEQNO'), body.TRANS_SEQNO);
      assert.equal(landed.searchParams.get('APPROVAL_AMOUNT'), '128000');
      assert.equal(landed.searchParams.get('TEMP_VALUE'), 'cart-7');
      assert.equal(merchant.hits.filter((h) => h.startsWith('/return')).length, 1, merchant.hits.join(', '));
      assert.equal(await page.textContent('h1'), '주문 완료');
    } finally {
      await ctx.close();
    }
  });

  test('axe-core finds no violations on the form, the form with errors, the receipt and a state page', async () => {
    const shop = await create({
      orderType: 'SHOP', APPROVAL_AMOUNT: '120000', INFO_MESSAGE: '배송은 3일 안에 시작됩니다.',
      ITEMS: [
        { name: '피아노 교재', unitPrice: 15000, qty: 2, publisher: '음악출판사' },
        { name: '개인 레슨', unitPrice: 100000, discountAmount: 10, discountUnit: 'RATE' },
      ],
    });
    const ctx = await mobileContext(browser, { bypassCSP: true });
    const page = await ctx.newPage();
    const check = async (what: string) => {
      const v = await axeViolations(page);
      assert.equal(v.length, 0, `${what}:\n${describeViolations(v)}`);
    };
    try {
      await page.goto(shop.url);
      await check('form (SHOP)');
      const box = await page.locator('table.items').boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `item table fits the phone: ${JSON.stringify(box)}`);
      assert.ok(await scrollWidth(page) <= 390, 'no horizontal scroll');
      if (shots) await page.screenshot({ path: join(shots, 'sunap-shop.png'), fullPage: true });

      // Filled (the inputs are `required`) but wrong in four ways only the server checks.
      await page.getByLabel('카드번호', { exact: true }).fill('1234');
      await page.getByLabel('유효기간 (MM/YY)').fill('13/30');
      await page.getByLabel('비밀번호 앞 2자리').fill('1');
      await page.getByLabel('생년월일 6자리 또는 사업자등록번호 10자리').fill('123');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: /결제하기/ }).click()]);
      await page.getByRole('alert').waitFor();
      assert.equal(await page.locator('[aria-invalid="true"]').count(), 4);
      await check('form with errors');
      if (shots) await page.screenshot({ path: join(shots, 'sunap-errors.png'), fullPage: true });

      await fillCard(page, { number: '4242424242424242', installment: '12' });
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: /결제하기/ }).click()]);
      await page.getByRole('heading', { name: '결제가 완료되었습니다' }).waitFor();
      await check('receipt');

      const c = await t.gw('requestPaymentCancel', { TRANS_SEQNO: shop.body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '120000', MOBILE_NO: '01012345678' });
      assert.equal(c.body.result_data.RESULT_CODE, '0000');
      await page.reload();
      await page.getByRole('heading', { name: '취소된 결제입니다' }).waitFor();
      await check('cancelled state page');

      await page.goto(`${t.url}/checkout?tid=nope&token=nope`);
      await check('not found page');
    } finally {
      await ctx.close();
    }
  });
});
