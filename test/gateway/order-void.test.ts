import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { beginCheckout } from '../../src/gateway/checkout.js';
import type { GatewayContext } from '../../src/gateway/context.js';
import { ORDER_VOID_BACKOFF_SECONDS, ORDER_VOID_FIRST_SECONDS, ORDER_VOID_JOB, retryVoid } from '../../src/gateway/index.js';
import { ProcessorRegistry } from '../../src/gateway/processors.js';
import type { Payment } from '../../src/gateway/repository.js';
import { sandboxPay } from '../../src/gateway/sandbox-pay.js';
import { settleOrder } from '../../src/gateway/settle.js';
import { retryDelaySeconds } from '../../src/jobs/define.js';
import type { CancelResult, CheckoutProcessor, CheckoutResult } from '../../src/ports/checkout.js';
import { SandboxCheckout } from '../../src/ports/sandbox-checkout.js';
import { findOrder } from '../../src/ports/sandbox-network.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { axeViolations, describeViolations, launchBrowser, scrollWidth } from '../helpers/browser.js';
import { captureLog } from '../helpers/log.js';
import { ConsoleClient, ownerClient, textOf } from '../console/support.js';

/**
 * The automatic void of a window order the payment cannot take (src/gateway/order-void.ts;
 * docs/reliability.md, "A void the processor refused or never answered"): a customer who paid in
 * two windows at once is charged twice, and the second order is voided at the processor. Here the
 * sandbox's real window and order book, with its cancel refusing or losing its answer on cue: the
 * attempt is VOIDING (never CANCELED) until the processor says it is, the retry is queued in the
 * same transaction on its pinned schedule, a lost answer is settled by a look-up, the team's
 * audit log and the operator's gauge see it, and the customer is refunded once.
 */
class FaultySandbox extends SandboxCheckout {
  /** What the next cancels do: refuse, lose the answer before acting, or act and lose the answer. */
  script: ('refuse' | 'lose-before' | 'lose-after')[] = [];
  /** Cancels that reached the order book. */
  reached = 0;
  lookups = 0;
  override async cancel(req: Parameters<CheckoutProcessor['cancel']>[0]): Promise<CancelResult> {
    const f = this.script.shift();
    if (f === 'refuse') return { outcome: 'FAILED', message: 'NOT_CANCELABLE_PAYMENT: 잠시 후 다시 시도해 주세요' };
    if (f === 'lose-before') throw new Error('timeout: no answer within the time limit');
    this.reached++;
    const r = await super.cancel(req);
    if (f === 'lose-after') throw new Error('timeout: the answer was lost');
    return r;
  }
  /** Look-ups answer this amount for a charge (a charge that is not the payment's). */
  tamperedAmount: number | null = null;
  override async lookup(orderId: string): Promise<CheckoutResult | null> {
    this.lookups++;
    const r = await super.lookup(orderId);
    return r?.status === 'APPROVED' && this.tamperedAmount !== null ? { ...r, amount: this.tamperedAmount } : r;
  }
}

const rd = (r: { body: any }) => r.body.result_data;
const urls = (id: string) => ({ success: `http://sunap.invalid/checkout/return/success?order=${id}`, fail: `http://sunap.invalid/checkout/return/fail?order=${id}` });

test('the void\'s retries: first after 1 min, then 5, 15 min, 1, 3, 6, 12 h and daily three times (10 tries over 3 days 22 h 21 min)', () => {
  assert.equal(ORDER_VOID_FIRST_SECONDS, 60);
  assert.deepEqual(ORDER_VOID_JOB.backoffSeconds, [300, 900, 3600, 10_800, 21_600, 43_200, 86_400, 86_400, 86_400]);
  assert.deepEqual(ORDER_VOID_BACKOFF_SECONDS, ORDER_VOID_JOB.backoffSeconds);
  assert.equal(ORDER_VOID_JOB.maxAttempts, 10);
  assert.equal(ORDER_VOID_JOB.kind, 'gateway.order-void');
  assert.equal(retryDelaySeconds(ORDER_VOID_JOB, 1), 300);
  assert.equal(retryDelaySeconds(ORDER_VOID_JOB, 9), 86_400);
  assert.equal(retryDelaySeconds(ORDER_VOID_JOB, 10), null, 'the tenth try is the last');
  assert.equal(ORDER_VOID_FIRST_SECONDS + ORDER_VOID_BACKOFF_SECONDS.reduce((a, b) => a + b, 0), 3 * 86_400 + 22 * 3600 + 21 * 60, '3 days 22 h 21 min from the refusal to the last try');
});

forEachEngine('the automatic void of a window order the payment cannot take', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const NOW = Date.now();
  let sandbox: FaultySandbox;
  let ctx: GatewayContext;
  let log: ReturnType<typeof captureLog>;
  let c: ConsoleClient;
  const db = () => t.app.sunap.database.db;
  before(async () => {
    sandbox = new FaultySandbox({ db: db(), clock: { nowMs: () => NOW }, windowPath: '/checkout/sandbox-window', tokenKey: Buffer.alloc(32, 7) });
    const processors = new ProcessorRegistry(db(), t.app.sunap.box, {
      global: { processor: 'sandbox', way: 'checkout' }, globalKeys: {}, live: false, checkout: { sandbox: () => sandbox }, keyIn: {},
    });
    log = captureLog();
    // The app's own listeners (the console's audit log among them), on a clock that stands still.
    ctx = { ...t.app.sunap.gateway.context, processors, clock: { nowMs: () => NOW, now: () => new Date(NOW) } as GatewayContext['clock'], log: log.log, wake: () => {} };
    c = (await ownerClient(t)).c;
  });

  const attempt = (id: string) => db().selectFrom('payment_attempts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const job = (id: string) => db().selectFrom('jobs').selectAll().where('unique_key', '=', `order-void:${id}`).executeTakeFirst();
  const audit = (seq: string) => db().selectFrom('audit_log').select(['action', 'detail', 'actor_email']).where('target', '=', seq).orderBy('id').execute();
  const orderState = async (id: string) => (await findOrder(db(), id))!.state;
  const gauge = async () => /^sunap_order_voids\{state="pending"\} (\d+)$/m.exec((await t.get('/metrics')).text)?.[1];

  /**
   * The page as the team sees it in Chromium, on a phone and a desktop: `text` visible, no
   * sideways scrolling, axe-core clean. SUNAP_SCREENSHOTS=DIR keeps the screenshots (SQLite run).
   */
  async function inChromium(path: string, text: RegExp, name: string): Promise<void> {
    const browser = await launchBrowser();
    try {
      for (const [vp, viewport, mobile] of [['phone', { width: 390, height: 844 }, true], ['desktop', { width: 1280, height: 800 }, false]] as const) {
        const context = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile, locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: true });
        await context.addCookies([...c.jar].map(([n, value]) => ({ name: n, value, url: t.url })));
        const pg = await context.newPage();
        await pg.goto(t.url + path);
        assert.ok(await pg.getByText(text).first().isVisible(), `${vp}: ${text} is visible`);
        assert.ok((await scrollWidth(pg)) <= viewport.width, `${vp}: no sideways scrolling`);
        const v = await axeViolations(pg);
        assert.deepEqual(v, [], describeViolations(v));
        if (process.env.SUNAP_SCREENSHOTS && engine === 'sqlite') await pg.screenshot({ path: join(process.env.SUNAP_SCREENSHOTS, `${name}-${vp}.png`), fullPage: true });
        await context.close();
      }
    } finally {
      await browser.close();
    }
  }

  /**
   * One payment, two windows: the first pays it; the processor confirms the second as well (its
   * window confirmed on its side), and its notice makes Sunap look the order up and void it.
   */
  async function doubled(script: FaultySandbox['script']): Promise<{ p: Payment; seq: string; first: string; second: string }> {
    const body = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    const seq = body.TRANS_SEQNO as string;
    const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq))!;
    const second = await beginCheckout(ctx, p.id, 'CARD', { processor: 'sandbox', anyMethod: true, returnUrls: urls });
    assert.equal(second.outcome, 'WINDOW');
    if (second.outcome !== 'WINDOW') throw new Error('no window');
    assert.equal((await sandboxPay(ctx, p, {}, urls)).approved, true, 'the first window pays');
    const back = new URL((await sandbox.play(second.orderId, { action: 'approve', choice: { card: 'shinhan', installment: '00' } }))!);
    const charged = await sandbox.confirm({ orderId: second.orderId, processorRef: back.searchParams.get('paymentKey'), amount: p.amount });
    assert.equal(charged.status, 'APPROVED', 'the processor charged the second order too');
    sandbox.script = [...script];
    sandbox.reached = 0;
    const settled = await settleOrder(ctx, second.orderId, 'event');
    assert.equal(settled?.outcome, 'STATE', 'the second order took nothing from the payment');
    sandbox.lookups = 0;
    const paid = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq))!;
    return { p: paid, seq, first: paid.processor_order!, second: second.orderId };
  }

  test('a void the processor accepts at once: CANCELED, nothing queued, nothing to tell', async () => {
    const { seq, second } = await doubled([]);
    assert.equal((await attempt(second)).status, 'CANCELED');
    assert.equal(await orderState(second), 'CANCELED');
    assert.equal(sandbox.reached, 1);
    assert.equal(await job(second), undefined);
    assert.deepEqual((await audit(seq)).filter((a) => a.action.startsWith('payment.void')), []);
  });

  test('refused once, then accepted: VOIDING (not CANCELED) with its retry queued 60 s on; the retry cancels once; the team sees both', async () => {
    const { p, seq, first, second } = await doubled(['refuse']);
    const a = await attempt(second);
    assert.equal(a.status, 'VOIDING', 'a refused void is not a cancel');
    assert.match(a.message!, /^이미 다른 주문으로 결제된 결제라 자동 취소를 요청했으나 결제사가 거절해 다시 요청합니다: NOT_CANCELABLE_PAYMENT/);
    assert.equal(await orderState(second), 'DONE', 'the processor still holds the charge');
    const j = (await job(second))!;
    assert.deepEqual([j.kind, j.status, Number(j.run_at), j.max_attempts, j.store_code, JSON.parse(j.payload)], ['gateway.order-void', 'PENDING', NOW + 60_000, 10, t.storeCode, { paymentId: p.id, attemptId: second }]);
    assert.equal(await gauge(), '1');
    assert.ok(log.lines.some((l) => l.level === 50 && /did not void an order/.test(String(l.msg))), 'the operator is told (error)');
    const pending = await audit(seq);
    assert.deepEqual(pending.map((x) => [x.action, x.actor_email]), [['payment.void_pending', 'Sunap (자동)']]);
    assert.match(pending[0]!.detail!, new RegExp(`128,000원, 결제창 주문 ${second}`));
    // The payment stays paid by the first order.
    const now = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq))!;
    assert.deepEqual([now.state, now.processor_order], ['APPROVE_COMPLETE', first]);

    // What the store's team sees: the order on the payment's timeline, and the audit log.
    const page = `/console/payments/${encodeURIComponent(seq)}`;
    assert.match(textOf((await c.get(page)).text), /결제창: 자동 취소 재시도 중 \(결제사에 남은 승인\)/);
    assert.match(textOf((await c.get('/console/settings')).text), new RegExp(`Sunap \\(자동\\) 맞지 않는 결제의 자동 취소 실패, 재시도 ${seq}`));
    await inChromium(page, /자동 취소 재시도 중 \(결제사에 남은 승인\)/, 'payment-voiding');

    await retryVoid(ctx, { paymentId: p.id, attemptId: second }, false);
    assert.equal((await attempt(second)).status, 'CANCELED');
    assert.equal(await orderState(second), 'CANCELED');
    assert.deepEqual([sandbox.lookups, sandbox.reached], [1, 1], 'looked up first, then one cancel reached the processor');
    assert.doesNotMatch(textOf((await c.get(page)).text), /자동 취소 재시도 중/);
    assert.match(textOf((await c.get('/console/settings')).text), new RegExp(`맞지 않는 결제 재시도로 자동 취소 ${seq}`));
    assert.deepEqual((await audit(seq)).map((x) => x.action), ['payment.void_pending', 'payment.void_done']);
    assert.equal(await gauge(), '0');
    // A second run (a crash after the commit) finds nothing to do.
    await retryVoid(ctx, { paymentId: p.id, attemptId: second }, false);
    assert.deepEqual([sandbox.lookups, sandbox.reached], [1, 1]);
    assert.equal(await orderState(first), 'DONE', 'the first order is untouched');
  });

  test('the void\'s answer lost after it acted: the look-up finds it cancelled; no second cancel', async () => {
    const { p, seq, second } = await doubled(['lose-after']);
    assert.equal((await attempt(second)).status, 'VOIDING');
    assert.match((await attempt(second)).message!, /^이미 다른 주문으로 결제된 결제라 자동 취소를 요청했으나 결제사 응답이 없어, 조회한 뒤 다시 요청합니다$/);
    assert.equal(await orderState(second), 'CANCELED', 'the processor did cancel');
    await retryVoid(ctx, { paymentId: p.id, attemptId: second }, false);
    assert.equal((await attempt(second)).status, 'CANCELED');
    assert.deepEqual([sandbox.lookups, sandbox.reached], [1, 1], 'the look-up decided: no second cancel');
    assert.deepEqual((await audit(seq)).map((x) => x.action), ['payment.void_pending', 'payment.void_done']);
  });

  test('the void\'s answer lost before it acted: the look-up finds the charge, and the retry cancels it', async () => {
    const { p, second } = await doubled(['lose-before']);
    assert.equal((await attempt(second)).status, 'VOIDING');
    assert.equal(await orderState(second), 'DONE');
    await retryVoid(ctx, { paymentId: p.id, attemptId: second }, false);
    assert.equal((await attempt(second)).status, 'CANCELED');
    assert.equal(await orderState(second), 'CANCELED');
    assert.deepEqual([sandbox.lookups, sandbox.reached], [1, 1]);
  });

  test('refused on every try: still VOIDING while tries remain (the job fails, to retry); the last try closes it FAILED and says so', async () => {
    const { p, seq, second } = await doubled(['refuse', 'refuse', 'refuse']);
    await assert.rejects(retryVoid(ctx, { paymentId: p.id, attemptId: second }, false), /refused the void/);
    assert.equal((await attempt(second)).status, 'VOIDING');
    await assert.rejects(retryVoid(ctx, { paymentId: p.id, attemptId: second }, true), /refused the void/);
    const a = await attempt(second);
    assert.equal(a.status, 'FAILED');
    assert.match(a.message!, /결제사 관리자 화면에서 이 주문을 취소해 주세요/);
    assert.equal(await orderState(second), 'DONE', 'nothing was cancelled, and nothing says it was');
    assert.deepEqual((await audit(seq)).map((x) => x.action), ['payment.void_pending', 'payment.void_failed']);
    assert.ok(log.lines.some((l) => l.level === 50 && /gave up voiding/.test(String(l.msg))));
    assert.equal(await gauge(), '0', 'no longer pending: the audit log and the error log carry it');
  });

  test('the look-up cannot tell (the processor is down): the try fails and the attempt stays VOIDING', async () => {
    const { p, second } = await doubled(['refuse']);
    const down = sandbox.lookup.bind(sandbox);
    sandbox.lookup = async () => {
      throw new Error('processor unreachable');
    };
    try {
      await assert.rejects(retryVoid(ctx, { paymentId: p.id, attemptId: second }, false), /unreachable/);
    } finally {
      sandbox.lookup = down;
    }
    assert.equal((await attempt(second)).status, 'VOIDING');
    assert.equal(sandbox.reached, 0, 'no cancel without a look-up first');
  });

  test('the retry runs on the app\'s own worker when due, not before: the app\'s processor voids it, the attempt closes CANCELED', async () => {
    const { p, seq, second } = await doubled(['refuse']);
    const clock = t.app.sunap.clock;
    const worker = t.app.sunap.worker;
    try {
      // The retry is due 60 s after the refusal (NOW); the app's clock is real time, a few seconds past NOW.
      await clock.advance(Math.floor((NOW + 60_000 - clock.nowMs()) / 1000) - 2);
      await worker.drain();
      assert.equal((await attempt(second)).status, 'VOIDING', 'not due before its minute');
      assert.equal((await job(second))!.attempts, 0);
      await clock.advance(3);
      await worker.drain();
      const j = (await job(second))!;
      assert.deepEqual([j.status, j.attempts], ['DONE', 1]);
      assert.equal((await attempt(second)).status, 'CANCELED');
      assert.equal(await orderState(second), 'CANCELED');
      assert.deepEqual((await audit(seq)).map((x) => x.action), ['payment.void_pending', 'payment.void_done']);
      const now = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq))!;
      assert.deepEqual([now.id, now.state], [p.id, 'APPROVE_COMPLETE'], 'the payment stays paid by the first order');
    } finally {
      await clock.reset();
    }
  });

  test('a charge of another amount (tampered), its void refused: the customer is told it was not paid, the payment waits, the order is VOIDING until the retry voids it', async () => {
    const body = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    const seq = body.TRANS_SEQNO as string;
    const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq))!;
    const order = await beginCheckout(ctx, p.id, 'CARD', { processor: 'sandbox', anyMethod: true, returnUrls: urls });
    if (order.outcome !== 'WINDOW') throw new Error('no window');
    const back = new URL((await sandbox.play(order.orderId, { action: 'approve', choice: { card: 'shinhan', installment: '00' } }))!);
    assert.equal((await sandbox.confirm({ orderId: order.orderId, processorRef: back.searchParams.get('paymentKey'), amount: p.amount })).status, 'APPROVED');
    sandbox.script = ['refuse'];
    sandbox.reached = 0;
    sandbox.tamperedAmount = 100;
    try {
      const settled = await settleOrder(ctx, order.orderId, 'event');
      assert.deepEqual([settled?.outcome, settled?.payment.state], ['DECLINED', 'STORE_REQUEST'], 'not paid, and the payment may be paid again');
    } finally {
      sandbox.tamperedAmount = null;
    }
    const a = await attempt(order.orderId);
    assert.equal(a.status, 'VOIDING');
    assert.match(a.message!, /^주문 금액과 다른 결제라 자동 취소를 요청했으나 결제사가 거절해/);
    assert.equal(await orderState(order.orderId), 'DONE');
    assert.ok(await job(order.orderId));
    assert.deepEqual((await audit(seq)).map((x) => x.action), ['payment.void_pending']);
    sandbox.lookups = 0;
    await retryVoid(ctx, { paymentId: p.id, attemptId: order.orderId }, false);
    assert.equal((await attempt(order.orderId)).status, 'CANCELED');
    assert.equal(await orderState(order.orderId), 'CANCELED');
    assert.deepEqual([sandbox.lookups, sandbox.reached], [1, 1]);
    const now = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, seq))!;
    assert.equal(now.state, 'STORE_REQUEST', 'the payment still waits for a payment of its own amount');
  });
});
