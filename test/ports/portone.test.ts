import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { settingsContextOf } from '../../src/app.js';
import { resetSettings, setSettings } from '../../src/gateway/store-settings.js';
import { doctor } from '../../src/cli/doctor.js';
import { OutcomeUnknown } from '../../src/ports/card-processor.js';
import type { PayMethod } from '../../src/ports/checkout.js';
import { declineWords, PORTONE_STATUSES } from '../../src/ports/portone-codes.js';
import { PortoneCheckout, verifyStandardWebhook, WEBHOOK_TOLERANCE_S } from '../../src/ports/portone-checkout.js';
import { FakePortone, fakePortoneStore } from '../fakes/portone.js';
import { forEachEngine, paymentBody, startApp, TEST_SECRET_KEY, type TestApp } from '../helpers/app.js';

/**
 * PortOne V2's adapter against the fake (test/fakes/portone.ts), without a browser: every
 * status of GET /payments/{id} and every error it meets mapped; cancels and closes that treat
 * "already done" as done; notices at /processor-events/portone verified the Standard Webhooks
 * way (signature, the five-minute tolerance on both sides, a replay) and confirmed by a look-up,
 * never by the body; `checkCredentials` for `sunap doctor`.
 */
const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('PortOne V2 adapter and notices', (engine) => {
  const fake = new FakePortone([fakePortoneStore(), fakePortoneStore()]);
  let t: TestApp;
  let store: string;
  let adapter: PortoneCheckout;
  const keys = () => ({ apiSecret: fake.store.apiSecret, storeId: fake.store.storeId, channelKey: fake.store.channels[0]!.key, webhookSecret: fake.store.webhookSecret });

  before(async () => {
    await fake.start();
    t = await startApp(engine, { SUNAP_PORTONE_API_URL: fake.url, SUNAP_OUTBOUND_TIMEOUT_MS: '1500' });
    store = await t.addStore();
    await setSettings(settingsContextOf(t.app.sunap.config, t.app.sunap.database.db, t.app.sunap.box), store, { processor: 'portone', way: 'checkout', keys: keys() }, Date.now());
    fake.store.webhookUrl = `${t.url}/processor-events/portone/${store}`;
    adapter = new PortoneCheckout({ ...keys(), baseUrl: fake.url, timeoutMs: 1500 });
  });
  after(async () => {
    await t?.close();
    await fake.close();
  });

  /** An order through the fake's SDK and window without a browser; answers the window's return address. */
  async function inWindow(orderId: string, method: PayMethod, action = 'approve', extra: Record<string, string> = {}) {
    const w = await adapter.begin({
      orderId, amount: 128000, taxFreeAmount: 0, orderName: '11월 수강료', storeName: '샘플학원', method, customer: { name: '홍길동', phone: '01012345678' },
      successUrl: 'http://127.0.0.1:9/success', failUrl: 'http://127.0.0.1:9/fail', accountHours: 168,
    });
    assert.equal(w.kind, 'script');
    const request = (w as unknown as { params: { request: unknown } }).params.request;
    const sdk = await (await fetch(`${fake.url}/v2/sdk/payments`, { method: 'POST', body: JSON.stringify(request) })).json() as { windowUrl: string };
    const r = await fetch(sdk.windowUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ action, ...extra }), redirect: 'manual' });
    return new URL(r.headers.get('location')!);
  }
  const newOrder = () => `ord_${randomBytes(8).toString('hex')}`;

  /** A payment of the store paid by card through the page's own routes; its order id. */
  async function paidThroughPage(): Promise<{ seq: string; orderId: string }> {
    const body = paymentBody({ STORE_CODE: store });
    const url = new URL(rd(await t.gw('requestPayment', body)).REDIRECT_URL);
    const begin = await t.request('POST', `${url.pathname}/begin`, new URLSearchParams({ tid: url.searchParams.get('tid')!, token: url.searchParams.get('token')!, method: 'CARD' }).toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    const data = JSON.parse(/<script type="application\/json" id="sunap-checkout"[^>]*>(.*?)<\/script>/s.exec(begin.text)![1]!);
    const sdk = await (await fetch(`${fake.url}/v2/sdk/payments`, { method: 'POST', body: JSON.stringify(data.request) })).json() as { windowUrl: string };
    const back = await fetch(sdk.windowUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ action: 'approve' }), redirect: 'manual' });
    const ret = new URL(back.headers.get('location')!);
    await t.get(`${ret.pathname}${ret.search}`);
    await fake.webhooksSettled();
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO, STORE_CODE: store })).APPROVE_STATUS, 'APPROVE_COMPLETE');
    return { seq: body.TRANS_SEQNO as string, orderId: data.request.paymentId };
  }

  function signed(body: string, opts: { secret?: string; atS?: number; id?: string } = {}): Record<string, string> {
    const at = new Date((opts.atS ?? Math.floor(Date.now() / 1000)) * 1000);
    const id = opts.id ?? `msg_${randomBytes(8).toString('hex')}`;
    return { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(opts.secret ?? fake.store.webhookSecret).sign(id, at, body) };
  }
  const notice = (orderId: string, type = 'Transaction.Paid') => JSON.stringify({ type, timestamp: new Date().toISOString(), data: { storeId: fake.store.storeId, paymentId: orderId, transactionId: 'x' } });
  const post = (body: string, headers: Record<string, string>) => t.request('POST', `/processor-events/portone/${store}`, body, headers);

  test('every status of GET /payments/{id}: PAID approved (card, easy pay, transfer), VIRTUAL_ACCOUNT_ISSUED waiting, FAILED declined in Korean, READY pending, CANCELLED, a closed account, PARTIAL_CANCELLED unknown', async () => {
    assert.deepEqual(Object.keys(PORTONE_STATUSES).sort(), ['CANCELLED', 'FAILED', 'PAID', 'PARTIAL_CANCELLED', 'PAY_PENDING', 'READY', 'VIRTUAL_ACCOUNT_ISSUED']);
    assert.equal(await adapter.lookup(newOrder()), null, 'PAYMENT_NOT_FOUND: PortOne never saw it');

    const card = newOrder();
    const back = await inWindow(card, 'CARD', 'approve', { issuer: 'KOOKMIN_CARD', installment: '3' });
    assert.deepEqual([back.searchParams.get('paymentId'), back.searchParams.get('transactionType')], [card, 'PAYMENT']);
    const r = await adapter.confirm({ orderId: card, processorRef: back.searchParams.get('txId'), amount: 128000 });
    assert.deepEqual(r, {
      status: 'APPROVED', processorRef: fake.payments.get(card)!.transactionId, amount: 128000, approvedAtMs: Date.parse(fake.payments.get(card)!.paidAt!), method: 'CARD', methodName: '신용카드',
      card: { issuerName: 'KB국민카드', accepterName: 'KB국민카드', approvalNumber: (fake.payments.get(card)!.method as any).approvalNumber, installmentMonth: '03', bin: '532750', last4: '1234' }, bankName: null,
    });

    const easy = newOrder();
    await inWindow(easy, 'EASY_PAY', 'approve', { provider: 'NAVERPAY' });
    const e = await adapter.lookup(easy);
    assert.deepEqual(e?.status === 'APPROVED' && [e.method, e.methodName, e.card?.issuerName], ['EASY_PAY', '네이버페이', 'KB국민카드']);

    const transfer = newOrder();
    await inWindow(transfer, 'TRANSFER');
    const tr = await adapter.lookup(transfer);
    assert.deepEqual(tr?.status === 'APPROVED' && [tr.method, tr.methodName, tr.bankName, tr.card], ['TRANSFER', '계좌이체', '우리은행', null]);

    const va = newOrder();
    await inWindow(va, 'VIRTUAL_ACCOUNT', 'approve', { bank: 'KOOKMIN' });
    const w = await adapter.lookup(va);
    const fva = fake.payments.get(va)!;
    assert.deepEqual(w, {
      status: 'WAITING_FOR_DEPOSIT', processorRef: fva.transactionId, amount: 128000, secret: null,
      account: { bankCode: '004', bankName: 'KB국민은행', accountNumber: fva.method!.accountNumber, holder: '(주)포트원테스트', dueAtMs: Date.parse(String(fva.method!.expiredAt)) },
    });
    assert.equal(Date.parse(String(fva.method!.expiredAt)) - Date.parse(String(fva.method!.issuedAt)), 168 * 3_600_000, 'the account stays open accountHours (validHours)');
    assert.deepEqual(await adapter.closeAccount({ idempotencyKey: 'k', orderId: va, processorRef: null }), { outcome: 'CLOSED' });
    assert.deepEqual(await adapter.lookup(va), { status: 'CLOSED' }, 'closed before a deposit: CANCELLED with nothing paid');
    assert.deepEqual(await adapter.closeAccount({ idempotencyKey: 'k', orderId: va, processorRef: null }), { outcome: 'CLOSED' }, 'closing a closed account succeeds');

    const declined = newOrder();
    const dback = await inWindow(declined, 'CARD', 'decline');
    assert.equal(dback.searchParams.get('code'), 'FAILURE_TYPE_PG');
    const reading = adapter.readReturn(Object.fromEntries(dback.searchParams));
    assert.deepEqual([reading.orderId, reading.failure, reading.amount], [declined, null, null], 'a failure in the address is not believed: the confirm asks PortOne');
    assert.deepEqual(await adapter.confirm({ orderId: declined, processorRef: reading.processorRef, amount: 128000 }), { status: 'DECLINED', code: '51', message: '잔액 또는 한도가 부족합니다' });

    const closed = newOrder();
    const cback = await inWindow(closed, 'CARD', 'close');
    const creading = adapter.readReturn(Object.fromEntries(cback.searchParams));
    assert.deepEqual(await adapter.lookup(closed), { status: 'PENDING' }, 'READY: the window was closed, nothing paid');
    assert.deepEqual(await adapter.confirm({ orderId: closed, processorRef: creading.processorRef, amount: 128000 }), { status: 'DECLINED', code: 'FAILURE_TYPE_PG', message: '결제를 취소했습니다' });
    // A success address for a READY payment proves nothing either: pending, never approved.
    assert.deepEqual(await adapter.confirm({ orderId: closed, processorRef: 'tx', amount: 128000 }), { status: 'PENDING' });

    // A fail address for a payment PortOne holds as PAID is PAID (the window can fail in the browser after the PG took the money).
    assert.equal((await adapter.confirm({ orderId: card, processorRef: 'window-failed:FAILURE_TYPE_TIMEOUT', amount: 128000 })).status, 'APPROVED');
    // Another amount than the payment's is answered as PortOne holds it (the gateway then voids it), never as ours.
    assert.equal((await adapter.confirm({ orderId: card, processorRef: null, amount: 127999 }) as { amount: number }).amount, 128000);

    assert.deepEqual(await adapter.cancel({ idempotencyKey: 'c', orderId: transfer, processorRef: null, amount: 100000, reason: '환불', refundAccount: null }),
      { outcome: 'FAILED', message: '포트원에서 이미 일부 취소된 결제입니다. 포트원 콘솔에서 확인해 주세요' }, 'only while the whole amount is cancellable');
    fake.payments.get(transfer)!.cancelled = 28000;
    fake.payments.get(transfer)!.status = 'PARTIAL_CANCELLED';
    await assert.rejects(adapter.lookup(transfer), /partially cancelled \(28000 of 128000 won\); Sunap cancels in full only/);
    await assert.rejects(adapter.confirm({ orderId: transfer, processorRef: null, amount: 128000 }), OutcomeUnknown);
  });

  test('cancels: in full once (a repeat is done, not a second refund), an unpaid order has nothing to refund, an issued account closes, a paid account needs its refund account; PG and auth refusals in Korean', async () => {
    const card = newOrder();
    await inWindow(card, 'CARD');
    const req = { idempotencyKey: 'c', orderId: card, processorRef: null, amount: 128000, reason: '수강 취소', refundAccount: null };
    assert.deepEqual(await adapter.cancel(req), { outcome: 'CANCELED' });
    assert.deepEqual(await adapter.cancel(req), { outcome: 'CANCELED' }, 'PAYMENT_ALREADY_CANCELLED is done');
    assert.equal(fake.payments.get(card)!.cancellations.length, 1);
    assert.deepEqual(await adapter.lookup(card), { status: 'CANCELED', processorRef: fake.payments.get(card)!.transactionId, canceledAtMs: Date.parse(fake.payments.get(card)!.cancelledAt!) });

    const ready = newOrder();
    await inWindow(ready, 'CARD', 'close');
    assert.deepEqual(await adapter.cancel({ ...req, orderId: ready }), { outcome: 'CANCELED' }, 'PAYMENT_NOT_PAID and READY: nothing was taken');

    const issued = newOrder();
    await inWindow(issued, 'VIRTUAL_ACCOUNT');
    assert.deepEqual(await adapter.cancel({ ...req, orderId: issued }), { outcome: 'CANCELED' });
    assert.equal(fake.payments.get(issued)!.status, 'CANCELLED', 'closed, not refunded');

    const paidVa = newOrder();
    await inWindow(paidVa, 'VIRTUAL_ACCOUNT');
    fake.webhooksOff = true;
    assert.ok(fake.deposit(paidVa));
    fake.webhooksOff = false;
    assert.deepEqual(await adapter.closeAccount({ idempotencyKey: 'k', orderId: paidVa, processorRef: null }), { outcome: 'FAILED', message: '이미 입금된 가상계좌입니다' });
    assert.deepEqual(await adapter.cancel({ ...req, orderId: paidVa }), { outcome: 'FAILED', message: '포트원이 요청을 거절했습니다 (환불 계좌 등 입력값 확인)' });
    assert.deepEqual(await adapter.cancel({ ...req, orderId: paidVa, refundAccount: { bankCode: '999', accountNumber: '110987654321', holderName: '홍길동' } }), { outcome: 'FAILED', message: '환불 은행 코드(999)를 포트원이 모릅니다' });
    assert.deepEqual(await adapter.cancel({ ...req, orderId: paidVa, refundAccount: { bankCode: '090', accountNumber: '3333012345678', holderName: '홍길동' } }), { outcome: 'CANCELED' });
    assert.deepEqual(fake.payments.get(paidVa)!.refundAccount, { bank: 'KAKAO', number: '3333012345678', holderName: '홍길동' });

    const wrong = new PortoneCheckout({ ...keys(), apiSecret: 'x'.repeat(40), baseUrl: fake.url, timeoutMs: 1500 });
    assert.deepEqual(await wrong.cancel({ ...req, orderId: newOrder() }), { outcome: 'FAILED', message: '포트원 API 시크릿 또는 상점 아이디가 맞지 않습니다' });
    await assert.rejects(wrong.lookup(card), /GET \/payments answered 401 UNAUTHORIZED/);
    await assert.rejects(wrong.confirm({ orderId: card, processorRef: null, amount: 128000 }), OutcomeUnknown);
    assert.equal(declineWords({ pgCode: 'X', pgMessage: '도난 분실 카드' }), '사용할 수 없는 카드입니다. 카드사에 문의해 주세요');
    assert.equal(declineWords({ reason: 'unknown' }), '결제사에서 결제를 승인하지 않았습니다');
  });

  test('a lost look-up: both tries unanswered is unknown (the confirm) or a failure to retry (the look-up), never a decline', async () => {
    const card = newOrder();
    await inWindow(card, 'CARD');
    fake.holdGets(2);
    await assert.rejects(adapter.confirm({ orderId: card, processorRef: null, amount: 128000 }), OutcomeUnknown);
    fake.holdGets(1);
    assert.equal((await adapter.lookup(card))?.status, 'APPROVED', 'the second try answers');
    assert.equal(adapter.callLimitMs, 2 * 1500 + 500);
  });

  test('sunap doctor: the API secret and store id proven by a look-up that changes nothing; a wrong secret, another store\'s id and a missing webhook secret named', async () => {
    assert.deepEqual(await adapter.checkCredentials(), { ok: true, detail: `portone: the API secret works for store ${fake.store.storeId} (channel ${fake.store.channels[0]!.key}); notices are verified with the webhook secret` });
    const other = fake.stores[1]!.storeId;
    assert.deepEqual(await new PortoneCheckout({ ...keys(), storeId: other, baseUrl: fake.url, timeoutMs: 1500 }).checkCredentials(), { ok: false, detail: `portone: the API secret may not use store ${other} (403 FORBIDDEN)` });
    assert.deepEqual(await new PortoneCheckout({ ...keys(), apiSecret: 'y'.repeat(30), baseUrl: fake.url, timeoutMs: 1500 }).checkCredentials(), { ok: false, detail: 'portone: the API secret was refused (401 UNAUTHORIZED)' });
    assert.equal((await new PortoneCheckout({ ...keys(), webhookSecret: undefined, baseUrl: fake.url, timeoutMs: 1500 }).checkCredentials()).ok, false);
  });

  test('notices: Standard Webhooks verified (signature, 5-minute tolerance on both sides, headers), a replay answered as before, the body never believed; the 2024-01-01 shape read', async () => {
    const { seq, orderId } = await paidThroughPage();
    const body = notice(orderId, 'Transaction.Cancelled');
    const now = Math.floor(Date.now() / 1000);
    const forged = await post(body, signed(body, { secret: fake.stores[1]!.webhookSecret }));
    assert.deepEqual([forged.status, forged.body], [401, { received: false, outcome: 'REFUSED', detail: 'webhook-signature: no signature matches the webhook secret' }]);
    const unsigned = await post(body, { 'content-type': 'application/json' });
    assert.deepEqual([unsigned.status, unsigned.body.detail], [401, 'headers: webhook-id, webhook-timestamp and webhook-signature are required']);
    assert.equal(WEBHOOK_TOLERANCE_S, 300);
    const old = await post(body, signed(body, { atS: now - 310 }));
    assert.deepEqual([old.status, old.body.detail], [401, 'webhook-timestamp: older than 300 seconds']);
    const future = await post(body, signed(body, { atS: now + 310 }));
    assert.deepEqual([future.status, future.body.detail], [401, 'webhook-timestamp: more than 300 seconds in the future']);
    // The same body signed anew (PortOne's retry after the refusals above) is read again. Signed by the
    // store's secret, the body's "Cancelled" is still not believed: the look-up says PAID.
    const ok = await post(body, signed(body, { atS: now - 290, id: 'msg_replayed' }));
    assert.deepEqual([ok.status, ok.body], [200, { received: true, outcome: 'APPLIED', detail: 'looked up: nothing to change' }]);
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: seq, STORE_CODE: store })).APPROVE_STATUS, 'APPROVE_COMPLETE');
    const gets = fake.calls.filter((c) => c.method === 'GET').length;
    const again = await post(body, signed(body, { atS: now + 290, id: 'msg_replayed' }));
    assert.deepEqual([again.status, again.body.outcome], [200, 'DUPLICATE']);
    assert.equal(fake.calls.filter((c) => c.method === 'GET').length, gets, 'a replay asks nothing again');

    // Cancelled in PortOne's console: its notice (the 2024-01-01 shape) is confirmed by the look-up and applied once.
    fake.webhooksOff = true;
    assert.ok(fake.consoleCancel(orderId));
    fake.webhooksOff = false;
    const v1 = JSON.stringify({ payment_id: orderId, tx_id: 'x', status: 'Cancelled' });
    const applied = await post(v1, signed(v1));
    assert.deepEqual([applied.status, applied.body.outcome], [200, 'APPLIED']);
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: seq, STORE_CODE: store })).APPROVE_STATUS, 'CANCEL_COMPLETE');
    // Not PortOne's notice of a payment (BillingKey.*): ignored; an unknown store: 404.
    const billing = JSON.stringify({ type: 'BillingKey.Issued', timestamp: new Date().toISOString(), data: { billingKey: 'b' } });
    assert.deepEqual((await post(billing, signed(billing))).body.outcome, 'IGNORED');
    assert.equal((await t.request('POST', '/processor-events/portone/NOSUCHSTORE', body, signed(body))).status, 404);
    // The operator's route without operator keys: PortOne is not available there.
    assert.equal((await t.request('POST', '/processor-events/portone', body, signed(body))).status, 404);
    assert.deepEqual(verifyStandardWebhook(null, { body: Buffer.from(body), headers: signed(body) }, Date.now()), { ok: false, reason: 'webhook-signature: no webhook secret is configured for PortOne (SUNAP_PORTONE_WEBHOOK_SECRET or the store\'s own)' });
  });

  test('sunap doctor proves each store\'s own PortOne keys (sealed at rest, opened with the master key); a store whose secret PortOne refuses fails its line', async () => {
    const env = { DATABASE_URL: t.databaseUrl, SUNAP_SECRET_KEY: TEST_SECRET_KEY, SUNAP_PORTONE_API_URL: fake.url, SUNAP_PUBLIC_URL: 'http://127.0.0.1:9', SUNAP_OUTBOUND_TIMEOUT_MS: '1500' };
    const bad = await t.addStore();
    await setSettings(settingsContextOf(t.app.sunap.config, t.app.sunap.database.db, t.app.sunap.box), bad, { processor: 'portone', way: 'checkout', keys: { ...keys(), apiSecret: 'z'.repeat(32) } }, Date.now());
    const report = await doctor(env);
    const lines = report.checks.filter((c) => c.name.startsWith('store '));
    assert.deepEqual(lines.find((c) => c.name === `store ${store} (portone)`), { name: `store ${store} (portone)`, status: 'ok', detail: `portone: the API secret works for store ${fake.store.storeId} (channel ${fake.store.channels[0]!.key}); notices are verified with the webhook secret` });
    assert.deepEqual(lines.find((c) => c.name === `store ${bad} (portone)`), { name: `store ${bad} (portone)`, status: 'fail', detail: 'portone: the API secret was refused (401 UNAUTHORIZED)' });
    assert.equal(report.ok, false);
    // Another master key cannot open the sealed keys: named, not a crash.
    const other = await doctor({ ...env, SUNAP_SECRET_KEY: '22'.repeat(32) });
    assert.match(other.checks.find((c) => c.name === `store ${store} (portone)`)!.detail, /^its keys cannot be read with this SUNAP_SECRET_KEY/);
    await resetSettings(settingsContextOf(t.app.sunap.config, t.app.sunap.database.db, t.app.sunap.box), bad);
  });

  test('the window page: PortOne\'s SDK and our launcher by the page\'s nonce, the SDK\'s host (the fake\'s origin) in the CSP, the amount pre-registered; the launcher served with its ETag', async () => {
    const body = paymentBody({ STORE_CODE: store });
    const url = new URL(rd(await t.gw('requestPayment', body)).REDIRECT_URL);
    const begin = await t.request('POST', `${url.pathname}/begin`, new URLSearchParams({ tid: url.searchParams.get('tid')!, token: url.searchParams.get('token')!, method: 'VIRTUAL_ACCOUNT' }).toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(begin.status, 200);
    const csp = begin.headers.get('content-security-policy')!;
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
    assert.match(csp, new RegExp(`script-src 'nonce-${nonce}' ${fake.url}(;|$)`));
    assert.match(csp, new RegExp(`connect-src 'self' ${fake.url}(;|$)`));
    assert.ok(begin.text.includes(`<script src="${fake.url}/v2/browser-sdk.js" nonce="${nonce}"></script>`));
    assert.ok(begin.text.includes(`<script src="/assets/checkout/portone.js" nonce="${nonce}"></script>`));
    const data = JSON.parse(/<script type="application\/json" id="sunap-checkout"[^>]*>(.*?)<\/script>/s.exec(begin.text)![1]!);
    assert.deepEqual({ ...data.request, paymentId: '-', redirectUrl: '-' }, {
      storeId: fake.store.storeId, channelKey: fake.store.channels[0]!.key, paymentId: '-', orderName: '11월 수강료', totalAmount: 128000, taxFreeAmount: 0, currency: 'KRW',
      payMethod: 'VIRTUAL_ACCOUNT', customer: { fullName: '홍길동', phoneNumber: '01012345678' }, redirectUrl: '-', forceRedirect: true, locale: 'KO_KR',
      noticeUrls: [`${t.url}/processor-events/portone/${store}`], virtualAccount: { accountExpiry: { validHours: 168 } },
    });
    assert.equal(data.request.redirectUrl, data.successUrl);
    assert.deepEqual([fake.payments.get(data.request.paymentId)!.total, fake.payments.get(data.request.paymentId)!.preRegistered], [128000, true]);
    const js = await t.get('/assets/checkout/portone.js');
    assert.deepEqual([js.status, js.headers.get('content-type'), js.text.includes('window.PortOne.requestPayment(data.request)')], [200, 'text/javascript; charset=utf-8', true]);
    assert.equal((await t.get('/assets/checkout/portone.js', { 'if-none-match': js.headers.get('etag')! })).status, 304);
  });

  test('a window nobody came back from (the browser lost after PortOne took the money): PortOne\'s Transaction.Paid, confirmed by a look-up, pays the payment once', async () => {
    const body = paymentBody({ STORE_CODE: store });
    const url = new URL(rd(await t.gw('requestPayment', body)).REDIRECT_URL);
    const begin = await t.request('POST', `${url.pathname}/begin`, new URLSearchParams({ tid: url.searchParams.get('tid')!, token: url.searchParams.get('token')!, method: 'CARD' }).toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    const data = JSON.parse(/<script type="application\/json" id="sunap-checkout"[^>]*>(.*?)<\/script>/s.exec(begin.text)![1]!);
    const sdk = await (await fetch(`${fake.url}/v2/sdk/payments`, { method: 'POST', body: JSON.stringify(data.request) })).json() as { windowUrl: string };
    await fetch(sdk.windowUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ action: 'approve' }), redirect: 'manual' });
    await fake.webhooksSettled();
    const d = rd(await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO, STORE_CODE: store }));
    assert.deepEqual([d.APPROVE_STATUS, d.METHOD_NAME], ['APPROVE_COMPLETE', '신용카드']);
    assert.deepEqual(fake.webhooks.filter((w) => w.paymentId === data.request.paymentId).map((w) => [w.type, w.status]), [['Transaction.Ready', 200], ['Transaction.Paid', 200]]);
    const events = await t.app.sunap.database.db.selectFrom('processor_events').select(['event_type', 'outcome']).where('order_id', '=', data.request.paymentId).orderBy('received_at').execute();
    assert.deepEqual(events.map((e) => [e.event_type, e.outcome]), [['Transaction.Ready', 'APPLIED'], ['Transaction.Paid', 'APPLIED']]);
  });
});
