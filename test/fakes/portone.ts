import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';

/**
 * A faithful local fake of PortOne V2 (docs/going-live.md, "PortOne"; "Rehearse live mode"):
 *
 * - its browser SDK at /v2/browser-sdk.js: `PortOne.requestPayment(params)` checks the store id,
 *   the channel key (of that store) and the pre-registered amount, then sends the browser to the
 *   PG's window (redirect mode, as `forceRedirect` asks), or answers `{ code, message }` at once;
 * - the PG's window (/window/{txId}), a page of its own without script: the customer chooses the
 *   outcome (a card company and approve, a refusal, close; an easy pay; a bank for a virtual
 *   account); the window then redirects to `redirectUrl` with `paymentId`, `transactionType`
 *   and `txId`, or `paymentId`, `code` and `message`;
 * - its REST API with its own auth check (`Authorization: PortOne {API secret}`, 401
 *   UNAUTHORIZED; another store's id, 403 FORBIDDEN): `POST /payments/{id}/pre-register`,
 *   `GET /payments/{id}`, `POST /payments/{id}/cancel` (full, `currentCancellableAmount`, a paid
 *   virtual account needs `refundAccount`), `POST /payments/{id}/virtual-account/close`, with
 *   the documented error types;
 * - its webhooks (version 2024-04-25), signed the Standard Webhooks way with the store's webhook
 *   secret, posted to the store's webhook address after each change.
 *
 * Scriptable: `deposit(paymentId)` (the bank's deposit into an issued account), `holdGets(n)`
 * (the next n look-ups are never answered: a lost confirmation), `webhooksOff`.
 */

export interface FakePortoneChannel { key: string; pgProvider: string; name: string }
export interface FakePortoneStore { storeId: string; apiSecret: string; webhookSecret: string; channels: FakePortoneChannel[]; webhookUrl?: string }

const uuid = (seed: string) => `${seed}-${randomUUID()}`;

/** A store of the fake with two PG channels (KG이니시스 and NICE), its keys in the formats Sunap checks. */
export function fakePortoneStore(): FakePortoneStore {
  return {
    storeId: uuid('store'),
    apiSecret: randomBytes(40).toString('base64url'),
    webhookSecret: `whsec_${randomBytes(32).toString('base64')}`,
    channels: [
      { key: uuid('channel-key'), pgProvider: 'INICIS_V2', name: 'KG이니시스' },
      { key: uuid('channel-key'), pgProvider: 'NICE_V2', name: 'NICE페이먼츠' },
    ],
  };
}

/**
 * The rehearsal's store (`npm run fakes`, docs/going-live.md "Rehearse live mode"): fixed keys, so
 * the README's commands work as printed. Test keys only: they open nothing but this fake.
 */
export const FAKE_PORTONE: FakePortoneStore = {
  storeId: 'store-00000000-0000-4000-8000-000000005a1a',
  apiSecret: 'sunapRehearsalPortOneV2ApiSecret0000000000',
  webhookSecret: `whsec_${Buffer.from('sunap rehearsal portone webhooks').toString('base64')}`,
  channels: [
    { key: 'channel-key-00000000-0000-4000-8000-00000000c0de', pgProvider: 'INICIS_V2', name: 'KG이니시스' },
    { key: 'channel-key-00000000-0000-4000-8000-00000000c1ce', pgProvider: 'NICE_V2', name: 'NICE페이먼츠' },
  ],
};

type Status = 'READY' | 'VIRTUAL_ACCOUNT_ISSUED' | 'PAID' | 'FAILED' | 'CANCELLED' | 'PARTIAL_CANCELLED';

export interface FakePortonePayment {
  id: string;
  transactionId: string;
  storeId: string;
  channel: FakePortoneChannel | null;
  status: Status;
  total: number;
  taxFree: number;
  paid: number;
  cancelled: number;
  orderName: string;
  payMethod: string;
  customer: Record<string, unknown>;
  redirectUrl: string;
  /** requestPayment's noticeUrls: where this payment's notices go instead of the store's address. */
  noticeUrls: string[];
  validHours: number;
  requestedAt: string;
  updatedAt: string;
  paidAt?: string;
  failedAt?: string;
  cancelledAt?: string;
  method?: Record<string, unknown>;
  failure?: { reason: string; pgCode: string; pgMessage: string };
  cancellations: Record<string, unknown>[];
  refundAccount?: Record<string, unknown>;
  preRegistered: boolean;
}

export interface FakeCall { method: string; path: string; query: URLSearchParams; headers: IncomingMessage['headers']; json: any }

const CARD_ISSUERS: Record<string, string> = { SHINHAN_CARD: '신한카드', KOOKMIN_CARD: 'KB국민카드', HYUNDAI_CARD: '현대카드' };
const EASY_PAYS: Record<string, string> = { KAKAOPAY: '카카오페이', NAVERPAY: '네이버페이', TOSSPAY: '토스페이' };
const VA_BANKS: Record<string, string> = { SHINHAN: '신한은행', KOOKMIN: 'KB국민은행', WOORI: '우리은행' };
const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const iso = (ms: number) => new Date(ms).toISOString();

export class FakePortone {
  readonly stores: FakePortoneStore[];
  readonly payments = new Map<string, FakePortonePayment>();
  readonly calls: FakeCall[] = [];
  /** Webhooks sent: the store, type, paymentId and Sunap's answer status (0: no answer). */
  readonly webhooks: { storeId: string; type: string; paymentId: string; status: number }[] = [];
  webhooksOff = false;
  private held = 0;
  private pending = new Set<Promise<void>>();
  private server!: Server;
  private ca: Buffer | null = null;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor(stores: FakePortoneStore[] = [fakePortoneStore()]) {
    this.stores = stores;
  }

  get store(): FakePortoneStore {
    return this.stores[0]!;
  }

  async start(port = 0, tlsDir = process.env.SUNAP_TEST_TLS_DIR): Promise<this> {
    if (!tlsDir) throw new Error('SUNAP_TEST_TLS_DIR is not set: run the tests with npm test (or the fakes with npm run fakes)');
    this.server = createServer({ key: readFileSync(join(tlsDir, 'server.key')), cert: readFileSync(join(tlsDir, 'server.crt')) }, (req, res) => this.serve(req, res));
    this.ca = readFileSync(join(tlsDir, 'ca.crt'));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
    this.url = `https://localhost:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async close(): Promise<void> {
    await this.webhooksSettled();
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }

  /** The next `n` look-ups (GET /payments/{id}) are never answered. */
  holdGets(n: number): void {
    this.held = n;
  }

  /** Waits until every webhook sent so far has had its answer. */
  async webhooksSettled(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** The bank's deposit of the full amount into an issued account: PAID, and Transaction.Paid. False without an open account. */
  deposit(paymentId: string): boolean {
    const p = this.payments.get(paymentId);
    if (!p || p.status !== 'VIRTUAL_ACCOUNT_ISSUED') return false;
    const now = Date.now();
    Object.assign(p, { status: 'PAID', paid: p.total, paidAt: iso(now), updatedAt: iso(now) });
    p.method = { ...p.method, remitterName: String(p.customer.fullName ?? '') };
    this.notify(p, 'Transaction.Paid');
    return true;
  }

  /** A cancel made in PortOne's console: CANCELLED, and Transaction.Cancelled. */
  consoleCancel(paymentId: string): boolean {
    const p = this.payments.get(paymentId);
    if (!p || p.status !== 'PAID') return false;
    this.cancelNow(p, '관리자 콘솔에서 취소');
    return true;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const u = new URL(req.url ?? '/', 'https://fake');
      let json: any = null;
      try {
        json = raw && (req.headers['content-type'] ?? '').includes('urlencoded') ? Object.fromEntries(new URLSearchParams(raw)) : raw ? JSON.parse(raw) : null;
      } catch {
        json = undefined;
      }
      const call: FakeCall = { method: req.method ?? 'GET', path: u.pathname, query: u.searchParams, headers: req.headers, json };
      this.calls.push(call);
      try {
        this.route(call, res);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'INTERNAL', message: (err as Error).message }));
      }
    });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' }).end(JSON.stringify(body));
  }

  private route(c: FakeCall, res: ServerResponse): void {
    if (c.method === 'GET' && c.path === '/v2/browser-sdk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'access-control-allow-origin': '*' }).end(sdkSource(this.url));
      return;
    }
    if (c.method === 'POST' && c.path === '/v2/sdk/payments') return this.send(res, 200, this.sdkRequest(c.json));
    // The rehearsal's bank (not PortOne's API): the issued accounts, and a deposit into one.
    if (c.method === 'GET' && c.path === '/fake/accounts') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(accountsPage([...this.payments.values()].filter((p) => p.status === 'VIRTUAL_ACCOUNT_ISSUED')));
      return;
    }
    if (c.method === 'POST' && c.path === '/fake/deposit') {
      const ok = this.deposit(String(c.json?.paymentId ?? ''));
      res.writeHead(ok ? 303 : 404, { location: '/fake/accounts', 'content-type': 'text/plain; charset=utf-8' }).end(ok ? '' : 'no open account for that paymentId\n');
      return;
    }
    const win = /^\/window\/([A-Za-z0-9-]+)$/.exec(c.path);
    if (win) return this.window(c, res, win[1]!);
    const m = /^\/payments\/([^/]+)(\/pre-register|\/cancel|\/virtual-account\/close)?$/.exec(c.path);
    if (!m) return this.send(res, 404, { type: 'NOT_FOUND', message: 'no such API' });
    const store = this.stores.find((s) => c.headers.authorization === `PortOne ${s.apiSecret}`);
    if (!store) return this.send(res, 401, { type: 'UNAUTHORIZED', message: '인증 정보가 올바르지 않습니다.' });
    const storeId = c.query.get('storeId') ?? (c.json && typeof c.json === 'object' ? c.json.storeId : undefined) ?? store.storeId;
    if (storeId !== store.storeId) return this.send(res, 403, { type: 'FORBIDDEN', message: '요청이 거절되었습니다.' });
    const id = decodeURIComponent(m[1]!);
    const p = this.payments.get(id);
    switch (`${c.method} ${m[2] ?? ''}`) {
      case 'POST /pre-register': {
        if (p && p.status !== 'READY') return this.send(res, 409, { type: 'ALREADY_PAID', message: '이미 결제가 완료되었습니다.' });
        const b = c.json ?? {};
        if (!Number.isInteger(b.totalAmount) || b.totalAmount <= 0 || (b.currency && b.currency !== 'KRW')) return this.send(res, 400, { type: 'INVALID_REQUEST', message: 'totalAmount' });
        this.payments.set(id, this.newPayment(id, store.storeId, { total: b.totalAmount, taxFree: b.taxFreeAmount ?? 0, preRegistered: true }));
        return this.send(res, 200, {});
      }
      case 'GET ': {
        if (this.held > 0) {
          this.held--;
          return; // never answered: the caller's time limit decides
        }
        if (!p || p.storeId !== store.storeId || !p.channel) return this.send(res, 404, { type: 'PAYMENT_NOT_FOUND', message: '결제 건이 존재하지 않습니다.' });
        return this.send(res, 200, this.view(p));
      }
      case 'POST /cancel':
        return this.cancelApi(res, p, store, c.json ?? {});
      case 'POST /virtual-account/close': {
        if (!p || p.storeId !== store.storeId || !p.channel) return this.send(res, 404, { type: 'PAYMENT_NOT_FOUND', message: '결제 건이 존재하지 않습니다.' });
        if (p.status !== 'VIRTUAL_ACCOUNT_ISSUED') return this.send(res, 409, { type: 'PAYMENT_NOT_WAITING_FOR_DEPOSIT', message: '결제 건이 입금 대기 상태가 아닙니다.' });
        const now = Date.now();
        Object.assign(p, { status: 'CANCELLED', cancelledAt: iso(now), updatedAt: iso(now) });
        this.notify(p, 'Transaction.Cancelled');
        return this.send(res, 200, { closedAt: iso(now) });
      }
      default:
        return this.send(res, 404, { type: 'NOT_FOUND', message: 'no such API' });
    }
  }

  private newPayment(id: string, storeId: string, over: Partial<FakePortonePayment>): FakePortonePayment {
    const now = iso(Date.now());
    return {
      id, transactionId: randomUUID(), storeId, channel: null, status: 'READY', total: 0, taxFree: 0, paid: 0, cancelled: 0, orderName: '', payMethod: '',
      customer: {}, redirectUrl: '', noticeUrls: [], validHours: 0, requestedAt: now, updatedAt: now, cancellations: [], preRegistered: false, ...over,
    };
  }

  /** What the SDK's requestPayment sends: checked as PortOne checks it; a window address, or the SDK's error. */
  private sdkRequest(b: any): { windowUrl: string } | { code: string; message: string; paymentId?: string } {
    const bad = (message: string) => ({ code: 'FAILURE_TYPE_INVALID_PARAMETER', message, paymentId: b?.paymentId });
    if (!b || typeof b !== 'object') return bad('요청이 올바르지 않습니다.');
    const store = this.stores.find((s) => s.storeId === b.storeId);
    if (!store) return bad('storeId가 올바르지 않습니다.');
    const channel = store.channels.find((ch) => ch.key === b.channelKey);
    if (!channel) return bad('channelKey에 해당하는 채널이 없습니다.');
    if (typeof b.paymentId !== 'string' || !b.paymentId || typeof b.orderName !== 'string' || !Number.isInteger(b.totalAmount)) return bad('paymentId, orderName, totalAmount는 필수입니다.');
    if (!['CARD', 'EASY_PAY', 'VIRTUAL_ACCOUNT', 'TRANSFER', 'MOBILE'].includes(b.payMethod)) return bad('payMethod가 올바르지 않습니다.');
    if (typeof b.redirectUrl !== 'string' || !/^https?:\/\//.test(b.redirectUrl)) return bad('redirectUrl이 필요합니다.');
    const p = this.payments.get(b.paymentId);
    if (p && p.status !== 'READY') return { code: 'FAILURE_TYPE_PG', message: '이미 결제된 주문입니다.', paymentId: b.paymentId };
    if (p?.preRegistered && (p.total !== b.totalAmount || p.taxFree !== (b.taxFreeAmount ?? 0))) return { code: 'FAILURE_TYPE_PG', message: '사전 등록된 결제 금액과 다릅니다.', paymentId: b.paymentId };
    const payment = this.newPayment(b.paymentId, store.storeId, {
      ...(p ?? {}), channel, total: b.totalAmount, taxFree: b.taxFreeAmount ?? 0, orderName: b.orderName, payMethod: b.payMethod, customer: b.customer ?? {},
      redirectUrl: b.redirectUrl, noticeUrls: Array.isArray(b.noticeUrls) ? b.noticeUrls.filter((u: unknown) => typeof u === 'string') : [], validHours: b.virtualAccount?.accountExpiry?.validHours ?? 72, transactionId: randomUUID(), preRegistered: p?.preRegistered ?? false,
    });
    this.payments.set(payment.id, payment);
    this.notify(payment, 'Transaction.Ready');
    return { windowUrl: `${this.url}/window/${payment.transactionId}` };
  }

  private byTx(txId: string): FakePortonePayment | undefined {
    return [...this.payments.values()].find((p) => p.transactionId === txId);
  }

  /** The PG's window: GET shows the choices; POST applies one and redirects back. */
  private window(c: FakeCall, res: ServerResponse, txId: string): void {
    const p = this.byTx(txId);
    if (!p || p.status !== 'READY') {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="ko"><title>결제창</title><main><h1>만료된 결제창입니다</h1></main></html>');
      return;
    }
    if (c.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(windowPage(p));
      return;
    }
    const f = (c.json ?? {}) as Record<string, string>;
    const back = (params: Record<string, string>) => {
      const u = new URL(p.redirectUrl);
      u.searchParams.set('paymentId', p.id);
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
      res.writeHead(303, { location: u.toString() }).end();
    };
    const now = Date.now();
    if (f.action === 'close') return back({ code: 'FAILURE_TYPE_PG', message: '[PAY_STOP] 사용자가 결제를 취소하였습니다', pgCode: 'PAY_STOP' });
    if (f.action === 'decline') {
      Object.assign(p, { status: 'FAILED', failedAt: iso(now), updatedAt: iso(now), failure: { reason: '잔액이 부족합니다', pgCode: '51', pgMessage: '잔액부족' } });
      this.notify(p, 'Transaction.Failed');
      return back({ code: 'FAILURE_TYPE_PG', message: '[51] 잔액부족', pgCode: '51', pgMessage: '잔액부족' });
    }
    const approval = String(10_000_000 + Math.floor(Math.random() * 89_999_999));
    const card = (issuer: string, installment: number) => ({
      type: 'PaymentMethodCard', approvalNumber: approval, installment: { month: installment, isInterestFree: false }, pointUsed: false,
      card: { publisher: issuer, issuer, brand: 'LOCAL', type: 'CREDIT', ownerType: 'PERSONAL', bin: '53275000', name: CARD_ISSUERS[issuer] ?? '카드', number: '53275000****1234' },
    });
    switch (p.payMethod) {
      case 'CARD':
        p.method = card(f.issuer && CARD_ISSUERS[f.issuer] ? f.issuer : 'SHINHAN_CARD', Number(f.installment ?? 0) || 0);
        break;
      case 'EASY_PAY':
        p.method = { type: 'PaymentMethodEasyPay', provider: f.provider && EASY_PAYS[f.provider] ? f.provider : 'KAKAOPAY', easyPayMethod: card('KOOKMIN_CARD', 0) };
        break;
      case 'TRANSFER':
        p.method = { type: 'PaymentMethodTransfer', bank: 'WOORI' };
        break;
      case 'MOBILE':
        p.method = { type: 'PaymentMethodMobile', phoneNumber: '01012345678' };
        break;
      case 'VIRTUAL_ACCOUNT': {
        const bank = f.bank && VA_BANKS[f.bank] ? f.bank : 'SHINHAN';
        p.method = {
          type: 'PaymentMethodVirtualAccount', bank, accountNumber: `5620${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`, accountType: 'NORMAL',
          remitteeName: '(주)포트원테스트', expiredAt: iso(now + p.validHours * 3_600_000), issuedAt: iso(now),
        };
        Object.assign(p, { status: 'VIRTUAL_ACCOUNT_ISSUED', updatedAt: iso(now) });
        this.notify(p, 'Transaction.VirtualAccountIssued');
        return back({ transactionType: 'PAYMENT', txId: p.transactionId });
      }
    }
    Object.assign(p, { status: 'PAID', paid: p.total, paidAt: iso(now), updatedAt: iso(now) });
    this.notify(p, 'Transaction.Paid');
    return back({ transactionType: 'PAYMENT', txId: p.transactionId });
  }

  private cancelApi(res: ServerResponse, p: FakePortonePayment | undefined, store: FakePortoneStore, b: any): void {
    if (!p || p.storeId !== store.storeId || !p.channel) return this.send(res, 404, { type: 'PAYMENT_NOT_FOUND', message: '결제 건이 존재하지 않습니다.' });
    if (typeof b.reason !== 'string' || !b.reason) return this.send(res, 400, { type: 'INVALID_REQUEST', message: 'reason은 필수입니다.' });
    if (p.status === 'CANCELLED') return this.send(res, 409, { type: 'PAYMENT_ALREADY_CANCELLED', message: '이미 취소된 결제입니다.' });
    if (p.status !== 'PAID' && p.status !== 'PARTIAL_CANCELLED') return this.send(res, 409, { type: 'PAYMENT_NOT_PAID', message: '결제가 완료되지 않았습니다.' });
    const cancellable = p.paid - p.cancelled;
    if (b.currentCancellableAmount !== undefined && b.currentCancellableAmount !== cancellable) {
      return this.send(res, 409, { type: 'CANCELLABLE_AMOUNT_CONSISTENCY_BROKEN', message: '취소 가능 잔액 검증에 실패했습니다.' });
    }
    if (b.amount !== undefined && b.amount > cancellable) return this.send(res, 409, { type: 'CANCEL_AMOUNT_EXCEEDS_CANCELLABLE_AMOUNT', message: '결제 취소 금액이 취소 가능 금액을 초과합니다.' });
    if (p.method?.type === 'PaymentMethodVirtualAccount') {
      const a = b.refundAccount;
      if (!a || typeof a.bank !== 'string' || !/^\d{6,20}$/.test(String(a.number ?? '')) || !a.holderName) {
        return this.send(res, 400, { type: 'INVALID_REQUEST', message: '가상계좌 환불에는 refundAccount가 필요합니다.' });
      }
      p.refundAccount = a;
    }
    const c = this.cancelNow(p, b.reason, b.amount);
    return this.send(res, 200, { cancellation: c });
  }

  private cancelNow(p: FakePortonePayment, reason: string, amount?: number): Record<string, unknown> {
    const now = Date.now();
    const total = amount ?? p.paid - p.cancelled;
    const c = { status: 'SUCCEEDED', id: randomUUID(), pgCancellationId: randomBytes(8).toString('hex'), totalAmount: total, taxFreeAmount: 0, vatAmount: Math.floor(total / 11), reason, cancelledAt: iso(now), requestedAt: iso(now) };
    p.cancellations.push(c);
    p.cancelled += total;
    Object.assign(p, { status: p.cancelled >= p.paid ? 'CANCELLED' : 'PARTIAL_CANCELLED', cancelledAt: iso(now), updatedAt: iso(now) });
    this.notify(p, p.status === 'CANCELLED' ? 'Transaction.Cancelled' : 'Transaction.PartialCancelled', String(c.id));
    return c;
  }

  /** GET /payments/{id}: the payment in PortOne's shape for its status. */
  view(p: FakePortonePayment): Record<string, unknown> {
    const ch = p.channel!;
    const base: Record<string, unknown> = {
      status: p.status, id: p.id, transactionId: p.transactionId, merchantId: 'merchant-fake', storeId: p.storeId,
      channel: { type: 'TEST', id: ch.key.slice(12, 24), key: ch.key, name: ch.name, pgProvider: ch.pgProvider, pgMerchantId: 'INIpayTest' },
      version: 'V2', requestedAt: p.requestedAt, updatedAt: p.updatedAt, statusChangedAt: p.updatedAt, orderName: p.orderName,
      amount: { total: p.total, taxFree: p.taxFree, vat: Math.floor((p.total - p.taxFree) / 11), supply: p.total - p.taxFree - Math.floor((p.total - p.taxFree) / 11), discount: 0, paid: p.paid, cancelled: p.cancelled, cancelledTaxFree: 0 },
      currency: 'KRW', customer: p.customer, disputes: [],
    };
    if (p.method) base.method = p.method;
    if (p.paidAt) Object.assign(base, { paidAt: p.paidAt, pgTxId: `pg-${p.transactionId.slice(0, 8)}`, receiptUrl: `${this.url}/receipts/${p.transactionId}` });
    if (p.status === 'FAILED') Object.assign(base, { failedAt: p.failedAt, failure: p.failure });
    if (p.status === 'CANCELLED' || p.status === 'PARTIAL_CANCELLED') Object.assign(base, { cancellations: p.cancellations, cancelledAt: p.cancelledAt });
    return base;
  }

  /** Posts a Transaction.* webhook to the payment's noticeUrls (else the store's address), signed with the store's webhook secret. */
  private notify(p: FakePortonePayment, type: string, cancellationId?: string): void {
    const store = this.stores.find((s) => s.storeId === p.storeId);
    const targets = p.noticeUrls.length ? p.noticeUrls : store?.webhookUrl ? [store.webhookUrl] : [];
    if (this.webhooksOff || !store) return;
    for (const url of targets) this.post(store, p, type, url, cancellationId);
  }

  private post(store: FakePortoneStore, p: FakePortonePayment, type: string, url: string, cancellationId?: string): void {
    const body = JSON.stringify({ type, timestamp: iso(Date.now()), data: { storeId: store.storeId, paymentId: p.id, transactionId: p.transactionId, ...(cancellationId ? { cancellationId } : {}) } });
    const msgId = `msg_${randomBytes(12).toString('hex')}`;
    const at = new Date();
    const signature = new Webhook(store.webhookSecret).sign(msgId, at, body);
    const ts = String(Math.floor(at.getTime() / 1000));
    const entry = { storeId: store.storeId, type, paymentId: p.id, status: 0 };
    this.webhooks.push(entry);
    // Through node's own client with the test CA, so a Sunap behind the rehearsal's https front is reached too.
    const sent = new Promise<void>((done) => {
      const u = new URL(url);
      const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'webhook-id': msgId, 'webhook-timestamp': ts, 'webhook-signature': signature };
      const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, { method: 'POST', headers, timeout: 10_000, ...(u.protocol === 'https:' && this.ca ? { ca: this.ca } : {}) }, (r) => {
        entry.status = r.statusCode ?? 0;
        r.resume();
        r.on('end', () => done());
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => done());
      req.end(body);
    });
    const tracked = sent.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}

/** The fake's browser SDK: `PortOne.requestPayment`, redirect mode (the promise of a redirect never settles). */
function sdkSource(origin: string): string {
  return `(function () {
  'use strict';
  var ORIGIN = ${JSON.stringify(origin)};
  window.PortOne = {
    requestPayment: function (params) {
      return fetch(ORIGIN + '/v2/sdk/payments', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(params) })
        .then(function (r) { return r.json(); })
        .then(function (a) {
          if (a.windowUrl) { location.assign(a.windowUrl); return new Promise(function () {}); }
          return { transactionType: 'PAYMENT', paymentId: a.paymentId, code: a.code, message: a.message };
        });
    }
  };
})();
`;
}

function accountsPage(open: FakePortonePayment[]): string {
  const rows = open.map((p) => `<li>${esc(VA_BANKS[String(p.method?.bank)] ?? p.method?.bank)} ${esc(p.method?.accountNumber)} · ${esc(p.orderName)} · ${p.total.toLocaleString('ko-KR')}원
<form method="post" action="/fake/deposit"><input type="hidden" name="paymentId" value="${esc(p.id)}"><button type="submit">입금하기</button></form></li>`).join('');
  return `<!doctype html><html lang="ko"><head><meta charset="utf-8"><title>가상계좌 입금 (포트원 테스트)</title></head><body><main><h1>입금 대기 중인 가상계좌</h1>${rows ? `<ul>${rows}</ul>` : '<p>없습니다.</p>'}</main></body></html>`;
}

function windowPage(p: FakePortonePayment): string {
  const amount = `${p.total.toLocaleString('ko-KR')}원`;
  const radios = (name: string, options: Record<string, string>) =>
    Object.entries(options).map(([v, label], i) => `<label><input type="radio" name="${name}" value="${esc(v)}"${i === 0 ? ' checked' : ''}> ${esc(label)}</label>`).join('<br>');
  let choices = '';
  if (p.payMethod === 'CARD') choices = `<fieldset><legend>카드사</legend>${radios('issuer', CARD_ISSUERS)}</fieldset><label>할부 <select name="installment"><option value="0">일시불</option><option value="3">3개월</option></select></label>`;
  if (p.payMethod === 'EASY_PAY') choices = `<fieldset><legend>간편결제</legend>${radios('provider', EASY_PAYS)}</fieldset>`;
  if (p.payMethod === 'VIRTUAL_ACCOUNT') choices = `<fieldset><legend>입금 은행</legend>${radios('bank', VA_BANKS)}</fieldset>`;
  const action = `/window/${esc(p.transactionId)}`;
  return `<!doctype html><html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(p.channel!.name)} 결제창 (포트원 테스트)</title></head>
<body><main><h1>${esc(p.channel!.name)} 결제창</h1><p>${esc(p.orderName)} · <strong>${amount}</strong></p>
<form method="post" action="${action}"><input type="hidden" name="action" value="approve">${choices}<button type="submit">${amount} ${p.payMethod === 'VIRTUAL_ACCOUNT' ? '가상계좌 발급' : '결제하기'}</button></form>
${p.payMethod === 'VIRTUAL_ACCOUNT' ? '' : `<form method="post" action="${action}"><input type="hidden" name="action" value="decline"><button type="submit">잔액 부족으로 거절</button></form>`}
<form method="post" action="${action}"><input type="hidden" name="action" value="close"><button type="submit">결제창 닫기</button></form>
</main></body></html>`;
}
