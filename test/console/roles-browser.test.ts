import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ACCESS } from '../../src/invoicing/index.js';
import { forEachEngine, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, mobileContext, scrollWidth, startAll } from '../helpers/browser.js';
import { addMember, ConsoleClient, ownerClient } from './support.js';

/**
 * Roles as a member sees them, in Chromium on a phone (390x844) and a desktop (1280x800): a
 * viewer's navigation has no Team or Settings, its payment page no cancel button, and a page
 * its role may not open is the Korean 403 page, readable without sideways scrolling, axe clean;
 * a manager gets the cancel page. Screenshots go to .tmp/roles/ (not kept in the repository).
 */
forEachEngine('console roles in the browser', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let owner: ConsoleClient;
  let viewer: ConsoleClient;
  let manager: ConsoleClient;
  let seq: string;
  before(async () => {
    await startAll([startApp(engine).then((v) => (t = v)), launchBrowser().then((v) => (browser = v))]);
    const { c } = await ownerClient(t, { points: 100 });
    owner = c;
    viewer = (await addMember(t, c, 'viewer')).c;
    manager = (await addMember(t, c, 'manager')).c;
    const body = paymentBody({ PAY_USER_NAME: '역할확인', MOBILE_NO: '01012345678' });
    assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
    seq = String(body.TRANS_SEQNO);
    assert.equal((await t.pay(seq, '4242424242424242')).approved, true);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function as(member: ConsoleClient, size: 'phone' | 'desktop'): Promise<Page> {
    const ctx = size === 'phone' ? await mobileContext(browser, { bypassCSP: true })
      : await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
    await ctx.addCookies([...member.jar].map(([name, value]) => ({ name, value, url: `${t.url}/console` })));
    return ctx.newPage();
  }

  for (const size of ['phone', 'desktop'] as const) {
    test(`${size}: a viewer sees no Team, Settings or cancel; a refused page is the Korean 403 page; a manager gets the cancel page`, async () => {
      const dir = join(process.cwd(), '.tmp', 'roles');
      mkdirSync(dir, { recursive: true });
      const page = await as(viewer, size);
      await page.goto(`${t.url}/console/payments/${seq}`);
      assert.equal(await page.locator('a[href="/console/team"]').count(), 0);
      assert.equal(await page.locator('a[href="/console/settings"]').count(), 0);
      assert.ok((await page.locator('a[href="/console/payments"]').count()) > 0);
      assert.equal(await page.locator(`a[href="/console/payments/${seq}/cancel"]`).count(), 0, 'no cancel link for a viewer');

      const refused = await page.goto(`${t.url}/console/payments/${seq}/cancel`);
      assert.equal(refused!.status(), 403);
      await assert.doesNotReject(page.getByRole('heading', { name: '권한이 없습니다' }).first().waitFor());
      assert.ok((await page.textContent('body'))!.includes('상점 소유자에게 문의해 주세요'));
      const width = size === 'phone' ? 390 : 1280;
      assert.ok((await scrollWidth(page)) <= width, 'no sideways scrolling');
      const v = await axeViolations(page);
      assert.deepEqual(v, [], describeViolations(v));
      await page.screenshot({ path: join(dir, `viewer-refused-${size}-${engine}.png`), fullPage: true });

      const m = await as(manager, size);
      await m.goto(`${t.url}/console/payments/${seq}`);
      assert.ok((await m.locator(`a[href="/console/payments/${seq}/cancel"]`).count()) > 0, 'a manager has the cancel link');
      assert.equal((await m.goto(`${t.url}/console/payments/${seq}/cancel`))!.status(), 200);
      await page.context().close();
      await m.context().close();
    });
  }

  for (const size of ['phone', 'desktop'] as const) {
    test(`${size}: the Team page says what each role may do, from the table, beside the role choice (viewer first-selected)`, async () => {
      const page = await as(owner, size);
      await page.goto(`${t.url}/console/team`);
      assert.equal(await page.locator('select#role').inputValue(), 'viewer');
      await page.getByText('역할별로 할 수 있는 일').click();
      const help = (await page.locator('details.roles-help').textContent())!;
      for (const [role, rule] of [['관리자', ACCESS['payment.cancel'].ko], ['소유자', ACCESS['team.invite'].ko], ['조회 전용', ACCESS['payments.view'].ko]] as const) {
        const line = help.split('\n').find((l) => l.startsWith(role))!;
        assert.ok(line?.includes(rule), `${role}: ${line}`);
      }
      assert.ok(!help.split('\n').find((l) => l.startsWith('조회 전용'))!.includes(ACCESS['payment.cancel'].ko), 'a viewer\'s line has no cancel');
      const width = size === 'phone' ? 390 : 1280;
      assert.ok((await scrollWidth(page)) <= width, 'no sideways scrolling');
      const v = await axeViolations(page);
      assert.deepEqual(v, [], describeViolations(v));
      await page.screenshot({ path: join(process.cwd(), '.tmp', 'roles', `team-roles-${size}-${engine}.png`), fullPage: true });
      await page.context().close();
    });
  }
});
