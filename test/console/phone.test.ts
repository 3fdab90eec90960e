import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import iconv from 'iconv-lite';
import type { Browser, Page } from 'playwright-core';
import { grantPoints } from '../../src/invoicing/accounts.js';
import { forEachEngine, paymentBody, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, mobileContext, scrollWidth } from '../helpers/browser.js';
import { eventually } from '../helpers/wait.js';
import { consoleInChromium, recipientsCsv, submitSignIn, type Owner } from './support.js';

/**
 * SUNAP_CONSOLE_SCREENSHOTS=docs/console keeps a phone (390x844) and a desktop (1280x800)
 * screenshot of every console page (taken on SQLite), the ones docs/console.md shows.
 */
const shots = process.env.SUNAP_CONSOLE_SCREENSHOTS ? resolve(process.env.SUNAP_CONSOLE_SCREENSHOTS) : null;
const VIEWPORTS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;
type Kind = keyof typeof VIEWPORTS;

/** A screenshot of the page from the top, at most 2,400 CSS pixels tall (a long list shows its first rows). */
async function shot(page: Page, path: string) {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width: size.width, height: Math.min(height, 2400) } });
}

interface Layout {
  /** document.scrollingElement.scrollWidth */
  page: number;
  /** Table regions that scroll sideways inside the page: their label and widths. */
  regions: string[];
  /** Every table.list: its caption or region label, whether it is stacked (rows as grids) and whether its header row shows. */
  tables: { label: string; stacked: boolean; header: boolean }[];
}

/** How the page's lists are laid out, measured in the page. */
function layoutOf(page: Page): Promise<Layout> {
  // No named functions inside: the page has not got the helpers the test's compiler would name them with.
  return page.evaluate(() => {
    type El = { scrollWidth: number; clientWidth: number; getAttribute(n: string): string | null; closest(s: string): El | null; querySelector(s: string): El | null };
    const g = globalThis as unknown as { document: { scrollingElement: El; querySelectorAll(s: string): Iterable<El> }; getComputedStyle(e: El): { display: string; position: string } };
    const out: Layout = { page: g.document.scrollingElement.scrollWidth, regions: [], tables: [] };
    for (const r of Array.from(g.document.querySelectorAll('.table-wrap'))) {
      if (r.clientWidth > 0 && r.scrollWidth > r.clientWidth) out.regions.push(`${r.getAttribute('aria-label')}: ${r.scrollWidth} > ${r.clientWidth}`);
    }
    for (const t of Array.from(g.document.querySelectorAll('table.list'))) {
      const tr = t.querySelector('tbody tr');
      const head = t.querySelector('thead');
      out.tables.push({
        label: t.closest('[aria-label]')?.getAttribute('aria-label') ?? '?',
        stacked: tr ? g.getComputedStyle(tr).display === 'grid' : false,
        header: head ? g.getComputedStyle(head).position !== 'absolute' : false,
      });
    }
    return out;
  });
}

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
    ({ t, browser, owner } = await consoleInChromium(engine, 1000));
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
    await submitSignIn(page, t.url, owner.email, owner.password);
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
  /**
   * Every console page, at 390x844 and at 1280x800: axe finds nothing; on the phone no page and
   * no table region scrolls sideways, every list is stacked (its rows as cards) and the key
   * fields of its first row are shown inside the screen's width; on the desktop the lists are
   * tables with their header row.
   */
  test('every console page on a phone and a desktop: axe, no sideways scrolling, stacked lists with the key fields in view (and the screenshots)', { timeout: 420_000 }, async () => {
    const inv = t.app.sunap.invoicing;
    const billing = inv.billing;
    const clock = t.app.sunap.clock;
    const db = t.app.sunap.database.db;
    await grantPoints(db, clock.nowMs(), { email: owner.email, amount: 5000 });
    const tpl = await inv.templates.create(owner.accountId, { name: '월 수강료', reason: '12월 수강료', description: '10일까지 납부 부탁드립니다', amount: 128_000, dueDays: 10 });
    const names = ['김하늘', '이바다', '박구름', '최별', '정나무', '한솔'];
    const cls = (await billing.classes.create(owner.accountId, {
      name: '초등 피아노 A반', memo: '월·수·금 4시',
      members: names.map((name, i) => ({ name, phone: `0105555${1000 + i * 111}`, ...(i % 4 === 1 ? { guardianPhone: `0109876${String(1000 + i).padStart(4, '0')}` } : {}), ...(i % 3 === 2 ? { amount: 98_000 } : {}) })),
    })).class.id;
    const kst = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString();
    const s = await billing.schedules.create(owner.accountId, t.storeCode, { classId: cls, templateId: tpl.id, repeat: 'ONCE', at: kst(clock.nowMs() + 60_000).slice(0, 16) });
    await clock.advance(120);
    await billing.runner.run(s.id, 'once');
    const month = kst(clock.nowMs()).slice(0, 7);
    const run = (await billing.schedules.get(owner.accountId, s.id)).runs[0]!;
    const sent = await eventually(async () => {
      const rows = await db.selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).where('receiver_name', 'in', names).execute();
      return rows.length === names.length && rows.every((r) => r.send_status === 'SENT') ? rows : undefined;
    }, 'the class billed', 30_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${JSON.stringify(await db.selectFrom('invoices').select(['receiver_name', 'send_status', 'status']).where('account_id', '=', owner.accountId).execute())} ${JSON.stringify(await billing.schedules.get(owner.accountId, s.id))}`);
    });
    for (const r of sent.slice(0, 2)) assert.equal((await t.pay(r.trans_seqno)).approved, true);
    await inv.endpoints.create(t.storeCode, { url: 'https://127.0.0.1:9/academy-hooks/sunap', events: ['bill.paid', 'payment.approved'] });
    // A delivery with attempts (the payments' CONFIRM_URL refuses connections).
    const delivery = await eventually(async () => {
      const d = await db.selectFrom('deliveries').select('id').where('trans_seqno', 'is not', null).orderBy('id').executeTakeFirst();
      return d && (await inv.deliveries.detail(t.storeCode, d.id))?.attemptLog.length ? d : undefined;
    }, 'a callback delivery with an attempt', 30_000);
    const paid = sent[0]!;
    const unpaid = sent[3]!;
    const waiting = await db.selectFrom('payments').select('trans_seqno').where('store_code', '=', t.storeCode).where('state', '=', 'STORE_REQUEST').executeTakeFirstOrThrow();

    /** The key fields of the first row of each list: table (a selector) and the cells (1-based) that must be in view on a phone. */
    const keys: Record<string, { table: string; cells: number[] }> = {
      payments: { table: 'table.list', cells: [1, 2, 3, 4] },
      invoices: { table: 'table.list', cells: [1, 2, 3, 4] },
      'invoice-detail': { table: 'section[aria-labelledby=sends-title] table', cells: [1, 2, 5] },
      deliveries: { table: 'table.list', cells: [1, 2, 3, 6] },
      'delivery-detail': { table: 'section[aria-labelledby=att-title] table', cells: [1, 2, 4, 7] },
      'webhook-endpoints': { table: 'table.list', cells: [1, 2, 3] },
      points: { table: 'section[aria-labelledby=ledger-title] table', cells: [1, 2, 3] },
      templates: { table: 'table.list', cells: [1, 2, 3] },
      team: { table: 'table.list', cells: [1, 2, 3] },
      settings: { table: 'section[aria-labelledby=audit-title] table', cells: [1, 2, 3] },
      account: { table: 'table.list', cells: [1, 2, 4] },
      classes: { table: 'table.list', cells: [1, 2] },
      'class-detail': { table: 'table.list', cells: [1, 2, 4] },
      'class-month': { table: 'table.list', cells: [1, 3, 4] },
      schedules: { table: 'table.list', cells: [1, 2, 5] },
      'schedule-detail': { table: 'table.list', cells: [1, 2, 3] },
      'schedule-run': { table: 'table.list', cells: [1, 2, 4] },
      'invoice-preview': { table: 'table.list', cells: [1, 2, 3, 4, 5] },
    };
    const pages: [string, string][] = [
      ['overview', '/console'], ['payments', '/console/payments'], ['payment-detail', `/console/payments/${paid.trans_seqno}`],
      ['payment-cancel', `/console/payments/${paid.trans_seqno}/cancel`], ['payment-delete', `/console/payments/${waiting.trans_seqno}/delete`],
      ['invoices', '/console/invoices'], ['invoice-detail', `/console/invoices/${paid.unique_id}`], ['invoice-cancel', `/console/invoices/${paid.unique_id}/cancel`],
      ['invoice-delete', `/console/invoices/${unpaid.unique_id}/delete`], ['invoice-new', '/console/invoices/new'], ['invoice-bulk', '/console/invoices/bulk'],
      ['templates', '/console/templates'], ['template-new', '/console/templates/new'], ['template-edit', `/console/templates/${tpl.id}`],
      ['classes', '/console/classes'], ['class-new', '/console/classes/new'], ['class-detail', `/console/classes/${cls}`],
      ['class-month', `/console/classes/${cls}/month?month=${month}`], ['class-remind', `/console/classes/${cls}/month/remind?month=${month}`],
      ['schedules', '/console/schedules'], ['schedule-new', '/console/schedules/new'], ['schedule-detail', `/console/schedules/${s.id}`],
      ['schedule-run', `/console/schedules/${s.id}/runs/${run.id}`], ['points', '/console/points'],
      ['deliveries', '/console/deliveries'], ['delivery-detail', `/console/deliveries/${delivery.id}`], ['webhook-endpoints', '/console/deliveries/endpoints'],
      ['team', '/console/team'], ['settings', '/console/settings'], ['account', '/console/account'], ['not-found', '/console/payments/NO-SUCH'],
    ];
    if (shots && engine === 'sqlite') mkdirSync(shots, { recursive: true });

    const check = async (page: Page, kind: Kind, name: string) => {
      const v = await axeViolations(page);
      assert.equal(v.length, 0, `${name} (${kind}):\n${describeViolations(v)}`);
      const l = await layoutOf(page);
      if (kind === 'phone') {
        assert.ok(l.page <= 390, `${name}: the page scrolls sideways on a phone (${l.page}px)`);
        assert.deepEqual(l.regions, [], `${name}: a table region scrolls sideways on a phone`);
        for (const tb of l.tables.filter((x) => x.label !== '일별 금액 표')) assert.ok(tb.stacked && !tb.header, `${name}: ${tb.label} is not stacked on a phone`);
        const k = keys[name];
        if (k) {
          const row = page.locator(`${k.table} tbody tr`).first();
          for (const n of k.cells) {
            const box = await row.locator(`td:nth-child(${n})`).boundingBox();
            assert.ok(box && box.width > 0, `${name}: cell ${n} of the first row is shown`);
            assert.ok(box.x >= 0 && box.x + box.width <= 390, `${name}: cell ${n} of the first row is inside the screen's width (${JSON.stringify(box)})`);
          }
        }
      } else {
        for (const tb of l.tables) assert.ok(!tb.stacked && tb.header, `${name}: ${tb.label} is a table with its header on a desktop`);
        if (keys[name]) assert.ok(l.tables.length > 0, `${name}: the list is there`);
      }
      if (shots && engine === 'sqlite') await shot(page, join(shots, `${name}-${kind}.png`));
    };

    let inviteLink = '';
    let resetLink = '';
    for (const kind of ['phone', 'desktop'] as const) {
      const phone = kind === 'phone';
      const ctx = await browser.newContext({ viewport: VIEWPORTS[kind], deviceScaleFactor: 1, isMobile: phone, hasTouch: phone, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
      const page = await ctx.newPage();
      try {
        await page.goto(`${t.url}/console/login`);
        await check(page, kind, 'sign-in');
        await submitSignIn(page, t.url, owner.email, owner.password);
        if (phone) {
          // A sandbox recharge, so the points page shows its recharges beside the ledger.
          await page.goto(`${t.url}/console/points`);
          await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: /충전/ }).click()]);
        }
        for (const [name, path] of pages) {
          const r = await page.goto(`${t.url}${path}`);
          assert.equal(r?.status(), name === 'not-found' ? 404 : 200, `${name}: ${path}`);
          await check(page, kind, name);
          // The audit log is the settings page's last section (below the 2,400 px cut): its own screenshot.
          if (name === 'settings' && shots && engine === 'sqlite') await page.locator('section[aria-labelledby=audit-title]').screenshot({ path: join(shots, `audit-${kind}.png`) });
        }
        // The CSV preview (the answer to the upload form).
        await page.goto(`${t.url}/console/invoices/bulk`);
        await page.locator('input[type=file]').setInputFiles({ name: 'class.csv', mimeType: 'text/csv', buffer: Buffer.from(`${recipientsCsv(12, '34')}\r\n박철수,0101,98000`, 'utf8') });
        await page.getByLabel('청구 사유').fill('12월 수강료');
        await Promise.all([page.waitForURL(/bulk\/preview$/), page.getByRole('button', { name: '미리 보기' }).click()]);
        await check(page, kind, 'invoice-preview');
        // The team page right after an invite and after a reset link (each shown once).
        await page.goto(`${t.url}/console/team`);
        await page.getByLabel('이메일').fill(`teacher-${kind}@example.com`);
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '초대 링크 만들기' }).click()]);
        inviteLink = (await page.locator('code.secret').textContent())!;
        await check(page, kind, 'team-invited');
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: /비밀번호 재설정 링크/ }).first().click()]);
        resetLink = (await page.locator('code.secret').textContent())!;
        await check(page, kind, 'team-reset-link');
        // The pages of someone not signed in.
        await ctx.clearCookies();
        for (const [name, url] of [['invite', inviteLink], ['forgot', `${t.url}/console/forgot`], ['reset', resetLink]] as const) {
          assert.equal((await page.goto(url))?.status(), 200, name);
          await check(page, kind, name);
        }
      } finally {
        await ctx.close();
      }
    }
  });
});
