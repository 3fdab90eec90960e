/**
 * Short payment links and the SMS/LMS choice (docs/invoicing.md, "SMS or LMS"): an SMS invoice
 * carries `/s/<code>`, a random code that redirects to the payment page, so the text fits 90
 * bytes in EUC-KR when the names and the reason allow; otherwise the whole invoice text goes
 * as LMS. ALIMTALK keeps the full link unless SUNAP_ALIMTALK_SHORT_LINK says its template
 * allows the short one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ensureShortCode, findShortLink, newShortCode, SHORT_CODE_ALPHABET, SHORT_CODE_LENGTH } from '../../src/gateway/short-links-repository.js';
import { fillTemplate, INVOICE_TEMPLATE, invoiceVariables, SMS_TEMPLATE, smsText } from '../../src/invoicing/items.js';
import { redactUrl } from '../../src/platform/logging.js';
import { eucKrBytes, SMS_MAX_BYTES } from '../../src/ports/messaging.js';
import { forEachEngine, withApp, type TestApp } from '../helpers/app.js';
import { createOne, newAccount, waitSent, type Login } from './support.js';

const CODE = /\/s\/([0-9A-Za-z]{12})$/;

describe('the SMS text and its byte rule', () => {
  const vars = (reason: string, link = 'https://pay.example.com/s/AbCdEfGhIjKl') => invoiceVariables({
    businessName: '행복 피아노 학원', receiverName: '홍길동', reason, amount: 128_000, items: [], description: null, link,
  });

  test('SMS holds 90 bytes; ASCII counts one, Hangul two', () => {
    assert.equal(SMS_MAX_BYTES, 90);
    assert.equal(eucKrBytes('a'.repeat(90)), 90);
    assert.equal(eucKrBytes('가'.repeat(45)), 90);
    assert.equal(eucKrBytes(`${'가'.repeat(44)}a`), 89);
  });

  test('the one-line SMS at exactly 90 bytes is the message; at 91 the whole invoice text goes instead (LMS)', () => {
    // [행복 피아노 학원] 홍길동님 <reason> 128,000원 <38-byte link>: 19 + 9 + (reason + 1) + 10 + 38 bytes.
    const base = eucKrBytes(fillTemplate(SMS_TEMPLATE, vars('')));
    const at90 = vars('x'.repeat(90 - base));
    const at91 = vars('x'.repeat(91 - base));
    assert.equal(eucKrBytes(fillTemplate(SMS_TEMPLATE, at90)), 90);
    assert.equal(eucKrBytes(fillTemplate(SMS_TEMPLATE, at91)), 91);
    assert.equal(smsText(at90), `[행복 피아노 학원] 홍길동님 ${'x'.repeat(90 - base)} 128,000원 https://pay.example.com/s/AbCdEfGhIjKl`);
    assert.equal(smsText(at91), fillTemplate(INVOICE_TEMPLATE, at91), 'over 90: the whole invoice, which the adapter sends as LMS');
    assert.ok(eucKrBytes(smsText(at91)) > SMS_MAX_BYTES);
    // The same rule with Hangul: one character more is two bytes more.
    const hangul = vars('가'.repeat(Math.floor((90 - base) / 2)));
    assert.ok(eucKrBytes(smsText(hangul)) <= 90);
    assert.equal(smsText(hangul).split('\n').length, 1);
  });

  test('the full payment link alone (about 100 bytes) never fits an SMS: that is why SMS carries the short one', () => {
    const full = `https://pay.example.com/checkout?tid=${'p'.repeat(26)}&token=${'t'.repeat(43)}`;
    assert.ok(eucKrBytes(full) > SMS_MAX_BYTES);
    assert.equal(smsText(vars('수강료', full)), fillTemplate(INVOICE_TEMPLATE, vars('수강료', full)));
  });
});

describe('short codes', () => {
  test('12 characters of [0-9A-Za-z] drawn at random: every position takes many values, and no two of 5,000 are alike', () => {
    assert.equal(SHORT_CODE_LENGTH, 12);
    assert.equal(SHORT_CODE_ALPHABET.length, 62);
    const codes = Array.from({ length: 5000 }, newShortCode);
    for (const c of codes) assert.match(c, /^[0-9A-Za-z]{12}$/);
    assert.equal(new Set(codes).size, codes.length);
    for (let i = 0; i < SHORT_CODE_LENGTH; i++) {
      const seen = new Set(codes.map((c) => c[i]));
      assert.equal(seen.size, 62, `position ${i} uses the whole alphabet`);
    }
  });

  test('the request log never holds a code', () => {
    assert.equal(redactUrl('/s/AbCdEfGhIjKl'), '/s/[redacted]');
    assert.equal(redactUrl('/s/AbCdEfGhIjKl?x=1'), '/s/[redacted]');
    assert.equal(redactUrl('/sales/x'), '/sales/x');
  });
});

forEachEngine('short payment links', (engine) => {
  const t = withApp(engine);
  const messagesTo = async (phone: string) => (await t.get(`/sandbox/messages?phone=${phone}`)).body.messages as any[];
  const send = async (a: Login, phone: string, over: Record<string, unknown> = {}) => {
    const id = await createOne(t, a, { members: [{ studentName: '홍길동', studentPhone: phone }], ...over });
    const d = await waitSent(t, a, id);
    const [m] = await messagesTo(phone);
    return { id, d, m };
  };
  const open = (t2: TestApp, path: string) => fetch(`${t2.url}${path}`, { redirect: 'manual' });

  test('an SMS invoice: one line under 90 bytes with /s/<code>, which redirects (302, no-store) to the payment page that opens', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { d, m } = await send(a, '01071110001', { sendChannel: 'SMS' });
    assert.equal(d.sendHistories[0].sendResult, 'SUCCESS');
    assert.equal(m.channel, 'SMS');
    const code = CODE.exec(m.text)?.[1];
    assert.ok(code, `the text ends with the short link:\n${m.text}`);
    assert.equal(m.text, `[행복 피아노 학원] 홍길동님 11월 수강료 128,000원 ${t.url}/s/${code}`);
    assert.ok(eucKrBytes(m.text) <= 90, `${eucKrBytes(m.text)} bytes`);
    assert.equal(m.link, `${t.url}/s/${code}`);
    const res = await open(t, `/s/${code}`);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const pub = await t.get(`/app/v1/sales/public/bill/${d.bill.transSeqNo}`);
    assert.equal(res.headers.get('location'), pub.body.result_data.paymentUrl, 'the invoice\'s own payment page');
    const page = await fetch(res.headers.get('location')!);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /128,000/);
    assert.ok(!t.logs.join('\n').includes(code), 'the code is not logged');
  });

  test('a reason too long for 90 bytes: the whole invoice text with the short link (LMS)', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { m } = await send(a, '01071110002', { sendChannel: 'SMS', reason: '2026년 겨울 방학 특강 및 교재비 청구' });
    assert.ok(eucKrBytes(m.text) > 90);
    assert.match(m.text, /청구서 안내/);
    assert.match(m.text, new RegExp(`결제하기: ${t.url}/s/[0-9A-Za-z]{12}$`));
  });

  test('ALIMTALK keeps the full payment link (the template is not said to allow the short one)', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { m } = await send(a, '01071110003', { sendChannel: 'ALIMTALK' });
    assert.equal(m.channel, 'ALIMTALK');
    assert.match(m.link, /\/checkout\?tid=.+&token=/);
    assert.ok(m.text.includes(m.link));
    assert.doesNotMatch(m.text, /\/s\/[0-9A-Za-z]{12}/);
  });

  test('a resend reuses the payment\'s one code; unknown, malformed and near-miss codes all answer the same 404 page', async () => {
    const a = await newAccount(t, { points: 1000 });
    const { id, m } = await send(a, '01071110004', { sendChannel: 'SMS' });
    const code = CODE.exec(m.text)![1]!;
    const r = await t.post('/app/v1/sales/bill/resend', { billIds: [id] }, a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    let again: any[] = [];
    for (let i = 0; i < 100 && again.length < 2; i++) {
      again = await messagesTo('01071110004');
      if (again.length < 2) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(again.length, 2);
    for (const x of again) assert.ok(x.text.endsWith(`/s/${code}`), 'the same code');
    const rows = await t.app.sunap.database.db.selectFrom('short_links').selectAll().where('code', '=', code).execute();
    assert.equal(rows.length, 1);
    const flipped = code.slice(0, -1) + (code.endsWith('a') ? 'b' : 'a');
    const bodies = new Set<string>();
    for (const path of [`/s/${flipped}`, '/s/short', `/s/${code}x`, `/s/${'!'.repeat(12)}`, `/s/${code.toLowerCase() === code ? code.toUpperCase() : code.toLowerCase()}`]) {
      const res = await open(t, path);
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      bodies.add(await res.text());
    }
    assert.equal(bodies.size, 1, 'every unknown code reads the same');
    assert.match([...bodies][0]!, /결제 링크를 찾을 수 없습니다/);
  });

  test('tenants: each store\'s link opens only its own payment, and the codes say nothing of the store', async () => {
    const other = await t.addPlatform();
    const a = await newAccount(t, { points: 1000 });
    const b = await newAccount(t, { points: 1000, storeCode: other.storeCode });
    const ma = (await send(a, '01071110005', { sendChannel: 'SMS' })).m;
    const mb = (await send(b, '01071110006', { sendChannel: 'SMS' })).m;
    const [ca, cb] = [CODE.exec(ma.text)![1]!, CODE.exec(mb.text)![1]!];
    assert.notEqual(ca, cb);
    const db = t.app.sunap.database.db;
    const rows = await db.selectFrom('short_links').innerJoin('payments', 'payments.id', 'short_links.payment_id')
      .select(['short_links.code', 'short_links.store_code', 'payments.store_code as payment_store']).where('short_links.code', 'in', [ca, cb]).execute();
    const byCode = new Map(rows.map((r) => [r.code, r]));
    assert.equal(byCode.get(ca)!.store_code, t.storeCode);
    assert.equal(byCode.get(ca)!.payment_store, t.storeCode);
    assert.equal(byCode.get(cb)!.store_code, other.storeCode);
    assert.equal(byCode.get(cb)!.payment_store, other.storeCode);
    for (const c of [ca, cb]) {
      assert.ok(!c.includes(t.storeCode) && !c.includes(other.storeCode));
    }
    const [la, lb] = [(await open(t, `/s/${ca}`)).headers.get('location')!, (await open(t, `/s/${cb}`)).headers.get('location')!];
    const tidOf = (u: string) => new URL(u).searchParams.get('tid');
    assert.notEqual(tidOf(la), tidOf(lb));
    const paymentOf = async (code: string) => (await db.selectFrom('short_links').select('payment_id').where('code', '=', code).executeTakeFirstOrThrow()).payment_id;
    assert.equal(tidOf(la), await paymentOf(ca));
    assert.equal(tidOf(lb), await paymentOf(cb));
  });

  test('one code per payment, made once even when two sends ask at once; a malformed code is not looked up', async () => {
    const db = t.app.sunap.database.db;
    const [x, y] = await Promise.all([ensureShortCode(db, t.storeCode, 'pay-race-1', 1), ensureShortCode(db, t.storeCode, 'pay-race-1', 2)]);
    assert.equal(x, y);
    assert.notEqual(await ensureShortCode(db, t.storeCode, 'pay-race-2', 3), x);
    assert.deepEqual(await findShortLink(db, x), { paymentId: 'pay-race-1', storeCode: t.storeCode });
    // Malformed codes are answered without a query: count what reaches the database.
    let queries = 0;
    const counted = db.withPlugin({ transformQuery: ({ node }) => { queries++; return node; }, transformResult: async ({ result }) => result });
    for (const bad of [`${x}'`, x.slice(1), `${x}x`, `x${x}`, `${x.slice(0, 11)}-`, '']) assert.equal(await findShortLink(counted, bad), null, bad);
    assert.equal(queries, 0, 'no query for a malformed code');
    assert.deepEqual(await findShortLink(counted, x), { paymentId: 'pay-race-1', storeCode: t.storeCode });
    assert.equal(queries, 1);
    // A payment that has its code: found, nothing written.
    const inserts: string[] = [];
    const watched = db.withPlugin({ transformQuery: ({ node }) => { inserts.push(node.kind); return node; }, transformResult: async ({ result }) => result });
    assert.equal(await ensureShortCode(watched, t.storeCode, 'pay-race-1', 4), x);
    assert.deepEqual(inserts, ['SelectQueryNode'], 'one read, no insert');
  });
});

forEachEngine('short payment links in ALIMTALK when the template allows them', (engine) => {
  const t = withApp(engine, { SUNAP_ALIMTALK_SHORT_LINK: 'true' });

  test('SUNAP_ALIMTALK_SHORT_LINK=true: the ALIMTALK message\'s #{결제링크} is the short link, and it opens the payment page', async () => {
    const a = await newAccount(t, { points: 1000 });
    const id = await createOne(t, a, { members: [{ studentName: '홍길동', studentPhone: '01071110007' }], sendChannel: 'ALIMTALK' });
    await waitSent(t, a, id);
    const [m] = (await t.get('/sandbox/messages?phone=01071110007')).body.messages as any[];
    assert.equal(m.channel, 'ALIMTALK');
    assert.match(m.link, new RegExp(`^${t.url}/s/[0-9A-Za-z]{12}$`));
    assert.ok(m.text.includes(`결제하기: ${m.link}`));
    const res = await fetch(m.link, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.match(res.headers.get('location')!, /\/checkout\?tid=/);
  });
});
