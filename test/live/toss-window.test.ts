import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:https';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FAKE_TOSS_CLIENT_KEY } from '../fakes/toss.js';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { Receiver, withReceiver } from '../helpers/receiver.js';
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
});
