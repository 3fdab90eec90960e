/**
 * The pages of a payment being confirmed and of a late charge refunded, in Chromium on a phone
 * (390x844) and a desktop (1280x800), live mode against the Toss fake: a customer who pays while
 * an earlier approval is being confirmed reads so (202) on the payment page, and the console's
 * payment detail shows the late charge refunded automatically. axe-core finds no violations
 * (bypassing the CSP only to inject it) and a phone needs no sideways scrolling. SUNAP_CONSOLE_SCREENSHOTS=docs/console and
 * SUNAP_CHECKOUT_SCREENSHOTS=docs/checkout keep the screenshots docs/reliability.md shows (SQLite).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { LATE_CHARGE_FIRST_LOOKUP_SECONDS } from '../../src/gateway/index.js';
import { newOwner, type Owner } from '../console/support.js';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, scrollWidth } from '../helpers/browser.js';
import { eventually } from '../helpers/wait.js';
import { payOnPage, withFakes, withLiveApp } from './support.js';

const consoleShots = process.env.SUNAP_CONSOLE_SCREENSHOTS ? resolve(process.env.SUNAP_CONSOLE_SCREENSHOTS) : null;
const checkoutShots = process.env.SUNAP_CHECKOUT_SCREENSHOTS ? resolve(process.env.SUNAP_CHECKOUT_SCREENSHOTS) : null;
const VIEWPORTS = [
  { name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  { name: 'desktop', viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
] as const;

async function shot(page: Page, path: string) {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width: size.width, height: Math.min(height, 2400) } });
}

forEachEngine('live: a payment being confirmed and a late charge refunded, in Chromium', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f);
  let browser: Browser;
  let owner: Owner;
  before(async () => {
    browser = await launchBrowser();
    owner = await newOwner(t);
    if (engine === 'sqlite') for (const dir of [consoleShots, checkoutShots]) if (dir) mkdirSync(dir, { recursive: true });
  });
  after(async () => browser?.close());
  const db = () => t.app.sunap.database.db;

  async function newPayment() {
    const body = paymentBody({ PAY_USER_NAME: '김하늘', REQUEST_REASON: '12월 수강료' });
    const r = await t.gw('requestPayment', body);
    const payment = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, body.TRANS_SEQNO as string))!;
    return { body, payment, redirect: r.body.result_data.REDIRECT_URL as string };
  }

  test('paying while an earlier approval is being confirmed: the page says so, on a phone and a desktop', { timeout: 120_000 }, async () => {
    for (const vp of VIEWPORTS) {
      const { payment, redirect } = await newPayment();
      f.toss.failLookups = 1;
      assert.equal((await payOnPage(t, redirect, '4000000000003220')).status, 202);
      const context = await browser.newContext({ viewport: vp.viewport, isMobile: vp.isMobile, hasTouch: vp.hasTouch, deviceScaleFactor: 1, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
      try {
        const page = await context.newPage();
        await page.goto(redirect.replace(/^https:\/\/pay\.example\.com/, t.url));
        await page.getByLabel('카드번호', { exact: true }).fill('4242 4242 4242 4242');
        await page.getByLabel('유효기간 (MM/YY)').fill('12/35');
        await page.getByLabel('비밀번호 앞 2자리').fill('12');
        await page.getByLabel('생년월일 6자리 또는 사업자등록번호 10자리').fill('920817');
        const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/pay')), page.getByRole('button', { name: /결제하기/ }).click()]);
        assert.equal(answer.status(), 202);
        await page.waitForLoadState('load');
        const alert = await page.getByRole('alert').textContent();
        assert.match(alert ?? '', /앞선 결제 시도의 결과를 확인하고 있습니다\. 이 카드로는 결제하지 않았습니다/);
        const v = await axeViolations(page);
        assert.equal(v.length, 0, describeViolations(v));
        if (vp.name === 'phone') assert.ok(await scrollWidth(page) <= 390, 'no sideways scrolling');
        if (checkoutShots && engine === 'sqlite') await shot(page, join(checkoutShots, `confirming-${vp.name}.png`));
      } finally {
        await context.close();
      }
      assert.equal(f.toss.requests.filter((r) => r.path === '/v1/payments/key-in' && r.json?.cardNumber === '4242424242424242').length, 0, 'the second card never reached Toss');
      await t.app.sunap.clock.advance(Math.ceil(t.app.sunap.gateway.staleAttemptMs / 1000) + 1);
      await t.app.sunap.gateway.reconcile(payment.id);
    }
  });

  test('the console\'s payment detail shows a late charge refunded automatically, on a phone and a desktop', { timeout: 120_000 }, async () => {
    const { body, payment, redirect } = await newPayment();
    assert.equal((await payOnPage(t, redirect, '4000000000004004')).status, 202);
    const first = await db().selectFrom('payment_attempts').select('id').where('payment_id', '=', payment.id).executeTakeFirstOrThrow();
    await t.app.sunap.clock.advance(Math.ceil(t.app.sunap.gateway.staleAttemptMs / 1000) + 1);
    await t.app.sunap.gateway.reconcile(payment.id);
    assert.equal((await payOnPage(t, redirect, '4242424242424242')).status, 303);
    f.toss.bookLate(first.id);
    await t.app.sunap.clock.advance(LATE_CHARGE_FIRST_LOOKUP_SECONDS);
    await eventually(async () => (await db().selectFrom('payment_attempts').select('status').where('id', '=', first.id).executeTakeFirstOrThrow()).status === 'REFUNDED', 'refunded');
    for (const vp of VIEWPORTS) {
      const context = await browser.newContext({ viewport: vp.viewport, isMobile: vp.isMobile, hasTouch: vp.hasTouch, deviceScaleFactor: 1, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
      try {
        const page = await context.newPage();
        await page.goto(`${t.url}/console/login`);
        await page.getByLabel('이메일').fill(owner.email);
        await page.getByLabel('비밀번호').fill(owner.password);
        await Promise.all([page.waitForURL(/\/console$/), page.getByRole('button', { name: '로그인' }).click()]);
        await page.goto(`${t.url}/console/payments/${encodeURIComponent(String(body.TRANS_SEQNO))}`);
        const timeline = await page.locator('ol.timeline').textContent();
        assert.match(timeline ?? '', /늦게 확인된 승인 자동 환불/);
        assert.match(timeline ?? '', /카드 승인 시도: 늦게 확인된 승인, 자동 환불됨/);
        const v = await axeViolations(page);
        assert.equal(v.length, 0, describeViolations(v));
        if (vp.name === 'phone') assert.ok(await scrollWidth(page) <= 390, 'no sideways scrolling');
        if (consoleShots && engine === 'sqlite') await shot(page, join(consoleShots, `payment-late-refund-${vp.name}.png`));
        await page.goto(`${t.url}/console/settings`);
        assert.match(await page.locator('main').textContent() ?? '', /Sunap \(자동\)\s*늦게 확인된 승인 자동 환불/);
        const va = await axeViolations(page);
        assert.equal(va.length, 0, describeViolations(va));
        // The audit log is the page's last section: its own screenshot.
        if (consoleShots && engine === 'sqlite') await page.locator('section[aria-labelledby=audit-title]').screenshot({ path: join(consoleShots, `audit-late-refund-${vp.name}.png`) });
      } finally {
        await context.close();
      }
    }
  });
});
