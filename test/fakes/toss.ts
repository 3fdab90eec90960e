import { randomBytes } from 'node:crypto';
import { FakeHttpsServer, type FakeAnswer, type FakeRequest } from './https.js';
import { FAKE_TOSS_CLIENT_KEY, TossWindow } from './toss-window.js';

/**
 * A faithful local fake of Toss Payments' card-number (key-in) API, as docs/going-live.md
 * describes it: Basic auth with the secret key checked exactly, Idempotency-Key honoured
 * (the first answer replayed), the documented validation and error codes, look-ups by
 * orderId and paymentKey, and cancels. It never sees a real card: the card number chooses
 * what happens (docs/going-live.md, "Rehearse live mode"):
 *
 * | card number | outcome |
 * |---|---|
 * | 4242424242424242 | approved, issuer 41 (신한카드) |
 * | 5555555555554444 | approved, issuer 11 (KB국민카드) |
 * | 4000000000000002 | 403 REJECT_CARD_COMPANY |
 * | 4000000000009995 | 403 REJECT_CARD_PAYMENT (limit or balance) |
 * | 4000000000000069 | 400 INVALID_CARD_EXPIRATION |
 * | 4000000000000119 | 400 PROVIDER_ERROR, nothing approved |
 * | 4000000000000259 | approved; every cancel answers 403 NOT_CANCELABLE_PAYMENT |
 * | 4000000000003220 | approved, but the answer is never sent (the caller times out) |
 * | 4000000000005126 | approved, then answered 500 FAILED_INTERNAL_SYSTEM_PROCESSING |
 * | 4000000000001000 | never answered, nothing approved |
 * | 4000000000000507 | 500 FAILED_INTERNAL_SYSTEM_PROCESSING, nothing approved |
 * | 4000000000004004 | accepted, the answer never sent, and the charge booked only when the test calls `bookLate(orderId)`: look-ups find nothing until then |
 *
 * A `TossPayments-Test-Code` header on an approval answers that error code, as Toss's test
 * mode does.
 *
 * The payment window (SDK v2, its window, confirm, deposits and webhooks) is `window`
 * (test/fakes/toss-window.ts); its client key is FAKE_TOSS_CLIENT_KEY, its SDK at `sdkUrl`.
 */
export { FAKE_TOSS_CLIENT_KEY };
export const FAKE_TOSS_SECRET_KEY = 'test_sk_sunapRehearsal0000000000';

const APPROVED: Record<string, { issuer: string; cancelFails?: boolean }> = {
  '4242424242424242': { issuer: '41' },
  '5555555555554444': { issuer: '11' },
  '4000000000000259': { issuer: '41', cancelFails: true },
};
const ERRORS: Record<string, { status: number; code: string; message: string }> = {
  REJECT_CARD_COMPANY: { status: 403, code: 'REJECT_CARD_COMPANY', message: '결제 승인이 거절되었습니다.' },
  REJECT_CARD_PAYMENT: { status: 403, code: 'REJECT_CARD_PAYMENT', message: '한도초과 혹은 잔액부족으로 결제에 실패했습니다.' },
  INVALID_CARD_EXPIRATION: { status: 400, code: 'INVALID_CARD_EXPIRATION', message: '카드 정보를 다시 확인해주세요. (유효기간)' },
  INVALID_CARD_NUMBER: { status: 400, code: 'INVALID_CARD_NUMBER', message: '카드번호를 다시 확인해주세요.' },
  PROVIDER_ERROR: { status: 400, code: 'PROVIDER_ERROR', message: '일시적인 오류가 발생했습니다. 잠시 후 다시 시도해주세요.' },
  EXCEED_MAX_DAILY_PAYMENT_COUNT: { status: 400, code: 'EXCEED_MAX_DAILY_PAYMENT_COUNT', message: '하루 결제 가능 횟수를 초과했습니다.' },
  FAILED_INTERNAL_SYSTEM_PROCESSING: { status: 500, code: 'FAILED_INTERNAL_SYSTEM_PROCESSING', message: '내부 시스템 처리 작업이 실패했습니다. 잠시 후 다시 시도해주세요.' },
};
const BY_CARD: Record<string, string> = {
  '4000000000000002': 'REJECT_CARD_COMPANY',
  '4000000000009995': 'REJECT_CARD_PAYMENT',
  '4000000000000069': 'INVALID_CARD_EXPIRATION',
  '4000000000000119': 'PROVIDER_ERROR',
  '4000000000000507': 'FAILED_INTERNAL_SYSTEM_PROCESSING',
};
/** Approved, but the answer is lost: never sent, or a 500. */
const LOST = new Set(['4000000000003220', '4000000000005126']);
const NEVER_ANSWERED = '4000000000001000';
/** Accepted and unanswered; booked (a charge) only when the test says so (a charge Toss books late). */
const BOOKED_LATE = '4000000000004004';

export interface FakePayment {
  paymentKey: string;
  orderId: string;
  orderName: string;
  status: 'DONE' | 'CANCELED';
  totalAmount: number;
  cardNumber: string;
  issuerCode: string;
  installmentPlanMonths: number;
  approveNo: string;
  approvedAt: string;
  cancels: { cancelAmount: number; cancelReason: string; canceledAt: string }[];
}

const err = (status: number, code: string, message: string): FakeAnswer => ({ status, body: { code, message } });

export class FakeToss {
  readonly server = new FakeHttpsServer((r) => this.handle(r));
  /** Every request, in order (the fake sees card numbers, as Toss does; tests look only at what they need). */
  readonly requests: FakeRequest[] = [];
  /** Payments by orderId: each one is a charge. */
  readonly payments = new Map<string, FakePayment>();
  /** Approvals that reached the card network, by orderId: more than one would be a double charge. */
  readonly approvals = new Map<string, number>();
  /** The next n look-ups answer 500 (a processor outage while Sunap settles a lost answer). */
  failLookups = 0;
  /** While set, every look-up waits for it before answering (a slow processor while Sunap settles). */
  lookupGate: Promise<void> | null = null;
  /** Charges accepted but not booked yet (card 4000000000004004), by orderId. */
  readonly unbooked = new Map<string, FakePayment>();
  private readonly replays = new Map<string, FakeAnswer>();
  private seq = 0;
  /** The payment window's orders, SDK, pages and notices. */
  readonly window: TossWindow;

  constructor(readonly secretKey = FAKE_TOSS_SECRET_KEY, clientKey = FAKE_TOSS_CLIENT_KEY) {
    this.window = new TossWindow(() => this.url, clientKey, secretKey);
  }

  get url(): string {
    return this.server.url;
  }

  /** The SDK v2 script (SUNAP_TOSS_SDK_URL). */
  get sdkUrl(): string {
    return `${this.server.url}/v2/standard`;
  }

  async start(port = 0, tlsDir?: string): Promise<this> {
    await this.server.start(port, tlsDir);
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private handle(r: FakeRequest): FakeAnswer | Promise<FakeAnswer> {
    this.requests.push(r);
    // The browser's side (the SDK, the window, the dashboard) takes no secret key.
    const browser = this.window.browser(r);
    if (browser) return browser;
    // Basic auth: the secret key and an empty password, exactly; the merchant is the key's.
    const auth = typeof r.headers.authorization === 'string' ? /^Basic ([A-Za-z0-9+/=]+)$/.exec(r.headers.authorization) : null;
    const decoded = auth ? Buffer.from(auth[1]!, 'base64').toString('utf8') : '';
    const merchant = decoded.endsWith(':') ? decoded.slice(0, -1) : '';
    if (!auth || !(merchant === this.secretKey || this.window.isMerchant(merchant)) || Buffer.from(decoded).toString('base64') !== auth[1]) {
      return err(401, 'UNAUTHORIZED_KEY', '인증되지 않은 시크릿 키 혹은 클라이언트 키 입니다.');
    }
    const byOrder = /^\/v1\/payments\/orders\/([^/]+)$/.exec(r.path);
    const byKey = /^\/v1\/payments\/([^/]+)$/.exec(r.path);
    const cancel = /^\/v1\/payments\/([^/]+)\/cancel$/.exec(r.path);
    if (r.method === 'POST' && r.path === '/v1/payments/key-in') return this.idempotent(r, () => this.keyIn(r));
    if (r.method === 'POST' && r.path === '/v1/payments/confirm') return this.idempotent(r, () => this.window.confirm(r.json, merchant));
    const windowOrder = cancel ? this.window.byKey(decodeURIComponent(cancel[1]!), merchant) : undefined;
    if (r.method === 'POST' && windowOrder) return this.idempotent(r, () => this.window.cancel(windowOrder, r.json));
    if (r.method === 'POST' && cancel) return this.idempotent(r, () => this.cancel(decodeURIComponent(cancel[1]!), r.json));
    if (r.method === 'GET' && (byOrder || byKey)) {
      if (this.lookupGate) return this.lookupGate.then(() => this.lookupAnswer(byOrder, byKey, merchant));
      return this.lookupAnswer(byOrder, byKey, merchant);
    }
    return err(404, 'NOT_FOUND', '존재하지 않는 정보 입니다.');
  }

  private lookupAnswer(byOrder: RegExpExecArray | null, byKey: RegExpExecArray | null, merchant: string): FakeAnswer {
    if (this.failLookups > 0) {
      this.failLookups--;
      return err(500, 'FAILED_INTERNAL_SYSTEM_PROCESSING', '내부 시스템 처리 작업이 실패했습니다.');
    }
    // A window order is known once the customer acted in the window (READY: Toss answers nothing yet).
    const w = byOrder ? this.window.byOrder(decodeURIComponent(byOrder[1]!), merchant) : this.window.byKey(decodeURIComponent(byKey![1]!), merchant);
    if (w && w.status !== 'READY') return { status: 200, body: this.window.view(w) };
    const p = byOrder ? this.payments.get(decodeURIComponent(byOrder[1]!)) : [...this.payments.values()].find((x) => x.paymentKey === decodeURIComponent(byKey![1]!));
    return p ? { status: 200, body: this.view(p) } : err(404, 'NOT_FOUND_PAYMENT', '존재하지 않는 결제 정보 입니다.');
  }

  /** Books a charge accepted earlier (card 4000000000004004): from now on look-ups find it. */
  bookLate(orderId: string): FakePayment {
    const p = this.unbooked.get(orderId);
    if (!p) throw new Error(`no unbooked charge for order ${orderId}`);
    this.unbooked.delete(orderId);
    this.payments.set(orderId, p);
    this.approvals.set(orderId, (this.approvals.get(orderId) ?? 0) + 1);
    return p;
  }

  /** The first answer under an Idempotency-Key (with this API key, path and method) is the answer to every repeat. */
  private idempotent(r: FakeRequest, run: () => FakeAnswer | { acted: FakeAnswer; sent: FakeAnswer }): FakeAnswer {
    const raw = r.headers['idempotency-key'];
    const key = typeof raw === 'string' ? raw : undefined;
    if (key !== undefined && (key.length === 0 || key.length > 300)) return err(400, 'INVALID_REQUEST', '멱등키는 300자 이하로 입력해주세요.');
    const slot = key === undefined ? undefined : `${String(r.headers.authorization)} ${r.method} ${r.path} ${key}`;
    const seen = slot ? this.replays.get(slot) : undefined;
    if (seen) return seen;
    const out = run();
    const { acted, sent } = typeof out === 'object' && out !== null && 'acted' in out ? out : { acted: out, sent: out };
    if (slot && acted !== 'hold') this.replays.set(slot, acted);
    return sent;
  }

  private keyIn(r: FakeRequest): FakeAnswer | { acted: FakeAnswer; sent: FakeAnswer } {
    const b = r.json;
    if (!b || typeof b !== 'object') return err(400, 'INVALID_REQUEST', '잘못된 요청입니다.');
    const problem = validKeyIn(b);
    if (problem) return err(400, 'INVALID_REQUEST', problem);
    const testCode = r.headers['tosspayments-test-code'];
    if (typeof testCode === 'string') {
      const e = ERRORS[testCode] ?? { status: 400, code: testCode, message: `테스트 코드 ${testCode}` };
      return err(e.status, e.code, e.message);
    }
    if (b.amount < 100) return err(400, 'BELOW_MINIMUM_AMOUNT', '신용카드는 결제금액이 100원 이상, 계좌는 200원이상부터 결제가 가능합니다.');
    if (this.payments.has(b.orderId) || this.unbooked.has(b.orderId)) return err(400, 'DUPLICATED_ORDER_ID', '이미 승인 및 취소가 진행된 중복된 주문번호 입니다. 다른 주문번호로 진행해주세요.');
    if (b.cardNumber === NEVER_ANSWERED) return 'hold';
    const coded = BY_CARD[b.cardNumber];
    if (coded) {
      const e = ERRORS[coded]!;
      return err(e.status, e.code, e.message);
    }
    const card = APPROVED[b.cardNumber] ?? (LOST.has(b.cardNumber) || b.cardNumber === BOOKED_LATE ? { issuer: '41' } : undefined);
    if (!card) return err(403, 'REJECT_CARD_COMPANY', '결제 승인이 거절되었습니다.');
    const p: FakePayment = {
      paymentKey: `tfake${Date.now().toString(36)}${randomBytes(6).toString('hex')}`, orderId: b.orderId, orderName: b.orderName, status: 'DONE',
      totalAmount: b.amount, cardNumber: b.cardNumber, issuerCode: card.issuer, installmentPlanMonths: b.cardInstallmentPlan ?? 0,
      approveNo: String(30_000_000 + ++this.seq), approvedAt: new Date().toISOString(), cancels: [],
    };
    if (b.cardNumber === BOOKED_LATE) {
      this.unbooked.set(p.orderId, p);
      return { acted: { status: 200, body: this.view(p) }, sent: 'hold' };
    }
    this.payments.set(p.orderId, p);
    this.approvals.set(p.orderId, (this.approvals.get(p.orderId) ?? 0) + 1);
    const done: FakeAnswer = { status: 200, body: this.view(p) };
    if (b.cardNumber === '4000000000003220') return { acted: done, sent: 'hold' };
    if (b.cardNumber === '4000000000005126') return { acted: done, sent: err(500, 'FAILED_INTERNAL_SYSTEM_PROCESSING', '내부 시스템 처리 작업이 실패했습니다.') };
    return done;
  }

  private cancel(paymentKey: string, b: any): FakeAnswer {
    if (!b || typeof b.cancelReason !== 'string' || b.cancelReason.length < 1 || b.cancelReason.length > 200) {
      return err(400, 'INVALID_REQUEST', 'cancelReason: 취소 사유를 200자 이하로 입력해주세요.');
    }
    const p = [...this.payments.values()].find((x) => x.paymentKey === paymentKey);
    if (!p) return err(404, 'NOT_FOUND_PAYMENT', '존재하지 않는 결제 정보 입니다.');
    if (p.status === 'CANCELED') return err(400, 'ALREADY_CANCELED_PAYMENT', '이미 취소된 결제 입니다.');
    if (APPROVED[p.cardNumber]?.cancelFails) return err(403, 'NOT_CANCELABLE_PAYMENT', '취소 할 수 없는 결제 입니다.');
    p.status = 'CANCELED';
    p.cancels.push({ cancelAmount: p.totalAmount, cancelReason: b.cancelReason, canceledAt: new Date().toISOString() });
    return { status: 200, body: this.view(p) };
  }

  /** The Payment object as Toss answers it (the card number masked). */
  view(p: FakePayment): Record<string, unknown> {
    const n = p.cardNumber;
    return {
      mId: 'tsunapfake', version: '2022-11-16', paymentKey: p.paymentKey, orderId: p.orderId, orderName: p.orderName, currency: 'KRW',
      method: '카드', status: p.status, requestedAt: p.approvedAt, approvedAt: p.approvedAt, type: 'NORMAL', country: 'KR',
      totalAmount: p.totalAmount, balanceAmount: p.status === 'CANCELED' ? 0 : p.totalAmount, failure: null,
      card: {
        issuerCode: p.issuerCode, acquirerCode: p.issuerCode, number: `${n.slice(0, 8)}****${n.slice(12, 15)}*`, installmentPlanMonths: p.installmentPlanMonths,
        isInterestFree: false, interestPayer: null, approveNo: p.approveNo, useCardPoint: false, cardType: '신용', ownerType: '개인', acquireStatus: 'READY', amount: p.totalAmount,
      },
      cancels: p.cancels.length ? p.cancels : null,
    };
  }
}

/** The documented request fields of a key-in approval; a problem names the field. */
function validKeyIn(b: any): string | null {
  if (!Number.isInteger(b.amount) || b.amount < 1) return 'amount: 결제 금액은 1 이상의 정수여야 합니다.';
  if (typeof b.orderId !== 'string' || !/^[A-Za-z0-9_-]{6,64}$/.test(b.orderId)) return 'orderId: 영문 대소문자, 숫자, -, _ 로 이루어진 6자 이상 64자 이하여야 합니다.';
  if (typeof b.orderName !== 'string' || b.orderName.length < 1 || b.orderName.length > 100) return 'orderName: 100자 이하로 입력해주세요.';
  if (typeof b.cardNumber !== 'string' || !/^\d{1,20}$/.test(b.cardNumber)) return 'cardNumber: 최대 20자리 숫자여야 합니다.';
  if (typeof b.cardExpirationYear !== 'string' || !/^\d{2}$/.test(b.cardExpirationYear)) return 'cardExpirationYear: YY 형식이어야 합니다.';
  if (typeof b.cardExpirationMonth !== 'string' || !/^(0[1-9]|1[0-2])$/.test(b.cardExpirationMonth)) return 'cardExpirationMonth: MM 형식이어야 합니다.';
  if (typeof b.customerIdentityNumber !== 'string' || !/^(\d{6}|\d{10})$/.test(b.customerIdentityNumber)) return 'customerIdentityNumber: 생년월일 6자리 또는 사업자등록번호 10자리여야 합니다.';
  if (b.cardPassword !== undefined && (typeof b.cardPassword !== 'string' || !/^\d{2}$/.test(b.cardPassword))) return 'cardPassword: 앞 2자리 숫자여야 합니다.';
  if (b.cardInstallmentPlan !== undefined && (!Number.isInteger(b.cardInstallmentPlan) || b.cardInstallmentPlan < 2 || b.cardInstallmentPlan > 12)) return 'cardInstallmentPlan: 2~12 사이여야 합니다.';
  return null;
}
