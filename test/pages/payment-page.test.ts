import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { findWhole } from '../helpers/text.js';

const CARD = { cardNumber: '4242 4242 4242 4242', expiry: '12/35', birth: '920817', cardPassword: '12', installment: '00' };

interface Page {
  status: number;
  headers: Headers;
  text: string;
}

async function request(url: string, init: RequestInit = {}): Promise<Page> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

forEachEngine('payment page', (engine) => {
  const t = withApp(engine, {}, { keyIn: true });

  /** Creates a payment through the signed API and returns its page link parts. */
  async function create(over: Record<string, unknown> = {}) {
    const body = paymentBody(over);
    const r = await t.gw('requestPayment', body);
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    const link = new URL(r.body.result_data.REDIRECT_URL);
    return { body, link, tid: link.searchParams.get('tid')!, token: link.searchParams.get('token')! };
  }
  const open = (link: URL | string) => request(String(link));
  const pay = (tid: string, token: string, fields: Record<string, string> = {}) =>
    request(`${t.url}/checkout/pay`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ tid, token, ...CARD, ...fields }).toString(),
    });
  const search = async (transSeqNo: unknown) => (await t.gw('searchPayment', { TRANS_SEQNO: transSeqNo })).body.result_data;
  const attempts = (paymentId: string) =>
    t.app.sunap.database.db.selectFrom('payment_attempts').selectAll().where('payment_id', '=', paymentId).execute();

  function assertPageHeaders(p: Page) {
    assert.equal(p.headers.get('cache-control'), 'no-store');
    assert.equal(p.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(p.headers.get('x-frame-options'), 'DENY');
    const csp = p.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /form-action 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /script-src/);
  }
  function assertNoScript(p: Page) {
    assert.doesNotMatch(p.text, /<script/i);
  }

  test('renders the form: store, reason, amount, info message, payer, card fields', async () => {
    const { link } = await create({ INFO_MESSAGE: '수업료는 매월 10일까지 납부해 주세요.', REQUEST_REASON: '11월 수강료 <b>특강</b>' });
    const p = await open(link);
    assert.equal(p.status, 200);
    assert.match(p.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    assertPageHeaders(p);
    assertNoScript(p);
    assert.match(p.text, /<html lang="ko">/);
    assert.ok(p.text.includes('128,000원'));
    assert.ok(p.text.includes('행복 피아노 학원'));
    assert.ok(p.text.includes('11월 수강료 &#60;b&#62;특강&#60;/b&#62;'), 'reason shown, escaped');
    assert.ok(!p.text.includes('<b>특강'), 'no markup injection');
    assert.ok(p.text.includes('수업료는 매월 10일까지 납부해 주세요.'));
    assert.ok(p.text.includes('홍길동'));
    assert.match(p.text, /<form method="post" action="\/checkout\/pay">/);
    assert.match(p.text, /<label for="cardNumber">카드번호<\/label>/);
    assert.match(p.text, /id="cardNumber" name="cardNumber"[^>]*inputmode="numeric" autocomplete="cc-number"/);
    assert.match(p.text, /id="expiry" name="expiry"[^>]*autocomplete="cc-exp"/);
    assert.match(p.text, /id="birth" name="birth"[^>]*inputmode="numeric"/);
    assert.match(p.text, /id="cardPassword" name="cardPassword"[^>]*type="password" inputmode="numeric"[^>]*maxlength="2"/);
    assert.match(p.text, /<option value="00" selected>일시불<\/option>/);
    assert.match(p.text, /<option value="02">2개월<\/option>/);
    assert.match(p.text, /<option value="12">12개월<\/option>/);
    assert.doesNotMatch(p.text, /table class="items"/, 'a payment without items shows no item table');
  });

  test('a BILL payment with items shows them all in the item table (no SHOP-only publisher)', async () => {
    const ITEMS = Array.from({ length: 7 }, (_, i) => ({ name: `항목 ${i + 1}`, unitPrice: 10000, publisher: '출판사' }));
    const { link } = await create({ orderType: 'BILL', APPROVAL_AMOUNT: '70000', ITEMS });
    const p = await open(link);
    assert.equal(p.status, 200);
    const table = /<table class="items">[\s\S]*<\/table>/.exec(p.text)?.[0] ?? '';
    assert.ok(table.includes('<caption>청구 항목</caption>'), 'item table present');
    for (const it of ITEMS) assert.ok(table.includes(it.name), `table shows ${it.name}`);
    assert.ok(!table.includes('출판사'), 'publisher is a SHOP detail');
    assert.ok(table.includes('<td class="num">70,000원</td>'));
  });

  test('SHOP shows the item table with qty, unit price, discount, line amount and publisher', async () => {
    const { link } = await create({
      orderType: 'SHOP', APPROVAL_AMOUNT: '120000',
      ITEMS: [
        { name: '피아노 교재', unitPrice: 15000, qty: 2, publisher: '음악출판사' },
        { name: '개인 레슨', unitPrice: 100000, discountAmount: 10, discountUnit: 'RATE' },
      ],
    });
    const p = await open(link);
    assert.equal(p.status, 200);
    const table = /<table class="items">[\s\S]*<\/table>/.exec(p.text)?.[0] ?? '';
    assert.ok(table, 'item table present');
    for (const s of ['<caption>주문 상품</caption>', '피아노 교재', '음악출판사', '15,000원 × 2개', '30,000원', '개인 레슨', '100,000원 × 1개',
      '할인 -10,000원 (10%)', '90,000원', '<td class="num">120,000원</td>']) {
      assert.ok(table.includes(s), `table shows ${s}`);
    }
  });

  test('unknown tid, wrong token and missing query answer the same 404 page', async () => {
    const { tid, token } = await create();
    // One character off, and never by chance the same token (a fixed "xx" ending was, 1 in 4,096).
    const wrongToken = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const wrong = await open(`${t.url}/checkout?tid=${tid}&token=${wrongToken}`);
    const unknown = await open(`${t.url}/checkout?tid=00000000-0000-0000-0000-000000000000&token=${token}`);
    const none = await open(`${t.url}/checkout`);
    const tidOnly = await open(`${t.url}/checkout?tid=${tid}`);
    const tokenOnly = await open(`${t.url}/checkout?token=${token}`);
    const twoTokens = await open(`${t.url}/checkout?tid=${tid}&token=${token}&token=${token}`);
    // A well-signed link whose payment is gone (never made, or removed since).
    const ghost = '00000000-0000-0000-0000-00000000beef';
    const gone = await open(`${t.url}/checkout?tid=${ghost}&token=${t.app.sunap.gateway.pageToken(ghost)}`);
    for (const p of [wrong, unknown, none, tidOnly, tokenOnly, twoTokens, gone]) {
      assert.equal(p.status, 404);
      assertPageHeaders(p);
      assert.ok(p.text.includes('결제 정보를 찾을 수 없습니다'));
      assert.doesNotMatch(p.text, /<form/);
    }
    assert.equal(wrong.text, unknown.text);
    const post = await pay(tid, 'nope');
    assert.equal(post.status, 404);
    assert.equal(post.text, wrong.text);
    assert.equal((await attempts(tid)).length, 0);
  });

  test('stylesheet is served as text/css with a long cache', async () => {
    const css = await open(`${t.url}/assets/sunap.css`);
    assert.equal(css.status, 200);
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    assert.match(css.headers.get('cache-control') ?? '', /max-age=\d{6,}/);
    assert.ok(css.text.includes('.btn'));
    const again = await request(`${t.url}/assets/sunap.css`, { headers: { 'if-none-match': css.headers.get('etag')! } });
    assert.equal(again.status, 304);
  });

  test('pay with 4242…: 303 to the receipt, searchPayment says APPROVE_COMPLETE; a re-post never pays twice', async () => {
    const { body, link, tid, token } = await create();
    const r = await pay(tid, token, { installment: '03' });
    assert.equal(r.status, 303, r.text);
    assertPageHeaders(r);
    const location = r.headers.get('location')!;
    assert.equal(location, `/checkout?tid=${tid}&token=${encodeURIComponent(token)}`);
    const s = await search(body.TRANS_SEQNO);
    assert.equal(s.APPROVE_STATUS, 'APPROVE_COMPLETE');
    assert.equal(s.INSTALLMENT_MONTH, '03');

    const receipt = await open(new URL(location, link));
    assert.equal(receipt.status, 200);
    assertPageHeaders(receipt);
    assertNoScript(receipt);
    assert.doesNotMatch(receipt.text, /<form/);
    for (const x of ['결제가 완료되었습니다', '128,000원', '행복 피아노 학원', '김대표', '123-45-67890', '02-1234-5678', '4242-42**-****-4242',
      '신한카드', '3개월', s.APPROVAL_NUMBER, '116,364원', '11,636원', String(body.TRANS_SEQNO)]) {
      assert.ok(receipt.text.includes(x), `receipt shows ${x}`);
    }
    const at = s.APPROVAL_DATETIME as string;
    assert.ok(receipt.text.includes(`${at.slice(0, 4)}-${at.slice(4, 6)}-${at.slice(6, 8)} ${at.slice(8, 10)}:${at.slice(10, 12)}:${at.slice(12, 14)} (KST)`), 'approval time in KST');

    const again = await pay(tid, token, { cardNumber: '5555555555554444' });
    assert.equal(again.status, 303);
    assert.equal(again.headers.get('location'), location);
    const rows = await attempts(tid);
    assert.equal(rows.filter((a) => a.status === 'APPROVED').length, 1);
    assert.equal(rows.length, 1, 're-post of a paid payment opens no attempt');
    assert.equal((await search(body.TRANS_SEQNO)).APPROVAL_NUMBER, s.APPROVAL_NUMBER);
  });

  test('a declined card shows the message, keeps STORE_REQUEST, never echoes the card; another card then works', async () => {
    const { body, tid, token } = await create();
    const r = await pay(tid, token, { cardNumber: '4000000000000002', installment: '05' });
    assert.equal(r.status, 200);
    assertPageHeaders(r);
    assertNoScript(r);
    assert.ok(r.text.includes('카드사에서 승인을 거절했습니다'));
    assert.match(r.text, /role="alert"/);
    assert.match(r.text, /<form method="post"/);
    assert.ok(!r.text.includes('4000000000000002') && !r.text.includes('12/35') && !r.text.includes('920817'), 'no card data in the page');
    assert.match(r.text, /<option value="05" selected>5개월<\/option>/, 'installment choice kept');
    assert.equal((await search(body.TRANS_SEQNO)).APPROVE_STATUS, 'STORE_REQUEST');

    const err = await pay(tid, token, { cardNumber: '4000000000000119' });
    assert.equal(err.status, 200);
    assert.ok(err.text.includes('카드사 처리 중 오류가 발생했습니다'));
    assert.equal((await search(body.TRANS_SEQNO)).APPROVE_STATUS, 'STORE_REQUEST');

    const ok = await pay(tid, token, { cardNumber: '5555-5555-5555-4444' });
    assert.equal(ok.status, 303);
    const s = await search(body.TRANS_SEQNO);
    assert.equal(s.APPROVE_STATUS, 'APPROVE_COMPLETE');
    assert.equal(s.ISSUER_NAME, 'KB국민카드');
    assert.deepEqual((await attempts(tid)).map((a) => a.status).sort(), ['APPROVED', 'DECLINED', 'ERROR']);
  });

  test('server-side validation names the field, answers 400 and never echoes the card number', async () => {
    const { body, tid, token } = await create();
    const cases: [Record<string, string>, RegExp][] = [
      [{ cardNumber: '4242424242424241' }, /카드번호가 올바르지 않습니다/],
      [{ cardNumber: '' }, /카드번호를 입력해 주세요/],
      [{ expiry: '01/20' }, /유효기간이 지난 카드입니다/],
      [{ expiry: '13/30' }, /유효기간이 올바르지 않습니다/],
      [{ birth: '12345' }, /생년월일 또는 사업자등록번호: 생년월일 6자리 또는 사업자등록번호 10자리/],
      [{ birth: '901301' }, /생년월일 6자리\(YYMMDD\)가 올바른 날짜가 아닙니다/],
      [{ cardPassword: '1' }, /카드 비밀번호 앞 2자리를 숫자 2자리로 입력해 주세요/],
      [{ installment: '13' }, /할부 기간이 올바르지 않습니다/],
    ];
    for (const [fields, message] of cases) {
      const r = await pay(tid, token, fields);
      assert.equal(r.status, 400, JSON.stringify(fields));
      assertPageHeaders(r);
      assert.match(r.text, message);
      assert.match(r.text, /aria-invalid="true"/);
      assert.ok(!r.text.includes('4242424242424241') && !r.text.includes('4242424242424242'), 'card number not echoed');
      assert.ok(!/value="(12\/35|920817)"/.test(r.text), 'no card field value echoed');
    }
    // Accepted spellings: digits only for the expiry, a 10-digit business number, spaces in the number.
    const ok = await pay(tid, token, { cardNumber: '4242 4242 4242 4242', expiry: '1235', birth: '1234567890' });
    assert.equal(ok.status, 303, ok.text);
    assert.equal((await search(body.TRANS_SEQNO)).APPROVE_STATUS, 'APPROVE_COMPLETE');
  });

  test('installments are refused under 50,000 won and not offered', async () => {
    const { body, link, tid, token } = await create({ APPROVAL_AMOUNT: '30000' });
    const p = await open(link);
    assert.ok(p.text.includes('30,000원'));
    assert.doesNotMatch(p.text, /<option value="02"/);
    assert.ok(p.text.includes('할부는 50,000원 이상 결제할 때 선택할 수 있습니다.'));
    const r = await pay(tid, token, { installment: '03' });
    assert.equal(r.status, 400);
    assert.match(r.text, /할부 기간: 할부는 50,000원 이상 결제할 때만 가능합니다/);
    assert.equal((await search(body.TRANS_SEQNO)).APPROVE_STATUS, 'STORE_REQUEST');
    assert.equal((await attempts(tid)).length, 0, 'nothing reached the processor');
    const lump = await pay(tid, token, { installment: '00' });
    assert.equal(lump.status, 303);
    assert.equal((await search(body.TRANS_SEQNO)).INSTALLMENT_MONTH, '00');
  });

  test('two simultaneous posts approve exactly once and enqueue one callback', async () => {
    const { body, tid, token } = await create();
    const [a, b] = await Promise.all([pay(tid, token), pay(tid, token, { cardNumber: '5555555555554444' })]);
    assert.equal(a.status, 303, a.text);
    assert.equal(b.status, 303, b.text);
    assert.equal(a.headers.get('location'), b.headers.get('location'));
    const rows = await attempts(tid);
    assert.equal(rows.filter((r) => r.status === 'APPROVED').length, 1, JSON.stringify(rows.map((r) => r.status)));
    assert.equal((await search(body.TRANS_SEQNO)).APPROVE_STATUS, 'APPROVE_COMPLETE');
    const jobs = await t.app.sunap.database.db.selectFrom('jobs').select('id').where('kind', '=', 'gateway.callback')
      .where('payload', 'like', `%${tid}%`).execute();
    assert.equal(jobs.length, 1);
  });

  test('RETURN_DISPLAY_YN=Y: the form may post on to RETURN_URL, and approval redirects there with the five parameters', async () => {
    const { body, link, tid, token } = await create({
      RETURN_DISPLAY_YN: 'Y', RETURN_URL: 'https://shop.example.com/orders/done?order=42&lang=ko', TEMP_VALUE: 'ord-42 &x',
    });
    const form = await open(link);
    assert.match(form.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/shop\.example\.com(;|$)/);
    const r = await pay(tid, token);
    assert.equal(r.status, 303);
    assert.match(r.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/shop\.example\.com/);
    const back = new URL(r.headers.get('location')!);
    assert.equal(back.origin + back.pathname, 'https://shop.example.com/orders/done');
    assert.deepEqual([...back.searchParams.keys()], ['order', 'lang', 'RESULT_CODE', 'RESULT_MSG', 'TRANS_SEQNO', 'APPROVAL_AMOUNT', 'TEMP_VALUE']);
    assert.equal(back.searchParams.get('order'), '42');
    assert.equal(back.searchParams.get('lang'), 'ko');
    assert.equal(back.searchParams.get('RESULT_CODE'), '0000');
    assert.equal(back.searchParams.get('RESULT_MSG'), '승인되었습니다');
    assert.equal(back.searchParams.get('TRANS_SEQNO'), body.TRANS_SEQNO);
    assert.equal(back.searchParams.get('APPROVAL_AMOUNT'), '128000');
    assert.equal(back.searchParams.get('TEMP_VALUE'), 'ord-42 &x');
    assert.equal((await search(body.TRANS_SEQNO)).APPROVE_STATUS, 'APPROVE_COMPLETE');

    // Opening the link again shows the receipt with a way back; a re-post shows the receipt too.
    const receipt = await open(link);
    assert.ok(receipt.text.includes('가맹점으로 돌아가기'));
    assert.ok(receipt.text.includes('href="https://shop.example.com/orders/done?order&#61;42'), 'link back to RETURN_URL');
    const again = await pay(tid, token);
    assert.equal(again.status, 303);
    assert.match(again.headers.get('location')!, /^\/checkout\?/);
  });

  test('card number, expiry and birth date are never stored or logged', async () => {
    const secret = { cardNumber: '4242424242424242', expiry: '09/2041', birth: '880315', cardPassword: '37' };
    const declined = { ...secret, cardNumber: '4000000000009995' };
    const a = await create();
    const bad = await pay(a.tid, a.token, { ...secret, expiry: '00/41' }); // validation error path
    assert.equal(bad.status, 400);
    const d = await pay(a.tid, a.token, declined); // decline path
    assert.equal(d.status, 200);
    assert.ok(d.text.includes('잔액이 부족합니다'));
    const ok = await pay(a.tid, a.token, secret);
    assert.equal(ok.status, 303);
    const b = await create();
    const [x, y] = await Promise.all([pay(b.tid, b.token, secret), pay(b.tid, b.token, secret)]);
    assert.deepEqual([x.status, y.status], [303, 303]);
    await new Promise((r) => setTimeout(r, 300)); // let the callback job's attempt get logged too

    const needles = ['4242424242424242', '4000000000009995', '09/2041', '092041', '880315', 'expiryMonth', 'expiryYear', 'passwordDigits', 'holderId', 'cardPassword='];
    // Six digits turn up by chance inside other numbers (response times, timestamps, approval
    // numbers): where values are delimited (log lines, PostgreSQL rows as text) those needles
    // count as whole values only, as a leaked field would be written.
    const found = (text: string, n: string) => (/^\d{6}$/.test(n) ? findWhole(text, n) !== null : text.includes(n));
    const logs = t.logs.join('');
    assert.ok(logs.length > 0);
    for (const n of needles) assert.ok(!found(logs, n), `logs contain ${n}`);

    // Every row of every table as delimited text: there the six-digit needles count as whole
    // values, as in the logs.
    const db = t.app.sunap.database.db;
    const sqlite = t.databaseUrl.startsWith('sqlite:');
    const tables = sqlite
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)).rows.map((r) => r.name)
      : (await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public'`.execute(db)).rows.map((r) => r.table_name);
    const parts: string[] = [];
    for (const table of tables) {
      const rows = sqlite
        ? (await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db)).rows.map((r) => JSON.stringify(r))
        : (await sql<{ r: string }>`select t::text as r from ${sql.table(table)} t`.execute(db)).rows.map((r) => r.r);
      parts.push(...rows);
    }
    const stored = parts.join('\n');
    assert.ok(found(stored, '424242'), 'the BIN is stored, a six-digit whole value the scan sees (its sanity check)');
    for (const n of needles) assert.ok(!found(stored, n), `database contains ${n}`);
    if (sqlite) {
      // The file itself too (freed pages, the WAL), where columns are not delimited: every
      // occurrence of the longer needles counts. Six digits are left to the row scan above,
      // since here they turn up by chance inside stored timestamps and approval numbers.
      const dir = dirname(t.databaseUrl.slice('sqlite:'.length));
      const raw = readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')).join('\n');
      assert.ok(raw.includes('424242'), 'the BIN is in the file (sanity check of the scan)');
      for (const n of needles.filter((x) => !/^\d{6}$/.test(x))) assert.ok(!raw.includes(n), `database file contains ${n}`);
    }
  });

  test('cancelled, cancel-failed and deleted payments show their state and no form; posts do nothing', async () => {
    const cancelled = await create();
    assert.equal((await pay(cancelled.tid, cancelled.token)).status, 303);
    const c = await t.gw('requestPaymentCancel', { TRANS_SEQNO: cancelled.body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
    assert.equal(c.body.result_data.RESULT_CODE, '0000', JSON.stringify(c.body));

    const failing = await create();
    assert.equal((await pay(failing.tid, failing.token, { cardNumber: '4000000000000259' })).status, 303);
    const f = await t.gw('requestPaymentCancel', { TRANS_SEQNO: failing.body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
    assert.equal(f.body.result_data.RESULT_CODE, '4004');

    const deleted = await create();
    const del = await t.gw('requestPaymentCancel', { TRANS_SEQNO: deleted.body.TRANS_SEQNO, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' });
    assert.equal(del.body.result_data.RESULT_CODE, '0000', JSON.stringify(del.body));

    const cases: [typeof cancelled, string, string][] = [
      [cancelled, 'CANCEL_COMPLETE', '취소된 결제입니다'],
      [failing, 'CANCEL_FAIL', '결제 취소가 아직 완료되지 않았습니다'],
      [deleted, 'STORE_DELETE', '더 이상 결제할 수 없는 요청입니다'],
    ];
    for (const [p, state, title] of cases) {
      const page = await open(p.link);
      assert.equal(page.status, 200, state);
      assertPageHeaders(page);
      assertNoScript(page);
      assert.ok(page.text.includes(title), `${state} page says ${title}`);
      assert.ok(page.text.includes('128,000원'));
      assert.doesNotMatch(page.text, /<form|<input|결제하기/, `${state} page has no form`);
      const before = (await attempts(p.tid)).length;
      const post = await pay(p.tid, p.token);
      assert.equal(post.status, 303);
      assert.equal((await attempts(p.tid)).length, before, `${state}: a post opens no attempt`);
      assert.equal((await search(p.body.TRANS_SEQNO)).APPROVE_STATUS, state);
    }
  });

  test('a body that is not a form gets an HTML error page, not JSON', async () => {
    const r = await request(`${t.url}/checkout/pay`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<x/>' });
    assert.equal(r.status, 415);
    assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
    assertPageHeaders(r);
    assert.ok(r.text.includes('요청을 처리할 수 없습니다'));
  });
});
