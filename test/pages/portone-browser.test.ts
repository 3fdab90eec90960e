import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { settingsContextOf } from '../../src/app.js';
import { setSettings } from '../../src/gateway/store-settings.js';
import { FakePortone, fakePortoneStore } from '../fakes/portone.js';
import { forEachEngine, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, startAll } from '../helpers/browser.js';
import { eventually } from '../helpers/wait.js';

/**
 * PortOne V2 as a store's processor, in Chromium against the fake of PortOne (test/fakes/
 * portone.ts): its browser SDK loads under the page's CSP, opens the PG's window for the store's
 * channel, and the return is confirmed by reading the payment from PortOne's API. Card through a
 * chosen PG, an easy pay, a virtual account deposited (by webhook), each cancelled; a closed
 * window and a refusal; a lost confirmation settled by look-up with one charge; two stores on
 * two processors side by side.
 */
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('PortOne V2 checkout in Chromium', (engine) => {
  const fake = new FakePortone([fakePortoneStore(), fakePortoneStore()]);
  let t: TestApp;
  let browser: Browser;
  let portoneStore: string;
  const nice = () => fake.store.channels[1]!;

  before(async () => {
    await fake.start();
    await startAll([
      startApp(engine, { SUNAP_PORTONE_API_URL: fake.url, SUNAP_OUTBOUND_TIMEOUT_MS: '1500' }).then((v) => (t = v)),
      launchBrowser().then((v) => (browser = v)),
    ]);
    portoneStore = await t.addStore();
    const s = fake.store;
    // The store's own PortOne keys, through the same service as `sunap store set-processor` (sealed at rest); its channel: NICE.
    await setSettings(settingsContextOf(t.app.sunap.config, t.app.sunap.database.db, t.app.sunap.box), portoneStore, {
      processor: 'portone', way: 'checkout', methods: ['CARD', 'EASY_PAY', 'VIRTUAL_ACCOUNT'],
      keys: { apiSecret: s.apiSecret, storeId: s.storeId, channelKey: nice().key, webhookSecret: s.webhookSecret },
    }, Date.now());
    // No address in PortOne's console: each payment names its own (requestPayment's noticeUrls).
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await fake.close();
  });

  async function create(store: string, over: Record<string, unknown> = {}) {
    const body = paymentBody({ STORE_CODE: store, ...over });
    const r = await t.gw('requestPayment', body);
    assert.equal(rd(r).RESULT_CODE, '0000', JSON.stringify(r.body));
    return { seq: body.TRANS_SEQNO as string, url: rd(r).REDIRECT_URL as string };
  }
  const search = async (seq: string, store: string) => rd(await t.gw('searchPayment', { TRANS_SEQNO: seq, STORE_CODE: store }));
  const cancel = (seq: string, store: string, over: Record<string, unknown> = {}) =>
    t.gw('requestPaymentCancel', { TRANS_SEQNO: seq, STORE_CODE: store, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678', ...over });
  const row = (seq: string, store: string) => t.app.sunap.database.db.selectFrom('payments').selectAll().where('trans_seqno', '=', seq).where('store_code', '=', store).executeTakeFirstOrThrow();

  async function open(): Promise<{ ctx: BrowserContext; page: Page; blocked: string[] }> {
    // The fake's certificate is the test CA's, which Chromium does not know.
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, locale: 'ko-KR', timezoneId: 'Asia/Seoul', ignoreHTTPSErrors: true });
    const page = await ctx.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy|Refused/i.test(m.text())) blocked.push(m.text()); });
    return { ctx, page, blocked };
  }

  /** From the payment page into PortOne's window for `method` (the button's name). */
  async function intoWindow(page: Page, url: string, method: RegExp) {
    await page.goto(url);
    await Promise.all([page.waitForURL(/\/window\//), page.getByRole('button', { name: method }).click()]);
  }

  test('a card through the store\'s PG channel (NICE): confirmed by GET /payments/{id}, recorded as PortOne\'s; cancelled in full through PortOne', async () => {
    const { seq, url } = await create(portoneStore);
    const { ctx, page, blocked } = await open();
    try {
      await intoWindow(page, url, /^카드/);
      assert.ok((await page.title()).startsWith('NICE페이먼츠'), 'the window of the store\'s channel');
      await page.getByLabel('현대카드').check();
      await page.getByLabel('할부').selectOption('3');
      await Promise.all([page.waitForURL((u) => u.href.startsWith(t.url) && !u.pathname.includes('/return/')), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
      const receipt = (await page.textContent('main'))!;
      for (const s of ['결제가 완료되었습니다', '현대카드']) assert.ok(receipt.includes(s), s);
      assert.deepEqual(blocked, []);
    } finally {
      await ctx.close();
    }
    const fp = [...fake.payments.values()].find((p) => p.status === 'PAID' && p.orderName === '11월 수강료' && p.channel?.key === nice().key)!;
    const d = await search(seq, portoneStore);
    assert.deepEqual([d.APPROVE_STATUS, d.METHOD_NAME, d.ISSUER_NAME, d.INSTALLMENT_MONTH, d.APPROVAL_AMOUNT], ['APPROVE_COMPLETE', '신용카드', '현대카드', '03', 128000]);
    const p = await row(seq, portoneStore);
    assert.deepEqual([p.processor, p.method, p.processor_ref, p.processor_order], ['portone', 'CARD', fp.transactionId, fp.id]);
    // The amount was registered before the window opened; the confirm was a look-up, never a charge.
    const calls = fake.calls.filter((c) => c.path.startsWith(`/payments/${fp.id}`));
    // (A second GET is the look-up PortOne's Transaction.Paid notice causes; it changes nothing.)
    assert.deepEqual([...new Set(calls.map((c) => `${c.method} ${c.path.slice(`/payments/${fp.id}`.length) || '/'}`))], ['POST /pre-register', 'GET /']);
    assert.equal(calls[0]!.json.totalAmount, 128000);
    assert.deepEqual(fp.noticeUrls, [`${t.url}/processor-events/portone/${portoneStore}`], 'the store\'s own notice address, as its keys are its own');

    const c = await cancel(seq, portoneStore);
    assert.equal(rd(c).RESULT_CODE, '0000', JSON.stringify(c.body));
    assert.equal(fp.status, 'CANCELLED');
    const cancelCall = fake.calls.find((x) => x.path === `/payments/${fp.id}/cancel`)!;
    assert.deepEqual([cancelCall.json.currentCancellableAmount, cancelCall.json.storeId, cancelCall.headers.authorization], [128000, fake.store.storeId, `PortOne ${fake.store.apiSecret}`]);
    assert.equal((await search(seq, portoneStore)).APPROVE_STATUS, 'CANCEL_COMPLETE');
    // A second cancel answers done without a second refund.
    assert.equal(rd(await cancel(seq, portoneStore)).RESULT_CODE, '0000');
    assert.equal(fp.cancellations.length, 1);
  });

  test('a closed window and a refusal: the customer is told why (confirmed by a look-up) and chooses again; nothing is charged', async () => {
    const { seq, url } = await create(portoneStore);
    const { ctx, page } = await open();
    try {
      await intoWindow(page, url, /^카드/);
      // The return shows the methods again in place, with the reason.
      await Promise.all([page.waitForURL((u) => u.href.startsWith(t.url)), page.getByRole('button', { name: '결제창 닫기' }).click()]);
      assert.ok((await page.getByRole('alert').textContent())!.includes('결제를 취소했습니다'));
      await Promise.all([page.waitForURL(/\/window\//), page.getByRole('button', { name: /^카드/ }).click()]);
      await Promise.all([page.waitForURL((u) => u.href.startsWith(t.url)), page.getByRole('button', { name: '잔액 부족으로 거절' }).click()]);
      assert.ok((await page.getByRole('alert').textContent())!.includes('잔액 또는 한도가 부족합니다'));
    } finally {
      await ctx.close();
    }
    assert.equal((await search(seq, portoneStore)).APPROVE_STATUS, 'STORE_REQUEST');
    const attempts = await t.app.sunap.database.db.selectFrom('payment_attempts').select(['status', 'processor']).where('payment_id', '=', (await row(seq, portoneStore)).id).orderBy('created_at').execute();
    assert.deepEqual(attempts.map((a) => [a.processor, a.status]), [['portone', 'DECLINED'], ['portone', 'DECLINED']]);
  });

  test('an easy pay (카카오페이, paid by its card), then cancelled', async () => {
    const { seq, url } = await create(portoneStore);
    const { ctx, page } = await open();
    try {
      await intoWindow(page, url, /^간편결제/);
      await page.getByLabel('카카오페이').check();
      await Promise.all([page.waitForURL((u) => u.href.startsWith(t.url) && !u.pathname.includes('/return/')), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
      assert.ok((await page.textContent('main'))!.includes('결제가 완료되었습니다'));
    } finally {
      await ctx.close();
    }
    const d = await search(seq, portoneStore);
    assert.deepEqual([d.METHOD_NAME, d.ISSUER_NAME, d.APPROVE_STATUS], ['카카오페이', 'KB국민카드', 'APPROVE_COMPLETE']);
    assert.equal(rd(await cancel(seq, portoneStore)).RESULT_CODE, '0000');
    assert.equal((await search(seq, portoneStore)).APPROVE_STATUS, 'CANCEL_COMPLETE');
  });

  test('a virtual account: issued in the window, deposited (PortOne\'s signed webhook, confirmed by a look-up), cancelled to a refund account', async () => {
    const { seq, url } = await create(portoneStore);
    const { ctx, page } = await open();
    try {
      await intoWindow(page, url, /^가상계좌/);
      await page.getByLabel('우리은행').check();
      await Promise.all([page.waitForURL((u) => u.href.startsWith(t.url) && !u.pathname.includes('/return/')), page.getByRole('button', { name: '128,000원 가상계좌 발급' }).click()]);
      assert.ok((await page.textContent('main'))!.includes('우리은행'));
    } finally {
      await ctx.close();
    }
    const fp = [...fake.payments.values()].find((p) => p.status === 'VIRTUAL_ACCOUNT_ISSUED')!;
    const issued = await search(seq, portoneStore);
    assert.deepEqual([issued.VBANK_NAME, issued.VBANK_ACCOUNT, issued.APPROVE_STATUS], ['우리은행', fp.method!.accountNumber, 'STORE_REQUEST']);
    assert.ok(fake.deposit(fp.id));
    await fake.webhooksSettled();
    const paid = await eventually(async () => { const d = await search(seq, portoneStore); return d.APPROVE_STATUS === 'APPROVE_COMPLETE' && d; }, 'the deposit applied');
    assert.equal(paid.METHOD_NAME, '가상계좌');
    const sent = fake.webhooks.filter((w) => w.paymentId === fp.id).map((w) => [w.type, w.status]);
    assert.deepEqual(sent, [['Transaction.Ready', 200], ['Transaction.VirtualAccountIssued', 200], ['Transaction.Paid', 200]]);

    const missing = await cancel(seq, portoneStore);
    assert.equal(rd(missing).RESULT_CODE, '4010');
    const c = await cancel(seq, portoneStore, { REFUND_BANK_CODE: '088', REFUND_ACCOUNT_NO: '110-987-654321', REFUND_HOLDER_NAME: '홍길동' });
    assert.equal(rd(c).RESULT_CODE, '0000', JSON.stringify(c.body));
    assert.deepEqual(fp.refundAccount, { bank: 'SHINHAN', number: '110987654321', holderName: '홍길동' });
    assert.equal(fp.status, 'CANCELLED');
  });

  test('a lost confirmation (PortOne\'s answer never comes): the customer is told it is being checked; the reconcile\'s look-up settles it with one charge', async () => {
    const { seq, url } = await create(portoneStore);
    const { ctx, page } = await open();
    fake.webhooksOff = true;
    try {
      await intoWindow(page, url, /^카드/);
      // Both tries of the confirm's look-up go unanswered (1.5 s each).
      fake.holdGets(2);
      await Promise.all([page.waitForURL((u) => u.href.startsWith(t.url)), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
      assert.ok((await page.textContent('main'))!.includes('두 번 청구되지 않습니다'));
    } finally {
      fake.webhooksOff = false;
      await ctx.close();
    }
    const p = await row(seq, portoneStore);
    assert.equal(p.state, 'STORE_REQUEST');
    const fp = fake.payments.get((await t.app.sunap.database.db.selectFrom('payment_attempts').select('id').where('payment_id', '=', p.id).executeTakeFirstOrThrow()).id)!;
    assert.equal(fp.status, 'PAID', 'PortOne took the money in its window');
    // Not before the attempt is stale (60 s: the sandbox operator's processor says no time limit) ...
    assert.equal(await t.app.sunap.gateway.reconcileAll(), 0);
    await t.app.sunap.clock.advance(61);
    assert.equal(await t.app.sunap.gateway.reconcileAll(), 1);
    const d = await search(seq, portoneStore);
    assert.deepEqual([d.APPROVE_STATUS, d.APPROVAL_AMOUNT], ['APPROVE_COMPLETE', 128000]);
    assert.equal((await row(seq, portoneStore)).processor_ref, fp.transactionId);
    // One charge: one PortOne payment for the order, never cancelled, and no other order paid.
    const attempts = await t.app.sunap.database.db.selectFrom('payment_attempts').select(['id', 'status']).where('payment_id', '=', p.id).execute();
    assert.deepEqual([attempts, fp.status, fp.cancellations.length], [[{ id: fp.id, status: 'APPROVED' }], 'PAID', 0]);
    assert.equal(await t.app.sunap.gateway.reconcileAll(), 0, 'nothing left to settle');
  });

  test('two stores of one platform on two processors side by side (the sandbox\'s window and PortOne): each paid and cancelled through the processor that took it', async () => {
    const sandboxStore = await t.addStore();
    const a = await create(sandboxStore);
    const b = await create(portoneStore);
    const { ctx, page } = await open();
    try {
      await page.goto(a.url);
      await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: /^카드/ }).click()]);
      await page.getByLabel(/KB국민카드 · 승인/).check();
      await Promise.all([page.waitForURL((u) => !u.pathname.includes('sandbox-window') && !u.pathname.includes('/return/')), page.getByRole('button', { name: '128,000원 결제 승인' }).click()]);
      await intoWindow(page, b.url, /^카드/);
      await Promise.all([page.waitForURL((u) => u.href.startsWith(t.url) && !u.pathname.includes('/return/')), page.getByRole('button', { name: '128,000원 결제하기' }).click()]);
    } finally {
      await ctx.close();
    }
    const [pa, pb] = [await row(a.seq, sandboxStore), await row(b.seq, portoneStore)];
    assert.deepEqual([pa.state, pa.processor, pb.state, pb.processor], ['APPROVE_COMPLETE', 'sandbox', 'APPROVE_COMPLETE', 'portone']);
    const before = fake.calls.length;
    assert.equal(rd(await cancel(a.seq, sandboxStore)).RESULT_CODE, '0000');
    assert.equal(fake.calls.length, before, 'the sandbox store\'s cancel never reaches PortOne');
    assert.equal(rd(await cancel(b.seq, portoneStore)).RESULT_CODE, '0000');
    // (PortOne's Transaction.Cancelled notice may add a look-up; the only change is the cancel.)
    assert.deepEqual(fake.calls.slice(before).filter((c) => c.method === 'POST').map((c) => c.path), [`/payments/${pb.processor_order}/cancel`]);
    assert.deepEqual([(await search(a.seq, sandboxStore)).APPROVE_STATUS, (await search(b.seq, portoneStore)).APPROVE_STATUS], ['CANCEL_COMPLETE', 'CANCEL_COMPLETE']);
  });
});
