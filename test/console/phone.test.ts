import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import iconv from 'iconv-lite';
import type { Browser, Page } from 'playwright-core';
import { forEachEngine, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, mobileContext, scrollWidth, startAll } from '../helpers/browser.js';
import { newOwner, type Owner } from './support.js';

/**
 * The console on a phone (390x844), in Chromium: what matters of each list is in view without
 * scrolling sideways, the filters are folded under the search box, the CSV preview's problems are
 * visible, and the overview chart's words are readable (12 px or more) with its numbers a tap away.
 */
forEachEngine('console on a phone', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let owner: Owner;
  before(async () => {
    await startAll([startApp(engine).then((v) => (t = v)), launchBrowser().then((v) => (browser = v))]);
    owner = await newOwner(t, { points: 1000 });
    for (let i = 0; i < 3; i++) {
      const body = paymentBody({ PAY_USER_NAME: `학부모${i}`, APPROVAL_AMOUNT: String(120_000 + i * 1000), MOBILE_NO: `0101234567${i}` });
      assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
      if (i !== 1) assert.equal((await t.pay(String(body.TRANS_SEQNO), '4242424242424242')).approved, true);
    }
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signedIn(): Promise<Page> {
    const ctx = await mobileContext(browser, { bypassCSP: true });
    const page = await ctx.newPage();
    await page.goto(`${t.url}/console/login`);
    await page.getByLabel('이메일').fill(owner.email);
    await page.getByLabel('비밀번호').fill(owner.password);
    await Promise.all([page.waitForURL(`${t.url}/console`), page.getByRole('button', { name: '로그인' }).click()]);
    return page;
  }

  /** The element lies inside the phone's first screen (no sideways or downward scrolling). */
  async function inView(page: Page, selector: string, what: string) {
    const box = await page.locator(selector).first().boundingBox();
    assert.ok(box, `${what}: shown`);
    assert.ok(box.x >= 0 && box.x + box.width <= 390 && box.y + box.height <= 844, `${what}: in the first screen (${JSON.stringify(box)})`);
  }

  test('payments and invoices: name, amount, state and time of the newest in the first screen; filters folded; no sideways scrolling', async () => {
    const page = await signedIn();
    try {
      await page.goto(`${t.url}/console/payments`);
      const fold = page.locator('details.filter-fold');
      assert.equal(await fold.getAttribute('open'), null, 'the filters start folded');
      assert.equal(await page.getByLabel('상태').isVisible(), false);
      const row = 'table.list tbody tr:first-child';
      await inView(page, `${row} td:nth-child(1)`, 'payer');
      await inView(page, `${row} td:nth-child(2)`, 'amount');
      await inView(page, `${row} td:nth-child(3)`, 'state');
      await inView(page, `${row} td:nth-child(4)`, 'time');
      const first = (await page.locator(row).textContent())!;
      assert.ok(first.includes('학부모2') && first.includes('122,000원'), first);
      assert.ok(await scrollWidth(page) <= 390);
      // Unfolded with one tap, and open by itself while a filter is in use.
      await fold.locator('summary').click();
      assert.equal(await page.getByLabel('상태').isVisible(), true);
      await page.goto(`${t.url}/console/payments?state=STORE_REQUEST`);
      assert.notEqual(await page.locator('details.filter-fold').getAttribute('open'), null);
      assert.ok((await page.locator('details.filter-fold summary').textContent())!.includes('1개 적용 중'));
      const v = await axeViolations(page);
      assert.equal(v.length, 0, describeViolations(v));

      const account = (await t.app.sunap.invoicing.team.account(owner.accountId))!;
      await t.app.sunap.invoicing.invoices.create(account, { reason: '12월 수강료', amount: 150_000, members: [{ studentName: '김영희', studentPhone: '01055556666' }] });
      await page.goto(`${t.url}/console/invoices`);
      assert.equal(await page.locator('details.filter-fold').getAttribute('open'), null);
      for (const [n, what] of [[1, 'name'], [2, 'amount'], [3, 'state'], [4, 'time']] as const) await inView(page, `${row} td:nth-child(${n})`, what);
      assert.ok((await page.locator(row).textContent())!.includes('150,000원'));
      assert.ok(await scrollWidth(page) <= 390);
      assert.equal((await axeViolations(page)).length, 0);
    } finally {
      await page.context().close();
    }
  });

  test('the CSV preview: the problem column is in view beside the row number', async () => {
    const page = await signedIn();
    try {
      await page.goto(`${t.url}/console/invoices/bulk`);
      await page.locator('input[type=file]').setInputFiles({ name: 'class.csv', mimeType: 'text/csv', buffer: iconv.encode('김영희,010-1111-2222,120000\r\n박철수,0101,98000', 'cp949') });
      await page.getByLabel('청구 사유').fill('12월 수강료');
      await Promise.all([page.waitForURL(/bulk\/preview$/), page.getByRole('button', { name: '미리 보기' }).click()]);
      const bad = page.locator('table.list tbody tr.row-error td:nth-child(2)');
      assert.ok((await bad.textContent())!.includes('전화번호는 10~11자리'));
      const box = (await bad.boundingBox())!;
      assert.ok(box.x + Math.min(box.width, 120) <= 390, `the problem starts in view (${JSON.stringify(box)})`);
      assert.ok((await page.locator('h1').textContent())!.includes('미리 보기: 1명'));
    } finally {
      await page.context().close();
    }
  });

  test('the overview chart: words of 12 px or more, a legend that needs no hover, every day\'s numbers a tap away', async () => {
    const page = await signedIn();
    try {
      await page.goto(`${t.url}/console`);
      const text = (await page.locator('figure.chart').textContent())!;
      assert.ok(!/마우스|hover/i.test(text), 'no hover-only legend');
      assert.ok(text.includes('결제 (위)') && text.includes('취소 (아래)'));
      const sizes = await page.locator('figure.chart .legend li, figure.chart .chart-days li').evaluateAll((els) =>
        els.map((e) => parseFloat((globalThis as unknown as { getComputedStyle(x: unknown): { fontSize: string } }).getComputedStyle(e).fontSize)));
      assert.ok(sizes.length > 5 && sizes.every((s) => s >= 12), `font sizes ${sizes.join(',')}`);
      assert.equal(await page.locator('figure.chart svg text').count(), 0, 'no text inside the drawing (it would shrink)');
      await page.locator('figure.chart details summary').click();
      const table = (await page.locator('figure.chart details table').textContent())!;
      assert.ok(table.includes('원') && /\d+\/\d+/.test(table));
      assert.ok(await scrollWidth(page) <= 390);
      const v = await axeViolations(page);
      assert.equal(v.length, 0, describeViolations(v));
    } finally {
      await page.context().close();
    }
  });
});

