import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { forEachEngine, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, scrollWidth, startAll } from '../helpers/browser.js';

/**
 * The checkout in Chromium, on a phone (390x844) and a desktop (1280x800): every method through
 * the page and the sandbox's window, the virtual account page and its deposit, a closed window,
 * RETURN_URL after the receipt; axe-core on each page, no sideways scrolling on a phone, nothing
 * blocked by the CSP. SUNAP_CHECKOUT_SCREENSHOTS=docs/checkout keeps the screenshots
 * docs/reference.md shows (taken on SQLite).
 */
const shots = process.env.SUNAP_CHECKOUT_SCREENSHOTS ? resolve(process.env.SUNAP_CHECKOUT_SCREENSHOTS) : null;

const VIEWPORTS = [
  { name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  { name: 'desktop', viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
] as const;

async function startMerchant(): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="ko"><title>shop</title><h1>주문 완료</h1></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, hits, server };
}

forEachEngine('checkout in Chromium', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let merchant: Awaited<ReturnType<typeof startMerchant>>;
  let allMethods: string;

  before(async () => {
    await startAll([startApp(engine).then((v) => (t = v)), launchBrowser().then((v) => (browser = v)), startMerchant().then((v) => (merchant = v))]);
    // A store that offers every method.
    allMethods = await t.addStore();
    await t.app.sunap.database.db.insertInto('store_processors').values({
      store_code: allMethods, processor: 'sandbox', way: 'checkout', methods: JSON.stringify(['CARD', 'EASY_PAY', 'TRANSFER', 'VIRTUAL_ACCOUNT', 'MOBILE_PHONE']), updated_at: 0,
    }).execute();
  });
  after(async () => {
    await browser?.close();
    merchant?.server.close();
    await t?.close();
  });

  async function create(over: Record<string, unknown> = {}) {
    const r = await t.gw('requestPayment', paymentBody({ STORE_CODE: allMethods, ...over }));
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    return r.body.result_data.REDIRECT_URL as string;
  }

  async function open(vp: (typeof VIEWPORTS)[number]): Promise<{ ctx: BrowserContext; page: Page; blocked: string[] }> {
    const ctx = await browser.newContext({ viewport: vp.viewport, deviceScaleFactor: 1, isMobile: vp.isMobile, hasTouch: vp.hasTouch, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: false });
    const page = await ctx.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy|Refused/i.test(m.text())) blocked.push(m.text()); });
    return { ctx, page, blocked };
  }

  /** axe-core in a context of its own (it needs the CSP bypassed), the same page at the same width. */
  async function check(url: string, vp: (typeof VIEWPORTS)[number], name: string) {
    const ctx = await browser.newContext({ viewport: vp.viewport, deviceScaleFactor: 1, isMobile: vp.isMobile, hasTouch: vp.hasTouch, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
    try {
      const page = await ctx.newPage();
      await page.goto(url);
      const v = await axeViolations(page);
      assert.equal(v.length, 0, `${name} (${vp.name}):\n${describeViolations(v)}`);
      if (vp.name === 'phone') assert.ok(await scrollWidth(page) <= 390, `${name}: no sideways scrolling on a phone`);
      if (shots && engine === 'sqlite') {
        const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
        await page.screenshot({ path: join(shots, `${name}-${vp.name}.png`), fullPage: true, clip: { x: 0, y: 0, width: vp.viewport.width, height: Math.min(height, 2400) } });
      }
    } finally {
      await ctx.close();
    }
  }

  for (const vp of VIEWPORTS) {
    test(`${vp.name}: a card through the window, then the merchant's RETURN_URL; every page accessible`, async () => {
      const url = await create({ RETURN_DISPLAY_YN: 'Y', RETURN_URL: `${merchant.url}/done?order=7`, ITEMS: [{ name: '피아노 레슨 4회', unitPrice: 128000 }] });
      await check(url, vp, 'methods');
      const { ctx, page, blocked } = await open(vp);
      try {
        await page.goto(url);
        assert.ok((await page.textContent('main'))!.includes('128,000원'));
        await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: /^카드/ }).click()]);
        await check(page.url(), vp, 'sandbox-window');
        await page.getByLabel(/KB국민카드 · 승인/).check();
        await page.getByLabel('할부').selectOption('02');
        await Promise.all([page.waitForURL(new RegExp(`^${merchant.url}/done`)), page.getByRole('button', { name: '128,000원 결제 승인' }).click()]);
        const landed = new URL(page.url());
        assert.deepEqual([landed.searchParams.get('order'), landed.searchParams.get('RESULT_CODE'), landed.searchParams.get('APPROVAL_AMOUNT')], ['7', '0000', '128000']);
        await page.goBack();
        await page.goBack();
        await page.goto(url);
        const receipt = (await page.textContent('main'))!;
        for (const s of ['결제가 완료되었습니다', 'KB국민카드', '5555-55**-****-4444', '2개월']) assert.ok(receipt.includes(s), s);
        await check(url, vp, 'receipt');
        assert.deepEqual(blocked, []);
      } finally {
        await ctx.close();
      }
    });

    test(`${vp.name}: an easy pay, a transfer and a phone payment; a closed window shows why and lets the customer choose again`, async () => {
      const { ctx, page, blocked } = await open(vp);
      try {
        const url = await create();
        await page.goto(url);
        await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: /^카드/ }).click()]);
        await Promise.all([page.waitForURL(/\/checkout\?tid=|\/return\/fail/), page.getByRole('button', { name: '결제창 닫기' }).click()]);
        await page.getByRole('alert').waitFor();
        assert.ok((await page.getByRole('alert').textContent())!.includes('결제를 취소했습니다'));
        if (vp.name === 'phone') assert.ok(await scrollWidth(page) <= 390);
        await check(page.url(), vp, 'window-closed');
        await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: /^간편결제/ }).click()]);
        await page.getByLabel('카카오페이').check();
        await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '128,000원 결제 승인' }).click()]);
        assert.ok((await page.textContent('main'))!.includes('카카오페이'));

        for (const [button, field, label, shown] of [[/^계좌이체/, '출금 은행', '우리은행', '계좌이체'], [/^휴대폰/, null, null, '휴대폰']] as const) {
          await page.goto(await create());
          await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: button }).click()]);
          if (field) await page.getByLabel(field).selectOption({ label: label! });
          await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '128,000원 결제 승인' }).click()]);
          const text = (await page.textContent('main'))!;
          assert.ok(text.includes('결제가 완료되었습니다') && text.includes(shown) && (!label || text.includes(label)), shown);
        }
        assert.deepEqual(blocked, []);
      } finally {
        await ctx.close();
      }
    });

    test(`${vp.name}: a virtual account: issued, shown (and shown again), deposited`, async () => {
      const { ctx, page, blocked } = await open(vp);
      try {
        const url = await create();
        await page.goto(url);
        await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: /^가상계좌/ }).click()]);
        await page.getByLabel('입금할 은행').selectOption({ label: '하나은행' });
        await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '가상계좌 발급받기' }).click()]);
        await page.getByRole('heading', { name: '가상계좌로 입금해 주세요' }).waitFor();
        const account = (await page.locator('.account-number').textContent())!.trim();
        assert.match(account, /^\d{14}$/);
        await check(url, vp, 'virtual-account');
        await page.goto(url);
        assert.equal((await page.locator('.account-number').textContent())!.trim(), account, 'the customer can come back to it');
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '128,000원 입금하기' }).click()]);
        await page.getByRole('heading', { name: '결제가 완료되었습니다' }).waitFor();
        const text = (await page.textContent('main'))!;
        assert.ok(text.includes('가상계좌') && text.includes(`하나은행 ${account}`) && text.includes('입금일시'));
        assert.deepEqual(blocked, []);
      } finally {
        await ctx.close();
      }
    });
  }
});
