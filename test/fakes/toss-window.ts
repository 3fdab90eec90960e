import { randomBytes } from 'node:crypto';
import type { FakeAnswer, FakeRequest } from './https.js';

/**
 * The payment window half of the Toss Payments fake (test/fakes/toss.ts): what Toss's browser
 * SDK v2, its window, its confirm/look-up/cancel API and its notices do, as docs/going-live.md
 * describes them, with outcomes a test (or a person rehearsing) chooses.
 *
 * - GET /v2/standard: the SDK. `TossPayments(clientKey).payment({ customerKey }).requestPayment(req)`
 *   registers the order with the fake (POST /v2/sessions, the client key checked) and sends the
 *   browser to the window; a refused request rejects the promise with Toss's code.
 * - GET/POST /v2/window/{session}: the window (no script): test cards, easy pays, banks,
 *   carriers; approve, refuse (REJECT_CARD_COMPANY) or close (PAY_PROCESS_CANCELED). Approving
 *   sends the browser to successUrl with paymentType, orderId, paymentKey and amount.
 * - POST /v1/payments/confirm (Basic auth, Idempotency-Key): the money moves here, once.
 * - GET /v1/payments/orders/{orderId}, /v1/payments/{paymentKey}, POST /v1/payments/{paymentKey}/cancel
 *   (a paid virtual account needs refundReceiveAccount).
 * - deposit(), dashboardCancel(), expire(): the bank's deposit (DEPOSIT_CALLBACK with the
 *   account's secret), a cancel in Toss's dashboard (PAYMENT_STATUS_CHANGED), an account past
 *   its due date, each posted to `webhookUrl` as Toss posts them. GET /_dashboard does the same
 *   from a browser for the rehearsal.
 *
 * Scriptable: `loseNextConfirm` ('hold': the confirm is made and never answered; '500': made and
 * answered 500), `returnAmountDelta` (the success address carries another amount, as a customer
 * editing it would), and the card `declined` (authorized in the window, refused at the confirm).
 */
export const FAKE_TOSS_CLIENT_KEY = 'test_ck_sunapRehearsal0000000000';

type Status = 'READY' | 'IN_PROGRESS' | 'DONE' | 'WAITING_FOR_DEPOSIT' | 'CANCELED' | 'ABORTED' | 'EXPIRED';
type SdkMethod = 'CARD' | 'TRANSFER' | 'VIRTUAL_ACCOUNT' | 'MOBILE_PHONE';

export interface WindowOrder {
  session: string;
  /** The merchant (its secret key) whose client key opened the window: only its secret key sees the order. */
  merchant: string;
  orderId: string;
  orderName: string;
  amount: number;
  /** requestPayment's taxFreeAmount (0 when absent): the part Toss reports as tax-free. */
  taxFree: number;
  method: SdkMethod;
  successUrl: string;
  failUrl: string;
  customerName: string;
  validHours: number;
  status: Status;
  paymentKey: string | null;
  /** What the customer chose in the window: card:41, easy:카카오페이, bank:20, phone:SKT. */
  choice: string | null;
  requestedAt: string;
  approvedAt: string | null;
  approveNo: string | null;
  secret: string | null;
  account: { bankCode: string; accountNumber: string; dueDate: string; expired: boolean } | null;
  refundTo: { bank: string; accountNumber: string; holderName: string } | null;
  cancels: { cancelAmount: number; cancelReason: string; canceledAt: string; transactionKey: string }[];
  failure: { code: string; message: string } | null;
}

const CARDS: Record<string, { label: string; issuer: string; number: string }> = {
  '41': { label: '신한카드', issuer: '41', number: '4330123412341234' },
  '11': { label: 'KB국민카드', issuer: '11', number: '5243123412341234' },
  declined: { label: '카드사 거절 (승인 요청 때)', issuer: '51', number: '4000000000000002' },
};
const EASY_PAYS = ['토스페이', '카카오페이', '네이버페이'];
const BANKS: Record<string, string> = { '88': '신한은행', '20': '우리은행', '06': 'KB국민은행', '81': '하나은행', '11': 'NH농협은행' };
const KNOWN_TOSS_BANKS = new Set(['02', '03', '06', '07', '11', '12', '20', '23', '27', '31', '32', '34', '35', '37', '39', '45', '48', '50', '71', '81', '88', '89', '90', '92']);
const METHOD_NAMES: Record<SdkMethod, string> = { CARD: '카드', TRANSFER: '계좌이체', VIRTUAL_ACCOUNT: '가상계좌', MOBILE_PHONE: '휴대폰' };

const err = (status: number, code: string, message: string, headers?: Record<string, string>): FakeAnswer => ({ status, body: { code, message }, headers });
const cors = { 'access-control-allow-origin': '*' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const kst = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString().replace('Z', '+09:00');

export class TossWindow {
  readonly orders = new Map<string, WindowOrder>();
  /** Confirms that moved money, by orderId: more than one would be a double charge. */
  readonly charges = new Map<string, number>();
  /** Refunds made, by orderId, with the account a virtual account's refund went to. */
  readonly refunds = new Map<string, number>();
  /** Where deposits and webhooks are posted (Sunap's /processor-events/toss). */
  webhookUrl = '';
  /** Every notice posted, with Sunap's answer. */
  readonly notices: { body: unknown; status: number }[] = [];
  loseNextConfirm: 'hold' | '500' | null = null;
  returnAmountDelta = 0;
  private seq = 0;

  /** Each merchant's key pair, client key → secret key: one Toss serves many merchants (a platform's stores with their own contracts). */
  readonly merchants = new Map<string, string>();

  constructor(private readonly origin: () => string, readonly clientKey = FAKE_TOSS_CLIENT_KEY, secretKey = '') {
    this.merchants.set(clientKey, secretKey);
  }

  /** Another merchant's contract (a store with its own keys). */
  addMerchant(clientKey: string, secretKey: string, webhookUrl?: string): void {
    this.merchants.set(clientKey, secretKey);
    if (webhookUrl) this.merchantWebhooks.set(secretKey, webhookUrl);
  }

  isMerchant(secretKey: string): boolean {
    return [...this.merchants.values()].includes(secretKey);
  }

  /** The order of a paymentKey, as the merchant calling sees it (another merchant's is not there). */
  byKey(paymentKey: string, merchant?: string): WindowOrder | undefined {
    return [...this.orders.values()].find((o) => o.paymentKey === paymentKey && (merchant === undefined || o.merchant === merchant));
  }

  byOrder(orderId: string, merchant: string): WindowOrder | undefined {
    const o = this.orders.get(orderId);
    return o && o.merchant === merchant ? o : undefined;
  }

  /** The browser's side: the SDK, the session it registers, the window, the dashboard. Null: not a window path. */
  browser(r: FakeRequest): FakeAnswer | Promise<FakeAnswer> | null {
    if (r.method === 'GET' && r.path === '/v2/standard') return { status: 200, type: 'text/javascript; charset=utf-8', body: sdk(this.origin()), headers: cors };
    if (r.method === 'OPTIONS' && r.path === '/v2/sessions') return { status: 204, type: 'text/plain', body: '', headers: { ...cors, 'access-control-allow-headers': 'content-type', 'access-control-allow-methods': 'POST' } };
    if (r.method === 'POST' && r.path === '/v2/sessions') return this.session(r);
    const w = /^\/v2\/window\/([A-Za-z0-9_-]+)$/.exec(r.path);
    if (w) {
      const o = [...this.orders.values()].find((x) => x.session === w[1]);
      if (!o) return page(404, '결제창', '<p>결제 정보가 없습니다. 가맹점 페이지에서 다시 시도해 주세요.</p>');
      return r.method === 'POST' ? this.act(o, new URLSearchParams(r.raw)) : this.windowPage(o);
    }
    if (r.path === '/_dashboard' && r.method === 'GET') return this.dashboard();
    if (r.path === '/_dashboard' && r.method === 'POST') return this.dashboardAct(new URLSearchParams(r.raw));
    return null;
  }

  /** requestPayment's parameters, checked as the SDK and Toss check them; the window's address. */
  private session(r: FakeRequest): FakeAnswer {
    let b: any;
    try {
      b = JSON.parse(r.raw);
    } catch {
      return err(400, 'INVALID_PARAMETER', '요청 본문이 JSON이 아닙니다.', cors);
    }
    const merchant = typeof b?.clientKey === 'string' ? this.merchants.get(b.clientKey) : undefined;
    if (merchant === undefined) return err(401, 'INVALID_CLIENT_KEY', '클라이언트 키가 올바르지 않습니다.', cors);
    const q = b.request ?? {};
    const problem = validRequest(q);
    if (problem) return err(400, 'INVALID_PARAMETER', problem, cors);
    const seen = this.orders.get(q.orderId);
    if (seen && seen.status !== 'READY') return err(400, 'DUPLICATED_ORDER_ID', '이미 승인 및 취소가 진행된 중복된 주문번호 입니다.', cors);
    const o: WindowOrder = {
      session: randomBytes(12).toString('base64url'), merchant, orderId: q.orderId, orderName: q.orderName, amount: q.amount.value, taxFree: q.taxFreeAmount ?? 0, method: q.method,
      successUrl: q.successUrl, failUrl: q.failUrl, customerName: typeof q.customerName === 'string' ? q.customerName : '', validHours: q.virtualAccount?.validHours ?? 168,
      status: 'READY', paymentKey: null, choice: null, requestedAt: kst(Date.now()), approvedAt: null, approveNo: null, secret: null, account: null,
      refundTo: null, cancels: [], failure: null,
    };
    this.orders.set(o.orderId, o);
    return { status: 200, body: { windowUrl: `${this.origin()}/v2/window/${o.session}` }, headers: cors };
  }

  private windowPage(o: WindowOrder): FakeAnswer {
    if (o.status !== 'READY') return page(409, '결제창', '<p>이미 끝난 결제입니다. 가맹점 페이지로 돌아가 주세요.</p>');
    const radio = (value: string, label: string, checked = false) => `<label class="opt"><input type="radio" name="choice" value="${esc(value)}"${checked ? ' checked' : ''}> ${esc(label)}</label>`;
    const banks = (name: string) => `<label for="bank">${name}</label><select id="bank" name="choice">${Object.entries(BANKS).map(([c, n]) => `<option value="bank:${c}">${n}</option>`).join('')}</select>`;
    const choices = o.method === 'CARD'
      ? `<fieldset><legend>카드</legend>${Object.entries(CARDS).map(([k, c], i) => radio(`card:${k}`, c.label, i === 0)).join('')}</fieldset>
<fieldset><legend>간편결제</legend>${EASY_PAYS.map((e) => radio(`easy:${e}`, e)).join('')}</fieldset>`
      : o.method === 'TRANSFER' ? banks('출금 은행')
        : o.method === 'VIRTUAL_ACCOUNT' ? banks('입금할 은행')
          : `<fieldset><legend>통신사</legend>${['SKT', 'KT', 'LGU+'].map((c, i) => radio(`phone:${c}`, c, i === 0)).join('')}</fieldset>`;
    return page(200, `${METHOD_NAMES[o.method]} 결제`, `<p class="amount">${o.amount.toLocaleString('ko-KR')}원</p><p>${esc(o.orderName)}</p>
<form method="post">${choices}
<button type="submit" name="action" value="approve">${o.amount.toLocaleString('ko-KR')}원 결제하기</button>
<button type="submit" name="action" value="refuse" class="secondary">카드사 거절</button>
<button type="submit" name="action" value="close" class="secondary">결제창 닫기</button>
</form>`);
  }

  /** The customer's choice: the browser goes to the success or the fail address. */
  private act(o: WindowOrder, form: URLSearchParams): FakeAnswer {
    if (o.status !== 'READY') return page(409, '결제창', '<p>이미 끝난 결제입니다.</p>');
    const to = (base: string, params: Record<string, string>): FakeAnswer => {
      const u = new URL(base);
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
      return { status: 303, type: 'text/plain', body: '', headers: { location: u.toString() } };
    };
    const action = form.get('action');
    if (action === 'close') {
      o.status = 'ABORTED';
      o.failure = { code: 'PAY_PROCESS_CANCELED', message: '사용자에 의해 결제가 취소되었습니다.' };
      return to(o.failUrl, { code: o.failure.code, message: o.failure.message, orderId: o.orderId });
    }
    if (action === 'refuse') {
      o.status = 'ABORTED';
      o.failure = { code: 'REJECT_CARD_COMPANY', message: '결제 승인이 거절되었습니다.' };
      return to(o.failUrl, { code: o.failure.code, message: o.failure.message, orderId: o.orderId });
    }
    const choice = form.get('choice') ?? '';
    const valid = o.method === 'CARD' ? /^(card:(41|11|declined)|easy:(토스페이|카카오페이|네이버페이))$/.test(choice)
      : o.method === 'MOBILE_PHONE' ? /^phone:(SKT|KT|LGU\+)$/.test(choice) : /^bank:\d{2}$/.test(choice) && choice.slice(5) in BANKS;
    if (!valid) return page(400, '결제창', '<p>결제수단을 선택해 주세요.</p>');
    o.choice = choice;
    o.status = 'IN_PROGRESS';
    o.paymentKey = `tgen_${Date.now().toString(36)}${randomBytes(8).toString('hex')}`;
    return to(o.successUrl, { paymentType: 'NORMAL', orderId: o.orderId, paymentKey: o.paymentKey, amount: String(o.amount + this.returnAmountDelta) });
  }

  /** POST /v1/payments/confirm: the money moves here. `acted` is what an Idempotency-Key replays. */
  confirm(b: any, merchant: string): FakeAnswer | { acted: FakeAnswer; sent: FakeAnswer } {
    if (!b || typeof b.paymentKey !== 'string' || typeof b.orderId !== 'string' || !Number.isInteger(b.amount)) return err(400, 'INVALID_REQUEST', 'paymentKey, orderId, amount는 필수입니다.');
    const o = this.byOrder(b.orderId, merchant);
    if (!o || o.paymentKey !== b.paymentKey) return err(404, 'NOT_FOUND_PAYMENT_SESSION', '결제 시간이 만료되어 결제 진행 데이터가 존재하지 않습니다.');
    if (o.status === 'DONE' || o.status === 'WAITING_FOR_DEPOSIT' || o.status === 'CANCELED') return err(400, 'ALREADY_PROCESSED_PAYMENT', '이미 처리된 결제 입니다.');
    if (o.status !== 'IN_PROGRESS') return err(404, 'NOT_FOUND_PAYMENT_SESSION', '결제 시간이 만료되어 결제 진행 데이터가 존재하지 않습니다.');
    if (b.amount !== o.amount) return err(400, 'INVALID_REQUEST', '요청한 결제 금액과 인증된 결제 금액이 다릅니다.');
    if (o.choice === 'card:declined') {
      o.status = 'ABORTED';
      o.failure = { code: 'REJECT_CARD_COMPANY', message: '결제 승인이 거절되었습니다.' };
      return err(403, 'REJECT_CARD_COMPANY', '결제 승인이 거절되었습니다.');
    }
    const now = Date.now();
    if (o.method === 'VIRTUAL_ACCOUNT') {
      o.status = 'WAITING_FOR_DEPOSIT';
      o.secret = randomBytes(24).toString('base64url');
      o.account = { bankCode: o.choice!.slice(5), accountNumber: `X${String(now).slice(-8)}${String(++this.seq).padStart(5, '0')}`, dueDate: kst(now + o.validHours * 3_600_000), expired: false };
    } else {
      o.status = 'DONE';
      o.approvedAt = kst(now);
      o.approveNo = String(40_000_000 + ++this.seq);
      this.charges.set(o.orderId, (this.charges.get(o.orderId) ?? 0) + 1);
    }
    const done: FakeAnswer = { status: 200, body: this.view(o) };
    const lose = this.loseNextConfirm;
    this.loseNextConfirm = null;
    if (lose === 'hold') return { acted: done, sent: 'hold' };
    if (lose === '500') return { acted: done, sent: err(500, 'FAILED_INTERNAL_SYSTEM_PROCESSING', '내부 시스템 처리 작업이 실패했습니다.') };
    return done;
  }

  cancel(o: WindowOrder, b: any): FakeAnswer {
    if (!b || typeof b.cancelReason !== 'string' || b.cancelReason.length < 1 || b.cancelReason.length > 200) return err(400, 'INVALID_REQUEST', 'cancelReason: 취소 사유를 200자 이하로 입력해주세요.');
    if (o.status === 'CANCELED') return err(400, 'ALREADY_CANCELED_PAYMENT', '이미 취소된 결제 입니다.');
    if (o.status !== 'DONE' && o.status !== 'WAITING_FOR_DEPOSIT') return err(403, 'NOT_CANCELABLE_PAYMENT', '취소 할 수 없는 결제 입니다.');
    if (o.method === 'VIRTUAL_ACCOUNT' && o.status === 'DONE') {
      const a = b.refundReceiveAccount;
      if (!a) return err(400, 'INVALID_REFUND_ACCOUNT_INFO', '환불 계좌번호와 예금주명이 일치하지 않습니다.');
      if (typeof a.bank !== 'string' || !KNOWN_TOSS_BANKS.has(a.bank)) return err(400, 'INVALID_BANK', '유효하지 않은 은행입니다.');
      if (typeof a.accountNumber !== 'string' || !/^\d{6,20}$/.test(a.accountNumber)) return err(400, 'INVALID_REFUND_ACCOUNT_NUMBER', '잘못된 환불 계좌번호입니다.');
      if (typeof a.holderName !== 'string' || a.holderName.length < 1 || a.holderName.length > 60) return err(400, 'INVALID_REFUND_ACCOUNT_INFO', '환불 계좌번호와 예금주명이 일치하지 않습니다.');
      o.refundTo = { bank: a.bank, accountNumber: a.accountNumber, holderName: a.holderName };
    }
    if (o.status === 'DONE') this.refunds.set(o.orderId, (this.refunds.get(o.orderId) ?? 0) + 1);
    o.status = 'CANCELED';
    o.cancels.push({ cancelAmount: o.amount, cancelReason: b.cancelReason, canceledAt: kst(Date.now()), transactionKey: randomBytes(16).toString('hex') });
    return { status: 200, body: this.view(o) };
  }

  /** The Payment object, as Toss answers it. */
  view(o: WindowOrder): Record<string, unknown> {
    const kind = o.choice?.split(':')[0];
    const value = o.choice?.slice((kind?.length ?? 0) + 1) ?? '';
    const paid = o.approvedAt !== null;
    const card = kind === 'card' || (kind === 'easy' && value !== '토스페이') ? CARDS[kind === 'card' ? value : '41']! : null;
    return {
      mId: 'tsunapfake', version: '2022-11-16', paymentKey: o.paymentKey, orderId: o.orderId, orderName: o.orderName, currency: 'KRW',
      method: kind === 'easy' ? '간편결제' : METHOD_NAMES[o.method], status: o.status, requestedAt: o.requestedAt, approvedAt: o.approvedAt, type: 'NORMAL',
      totalAmount: o.amount, balanceAmount: o.status === 'CANCELED' ? 0 : o.amount, suppliedAmount: Math.round((o.amount - o.taxFree) / 1.1),
      vat: o.amount - o.taxFree - Math.round((o.amount - o.taxFree) / 1.1), taxFreeAmount: o.taxFree, secret: o.secret, lastTransactionKey: null,
      card: card && paid ? {
        issuerCode: card.issuer, acquirerCode: card.issuer, number: `${card.number.slice(0, 8)}****${card.number.slice(12, 15)}*`, installmentPlanMonths: 0,
        isInterestFree: false, approveNo: o.approveNo, useCardPoint: false, cardType: '신용', ownerType: '개인', acquireStatus: 'READY', amount: o.amount,
      } : null,
      easyPay: kind === 'easy' ? { provider: value, amount: card ? 0 : o.amount, discountAmount: 0 } : null,
      transfer: o.method === 'TRANSFER' && paid ? { bankCode: value, settlementStatus: 'COMPLETED' } : null,
      mobilePhone: o.method === 'MOBILE_PHONE' && paid ? { customerMobilePhone: '01000000000', settlementStatus: 'COMPLETED', receiptUrl: null } : null,
      virtualAccount: o.account ? {
        accountType: '일반', accountNumber: o.account.accountNumber, bankCode: o.account.bankCode, customerName: o.customerName, dueDate: o.account.dueDate,
        refundStatus: o.refundTo ? 'COMPLETED' : 'NONE', expired: o.account.expired, settlementStatus: paid ? 'COMPLETED' : 'INCOMPLETED',
        refundReceiveAccount: o.refundTo ? { bankCode: o.refundTo.bank, accountNumber: `${o.refundTo.accountNumber.slice(0, 3)}*****`, holderName: o.refundTo.holderName } : null,
      } : null,
      cancels: o.cancels.length ? o.cancels.map((c) => ({ ...c, cancelStatus: 'DONE', taxFreeAmount: 0, refundableAmount: 0 })) : null,
      failure: o.failure, checkout: null, cashReceipt: null, discount: null,
    };
  }

  /** Where a merchant's notices go: `webhookUrl`, or the address a store registered for its own contract. */
  readonly merchantWebhooks = new Map<string, string>();

  private async post(body: unknown, merchant: string): Promise<number> {
    const url = this.merchantWebhooks.get(merchant) ?? this.webhookUrl;
    if (!url) throw new Error('the Toss fake has no webhookUrl to post to');
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.text();
    this.notices.push({ body, status: res.status });
    return res.status;
  }

  /** The bank's deposit of the full amount: DEPOSIT_CALLBACK with the account's secret; Sunap's answer status, or null without an open account. */
  async deposit(orderId: string): Promise<number | null> {
    const o = this.orders.get(orderId);
    if (!o || o.status !== 'WAITING_FOR_DEPOSIT' || !o.account || o.account.expired) return null;
    o.status = 'DONE';
    o.approvedAt = kst(Date.now());
    this.charges.set(o.orderId, (this.charges.get(o.orderId) ?? 0) + 1);
    return this.post({ createdAt: kst(Date.now()).slice(0, 23), secret: o.secret, status: 'DONE', transactionKey: randomBytes(16).toString('hex'), orderId: o.orderId }, o.merchant);
  }

  /** A cancel made in Toss's dashboard: PAYMENT_STATUS_CHANGED with the Payment object; null when it is not paid. */
  async dashboardCancel(orderId: string): Promise<number | null> {
    const o = this.orders.get(orderId);
    if (!o || o.status !== 'DONE') return null;
    const a = this.cancel(o, { cancelReason: '대시보드에서 취소', ...(o.method === 'VIRTUAL_ACCOUNT' ? { refundReceiveAccount: { bank: '88', accountNumber: '110123456789', holderName: '환불' } } : {}) });
    if (a === 'hold' || a.status !== 200) return null;
    return this.post({ eventType: 'PAYMENT_STATUS_CHANGED', createdAt: kst(Date.now()).slice(0, 23), data: this.view(o) }, o.merchant);
  }

  /** An account past its due date: it takes no deposit any more. */
  expire(orderId: string): boolean {
    const o = this.orders.get(orderId);
    if (!o?.account || o.status !== 'WAITING_FOR_DEPOSIT') return false;
    o.account.expired = true;
    o.status = 'EXPIRED';
    return true;
  }

  private dashboard(note = ''): FakeAnswer {
    const rows = [...this.orders.values()].reverse().map((o) => `<tr><td>${esc(o.orderId)}</td><td>${esc(o.orderName)}</td><td>${o.amount.toLocaleString('ko-KR')}원</td><td>${METHOD_NAMES[o.method]}</td><td>${o.status}</td><td>
${o.status === 'WAITING_FOR_DEPOSIT' ? `<form method="post"><input type="hidden" name="orderId" value="${esc(o.orderId)}"><button name="action" value="deposit">입금</button><button name="action" value="expire" class="secondary">기한 만료</button></form>` : ''}
${o.status === 'DONE' ? `<form method="post"><input type="hidden" name="orderId" value="${esc(o.orderId)}"><button name="action" value="cancel" class="secondary">대시보드에서 취소</button></form>` : ''}</td></tr>`).join('');
    return page(200, 'Toss Payments fake: 결제 내역', `${note ? `<p role="status">${esc(note)}</p>` : ''}<p>입금·취소는 ${esc(this.webhookUrl || '(webhookUrl 없음)')}로 알립니다.</p>
<table><thead><tr><th>orderId</th><th>주문명</th><th>금액</th><th>수단</th><th>상태</th><th></th></tr></thead><tbody>${rows}</tbody></table>`);
  }

  private async dashboardAct(form: URLSearchParams): Promise<FakeAnswer> {
    const id = form.get('orderId') ?? '';
    const action = form.get('action');
    const status = action === 'deposit' ? await this.deposit(id) : action === 'cancel' ? await this.dashboardCancel(id) : this.expire(id) ? 0 : null;
    return this.dashboard(status === null ? `${id}: 할 수 없는 작업입니다` : `${id}: ${action}${status ? ` (Sunap 응답 ${status})` : ''}`);
  }
}

function validRequest(q: any): string | null {
  if (!['CARD', 'TRANSFER', 'VIRTUAL_ACCOUNT', 'MOBILE_PHONE'].includes(q.method)) return 'method: CARD, TRANSFER, VIRTUAL_ACCOUNT, MOBILE_PHONE 중 하나여야 합니다.';
  if (q.amount?.currency !== 'KRW' || !Number.isInteger(q.amount?.value) || q.amount.value < 1) return 'amount: { currency: "KRW", value: 1 이상의 정수 } 여야 합니다.';
  if (typeof q.orderId !== 'string' || !/^[A-Za-z0-9_-]{6,64}$/.test(q.orderId)) return 'orderId: 영문 대소문자, 숫자, -, _ 로 이루어진 6자 이상 64자 이하여야 합니다.';
  if (typeof q.orderName !== 'string' || q.orderName.length < 1 || q.orderName.length > 100) return 'orderName: 100자 이하로 입력해주세요.';
  if (q.taxFreeAmount !== undefined && (!Number.isInteger(q.taxFreeAmount) || q.taxFreeAmount < 0 || q.taxFreeAmount > q.amount.value)) return 'taxFreeAmount: 0 이상, 결제 금액 이하의 정수여야 합니다.';
  for (const k of ['successUrl', 'failUrl']) {
    if (typeof q[k] !== 'string' || !/^https?:\/\//.test(q[k])) return `${k}: http 또는 https로 시작하는 절대 주소여야 합니다.`;
  }
  if (q.method === 'VIRTUAL_ACCOUNT' && q.virtualAccount?.validHours !== undefined && (!Number.isInteger(q.virtualAccount.validHours) || q.virtualAccount.validHours < 1 || q.virtualAccount.validHours > 720)) {
    return 'virtualAccount.validHours: 1~720 사이여야 합니다.';
  }
  return null;
}

function page(status: number, title: string, body: string): FakeAnswer {
  return {
    status, type: 'text/html; charset=utf-8',
    headers: { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action *" },
    body: `<!doctype html><html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f6fa;color:#191f28}main{max-width:28rem;margin:0 auto;padding:1rem}h1{font-size:1.25rem}
.brand{color:#0064ff;font-weight:800}.amount{font-size:1.75rem;font-weight:800;margin:.25rem 0}fieldset{border:1px solid #d1d6db;border-radius:12px;margin:0 0 1rem;padding:.5rem 1rem}
.opt{display:block;padding:.5rem 0;min-height:2.75rem}select{display:block;width:100%;min-height:3rem;font:inherit;margin:.25rem 0 1rem}
button{display:block;width:100%;min-height:3rem;margin:.5rem 0;border:0;border-radius:12px;background:#0064ff;color:#fff;font:inherit;font-weight:700}
button.secondary{background:#fff;color:#0050cc;border:1.5px solid #0050cc}table{width:100%;border-collapse:collapse;font-size:.875rem}td,th{border-bottom:1px solid #d1d6db;padding:.375rem;text-align:left}</style></head>
<body><main><p class="brand">toss payments (rehearsal fake)</p><h1>${esc(title)}</h1>${body}</main></body></html>`,
  };
}

/** The SDK v2 script as the fake serves it: the same global and calls as Toss's, the window on this origin. */
function sdk(origin: string): string {
  return `(function () {
  'use strict';
  var ORIGIN = ${JSON.stringify(origin)};
  function TossPayments(clientKey) {
    if (typeof clientKey !== 'string' || !/^(test|live)_ck_/.test(clientKey)) throw new Error('TossPayments: a client key (test_ck_… or live_ck_…) is required');
    return {
      payment: function (opts) {
        if (!opts || (opts.customerKey !== TossPayments.ANONYMOUS && typeof opts.customerKey !== 'string')) throw new Error('payment: customerKey is required');
        return {
          requestPayment: function (req) {
            return fetch(ORIGIN + '/v2/sessions', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ clientKey: clientKey, request: req }) })
              .then(function (r) {
                return r.json().then(function (b) {
                  if (!r.ok) { var e = new Error(b.message); e.code = b.code; throw e; }
                  location.assign(b.windowUrl);
                  return new Promise(function () {});
                });
              });
          },
        };
      },
    };
  }
  TossPayments.ANONYMOUS = '@@ANONYMOUS';
  window.TossPayments = TossPayments;
})();
`;
}
