import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Insertable } from 'kysely';
import type { InvoiceTable } from '../../src/db/schema.js';
import { findStoreByCode } from '../../src/gateway/repository.js';
import { maskPhone } from '../../src/invoicing/public.js';
import { escapeHtml } from '../../src/pages/html.js';
import { kstIso } from '../../src/platform/kst.js';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, seqNo, type TestApp, withApp } from '../helpers/app.js';
import { docExample } from '../helpers/openapi.js';

const ITEMS = [
  { name: '피아노 레슨', price: 100000, qty: 1, discountAmount: 0, discountUnit: 'AMOUNT', type: null, amount: 100000 },
  { name: '교재 <b>', price: 15000, qty: 2, discountAmount: 2000, discountUnit: 'AMOUNT', type: null, amount: 28000 },
];

/** An invoice of the test store, set up in the database (the core API is another suite's subject). */
async function makeInvoice(t: TestApp, over: Partial<Insertable<InvoiceTable>> = {}, withPayment = true) {
  const { db } = t.app.sunap.database;
  const now = t.app.sunap.clock.nowMs();
  let account = await db.selectFrom('accounts').select('id').where('store_code', '=', t.storeCode).executeTakeFirst();
  if (!account) {
    account = { id: newId() };
    await db.insertInto('accounts').values({ id: account.id, email: `${account.id}@example.com`, password_hash: 'x', store_code: t.storeCode, invoicing_enabled: 1, created_at: now }).execute();
  }
  const transSeqNo = seqNo('P');
  let paymentId: string | null = null;
  if (withPayment) {
    const store = (await findStoreByCode(db, t.storeCode))!;
    const p = await t.app.sunap.gateway.createPayment(store, {
      transSeqNo, amount: Number(over.amount ?? 128000), mobileNo: '01012345678', payUserName: '홍길동', requestReason: String(over.reason ?? '11월 수강료'),
    });
    paymentId = p.id;
  }
  return db.insertInto('invoices').values({
    unique_id: newId(), account_id: account.id, store_code: t.storeCode, trans_seqno: transSeqNo, payment_id: paymentId,
    status: 'PENDING', send_status: 'SENT', deleted_at: null, request_id: null, request_hash: null, template_type: 'SAME',
    receiver_name: '홍길동', receiver_phone: '01012345678', guardian_phone: null, amount: 128000, reason: '11월 수강료',
    description: '수업료는 매월 10일까지 납부해 주세요.', items_json: JSON.stringify(ITEMS), send_channel: 'ALIMTALK',
    webhook_url: null, webhook_secret_sealed: null, bill_template_id: null, related_subject: null, etc: null,
    student_birth_date: null, classroom_id: null, send_count: 1, first_sent_at: now, last_sent_at: now, done_at: null,
    canceled_at: null, created_at: now, updated_at: now, ...over,
  }).returningAll().executeTakeFirstOrThrow();
}

test('phone masking hides the middle digits', () => {
  assert.equal(maskPhone('01012345678'), '010-****-5678');
  assert.equal(maskPhone('0111235678'), '011-***-5678');
  assert.equal(maskPhone('0212345678'), '02-****-5678');
});

function assertPageHeaders(h: Headers) {
  assert.match(h.get('content-type') ?? '', /^text\/html; charset=utf-8/);
  assert.equal(h.get('cache-control'), 'no-store');
  assert.equal(h.get('referrer-policy'), 'no-referrer');
  assert.equal(h.get('x-frame-options'), 'DENY');
  assert.match(h.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.doesNotMatch(h.get('content-security-policy') ?? '', /script-src/);
}

forEachEngine('public invoice lookup and page', (engine) => {
  const t = withApp(engine);

  test('lookup: shape, masking, payment link, no authentication', async () => {
    const inv = await makeInvoice(t);
    const r = await t.get(`/app/v1/sales/public/bill/${inv.trans_seqno}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.result_code, 0);
    const payment = await t.app.sunap.gateway.findById(inv.payment_id!);
    assert.deepEqual(r.body.result_data, {
      transSeqNo: inv.trans_seqno,
      status: 'PENDING',
      paymentUrl: t.app.sunap.gateway.redirectUrl(payment!),
      corpName: '행복 피아노 학원',
      businessName: '행복 피아노 학원',
      receiverName: '홍길동',
      receiverPhoneMasked: '010-****-5678',
      reason: '11월 수강료',
      description: '수업료는 매월 10일까지 납부해 주세요.',
      amount: 128000,
      issuedAt: kstIso(inv.created_at),
      paidAt: null,
      canceledAt: null,
      dueDate: null,
      overdue: false,
      items: [{ name: '피아노 레슨', price: 100000, qty: 1 }, { name: '교재 <b>', price: 15000, qty: 2 }],
    });
    assert.ok(!r.text.includes('01012345678'), 'the full number never appears');
    // The link is the payment page link, usable as is.
    const page = await fetch(r.body.result_data.paymentUrl, { redirect: 'manual' });
    assert.notEqual(page.status, 404);
  });

  test('lookup: no payment issued yet, paid and cancelled invoices', async () => {
    const pending = await makeInvoice(t, {}, false);
    let r = await t.get(`/app/v1/sales/public/bill/${pending.trans_seqno}`);
    assert.equal(r.body.result_data.paymentUrl, null);
    assert.deepEqual(r.body.result_data.items.length, 2);

    const now = t.app.sunap.clock.nowMs();
    const done = await makeInvoice(t, { status: 'DONE', done_at: now, items_json: null, description: null });
    r = await t.get(`/app/v1/sales/public/bill/${done.trans_seqno}`);
    assert.equal(r.body.result_data.status, 'DONE');
    assert.equal(r.body.result_data.paidAt, kstIso(now));
    assert.equal(r.body.result_data.canceledAt, null);
    assert.equal(r.body.result_data.description, null);
    assert.deepEqual(r.body.result_data.items, []);

    const canceled = await makeInvoice(t, { status: 'CANCELED', done_at: now - 60_000, canceled_at: now });
    r = await t.get(`/app/v1/sales/public/bill/${canceled.trans_seqno}`);
    assert.equal(r.body.result_data.status, 'CANCELED');
    assert.equal(r.body.result_data.paidAt, kstIso(now - 60_000));
    assert.equal(r.body.result_data.canceledAt, kstIso(now));
  });

  test('lookup: unknown, deleted and overlong numbers answer 404 / -10', async () => {
    const deleted = await makeInvoice(t, { deleted_at: t.app.sunap.clock.nowMs() });
    // (Past Fastify's maxParamLength of 100 the router itself answers 414 before any route.)
    for (const n of ['NOPE-0001', deleted.trans_seqno, 'x'.repeat(90), '%3Cscript%3E']) {
      const r = await t.get(`/app/v1/sales/public/bill/${n}`);
      assert.equal(r.status, 404, n);
      assert.equal(r.body.result_code, -10);
      assert.equal(r.body.result_data, null);
      assert.match(r.body.result_msg, /no invoice/);
    }
  });

  test('lookup is documented under Invoicing in /docs', async () => {
    const r = await t.get('/docs/json');
    assert.equal(r.status, 200);
    const op = r.body.paths['/app/v1/sales/public/bill/{transSeqNo}']?.get;
    assert.ok(op, 'the lookup is in the OpenAPI document');
    assert.deepEqual(op.tags, ['Invoicing']);
    // The number is a documented path parameter, and the description names the answers the tests below see.
    assert.deepEqual(op.parameters.map((p: { name: string; in: string }) => [p.name, p.in]), [['transSeqNo', 'path']]);
    assert.ok(op.summary.length > 10, op.summary);
    assert.match(op.description, /404 with result_code -10/);
    assert.match(op.description, /60 calls a minute per client address \(429, -29\)/);
    const page = r.body.paths['/pay/{transSeqNo}']?.get;
    assert.ok(page, 'the page is in the OpenAPI document');
    // The examples look like what the lookup answers: a real number's form, the masking, KST times.
    const view = op.responses['200'].content['application/json'].schema.properties.result_data.properties;
    const inv = await makeInvoice(t);
    const real = (await t.get(`/app/v1/sales/public/bill/${inv.trans_seqno}`)).body.result_data;
    // (the form invoicing gives its numbers: test/invoicing/bills checks it on created invoices)
    assert.match(String(docExample(view.transSeqNo)), /^INV[A-Z2-7]{24}$/);
    assert.equal(docExample(view.receiverPhoneMasked), maskPhone('01012345678'));
    assert.match(String(docExample(view.issuedAt)), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    assert.match(real.issuedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
  });

  test('page: a pending invoice with its pay button, escaped text, page headers', async () => {
    const inv = await makeInvoice(t, { reason: '<script>alert(1)</script>', description: '"따옴표" & <i>기울임</i>' });
    const r = await t.get(`/pay/${inv.trans_seqno}`);
    assert.equal(r.status, 200);
    assertPageHeaders(r.headers);
    assert.ok(!r.text.includes('<script'), 'no script tag reaches the page');
    assert.ok(r.text.includes('&#60;script&#62;alert(1)&#60;/script&#62;'));
    assert.ok(r.text.includes('&#34;따옴표&#34; &#38; &#60;i&#62;기울임&#60;/i&#62;'));
    assert.ok(r.text.includes('교재 &#60;b&#62;'));
    assert.ok(r.text.includes('행복 피아노 학원'));
    assert.ok(r.text.includes('결제 대기'));
    assert.ok(r.text.includes('128,000원'));
    assert.ok(r.text.includes('100,000원') && r.text.includes('28,000원'), 'item lines with their nets');
    const link = escapeHtml(t.app.sunap.gateway.redirectUrl({ id: inv.payment_id! }));
    assert.ok(r.text.includes(`<a class="btn" href="${link}">`), 'the pay button links to the payment page');
    assert.ok(!r.text.includes('010-1234-5678') && !r.text.includes('01012345678'));
  });

  test('page: paid and cancelled invoices show their state and no pay button', async () => {
    const now = t.app.sunap.clock.nowMs();
    const done = await makeInvoice(t, { status: 'DONE', done_at: now });
    let r = await t.get(`/pay/${done.trans_seqno}`);
    assert.equal(r.status, 200);
    assert.ok(r.text.includes('결제 완료'));
    assert.ok(!r.text.includes('class="btn"'));
    const canceled = await makeInvoice(t, { status: 'CANCELED', done_at: now, canceled_at: now });
    r = await t.get(`/pay/${canceled.trans_seqno}`);
    assert.ok(r.text.includes('결제 취소'));
    assert.ok(!r.text.includes('class="btn"'));
    const unissued = await makeInvoice(t, {}, false);
    r = await t.get(`/pay/${unissued.trans_seqno}`);
    assert.ok(r.text.includes('결제 대기'));
    assert.ok(!r.text.includes('class="btn"'), 'no button without a payment link');
  });

  test('page: unknown and deleted numbers answer a 404 page', async () => {
    const deleted = await makeInvoice(t, { deleted_at: t.app.sunap.clock.nowMs() });
    for (const n of ['NOPE-0002', deleted.trans_seqno]) {
      const r = await t.get(`/pay/${n}`);
      assert.equal(r.status, 404);
      assertPageHeaders(r.headers);
      assert.ok(r.text.includes('청구서를 찾을 수 없습니다'));
    }
  });

  // Last: it spends this address's budget on both routes.
  test('rate limit per address: 429 / -29 for the lookup, a 429 page for the page', async () => {
    const inv = await makeInvoice(t);
    let r;
    let n = 0;
    do {
      r = await t.get(`/app/v1/sales/public/bill/${inv.trans_seqno}`);
      n++;
    } while (r.status !== 429 && n <= 61);
    assert.equal(r.status, 429, 'the 61st call in a minute at the latest is refused');
    assert.deepEqual(r.body, { result_code: -29, result_msg: r.body.result_msg, result_data: null });
    assert.match(r.body.result_msg, /too many requests/);
    assert.ok(Number(r.headers.get('retry-after')) > 0);

    n = 0;
    do {
      r = await t.get(`/pay/${inv.trans_seqno}`);
      n++;
    } while (r.status !== 429 && n <= 61);
    assert.equal(r.status, 429);
    assertPageHeaders(r.headers);
    assert.ok(r.text.includes('요청이 너무 많습니다'));
  });
});
