import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { nextMonthlyPeriod } from '../../src/invoicing/schedule-time.js';
import { forEachEngine, startApp, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, scrollWidth, startAll } from '../helpers/browser.js';
import { newOwner, submitSignIn, type Owner } from './support.js';

/**
 * The pages of billing that runs itself (classes, the month of a class, schedules) in Chromium:
 * axe-core finds nothing, a phone needs no sideways scrolling. SUNAP_CONSOLE_SCREENSHOTS=docs/console
 * keeps a phone (390x844) and a desktop (1280x800) screenshot of each (taken on SQLite).
 */
const shots = process.env.SUNAP_CONSOLE_SCREENSHOTS ? resolve(process.env.SUNAP_CONSOLE_SCREENSHOTS) : null;

async function shot(page: Page, path: string) {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width: size.width, height: Math.min(height, 2400) } });
}

forEachEngine('billing pages in Chromium', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let owner: Owner;

  before(async () => {
    await startAll([startApp(engine, {}, { runJobs: false }).then((v) => (t = v)), launchBrowser().then((v) => (browser = v))]);
    owner = await newOwner(t, { points: 150 });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('classes, a class, its month, schedules, a schedule and a run: no axe violations, no sideways scrolling (and the screenshots)', { timeout: 180_000 }, async () => {
    const billing = t.app.sunap.invoicing.billing;
    const tpl = await t.app.sunap.invoicing.templates.create(owner.accountId, { name: '월 수강료', reason: '12월 수강료', description: '10일까지 납부 부탁드립니다', amount: 128_000, dueDays: 10 });
    const names = ['김하늘', '이바다', '박구름', '최별', '정나무', '한솔', '윤슬', '강산', '조은비', '서하', '문빛', '배이슬'];
    const cls = (await billing.classes.create(owner.accountId, {
      name: '초등 피아노 A반', memo: '월·수·금 4시',
      members: names.map((name, i) => ({ name, phone: `010${String(5550000 + i * 1111).padStart(8, '0')}`, ...(i % 4 === 1 ? { guardianPhone: `0109876${String(1000 + i).padStart(4, '0')}` } : {}), ...(i % 3 === 2 ? { amount: 98_000 } : {}) })),
    })).class.id;
    await billing.classes.create(owner.accountId, { name: '중등 바이올린 B반', members: [{ name: '오다온', phone: '01077778888', amount: 150_000 }] });
    const s = await billing.schedules.create(owner.accountId, t.storeCode, { classId: cls, templateId: tpl.id, repeat: 'MONTHLY', dayOfMonth: 31, time: '09:00', reminders: { beforeDays: 3, afterDays: 2, times: 2 } });
    const p = nextMonthlyPeriod(31, '09:00', t.app.sunap.clock.nowMs());
    await t.app.sunap.clock.advance(Math.ceil((p.at - t.app.sunap.clock.nowMs()) / 1000));
    await billing.runner.run(s.id, p.period);
    await t.app.sunap.worker.drain();
    const invoices = await t.app.sunap.database.db.selectFrom('invoices').select('trans_seqno').where('account_id', '=', owner.accountId).orderBy('id').execute();
    for (const inv of invoices.slice(0, 8)) assert.equal((await t.pay(inv.trans_seqno)).approved, true);
    // A second schedule short of points: the banner.
    const s2 = await billing.schedules.create(owner.accountId, t.storeCode, { classId: cls, templateId: tpl.id, repeat: 'ONCE', at: new Date(t.app.sunap.clock.nowMs() + 9 * 3_600_000 + 60_000).toISOString().slice(0, 16) });
    await t.app.sunap.clock.advance(120);
    await billing.runner.run(s2.id, 'once');
    const run = (await billing.schedules.get(owner.accountId, s.id)).runs[0]!;

    const pages: [string, string][] = [
      ['classes', '/console/classes'], ['class-new', '/console/classes/new'], ['class-detail', `/console/classes/${cls}`],
      ['class-month', `/console/classes/${cls}/month?month=${p.period}`], ['class-remind', `/console/classes/${cls}/month/remind?month=${p.period}`],
      ['schedules', '/console/schedules'], ['schedule-new', '/console/schedules/new'], ['schedule-detail', `/console/schedules/${s.id}`],
      ['schedule-run', `/console/schedules/${s.id}/runs/${run.id}`],
    ];
    if (shots && engine === 'sqlite') mkdirSync(shots, { recursive: true });
    for (const [kind, viewport] of [['phone', { width: 390, height: 844 }], ['desktop', { width: 1280, height: 800 }]] as const) {
      const ctx = await browser.newContext({ viewport, deviceScaleFactor: 1, isMobile: kind === 'phone', hasTouch: kind === 'phone', locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
      const page = await ctx.newPage();
      try {
        await page.goto(`${t.url}/console`);
        await page.waitForURL(/\/console\/login/);
        await submitSignIn(page, t.url, owner.email, owner.password);
        assert.ok((await page.locator('main').textContent())!.includes('포인트가 부족해 예약 발송'), 'the banner on the overview');
        for (const [name, path] of pages) {
          const r = await page.goto(`${t.url}${path}`);
          assert.equal(r?.status(), 200, `${name}: ${path}`);
          const v = await axeViolations(page);
          assert.equal(v.length, 0, `${name} (${kind}):\n${describeViolations(v)}`);
          if (kind === 'phone') {
            const w = await scrollWidth(page);
            assert.ok(w <= 390, `${name}: no sideways scrolling on a phone (${w}px)`);
          }
          if (shots && engine === 'sqlite') await shot(page, join(shots, `${name}-${kind}.png`));
        }
      } finally {
        await ctx.close();
      }
    }
  });
});
