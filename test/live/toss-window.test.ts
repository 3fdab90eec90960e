import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:https';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { settingsContextOf } from '../../src/app.js';
import { setSettings } from '../../src/gateway/index.js';
import { FAKE_TOSS_CLIENT_KEY } from '../fakes/toss.js';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { Receiver, withReceiver } from '../helpers/receiver.js';
import { createOne, newAccount, waitSent } from '../invoicing/support.js';
import { eventually } from '../helpers/wait.js';
import { withFakes, withLiveApp } from './support.js';

/**
 * Live mode with Toss Payments' window (SUNAP_CARD_PROCESSOR=toss), in headless Chromium against
 * the Toss fake's SDK v2, window and API (test/fakes/toss-window.ts), behind an HTTPS front as a
 * reverse proxy gives Sunap in production: a card, an easy pay and a virtual account (issued,
 * then deposited) each paid and cancelled; a lost confirm answer settled by a look-up with one
 * charge; a forged deposit callback and a forged webhook changing nothing; a tampered amount in
 * the return address refused without a confirm. SUNAP_CHECKOUT_SCREENSHOTS=docs/checkout keeps
 * the screenshots of the live page and the fake's window (SQLite run).
 */
const shots = process.env.SUNAP_CHECKOUT_SCREENSHOTS ? resolve(process.env.SUNAP_CHECKOUT_SCREENSHOTS) : null;
const rd = (r: { body: any }) => r.body.result_data;

const VIEWPORTS = [
  { name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  { name: 'desktop', viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
] as const;

/** The TLS front (a reverse proxy's job in production) before the app's port. */
function startFront(target: () => string): Promise<{ server: Server; url: string }> {
  const tls = process.env.SUNAP_TEST_TLS_DIR!;
  const server = createServer({ key: readFileSync(join(tls, 'server.key')), cert: readFileSync(join(tls, 'server.crt')) }, (req, res) => {
    const to = new URL(target());
    const up = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, 'x-forwarded-proto': 'https' } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, url: `https://localhost:${(server.address() as { port: number }).port}` })));
}

forEachEngine('Toss Payments\' window in Chromium (live mode, the fake)', (engine) => {
  const fakes = withFakes();
  const rx: Receiver = withReceiver();
  let front: { server: Server; url: string };
  let browser: Browser;
  before(async () => {
    front = await startFront(() => t.url);
    browser = await launchBrowser();
  });
  const t = withLiveApp(engine, fakes, () => ({
    SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_CLIENT_KEY: FAKE_TOSS_CLIENT_KEY, SUNAP_TOSS_SDK_URL: fakes.toss.sdkUrl,
    SUNAP_PUBLIC_URL: front.url, SUNAP_ALLOW_PRIVATE_TARGETS: 'true',
  }));
  before(() => {
    fakes.toss.window.webhookUrl = `${front.url}/processor-events/toss`;
  });
  after(async () => {
    await browser?.close();
    front?.server.close();
  });

  const db = () => t.app.sunap.database.db;
  async function create(over: Record<string, unknown> = {}) {
    const body = paymentBody({ CONFIRM_URL: `${rx.url}/confirm`, ...over });
    const r = rd(await t.gw('requestPayment', body));
    assert.equal(r.RESULT_CODE, '0000', JSON.stringify(r));
    return { seq: body.TRANS_SEQNO as string, url: r.REDIRECT_URL as string };
  }
  const search = async (seq: string) => rd(await t.gw('searchPayment', { TRANS_SEQNO: seq }));
  const cancel = (seq: string, over: Record<string, unknown> = {}) =>
    t.gw('requestPaymentCancel', { TRANS_SEQNO: seq, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678', ...over });
  const payment = (seq: string) => db().selectFrom('payments').selectAll().where('trans_seqno', '=', seq).where('store_code', '=', t.storeCode).executeTakeFirstOrThrow();
  const orderOf = async (seq: string) => (await payment(seq)).processor_order!;

  async function open(vp: (typeof VIEWPORTS)[number]): Promise<{ ctx: BrowserContext; page: Page; blocked: string[] }> {
    const ctx = await browser.newContext({ viewport: vp.viewport, deviceScaleFactor: 1, isMobile: vp.isMobile, hasTouch: vp.hasTouch, locale: 'ko-KR', timezoneId: 'Asia/Seoul', ignoreHTTPSErrors: true });
    const page = await ctx.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy|Refused/i.test(m.text())) blocked.push(m.text()); });
    return { ctx, page, blocked };
  }

  const shot = async (page: Page, name: string, vp: (typeof VIEWPORTS)[number]) => {
    if (shots && engine === 'sqlite') await page.screenshot({ path: join(shots, `${name}-${vp.name}.png`), fullPage: true });
  };

  /** From the methods page through Toss's window: the page's button, the SDK, the window. */
  async function toWindow(page: Page, url: string, method: RegExp, vp?: (typeof VIEWPORTS)[number]) {
    await page.goto(url);
    if (vp) await shot(page, 'toss-methods', vp);
    await Promise.all([page.waitForURL(/\/v2\/window\//), page.getByRole('button', { name: method }).click()]);
  }

  for (const vp of VIEWPORTS) {
    test(`${vp.name}: a card through Toss's window, confirmed once, the receipt; then cancelled at Toss`, async () => {
      const { seq, url } = await create({ ITEMS: [{ name: '피아노 레슨 4회', unitPrice: 128000 }] });
      const { ctx, page, blocked } = await open(vp);
      try {
        await toWindow(page, url, /^카드/, vp);
        await shot(page, 'toss-window', vp);
        await page.getByLabel('신한카드').check();
        await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
        const receipt = (await page.textContent('main'))!;
        for (const s of ['결제가 완료되었습니다', '신한카드']) assert.ok(receipt.includes(s), s);
        await shot(page, 'toss-receipt', vp);
        assert.deepEqual(blocked, [], 'nothing the page loads is blocked by its CSP');
      } finally {
        await ctx.close();
      }
      const d = await search(seq);
      assert.deepEqual([d.APPROVE_STATUS, d.METHOD_NAME, d.ISSUER_NAME], ['APPROVE_COMPLETE', '신용카드', '신한카드']);
      const p = await payment(seq);
      assert.deepEqual([p.processor, p.method], ['toss', 'CARD']);
      const order = fakes.toss.window.orders.get(p.processor_order!)!;
      assert.equal(p.processor_ref, order.paymentKey);
      assert.equal(fakes.toss.window.charges.get(order.orderId), 1);
      const confirms = fakes.toss.requests.filter((r) => r.path === '/v1/payments/confirm' && r.json?.orderId === order.orderId);
      assert.deepEqual(confirms.map((r) => r.json.amount), [128000], 'one confirm, for the payment\'s own amount');
      assert.equal(confirms[0]!.headers['idempotency-key'], order.orderId);

      assert.equal(rd(await cancel(seq)).RESULT_CODE, '0000');
      assert.equal((await search(seq)).APPROVE_STATUS, 'CANCEL_COMPLETE');
      assert.deepEqual([order.status, fakes.toss.window.refunds.get(order.orderId)], ['CANCELED', 1]);
    });
  }

  test('an easy pay (카카오페이) through the window: METHOD_NAME 카카오페이; cancelled', async () => {
    const { seq, url } = await create();
    const { ctx, page } = await open(VIEWPORTS[0]);
    try {
      await toWindow(page, url, /^간편결제/);
      await page.getByLabel('카카오페이').check();
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
      assert.ok((await page.textContent('main'))!.includes('카카오페이'));
    } finally {
      await ctx.close();
    }
    const d = await search(seq);
    assert.deepEqual([d.APPROVE_STATUS, d.METHOD_NAME], ['APPROVE_COMPLETE', '카카오페이']);
    assert.deepEqual([(await payment(seq)).method], ['EASY_PAY']);
    assert.equal(rd(await cancel(seq)).RESULT_CODE, '0000');
    assert.equal((await search(seq)).APPROVE_STATUS, 'CANCEL_COMPLETE');
    assert.equal(fakes.toss.window.refunds.get(await orderOf(seq)), 1);
  });

  /** Pays through the window on a phone: the method's button, then the window's choice and button; the page the browser lands on. */
  async function payInWindow(url: string, method: RegExp, choose: (page: Page) => Promise<void>, button = '128,000원 결제하기', landing: RegExp = /\/checkout\?tid=/) {
    const { ctx, page, blocked } = await open(VIEWPORTS[0]);
    await toWindow(page, url, method);
    await choose(page);
    await Promise.all([page.waitForURL(landing), page.getByRole('button', { name: button }).click()]);
    return { ctx, page, blocked };
  }
  /** A return the page answers itself (a refusal shows the methods again at the return address). */
  const RETURNED = /\/checkout\/return\/(success|fail)\?/;
  const confirmsOf = (orderId: string) => fakes.toss.requests.filter((r) => r.path === '/v1/payments/confirm' && r.json?.orderId === orderId).length;
  const notice = (body: unknown) => t.post('/processor-events/toss', body);

  test('a virtual account: issued in the window and shown on the page; a forged deposit callback and a forged webhook change nothing; the deposit pays it; a cancel needs the refund account (4010) and refunds to it', async () => {
    const { seq, url } = await create();
    const { ctx, page } = await payInWindow(url, /^가상계좌/, async (p) => { await p.getByLabel('입금할 은행').selectOption({ label: '신한은행' }); });
    let orderId: string;
    try {
      const text = (await page.textContent('main'))!;
      orderId = await orderOf(seq);
      const o = fakes.toss.window.orders.get(orderId)!;
      for (const s of ['입금 계좌', '신한은행', o.account!.accountNumber, '128,000원']) assert.ok(text.includes(s), s);
      assert.ok(!text.includes('예금주'), 'Toss does not name the holder: no 예금주 line rather than the payer\'s name');
    } finally {
      await ctx.close();
    }
    // The customer comes back to the link: the account again, on a phone and a desktop.
    for (const vp of VIEWPORTS) {
      const again = await open(vp);
      try {
        await again.page.goto(url);
        assert.ok((await again.page.textContent('main'))!.includes(fakes.toss.window.orders.get(orderId)!.account!.accountNumber));
        await shot(again.page, 'toss-account', vp);
      } finally {
        await again.ctx.close();
      }
    }
    const issued = await search(seq);
    assert.deepEqual([issued.APPROVE_STATUS, issued.METHOD_NAME, issued.VBANK_NAME], ['STORE_REQUEST', '가상계좌', '신한은행']);
    const o = fakes.toss.window.orders.get(orderId)!;
    const p = await payment(seq);
    assert.equal(t.app.sunap.box.open(p.vbank_secret_sealed!), o.secret, 'the confirm\'s secret is kept, sealed');

    // A deposit callback with another secret is refused (401); one without a secret too.
    const forged = await notice({ createdAt: '2026-11-26T10:00:00.000', secret: 'not-the-secret', status: 'DONE', transactionKey: 'f0', orderId });
    assert.deepEqual([forged.status, forged.body.outcome, forged.body.detail], [401, 'REFUSED', 'secret: does not match the virtual account\'s']);
    const bare = await notice({ createdAt: '2026-11-26T10:00:01.000', status: 'DONE', transactionKey: 'f1', orderId });
    assert.equal(bare.status, 401);
    // A webhook claiming the payment is done is looked up: Toss says it waits, so it still waits.
    const claim = await notice({ eventType: 'PAYMENT_STATUS_CHANGED', createdAt: '2026-11-26T10:00:02.000', data: { orderId, paymentKey: o.paymentKey, status: 'DONE' } });
    assert.equal(claim.status, 200);
    assert.equal((await search(seq)).APPROVE_STATUS, 'STORE_REQUEST', 'a webhook\'s body is never trusted');
    assert.equal(fakes.toss.window.charges.get(orderId), undefined, 'nothing deposited');

    assert.equal(await fakes.toss.window.deposit(orderId), 200);
    const paid = await search(seq);
    assert.deepEqual([paid.APPROVE_STATUS, paid.METHOD_NAME], ['APPROVE_COMPLETE', '가상계좌']);
    // Toss sends a callback again when it saw no 200: the same bytes answer as before.
    const again = await notice(fakes.toss.window.notices.at(-1)!.body);
    assert.deepEqual([again.status, again.body.outcome], [200, 'DUPLICATE']);

    const no = await cancel(seq);
    assert.equal(rd(no).RESULT_CODE, '4010');
    assert.equal(o.status, 'DONE', 'Toss was not asked');
    const yes = await cancel(seq, { REFUND_BANK_CODE: '088', REFUND_ACCOUNT_NO: '110-987-654321', REFUND_HOLDER_NAME: '홍길동' });
    assert.equal(rd(yes).RESULT_CODE, '0000');
    assert.equal((await search(seq)).APPROVE_STATUS, 'CANCEL_COMPLETE');
    assert.deepEqual([o.status, o.refundTo], ['CANCELED', { bank: '88', accountNumber: '110987654321', holderName: '홍길동' }]);
    assert.equal(fakes.toss.window.refunds.get(orderId), 1);
  });

  for (const lose of ['hold', '500'] as const) {
    test(`a confirm made and its answer lost (${lose === 'hold' ? 'never answered' : 'answered 500'}) is settled by a look-up: one confirm, one charge, approved`, async () => {
      const { seq, url } = await create();
      fakes.toss.window.loseNextConfirm = lose;
      const { ctx, page } = await payInWindow(url, /^카드/, (p) => p.getByLabel('KB국민카드').check());
      try {
        assert.ok((await page.textContent('main'))!.includes('결제가 완료되었습니다'));
        // A reload of the success address confirms nothing again.
        const orderId = await orderOf(seq);
        await page.goBack();
        assert.equal(confirmsOf(orderId), 1);
      } finally {
        await ctx.close();
      }
      const orderId = await orderOf(seq);
      assert.equal(fakes.toss.window.loseNextConfirm, null, 'the fake lost that confirm\'s answer');
      assert.equal(fakes.toss.window.charges.get(orderId), 1);
      assert.equal(confirmsOf(orderId), 1);
      assert.ok(fakes.toss.requests.some((r) => r.method === 'GET' && r.path === `/v1/payments/orders/${orderId}`), 'looked up by orderId');
      const d = await search(seq);
      assert.deepEqual([d.APPROVE_STATUS, d.ISSUER_NAME], ['APPROVE_COMPLETE', 'KB국민카드']);
    });
  }

  test('the return address\'s amount tampered: refused without a confirm, nothing charged; the customer can pay again', async () => {
    const { seq, url } = await create();
    fakes.toss.window.returnAmountDelta = -127_000;
    let orderId: string;
    try {
      const { ctx, page } = await payInWindow(url, /^카드/, (p) => p.getByLabel('신한카드').check(), undefined, RETURNED);
      try {
        assert.equal(new URL(page.url()).searchParams.get('amount'), '1000');
        assert.match((await page.getByRole('alert').textContent())!, /결제가 승인되지 않았습니다/);
      } finally {
        await ctx.close();
      }
      orderId = (await db().selectFrom('payment_attempts').select('id').where('payment_id', '=', (await payment(seq)).id).executeTakeFirstOrThrow()).id;
    } finally {
      fakes.toss.window.returnAmountDelta = 0;
    }
    assert.equal(confirmsOf(orderId), 0, 'no confirm');
    assert.equal(fakes.toss.window.charges.get(orderId), undefined);
    assert.equal((await search(seq)).APPROVE_STATUS, 'STORE_REQUEST');
    const { ctx } = await payInWindow(url, /^카드/, (p) => p.getByLabel('신한카드').check());
    await ctx.close();
    assert.equal((await search(seq)).APPROVE_STATUS, 'APPROVE_COMPLETE', 'a new order pays the same payment');
  });

  test('refused at the confirm (the card company) and a closed window: the reason in Korean, nothing charged; a cancel in Toss\'s dashboard becomes CANCEL_COMPLETE; a forged cancel webhook changes nothing', async () => {
    const { seq, url } = await create();
    {
      const { ctx, page } = await payInWindow(url, /^카드/, (p) => p.getByLabel(/카드사 거절/).check(), undefined, RETURNED);
      assert.match((await page.getByRole('alert').textContent())!, /카드사에서 승인을 거절했습니다/);
      await ctx.close();
    }
    {
      const { ctx, page } = await payInWindow(url, /^카드/, async () => {}, '결제창 닫기', RETURNED);
      assert.match((await page.getByRole('alert').textContent())!, /결제를 취소했습니다/);
      await ctx.close();
    }
    assert.equal((await search(seq)).APPROVE_STATUS, 'STORE_REQUEST');
    const { ctx } = await payInWindow(url, /^간편결제/, (p) => p.getByLabel('토스페이').check());
    await ctx.close();
    const d = await search(seq);
    assert.deepEqual([d.APPROVE_STATUS, d.METHOD_NAME], ['APPROVE_COMPLETE', '토스페이']);
    const orderId = await orderOf(seq);
    const forged = await notice({ eventType: 'PAYMENT_STATUS_CHANGED', createdAt: '2026-11-26T11:00:00.000', data: { orderId, status: 'CANCELED' } });
    assert.equal(forged.status, 200);
    assert.equal((await search(seq)).APPROVE_STATUS, 'APPROVE_COMPLETE', 'Toss still holds it paid');
    assert.equal(await fakes.toss.window.dashboardCancel(orderId), 200);
    assert.equal((await search(seq)).APPROVE_STATUS, 'CANCEL_COMPLETE');
    assert.equal(fakes.toss.window.refunds.get(orderId), 1, 'cancelled once, in the dashboard; Sunap did not cancel again');
  });

  test('a store with its own Toss contract: its client key opens the window, its secret key confirms and cancels, its notices come to its own address; the operator\'s key sees none of its orders', async () => {
    const own = { clientKey: 'test_ck_academyOwnContract01', secretKey: 'test_sk_academyOwnContract01' };
    const store = await t.addStore();
    fakes.toss.window.addMerchant(own.clientKey, own.secretKey, `${front.url}/processor-events/toss/${store}`);
    await setSettings(settingsContextOf(t.app.sunap.config, db(), t.app.sunap.box), store, { processor: 'toss', way: 'checkout', methods: ['CARD'], keys: own }, Date.now());
    const { seq, url } = await create({ STORE_CODE: store });
    const { ctx, page } = await payInWindow(url, /^카드/, (p) => p.getByLabel('신한카드').check());
    try {
      assert.ok((await page.textContent('main'))!.includes('결제가 완료되었습니다'));
    } finally {
      await ctx.close();
    }
    const p = await db().selectFrom('payments').selectAll().where('trans_seqno', '=', seq).where('store_code', '=', store).executeTakeFirstOrThrow();
    const order = fakes.toss.window.orders.get(p.processor_order!)!;
    assert.equal(order.merchant, own.secretKey, 'opened with the store\'s client key');
    const basic = (k: string) => `Basic ${Buffer.from(`${k}:`).toString('base64')}`;
    const confirm = fakes.toss.requests.find((r) => r.path === '/v1/payments/confirm' && r.json?.orderId === order.orderId)!;
    assert.equal(confirm.headers.authorization, basic(own.secretKey));
    // Toss keeps each merchant's orders apart: the operator's key does not find this one.
    const asOperator = await fetch(`${fakes.toss.url}/v1/payments/orders/${order.orderId}`, { headers: { authorization: basic(fakes.toss.secretKey) } });
    assert.equal(asOperator.status, 404);

    assert.equal(await fakes.toss.window.dashboardCancel(order.orderId), 200);
    assert.equal(fakes.toss.window.notices.at(-1)!.status, 200);
    const d = rd(await t.gw('searchPayment', { TRANS_SEQNO: seq, STORE_CODE: store }));
    assert.equal(d.APPROVE_STATUS, 'CANCEL_COMPLETE');
    const events = await db().selectFrom('processor_events').select(['store_code', 'outcome']).where('payment_id', '=', p.id).execute();
    assert.deepEqual(events, [{ store_code: store, outcome: 'APPLIED' }], 'received at the store\'s own address');
  });

  test('an open virtual account closed to pay another way (Toss cancels the issue; a late deposit finds no account), then a card pays; another account closed by DELETE', async () => {
    const { seq, url } = await create();
    const { ctx, page } = await payInWindow(url, /^가상계좌/, async (p) => { await p.getByLabel('입금할 은행').selectOption({ label: '우리은행' }); });
    const first = await orderOf(seq);
    try {
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '가상계좌 닫고 다른 결제수단 선택' }).click()]);
      assert.ok((await page.textContent('main'))!.includes('결제수단 선택'));
      const o = fakes.toss.window.orders.get(first)!;
      assert.deepEqual([o.status, o.approvedAt, o.cancels.map((c) => c.cancelReason)], ['CANCELED', null, ['가상계좌 발급 취소']]);
      assert.equal(await fakes.toss.window.deposit(first), null, 'a deposit after the close finds no account');
      await Promise.all([page.waitForURL(/\/v2\/window\//), page.getByRole('button', { name: /^카드/ }).click()]);
      await page.getByLabel('신한카드').check();
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
      assert.ok((await page.textContent('main'))!.includes('결제가 완료되었습니다'));
    } finally {
      await ctx.close();
    }
    assert.notEqual(await orderOf(seq), first);
    assert.deepEqual([(await search(seq)).APPROVE_STATUS, fakes.toss.window.charges.get(first)], ['APPROVE_COMPLETE', undefined]);

    const other = await create();
    const again = await payInWindow(other.url, /^가상계좌/, async (p) => { await p.getByLabel('입금할 은행').selectOption({ label: '신한은행' }); });
    await again.ctx.close();
    const order = await orderOf(other.seq);
    assert.equal(rd(await t.gw('requestPaymentCancel', { TRANS_SEQNO: other.seq, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678' })).RESULT_CODE, '0000');
    assert.equal(fakes.toss.window.orders.get(order)!.status, 'CANCELED', 'the account was closed at Toss first');
    assert.equal(await fakes.toss.window.deposit(order), null);
  });

  test('an invoice a parent pays by virtual account through Toss: the message\'s link, the window, the account, the deposit; the invoice DONE with bill.paid', async () => {
    const a = await newAccount(t, { points: 1000 });
    const phone = '01055557777';
    const sent = fakes.solapi.requests.length;
    const id = await createOne(t, a, { members: [{ studentName: '김하늘', studentPhone: phone }], webhookUrl: `${rx.url}/hooks`, webhookSecret: 'whsec_toss_va_0123456789' });
    await waitSent(t, a, id);
    const raw = fakes.solapi.requests.slice(sent).map((r) => r.raw).join('\n');
    const link = /https:\/\/localhost:\d+\/[^\s"\\]+/.exec(raw)?.[0];
    assert.ok(link, 'the message carries the payment link');
    const { ctx, page } = await open(VIEWPORTS[0]);
    try {
      await page.goto(link!);
      if (!/\/checkout\?tid=/.test(page.url())) await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('link', { name: '결제 페이지 열기' }).first().click()]);
      await Promise.all([page.waitForURL(/\/v2\/window\//), page.getByRole('button', { name: /^가상계좌/ }).click()]);
      await page.getByLabel('입금할 은행').selectOption({ label: 'KB국민은행' });
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
      assert.ok((await page.textContent('main'))!.includes('KB국민은행'));
    } finally {
      await ctx.close();
    }
    assert.equal((await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.bill.status, 'PENDING');
    const order = [...fakes.toss.window.orders.values()].at(-1)!;
    assert.equal(order.method, 'VIRTUAL_ACCOUNT');
    assert.equal(await fakes.toss.window.deposit(order.orderId), 200);
    const done = await eventually(async () => {
      const d = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
      return d.bill.status === 'DONE' ? d : undefined;
    }, 'the invoice DONE');
    assert.equal(done.payment.payCompany, 'KB국민은행');
    const events = () => rx.received.filter((r) => r.json?.billId === id).map((r) => r.headers['x-service-event']);
    await eventually(async () => events().includes('bill.paid'), 'bill.paid');
    assert.deepEqual(events(), ['bill.paid']);
  });
});
