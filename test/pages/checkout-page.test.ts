import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CheckoutProcessor } from '../../src/ports/checkout.js';
import { checkoutCsp } from '../../src/pages/html.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';

/**
 * The payment page of a store that takes payments through its processor's window (the default),
 * over HTTP with the sandbox's window (docs/reference.md, "Payment page"): the order and the
 * offered methods, the window and its return, one confirm per order whatever the browser does
 * (a reload, the back button, two returns at once), a tampered amount refused without a
 * confirm, the virtual account page, and the hook a live processor's script page uses.
 */
interface Page {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

async function request(url: string, init: RequestInit = {}): Promise<Page> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
}
const form = (url: string, fields: Record<string, string>) =>
  request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
const decode = (s: string) => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));

/** A live processor's adapter as the hook sees it: a script window with its hosts. */
const scriptWindow: CheckoutProcessor = {
  id: 'toss', methods: ['CARD', 'EASY_PAY'],
  begin: async (o) => ({
    kind: 'script', scripts: ['https://js.processor.example/v2/standard'], launcher: '/assets/checkout/example.js',
    params: { orderId: o.orderId, amount: o.amount, orderName: '</script><b>x', successUrl: o.successUrl }, hosts: { script: ['https://js.processor.example'], connect: ['https://api.processor.example'], frame: ['https://pay.processor.example'], form: ['https://pay.processor.example'], img: [] },
  }),
  readReturn: () => ({ orderId: null, processorRef: null, amount: null, failure: null }),
  confirm: async () => ({ status: 'PENDING' }), lookup: async () => null, cancel: async () => ({ outcome: 'CANCELED' }),
  closeAccount: async () => ({ outcome: 'CLOSED' }), readEvent: () => ({ ok: false, reason: 'no' }),
};

forEachEngine('checkout payment page', (engine) => {
  const t = withApp(engine, {}, { checkout: { toss: () => scriptWindow } });
  const db = () => t.app.sunap.database.db;

  async function create(over: Record<string, unknown> = {}) {
    const body = paymentBody(over);
    const r = await t.gw('requestPayment', body);
    const link = new URL(r.body.result_data.REDIRECT_URL);
    const tid = link.searchParams.get('tid')!;
    const token = link.searchParams.get('token')!;
    return { seq: body.TRANS_SEQNO as string, link: link.toString(), tid, token };
  }
  const begin = (p: { tid: string; token: string }, method: string) => form(`${t.url}/checkout/begin`, { tid: p.tid, token: p.token, method });
  /** Opens the window for `method` and plays it: the address the window sends the browser back to. */
  async function windowBack(p: { tid: string; token: string }, method: string, choice: Record<string, string>) {
    const b = await begin(p, method);
    assert.equal(b.status, 303, b.text.slice(0, 300));
    const w = new URL(b.location!, t.url);
    assert.equal(w.pathname, '/checkout/sandbox-window');
    const played = await form(`${t.url}/checkout/sandbox-window`, { order: w.searchParams.get('order')!, t: w.searchParams.get('t')!, ...choice });
    assert.equal(played.status, 303);
    return { back: played.location!, order: w.searchParams.get('order')! };
  }
  const payment = (tid: string) => db().selectFrom('payments').selectAll().where('id', '=', tid).executeTakeFirstOrThrow();
  const attempt = (id: string) => db().selectFrom('payment_attempts').select(['status', 'message']).where('id', '=', id).executeTakeFirstOrThrow();
  const networkState = async (order: string) => (await db().selectFrom('sandbox_checkouts').select('state').where('order_id', '=', order).executeTakeFirstOrThrow()).state;

  test('the page shows the order and the store\'s methods, each a button that opens the window; no script, the strict CSP', async () => {
    const p = await create({ INFO_MESSAGE: '11월 수업료입니다', ITEMS: [{ name: '피아노 레슨', unitPrice: 128000 }] });
    const page = await request(p.link);
    assert.equal(page.status, 200);
    const text = decode(page.text);
    for (const s of ['행복 피아노 학원', '11월 수강료', '128,000원', '11월 수업료입니다', '피아노 레슨', '결제수단 선택', '카드', '간편결제', '가상계좌', '테스트 환경']) assert.ok(text.includes(s), s);
    assert.ok(!text.includes('계좌이체') && !text.includes('휴대폰'), 'only the offered methods');
    assert.deepEqual([...page.text.matchAll(/name="method" value="([A-Z_]+)"/g)].map((m) => m[1]), ['CARD', 'EASY_PAY', 'VIRTUAL_ACCOUNT']);
    assert.doesNotMatch(page.text, /<script|cardNumber/);
    const csp = page.headers.get('content-security-policy')!;
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /script-src/);
  });

  test('pay by card through the window: one confirm, the receipt; a reload of the return or the back button confirms nothing again', async () => {
    const p = await create();
    const { back, order } = await windowBack(p, 'CARD', { action: 'approve', card: 'kb', installment: '00' });
    assert.equal(new URL(back).pathname, '/checkout/return/success');
    const r = await request(back);
    assert.deepEqual([r.status, r.location], [303, `/checkout?tid=${encodeURIComponent(p.tid)}&token=${encodeURIComponent(p.token)}`]);
    const receipt = decode((await request(p.link)).text);
    for (const s of ['결제가 완료되었습니다', '카드 영수증', 'KB국민카드', '5555-55**-****-4444', '신용카드']) assert.ok(receipt.includes(s), s);
    const again = await request(back);
    assert.equal(again.status, 303, 'a reload lands on the receipt');
    assert.equal((await request(p.link)).text.includes('결제가 완료되었습니다'), true);
    assert.equal((await begin(p, 'CARD')).status, 303, 'the back button and a new choice: the page shows the receipt');
    assert.equal((await payment(p.tid)).processor_order, order);
    const orders = await db().selectFrom('payment_attempts').select(['id', 'status']).where('payment_id', '=', p.tid).execute();
    assert.deepEqual(orders.map((o) => o.status), ['APPROVED']);
    const jobs = await db().selectFrom('jobs').select('id').where('unique_key', '=', `callback:${p.tid}`).execute();
    assert.equal(jobs.length, 1);
  });

  test('two returns of the same order at once: one confirm, one charge, both browsers on the receipt', async () => {
    const p = await create();
    const { back, order } = await windowBack(p, 'CARD', { action: 'approve', card: 'shinhan' });
    const [a, b] = await Promise.all([request(back), request(back)]);
    assert.deepEqual([a.status, b.status], [303, 303]);
    assert.equal((await payment(p.tid)).state, 'APPROVE_COMPLETE');
    assert.equal(await networkState(order), 'DONE');
    assert.equal((await attempt(order)).status, 'APPROVED');
  });

  test('a return whose amount was changed is refused without a confirm: the order closes, nothing is charged, the customer may pay again', async () => {
    const p = await create();
    const { back, order } = await windowBack(p, 'CARD', { action: 'approve', card: 'shinhan' });
    const tampered = new URL(back);
    tampered.searchParams.set('amount', '100');
    const r = await request(tampered.toString());
    assert.equal(r.status, 200);
    assert.ok(decode(r.text).includes('결제가 승인되지 않았습니다: 결제 금액이 주문 금액과 달라 결제하지 않았습니다'));
    assert.deepEqual(await attempt(order), { status: 'DECLINED', message: '결제 금액이 주문 금액과 달라 결제하지 않았습니다' });
    assert.equal(await networkState(order), 'AUTHORIZED', 'never confirmed at the processor');
    const untouched = await request(back);
    assert.equal(untouched.status, 200, 'the untouched address of that order confirms nothing either');
    assert.ok(decode(untouched.text).includes('지난 결제 시도는 결제되지 않았습니다: 결제 금액이 주문 금액과 달라 결제하지 않았습니다'));
    assert.equal(await networkState(order), 'AUTHORIZED');
    assert.equal((await payment(p.tid)).state, 'STORE_REQUEST');
    const second = await windowBack(p, 'CARD', { action: 'approve', card: 'shinhan' });
    await request(second.back);
    assert.equal((await payment(p.tid)).state, 'APPROVE_COMPLETE');
  });

  test('the window refused or closed: the methods again with the reason in Korean; a reload repeats the reason', async () => {
    const p = await create();
    const refused = await windowBack(p, 'CARD', { action: 'approve', card: 'declined' });
    const r = await request(refused.back);
    assert.equal(r.status, 200);
    assert.ok(decode(r.text).includes('결제가 승인되지 않았습니다: 카드사에서 승인을 거절했습니다'));
    const reload = await request(refused.back);
    assert.ok(decode(reload.text).includes('지난 결제 시도는 결제되지 않았습니다: 카드사에서 승인을 거절했습니다'));
    const closed = await windowBack(p, 'EASY_PAY', { action: 'close' });
    const c = await request(closed.back);
    assert.ok(decode(c.text).includes('결제를 취소했습니다. 다른 결제수단을 고르거나 다시 시도해 주세요.'));
    assert.equal((await attempt(closed.order)).status, 'ABANDONED');
    assert.equal((await payment(p.tid)).state, 'STORE_REQUEST');
  });

  test('a window left for another choice (the back button) is not confirmed when its return comes after another order paid', async () => {
    const p = await create();
    const first = await windowBack(p, 'CARD', { action: 'approve', card: 'shinhan' });
    const second = await windowBack(p, 'EASY_PAY', { action: 'approve', easyPay: '네이버페이', funding: 'balance' });
    assert.equal((await request(second.back)).status, 303);
    const late = await request(first.back);
    assert.ok(decode(late.text).includes('결제가 완료되었습니다'), 'the first window\'s return shows the receipt of the second');
    assert.deepEqual([(await payment(p.tid)).method, (await payment(p.tid)).method_name], ['EASY_PAY', '네이버페이']);
    assert.equal((await attempt(first.order)).status, 'ABANDONED');
    assert.equal(await networkState(first.order), 'AUTHORIZED', 'the first window\'s authorization was never confirmed');
  });

  test('a store\'s card form never reads a card in checkout mode; only the offered methods begin', async () => {
    const p = await create();
    const r = await form(`${t.url}/checkout/pay`, { tid: p.tid, token: p.token, cardNumber: '4242424242424242', expiry: '12/35', birth: '900101', cardPassword: '12' });
    assert.equal(r.status, 303);
    assert.equal((await db().selectFrom('payment_attempts').select('id').where('payment_id', '=', p.tid).execute()).length, 0, 'no attempt');
    const code = await t.addStore();
    await db().insertInto('store_processors').values({ store_code: code, processor: 'sandbox', way: 'checkout', methods: '["TRANSFER"]', updated_at: 0 }).execute();
    const q = await create({ STORE_CODE: code });
    const page = decode((await request(q.link)).text);
    assert.ok(page.includes('계좌이체') && !page.includes('가상계좌'));
    const refused = await begin(q, 'CARD');
    assert.equal(refused.status, 409);
    assert.ok(decode(refused.text).includes('이 상점에서 받지 않는 결제수단입니다'));
    assert.equal((await begin(q, 'BITCOIN')).status, 400);
  });

  test('a virtual account: the account page (the customer can come back to it), a deposit pays; closing it lets the customer choose again', async () => {
    const p = await create();
    const { back, order } = await windowBack(p, 'VIRTUAL_ACCOUNT', { action: 'approve', bank: '004' });
    assert.equal((await request(back)).status, 303);
    const page = await request(p.link);
    const text = decode(page.text);
    const acct = (await payment(p.tid)).vbank_account;
    for (const s of ['가상계좌로 입금해 주세요', 'KB국민은행', acct, '행복 피아노 학원', '128,000원', '입금 기한', '다른 방법으로 결제하기']) assert.ok(text.includes(s), s);
    assert.doesNotMatch(page.text, /<script/);
    const closed = await form(`${t.url}/checkout/close-account`, { tid: p.tid, token: p.token });
    assert.equal(closed.status, 303);
    assert.equal(await networkState(order), 'CLOSED');
    assert.deepEqual(await attempt(order), { status: 'CLOSED', message: '다른 결제수단을 선택해 가상계좌를 닫았습니다' });
    assert.ok(decode((await request(p.link)).text).includes('결제수단 선택'));
    const second = await windowBack(p, 'VIRTUAL_ACCOUNT', { action: 'approve', bank: '088' });
    await request(second.back);
    const dep = await form(`${t.url}/checkout/sandbox-deposit`, { tid: p.tid, token: p.token });
    assert.equal(dep.status, 303);
    const receipt = decode((await request(p.link)).text);
    for (const s of ['결제가 완료되었습니다', '결제 영수증', '가상계좌', '입금일시', '신한은행']) assert.ok(receipt.includes(s), s);
  });

  test('the sandbox window: a wrong token is 404, a window already played is 409; test cards by name, never a card number', async () => {
    const p = await create();
    const b = await begin(p, 'CARD');
    const w = new URL(b.location!, t.url);
    const page = await request(w.toString());
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /4242424242424242|<script/);
    assert.ok(decode(page.text).includes('신한카드 · 승인') && page.text.includes('…4242'));
    w.searchParams.set('t', 'x'.repeat(32));
    assert.equal((await request(w.toString())).status, 404);
    const order = new URL(b.location!, t.url).searchParams;
    await form(`${t.url}/checkout/sandbox-window`, { order: order.get('order')!, t: order.get('t')!, action: 'close' });
    assert.equal((await request(new URL(b.location!, t.url).toString())).status, 409);
    assert.equal((await form(`${t.url}/checkout/sandbox-window`, { order: order.get('order')!, t: order.get('t')!, action: 'approve' })).status, 409);
  });

  test('a live processor\'s window: its script and our launcher by nonce, its hosts in the CSP, the data block escaped, a message without JavaScript', async () => {
    const code = await t.addStore();
    await db().insertInto('store_processors').values({ store_code: code, processor: 'toss', way: 'checkout', methods: '["CARD"]', updated_at: 0 }).execute();
    const p = await create({ STORE_CODE: code });
    const r = await begin(p, 'CARD');
    assert.equal(r.status, 200);
    const csp = r.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    assert.equal(csp, checkoutCsp(nonce, { script: ['https://js.processor.example'], connect: ['https://api.processor.example'], frame: ['https://pay.processor.example'], form: ['https://pay.processor.example'], img: [] }));
    assert.match(nonce, /^[A-Za-z0-9_-]{24}$/);
    assert.equal([...r.text.matchAll(new RegExp(`<script[^>]*nonce="${nonce}"`, 'g'))].length, 3, 'the data block, the SDK and the launcher');
    assert.equal([...r.text.matchAll(/<script/g)].length, 3, 'no other script');
    assert.ok(r.text.includes('src="https://js.processor.example/v2/standard"') && r.text.includes('src="/assets/checkout/example.js"'));
    assert.ok(r.text.includes('\\u003c/script>\\u003cb>x'), 'no "</script>" in the data block');
    assert.ok(decode(r.text).includes('자바스크립트를 켜고'), 'what to do without scripts');
    assert.throws(() => checkoutCsp(nonce, { script: ["https://x.example; script-src 'unsafe-inline'"], connect: [], frame: [], form: [], img: [] }), /is not an origin/);
    assert.throws(() => checkoutCsp('short', { script: [], connect: [], frame: [], form: [], img: [] }), /nonce/);
  });
});
