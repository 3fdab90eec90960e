import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { MAX_ITEM_ROWS } from '../../src/console/views/invoice-create.js';
import { forEachEngine, withApp, type TestApp } from '../helpers/app.js';
import { axeViolations, describeViolations, scrollWidth } from '../helpers/browser.js';
import { consoleInChromium, ownerClient, submitSignIn, textOf, type Owner } from './support.js';

/**
 * The send form's item rows and 과세 구분 (docs/console.md, "Sending"): rows of 품목명 and 금액
 * added and removed by buttons that submit the form (no script), the values kept; the amount must
 * equal the rows' sum or the form says so beside the field, in Korean; the tax-free part is
 * 0..amount. Over HTTP on both engines, and in Chromium on a phone.
 */
const shots = process.env.SUNAP_CONSOLE_SCREENSHOTS ? resolve(process.env.SUNAP_CONSOLE_SCREENSHOTS) : null;

forEachEngine('console: send form item rows and tax-free choice', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;
  const base = { name: '홍길동', phone: '010-1234-5678', reason: '12월 수강료' };
  const rows = (...r: [string, string][]) => ({ itemRows: String(r.length), ...Object.fromEntries(r.flatMap(([n, p], i) => [[`itemName${i}`, n], [`itemPrice${i}`, p]])) });
  const invoicesOf = (accountId: string) => db().selectFrom('invoices').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  const inputValue = (page: string, id: string) => new RegExp(`id="${id}" name="${id}"[^>]*value="([^"]*)"`).exec(page)?.[1];

  test('a fresh form has 2 empty rows and 품목 추가; 추가 adds one and 삭제 removes that one, everything typed kept, nothing sent', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const fresh = await c.get('/console/invoices/new');
    assert.deepEqual([inputValue(fresh.text, 'itemName0'), inputValue(fresh.text, 'itemName1'), inputValue(fresh.text, 'itemName2')], ['', '', undefined]);
    assert.ok(fresh.text.includes('value="add"') && textOf(fresh.text).includes('품목 추가'));
    assert.ok(!/<script/.test(fresh.text), 'no script on the page');
    const added = await c.post('/console/invoices/new', { ...base, amount: '100,000', op: 'add', ...rows(['교재', '15,000'], ['레슨', '85000']) }, { from: '/console/invoices/new' });
    assert.equal(added.status, 200);
    assert.deepEqual(['name', 'amount', 'itemName0', 'itemPrice0', 'itemName1', 'itemPrice1', 'itemName2'].map((id) => inputValue(added.text, id)), ['홍길동', '100,000', '교재', '15,000', '레슨', '85000', '']);
    assert.ok(textOf(added.text).includes('항목 합계 100,000원'));
    const removed = await c.post('/console/invoices/new', { ...base, amount: '100,000', op: 'del:0', ...rows(['교재', '15,000'], ['레슨', '85000'], ['', '']) }, { from: '/console/invoices/new' });
    assert.deepEqual(['itemName0', 'itemPrice0', 'itemName1', 'itemName2'].map((id) => inputValue(removed.text, id)), ['레슨', '85000', '', undefined]);
    const lastOne = await c.post('/console/invoices/new', { ...base, op: 'del:0', ...rows(['교재', '15000']) }, { from: '/console/invoices/new' });
    assert.deepEqual([inputValue(lastOne.text, 'itemName0'), inputValue(lastOne.text, 'itemName1')], ['', undefined], 'the last row removed leaves one empty row');
    const full = await c.post('/console/invoices/new', { ...base, op: 'add', ...rows(...Array.from({ length: MAX_ITEM_ROWS }, (_, i): [string, string] => [`항목${i}`, '1000'])) }, { from: '/console/invoices/new' });
    assert.equal(inputValue(full.text, `itemName${MAX_ITEM_ROWS}`), undefined, `at most ${MAX_ITEM_ROWS} rows`);
    assert.ok(!full.text.includes('value="add"') && textOf(full.text).includes(`항목은 ${MAX_ITEM_ROWS}개까지입니다`));
    const almost = await c.post('/console/invoices/new', { ...base, op: 'add', ...rows(...Array.from({ length: MAX_ITEM_ROWS - 1 }, (_, i): [string, string] => [`항목${i}`, '1000'])) }, { from: '/console/invoices/new' });
    assert.equal(inputValue(almost.text, `itemName${MAX_ITEM_ROWS - 1}`), '', `row ${MAX_ITEM_ROWS} may still be added`);
    assert.equal((await invoicesOf(owner.accountId)).length, 0);
  });

  test('the amount must equal the rows\' sum: one won off either way is said beside 금액 in Korean with everything kept; equal sends the rows as items; an empty amount takes the sum', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    for (const amount of ['99,999', '100,001']) {
      const r = await c.post('/console/invoices/new', { ...base, amount, ...rows(['교재', '15,000'], ['레슨', '85,000']) }, { from: '/console/invoices/new' });
      assert.equal(r.status, 400);
      assert.match(r.text, new RegExp(`<span class="field-error" id="amount-error">금액\\(${amount}원\\)이 항목 합계\\(100,000원\\)와 다릅니다`));
      assert.deepEqual(['name', 'phone', 'amount', 'itemName0', 'itemPrice1'].map((id) => inputValue(r.text, id)), ['홍길동', '010-1234-5678', amount, '교재', '85,000']);
    }
    assert.equal((await invoicesOf(owner.accountId)).length, 0);
    const ok = await c.post('/console/invoices/new', { ...base, amount: '100,000', ...rows(['교재', '15,000'], ['레슨', '85,000'], ['', '']) }, { from: '/console/invoices/new' });
    assert.equal(ok.status, 303, ok.text.slice(0, 300));
    const noAmount = await c.post('/console/invoices/new', { ...base, name: '김영희', ...rows(['교재', '15,000'], ['레슨', '85,000']) }, { from: '/console/invoices/new' });
    assert.equal(noAmount.status, 303, noAmount.text.slice(0, 300));
    const [first, second] = await invoicesOf(owner.accountId);
    assert.deepEqual(JSON.parse(first!.items_json!).map((l: { name: string; net: number }) => [l.name, l.net]), [['교재', 15000], ['레슨', 85000]]);
    assert.deepEqual([Number(first!.amount), Number(second!.amount)], [100_000, 100_000]);
  });

  test('a row\'s problems beside its own inputs: a price of 99 refused, 100 taken; a price without a name; a name of 21 characters', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const r = await c.post('/console/invoices/new', { ...base, amount: '10,000', ...rows(['교재', '99'], ['', '5000'], ['가'.repeat(21), '4901']) }, { from: '/console/invoices/new' });
    assert.equal(r.status, 400);
    const text = textOf(r.text);
    for (const s of ['1번 금액은 100원 이상의 숫자로 적어 주세요', '2번 품목명을 적어 주세요', '품목명은 20자까지 적을 수 있습니다 (지금 21자)', '고칠 곳이 3군데']) assert.ok(text.includes(s), `says "${s}"`);
    assert.match(r.text, /id="itemPrice0" name="itemPrice0"[^>]*aria-invalid="true"/);
    assert.doesNotMatch(text, /must|is required|itemPrice|items\[/, 'no English reasons or field names');
    const ok = await c.post('/console/invoices/new', { ...base, amount: '10,000', ...rows(['교재', '100'], ['레슨', '9,900']) }, { from: '/console/invoices/new' });
    assert.equal(ok.status, 303, ok.text.slice(0, 300));
    assert.equal((await invoicesOf(owner.accountId)).length, 1);
  });

  test('과세 구분: 과세 is 0, 전액 면세 the amount, 일부 면세 0..amount (amount + 1 refused beside the field, in Korean, values kept; the amount itself taken)', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const post = (over: Record<string, string>) => c.post('/console/invoices/new', { ...base, amount: '128,000', ...over }, { from: '/console/invoices/new' });
    const over = await post({ taxMode: 'PART', taxFreeAmount: '128,001' });
    assert.equal(over.status, 400);
    assert.match(over.text, /<span class="field-error" id="taxFreeAmount-error">면세 금액\(128,001원\)은 청구 금액\(128,000원\)보다 클 수 없습니다/);
    assert.equal(inputValue(over.text, 'taxFreeAmount'), '128,001');
    assert.match(over.text, /value="PART" checked/);
    assert.match((await post({ taxMode: 'PART', taxFreeAmount: '' })).text, /일부 면세를 고르셨습니다. 면세 금액을 적어 주세요/);
    assert.match((await post({ taxMode: 'PART', taxFreeAmount: '십만' })).text, /면세 금액은 숫자로 적어 주세요/);
    assert.equal((await invoicesOf(owner.accountId)).length, 0);
    for (const [name, over] of [['과세', { taxMode: 'TAX_ON', taxFreeAmount: '5000' }], ['전액', { taxMode: 'TAX_FREE' }], ['일부', { taxMode: 'PART', taxFreeAmount: '100,000' }], ['끝', { taxMode: 'PART', taxFreeAmount: '128000' }], ['영', { taxMode: 'PART', taxFreeAmount: '0' }]] as const) {
      const r = await post({ name, ...over });
      assert.equal(r.status, 303, `${name}: ${r.text.slice(0, 300)}`);
    }
    const made = Object.fromEntries((await invoicesOf(owner.accountId)).map((i) => [i.receiver_name, Number(i.tax_free_amount)]));
    assert.deepEqual(made, { 과세: 0, 전액: 128_000, 일부: 100_000, 끝: 128_000, 영: 0 });
    const detail = textOf((await c.get(`/console/invoices/${(await invoicesOf(owner.accountId)).find((i) => i.receiver_name === '일부')!.unique_id}`)).text);
    assert.ok(detail.includes('일부 면세: 면세 100,000원, 과세 28,000원'), 'the invoice page shows its 과세 구분');
  });

  test('the CSV\'s 면세금액 column (under its header; a headerless 6th column stays ignored): 0..amount per row, more is that row\'s problem; the send gives each invoice its taxFreeAmount; the 항목 format unchanged', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const bad = ['이름,전화번호,금액,면세금액', '김영희,010-3333-0001,128000,128000', '이철수,010-3333-0002,128000,128001'].join('\n');
    const refused = await c.post('/console/invoices/bulk/preview', { csv: bad, reason: '12월 수강료' }, { from: '/console/invoices/bulk' });
    assert.equal(refused.status, 200);
    const text = textOf(refused.text);
    assert.ok(text.includes('면세 금액(128,001원)이 금액(128,000원)보다 큽니다'));
    assert.ok(text.includes('128,000원 (면세 128,000원)'));
    assert.ok(!refused.text.includes('action="/console/invoices/bulk"'), 'no send button while a row has a problem');
    const headerless = await c.post('/console/invoices/bulk/preview', { csv: '최지우,010-3333-0009,128000,,,메모 128001', reason: '12월 수강료' }, { from: '/console/invoices/bulk' });
    assert.ok(textOf(headerless.text).includes('1명에게 보내기'), 'a sixth column without a header is ignored, as before');
    const good = ['taxFreeAmount,이름,전화번호,금액,보호자,항목', '128000,김영희,010-3333-0001,128000,,', '100000,이철수,010-3333-0002,"115,000",,교재:15000; 레슨:100000', ',박민지,010-3333-0003,50000,,'].join('\n');
    const preview = await c.post('/console/invoices/bulk/preview', { csv: good, reason: '12월 수강료' }, { from: '/console/invoices/bulk' });
    assert.ok(textOf(preview.text).includes('3명에게 보내기'), textOf(preview.text).slice(0, 600));
    const form = Object.fromEntries([...preview.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))]));
    const { _csrf, ...fields } = form;
    assert.equal((await c.post('/console/invoices/bulk', fields, { csrf: _csrf })).status, 303);
    const made = Object.fromEntries((await invoicesOf(owner.accountId)).map((i) => [i.receiver_name, [Number(i.amount), Number(i.tax_free_amount), JSON.parse(i.items_json ?? '[]').length]]));
    assert.deepEqual(made, { 김영희: [128_000, 128_000, 0], 이철수: [115_000, 100_000, 2], 박민지: [50_000, 0, 0] });
  });
});

forEachEngine('console: send form in Chromium', (engine) => {
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

  async function signIn(page: Page) {
    await page.goto(`${t.url}/console`);
    await page.waitForURL(/\/console\/login/);
    await submitSignIn(page, t.url, owner.email, owner.password);
  }

  test('on a phone: add a row, send with a wrong sum, read the Korean error beside 금액 with everything kept, fix it, send; axe finds nothing; no sideways scrolling', { timeout: 180_000 }, async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
    const page = await ctx.newPage();
    try {
      await signIn(page);
      await page.goto(`${t.url}/console/invoices/new`);
      await page.getByLabel('받는 분 이름').fill('김민수');
      await page.getByLabel('전화번호', { exact: true }).fill('010-2345-6789');
      await page.getByLabel('금액 (원)', { exact: true }).fill('120,000');
      await page.getByLabel('청구 사유').fill('12월 수강료');
      await page.getByLabel('품목명 1').fill('레슨');
      await page.getByLabel('금액 1 (원)').fill('100,000');
      await page.getByLabel('품목명 2').fill('교재');
      await page.getByLabel('금액 2 (원)').fill('15,000');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '품목 추가' }).click()]);
      await page.getByLabel('품목명 3').waitFor();
      assert.equal(await page.getByLabel('품목명 2').inputValue(), '교재', 'the rows typed are kept');
      await page.getByLabel('품목명 3').fill('교구');
      await page.getByLabel('금액 3 (원)').fill('3,000');
      await page.getByLabel('전액 면세').check();
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: '보내기', exact: true }).last().click()]);
      const error = page.locator('#amount-error');
      await error.waitFor();
      assert.equal(await error.textContent(), '금액(120,000원)이 항목 합계(118,000원)와 다릅니다. 금액이나 항목을 고쳐 주세요.');
      assert.equal(await page.getByLabel('금액 (원)', { exact: true }).getAttribute('aria-invalid'), 'true');
      assert.deepEqual([await page.getByLabel('받는 분 이름').inputValue(), await page.getByLabel('품목명 3').inputValue(), await page.getByLabel('금액 3 (원)').inputValue(), await page.getByLabel('전액 면세').isChecked()], ['김민수', '교구', '3,000', true]);
      assert.ok((await page.locator('#items-sum').textContent())!.includes('118,000원'));
      const v1 = await axeViolations(page);
      assert.deepEqual(v1, [], describeViolations(v1));
      assert.ok((await scrollWidth(page)) <= 390, 'no sideways scrolling on a phone');
      if (shots && engine === 'sqlite') {
        mkdirSync(shots, { recursive: true });
        await page.screenshot({ path: join(shots, 'send-form-phone.png'), fullPage: true });
      }
      await page.getByLabel('금액 (원)', { exact: true }).fill('118,000');
      await Promise.all([page.waitForURL(/\/console\/invoices\?notice=created/), page.getByRole('button', { name: '보내기', exact: true }).last().click()]);
      const inv = await t.app.sunap.database.db.selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).executeTakeFirstOrThrow();
      assert.deepEqual([Number(inv.amount), Number(inv.tax_free_amount), JSON.parse(inv.items_json!).length], [118_000, 118_000, 3]);
    } finally {
      await ctx.close();
    }
  });

  test('on a desktop (1280x800): the form and the points page with a send of 3 as one line; axe finds nothing (and the screenshots)', { timeout: 120_000 }, async () => {
    const a = await t.post('/app/v1/auth/login', { email: owner.email, password: owner.password, loginType: 'EMAIL' });
    const h = { 'x-access-token': a.body.result_data.accessToken };
    const members = ['학생1', '학생2', '학생3'].map((n, i) => ({ studentName: n, studentPhone: `0105555000${i + 1}` }));
    assert.equal((await t.post('/app/v1/sales/bill', { reason: '12월 수강료', amount: 100000, members }, h)).body.result_code, 0);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
    const page = await ctx.newPage();
    try {
      await signIn(page);
      await page.goto(`${t.url}/console/invoices/new`);
      const v1 = await axeViolations(page);
      assert.deepEqual(v1, [], describeViolations(v1));
      if (shots && engine === 'sqlite') await page.screenshot({ path: join(shots, 'send-form-desktop.png'), fullPage: true });
      await page.goto(`${t.url}/console/points`);
      const line = page.locator('details.ledger-send').first();
      assert.equal((await line.locator('summary').textContent())?.trim(), '청구서 3건 발송');
      await line.locator('summary').click();
      assert.equal(await line.locator('li').count(), 3);
      const v2 = await axeViolations(page);
      assert.deepEqual(v2, [], describeViolations(v2));
      if (shots && engine === 'sqlite') {
        await page.screenshot({ path: join(shots, 'points-grouped-desktop.png'), fullPage: true });
        const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true, locale: 'ko-KR', timezoneId: 'Asia/Seoul' });
        const p = await phone.newPage();
        await signIn(p);
        await p.goto(`${t.url}/console/points`);
        await p.locator('details.ledger-send summary').first().click();
        await p.screenshot({ path: join(shots, 'points-grouped-phone.png'), fullPage: true });
        await phone.close();
      }
    } finally {
      await ctx.close();
    }
  });
});
