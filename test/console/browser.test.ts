import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { forEachEngine, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, mobileContext, scrollWidth, startAll } from '../helpers/browser.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { newOwner, recipientsCsv, submitSignIn, type Owner } from './support.js';

/**
 * SUNAP_CONSOLE_SCREENSHOTS=docs/console keeps a phone (390 px) and a desktop (1280 px)
 * screenshot of every console page (taken on SQLite), the ones docs/console.md shows.
 */
const shots = process.env.SUNAP_CONSOLE_SCREENSHOTS ? resolve(process.env.SUNAP_CONSOLE_SCREENSHOTS) : null;

/** A screenshot of the page from the top, at most 2,400 CSS pixels tall (a long list shows its first rows). */
async function shot(page: Page, path: string) {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width: size.width, height: Math.min(height, 2400) } });
}

/** The phone of mobileContext at a device scale of 1, so the committed screenshots stay small. */
function phoneContext(browser: Browser) {
  return browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
}

forEachEngine('console in Chromium', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let rx: Receiver;
  let owner: Owner;

  before(async () => {
    rx = new Receiver();
    await startAll([startApp(engine).then((v) => (t = v)), launchBrowser().then((v) => (browser = v)), rx.start()]);
    owner = await newOwner(t, { points: 3000 });
  });
  after(async () => {
    await browser?.close();
    await rx?.close();
    await t?.close();
  });

  async function payment(over: Record<string, unknown>, card?: string) {
    const body = paymentBody({ CONFIRM_URL: `${rx.url}/cb`, ...over });
    assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
    if (card) assert.equal((await t.pay(String(body.TRANS_SEQNO), card)).approved, true);
    return String(body.TRANS_SEQNO);
  }

  async function signIn(page: Page) {
    await page.goto(`${t.url}/console`);
    await page.waitForURL(/\/console\/login/);
    await submitSignIn(page, t.url, owner.email, owner.password);
  }

  test('sign in → search by phone and by card last 4 → timeline → cancel → state and callback visible (no JavaScript needed)', async () => {
    await payment({ MOBILE_NO: '01033335555', PAY_USER_NAME: '다른 고객' }, '4242424242424242');
    const seq = await payment({ MOBILE_NO: '01098761234', PAY_USER_NAME: '김고객', APPROVAL_AMOUNT: '55000' }, '5555555555554444');
    const ctx = await mobileContext(browser);
    await ctx.route('**/*', (route) => route.continue());
    const page = await ctx.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy|Refused/i.test(m.text())) blocked.push(m.text()); });
    try {
      await signIn(page);
      await page.getByRole('heading', { name: '개요' }).waitFor();
      await page.getByRole('link', { name: '결제', exact: true }).click();
      const search = async (q: string) => {
        await page.getByRole('searchbox', { name: '검색' }).fill(q);
        await Promise.all([page.waitForURL(/\/console\/payments\?/), page.getByRole('button', { name: '검색' }).click()]);
        return page.locator('table.list tbody tr');
      };
      let rows = await search('010-9876-1234');
      assert.equal(await rows.count(), 1);
      assert.ok((await rows.first().textContent())!.includes('김고객'));
      rows = await search('4444');
      assert.equal(await rows.count(), 1);
      await Promise.all([page.waitForURL(new RegExp(`/console/payments/${seq}$`)), page.getByRole('link', { name: seq }).click()]);
      const timeline = page.locator('ol.timeline');
      for (const s of ['결제 요청됨', '결제창: 승인', '5555-55**-****-4444', '결제 승인']) assert.ok((await timeline.textContent())!.includes(s), `timeline: ${s}`);
      await eventually(async () => {
        await page.reload();
        return (await page.locator('ol.timeline').textContent())!.includes('결과 알림(콜백) 1회차: 성공');
      }, 'the callback on the timeline');

      await Promise.all([page.waitForURL(/\/cancel$/), page.getByRole('link', { name: /결제 취소/ }).click()]);
      await page.getByLabel('취소 사유').fill('고객 요청');
      await page.getByLabel(/전액 취소를 확인합니다/).check();
      await Promise.all([page.waitForURL(/notice=canceled/), page.getByRole('button', { name: '결제 취소하기' }).click()]);
      assert.ok((await page.getByRole('status').textContent())!.includes('결제를 취소했습니다'));
      assert.equal((await page.locator('p .badge').first().textContent())!.trim(), '결제 취소');
      const text = (await page.locator('ol.timeline').textContent())!;
      assert.ok(text.includes('결제 취소 완료') && text.includes('고객 요청') && text.includes('결과 알림(콜백) 1회차: 성공'));
      assert.ok(await scrollWidth(page) <= 390, 'no sideways scrolling on a phone');
      assert.deepEqual(blocked, [], 'nothing blocked by the CSP');
      const s = await t.gw('searchPayment', { TRANS_SEQNO: seq });
      assert.equal(s.body.result_data.APPROVE_STATUS, 'CANCEL_COMPLETE');
    } finally {
      await ctx.close();
    }
  });

  test('every page: axe-core finds no violations, a phone needs no sideways scrolling (and the screenshots)', { timeout: 240_000 }, async () => {
    // Data for the pages: payments of the last days, a CSV upload of 50 (through the real form), one paid.
    for (let i = 0; i < 6; i++) await payment({ PAY_USER_NAME: `고객${i}`, APPROVAL_AMOUNT: String(30_000 + i * 7_000) }, i % 3 === 2 ? undefined : '4242424242424242');
    await t.app.sunap.invoicing.templates.create(owner.accountId, { name: '월 수강료', reason: '12월 수강료', description: '10일까지 납부 부탁드립니다', amount: 128_000, sendChannel: 'ALIMTALK' });

    if (shots && engine === 'sqlite') mkdirSync(shots, { recursive: true });
    const phone = await phoneContext(browser);
    const page = await phone.newPage();
    const contexts: BrowserContext[] = [phone];
    try {
      await signIn(page);
      await page.goto(`${t.url}/console/invoices/bulk`);
      await page.locator('input[type=file]').setInputFiles({ name: 'class.csv', mimeType: 'text/csv', buffer: Buffer.from(recipientsCsv(50, '34'), 'utf8') });
      await page.getByLabel('청구 사유').fill('12월 수강료');
      await page.getByLabel('웹훅 주소 (선택)').fill(`${rx.url}/hooks`);
      await Promise.all([page.waitForURL(/bulk\/preview$/), page.getByRole('button', { name: '미리 보기' }).click()]);
      const previewUrl = page.url();
      void previewUrl;
      assert.ok((await page.getByRole('heading', { level: 1 }).textContent())!.includes('50명'));
      const visit = async (name: string) => {
        const v = await axeViolations(page);
        assert.equal(v.length, 0, `${name}:\n${describeViolations(v)}`);
        const w = await scrollWidth(page);
        assert.ok(w <= 390, `${name}: no sideways scrolling on a phone (${w}px)`);
        if (shots && engine === 'sqlite') await shot(page, join(shots, `${name}-phone.png`));
      };
      await visit('invoice-preview');
      await Promise.all([page.waitForURL(/notice=created/), page.getByRole('button', { name: /50명에게 보내기/ }).click()]);
      const first = await eventually(async () => {
        const rows = await t.app.sunap.database.db.selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).execute();
        return rows.length === 50 && rows.every((r) => r.send_status === 'SENT') ? rows.find((r) => r.receiver_name === '학생0') : undefined;
      }, 'all 50 SENT', 30_000);
      // A store endpoint beside the invoices' webhookUrl, and one that cannot be reached (its delivery waits for a retry).
      await t.app.sunap.invoicing.endpoints.create(t.storeCode, { url: `${rx.url}/store-hooks`, events: ['bill.paid', 'payment.approved'] });
      await t.app.sunap.invoicing.endpoints.create(t.storeCode, { url: 'https://127.0.0.1:9/down', events: ['bill.paid'] });
      await t.pay(first.trans_seqno);
      await rx.waitFor(2);
      const delivery = await eventually(async () => t.app.sunap.database.db.selectFrom('deliveries').select('id').where('bill_id', '=', first.unique_id).where('endpoint_id', 'is', null).executeTakeFirst(), 'the invoice webhook delivery');

      const pages: [string, string][] = [
        ['overview', '/console'], ['payments', '/console/payments'], ['invoices', '/console/invoices'],
        ['invoice-detail', `/console/invoices/${first.unique_id}`], ['payment-detail', `/console/payments/${first.trans_seqno}`],
        ['payment-cancel', `/console/payments/${first.trans_seqno}/cancel`], ['invoice-new', '/console/invoices/new'], ['invoice-bulk', '/console/invoices/bulk'],
        ['templates', '/console/templates'], ['template-new', '/console/templates/new'], ['points', '/console/points'], ['team', '/console/team'],
        ['settings', '/console/settings'], ['account', '/console/account'], ['not-found', '/console/payments/NO-SUCH'],
        ['deliveries', '/console/deliveries'], ['delivery-detail', `/console/deliveries/${delivery.id}`], ['webhook-endpoints', '/console/deliveries/endpoints'],
      ];
      await eventually(async () => (await t.app.sunap.database.db.selectFrom('webhook_events').select('status').where('invoice_id', '=', first.id).executeTakeFirst())?.status === 'DELIVERED', 'webhook delivered', 30_000)
        .catch(async (err) => {
          const ev = await t.app.sunap.database.db.selectFrom('webhook_events').selectAll().where('invoice_id', '=', first.id).execute();
          const inv = await t.app.sunap.database.db.selectFrom('invoices').select(['webhook_url', 'status']).where('id', '=', first.id).executeTakeFirst();
          const at = await t.app.sunap.database.db.selectFrom('outbound_attempts').selectAll().where('target', '=', 'WEBHOOK').execute();
          throw new Error(`${(err as Error).message}: ${JSON.stringify({ ev, inv, at })}`);
        });
      for (const [name, path] of pages) {
        await page.goto(`${t.url}${path}`);
        await visit(name);
      }
      // The team page right after an invite (the link shown once).
      await page.goto(`${t.url}/console/team`);
      await page.getByLabel('이메일').fill('new-member@example.com');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '초대 링크 만들기' }).click()]);
      const link = (await page.locator('code.secret').textContent())!;
      await visit('team-invited');
      // A password reset link for a member (here the owner's own row), shown once.
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: /비밀번호 재설정 링크/ }).first().click()]);
      const resetLink = (await page.locator('code.secret').textContent())!;
      assert.match(resetLink, /\/console\/reset\//);
      await visit('team-reset-link');

      // Pages for someone not signed in: the invite and the sign-in page.
      const anon = await phoneContext(browser);
      contexts.push(anon);
      const ap = await anon.newPage();
      for (const [name, url] of [['invite', link], ['sign-in', `${t.url}/console/login`], ['forgot', `${t.url}/console/forgot`], ['reset', resetLink]] as const) {
        await ap.goto(url);
        const v = await axeViolations(ap);
        assert.equal(v.length, 0, `${name}:\n${describeViolations(v)}`);
        assert.ok(await scrollWidth(ap) <= 390);
        if (shots && engine === 'sqlite') await shot(ap, join(shots, `${name}-phone.png`));
      }

      // Desktop width: the same pages, one column wider, no violations either.
      const desk = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
      contexts.push(desk);
      await desk.addCookies(await phone.cookies());
      const dp = await desk.newPage();
      for (const [name, path] of [...pages, ['sign-in', '/console/login'], ['forgot', '/console/forgot'], ['reset', new URL(resetLink).pathname]] as [string, string][]) {
        if (name === 'sign-in') await desk.clearCookies();
        await dp.goto(`${t.url}${path}`);
        const v = await axeViolations(dp);
        assert.equal(v.length, 0, `${name} (desktop):\n${describeViolations(v)}`);
        if (shots && engine === 'sqlite') await shot(dp, join(shots, `${name}-desktop.png`));
      }
    } finally {
      for (const c of contexts) await c.close();
    }
  });
});
