import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { forEachEngine, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, scrollWidth } from '../helpers/browser.js';
import { consoleInChromium, submitSignIn, type Owner } from './support.js';

/**
 * Forms that teach, in Chromium (docs/console.md, "Forms"): on a phone (390x844) a refused form
 * comes back with each problem beside its field, read out with it (aria-describedby), the
 * values as typed, and no axe violation. SUNAP_CONSOLE_SCREENSHOTS=docs/console keeps a phone
 * and a desktop screenshot of each refused form (on SQLite), the ones docs/console.md shows.
 */
const shots = process.env.SUNAP_CONSOLE_SCREENSHOTS ? resolve(process.env.SUNAP_CONSOLE_SCREENSHOTS) : null;

async function shot(page: Page, path: string) {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width: size.width, height: Math.min(height, 2400) } });
}

const context = (browser: Browser, width: number, height: number) =>
  browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1, isMobile: width < 500, hasTouch: width < 500, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });

forEachEngine('console forms in Chromium', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let owner: Owner;

  before(async () => {
    ({ t, browser, owner } = await consoleInChromium(engine, 3000));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** The problem shown for `id`: visible, and the input is described by it and marked invalid. */
  async function problemBeside(page: Page, id: string): Promise<string> {
    const error = page.locator(`#${id}-error`);
    assert.ok(await error.isVisible(), `the problem of ${id} is visible`);
    const input = page.locator(`#${id}`);
    assert.match((await input.getAttribute('aria-describedby')) ?? '', new RegExp(`${id}-error`));
    assert.equal(await input.getAttribute('aria-invalid'), 'true');
    return (await error.textContent())!;
  }

  async function check(page: Page, name: string, width: number) {
    const v = await axeViolations(page);
    assert.equal(v.length, 0, `${name}:\n${describeViolations(v)}`);
    const text = (await page.locator('main, body').first().textContent()) ?? '';
    assert.ok(!/must be|is required|must not/.test(text), `${name}: no English reason`);
    if (width < 500) assert.ok((await scrollWidth(page)) <= width, `${name}: no sideways scrolling on a phone`);
    if (shots && engine === 'sqlite') await shot(page, join(shots, `${name}-${width < 500 ? 'phone' : 'desktop'}.png`));
  }

  test('a phone submits bad forms: every problem beside its field, in Korean, the values kept; axe finds nothing (and the screenshots)', { timeout: 180_000 }, async () => {
    if (shots && engine === 'sqlite') mkdirSync(shots, { recursive: true });
    const contexts: BrowserContext[] = [];
    try {
      for (const [width, height] of [[390, 844], [1280, 800]] as const) {
        const ctx = await context(browser, width, height);
        contexts.push(ctx);
        const page = await ctx.newPage();

        // Sign-in with nothing typed: both fields said, on the public page.
        await page.goto(`${t.url}/console/login`);
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '로그인' }).click()]);
        assert.match(await problemBeside(page, 'email'), /이메일을 적어 주세요/);
        assert.match(await problemBeside(page, 'password'), /비밀번호를 적어 주세요/);
        await check(page, 'form-sign-in', width);
        await submitSignIn(page, t.url, owner.email, owner.password);

        // A template with four problems, one of them only together (items against the amount).
        await page.goto(`${t.url}/console/templates/new`);
        await page.getByLabel('템플릿 이름').fill('월 수강료');
        await page.getByLabel('금액 (선택, 원)').fill('20,000');
        await page.getByLabel('청구 항목 (선택)').fill('교재:15000');
        await page.getByLabel('납부 기한: 발송 후 며칠 (선택)').fill('999');
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '저장' }).click()]);
        assert.match(await problemBeside(page, 'reason'), /청구 사유를 적어 주세요/);
        assert.match(await problemBeside(page, 'items'), /항목 합계\(15,000원\)가 금액\(20,000원\)과 다릅니다/);
        assert.match(await problemBeside(page, 'dueDays'), /0일에서 365일 사이여야/);
        assert.equal(await page.getByLabel('템플릿 이름').inputValue(), '월 수강료');
        assert.equal(await page.getByLabel('금액 (선택, 원)').inputValue(), '20,000');
        assert.equal(await page.getByLabel('납부 기한: 발송 후 며칠 (선택)').inputValue(), '999');
        assert.match((await page.getByRole('alert').textContent())!, /고칠 곳이 3군데/);
        await check(page, 'form-template', width);

        // The team's invite: an email that is not one, kept; the role stays 조회 전용.
        await page.goto(`${t.url}/console/team`);
        assert.equal(await page.locator('#role').inputValue(), 'viewer');
        await page.locator('#email').fill('teacher-at-example');
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '초대 링크 만들기' }).click()]);
        assert.match(await problemBeside(page, 'email'), /이메일 주소 형식이 아닙니다/);
        assert.equal(await page.locator('#email').inputValue(), 'teacher-at-example');
        assert.equal(await page.locator('#role').inputValue(), 'viewer');
        await check(page, 'form-team-invite', width);

        // The store's details: three problems at once.
        await page.goto(`${t.url}/console/settings`);
        await page.getByLabel('상점 이름').fill('');
        await page.getByLabel('사업자등록번호').fill('123-45-67890');
        await page.getByLabel('전화번호').fill('12');
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '저장', exact: true }).click()]);
        assert.match(await problemBeside(page, 'name'), /상점 이름을 적어 주세요/);
        assert.match(await problemBeside(page, 'bizRegNum'), /사업자등록번호가 아닙니다/);
        assert.match(await problemBeside(page, 'tel'), /8~12자리/);
        assert.equal(await page.getByLabel('사업자등록번호').inputValue(), '123-45-67890');
        await check(page, 'form-settings', width);
      }
    } finally {
      for (const c of contexts) await c.close();
    }
  });
});
