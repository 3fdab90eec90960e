/**
 * The checkout port: the processor's own payment window (docs/architecture.md, "The checkout
 * port"). The customer pays inside the processor's window; the browser comes back to Sunap; Sunap
 * confirms on its server and never trusts the browser with an amount or a status. One adapter per
 * processor (the sandbox, Toss Payments, PortOne); the key-in (card-number) processors stay behind
 * the CardProcessor port of card-processor.ts.
 *
 * This file imports nothing, so the table types (src/db/schema.ts) can use its unions.
 *
 * How an order goes (the order id is Sunap's attempt id, committed before any call):
 * 1. `begin` says what the page hands the window (a page of ours, or the processor's script
 *    and the parameters of its SDK call), with the success and fail addresses;
 * 2. the browser returns; `readReturn` reads the processor's parameters from the address;
 * 3. `confirm` (with the payment's own amount) answers approved, waiting for a deposit
 *    (a virtual account), declined, or throws OutcomeUnknown (settled later by `lookup`);
 * 4. later: `lookup` by order id (after a lost answer, an event, an expiry), `cancel`
 *    (full; a paid virtual account refunds to the account given), `closeAccount` (an open
 *    virtual account), `readEvent` (a processor's notice, verified; only a hint to look up).
 */

/** Payment methods (wire, docs/reference.md "Payment methods"). */
export const PAY_METHODS = ['CARD', 'EASY_PAY', 'TRANSFER', 'VIRTUAL_ACCOUNT', 'MOBILE_PHONE'] as const;
export type PayMethod = (typeof PAY_METHODS)[number];

/** What a store's page offers unless it chose otherwise. */
export const DEFAULT_METHODS: readonly PayMethod[] = ['CARD', 'EASY_PAY', 'VIRTUAL_ACCOUNT'];

/** METHOD_NAME (wire) of the methods whose name does not depend on a provider; an easy pay's is its provider's name. */
export const METHOD_NAMES: Readonly<Record<Exclude<PayMethod, 'EASY_PAY'>, string>> = {
  CARD: '신용카드', TRANSFER: '계좌이체', VIRTUAL_ACCOUNT: '가상계좌', MOBILE_PHONE: '휴대폰',
};

/** The easy pays the sandbox plays and the pages name (METHOD_NAME is the provider's Korean name). */
export const EASY_PAYS = ['토스페이', '카카오페이', '네이버페이', '페이코', '삼성페이'] as const;
export const DEFAULT_EASY_PAY = '토스페이';

/**
 * Every processor a payment can record (payments.processor). `*-keyin` are card-number
 * processors (CardProcessor); the others take payments through their window (CheckoutProcessor).
 */
export const PROCESSOR_IDS = ['sandbox', 'sandbox-keyin', 'toss', 'toss-keyin', 'portone'] as const;
export type ProcessorId = (typeof PROCESSOR_IDS)[number];
export const CHECKOUT_PROCESSOR_IDS = ['sandbox', 'toss', 'portone'] as const satisfies readonly ProcessorId[];
export type CheckoutProcessorId = (typeof CHECKOUT_PROCESSOR_IDS)[number];
export const KEYIN_PROCESSOR_IDS = ['sandbox-keyin', 'toss-keyin'] as const satisfies readonly ProcessorId[];
export type KeyInProcessorId = (typeof KEYIN_PROCESSOR_IDS)[number];

export function isKeyInProcessor(id: ProcessorId): id is KeyInProcessorId {
  return (KEYIN_PROCESSOR_IDS as readonly string[]).includes(id);
}

/** How a store takes cards: the processor's window (the default), or Sunap's card form (key-in, by contract only). */
export const PAY_WAYS = ['checkout', 'key-in'] as const;
export type PayWay = (typeof PAY_WAYS)[number];

/** What the page gives the processor for one order. */
export interface CheckoutOrder {
  /** Sunap's attempt id: 6 to 64 of [A-Za-z0-9_-], unique per attempt (Toss orderId, PortOne paymentId). */
  orderId: string;
  /** Whole won, from the payment's record (never from the browser). */
  amount: number;
  taxFreeAmount: number;
  /** What is bought (REQUEST_REASON), as the window and the processor's records show it. */
  orderName: string;
  /** The store's name (a virtual account's holder in the sandbox). */
  storeName: string;
  method: PayMethod;
  customer: { name: string; phone: string };
  /** Where the window sends the browser back; the processor appends its own parameters to the query. */
  successUrl: string;
  failUrl: string;
  /** Virtual accounts: how many hours the account stays open. */
  accountHours: number;
}

/**
 * Hosts a live window's page allows in its Content-Security-Policy (src/pages/html.ts,
 * checkoutCsp): the processor's script, its API calls, its window frames, the forms it posts.
 */
export interface ProcessorHosts {
  script: string[];
  connect: string[];
  frame: string[];
  form: string[];
  img: string[];
}

/**
 * What the payment page does to open the window:
 * - `redirect`: send the browser to a page that needs no script (the sandbox's window);
 * - `script`: a live processor's window: the page loads `scripts` (the processor's SDK) and our
 *   own `launcher` (a file under /assets that reads `params` from a JSON data block and calls the
 *   SDK), all allowed by a nonce; `hosts` go into the page's CSP.
 */
export type CheckoutWindow =
  | { kind: 'redirect'; url: string }
  | { kind: 'script'; scripts: string[]; launcher: string; params: Record<string, unknown>; hosts: ProcessorHosts };

/** What the browser came back with, as the processor wrote it into the return address. */
export interface ReturnReading {
  /** The order id the processor names, when it names one (it must be ours). */
  orderId: string | null;
  /** The processor's key of the payment (Toss paymentKey, PortOne txId), kept to confirm and look up by. */
  processorRef: string | null;
  /** The amount the address claims (Toss puts one there): compared with the payment's, never used. */
  amount: number | null;
  /** A failure or a closed window; `message` is Korean, for the customer. */
  failure: { code: string; message: string } | null;
}

/** A card that paid (a card, or an easy pay paid by card). */
export interface CardFacts {
  issuerName: string;
  accepterName: string;
  approvalNumber: string;
  /** '00' for a lump sum. */
  installmentMonth: string;
  /** What the processor shows of the number: first six and last four digits, when it shows them. */
  bin: string | null;
  last4: string | null;
}

export interface VirtualAccount {
  /** The standard (KFTC) three-digit bank code, src/ports/banks.ts. */
  bankCode: string;
  bankName: string;
  accountNumber: string;
  holder: string;
  /** When the account closes without a deposit (epoch ms). */
  dueAtMs: number;
}

/** A bank account to refund a paid virtual account to. Personal data: sealed at rest, never logged. */
export interface RefundAccount {
  bankCode: string;
  accountNumber: string;
  holderName: string;
}

/** What a confirm or a look-up says of an order. */
export type CheckoutResult =
  | {
    status: 'APPROVED'; processorRef: string; amount: number;
    /** When the money moved (a deposit's time for a virtual account); null: now. */
    approvedAtMs: number | null;
    method: PayMethod;
    /** METHOD_NAME: 신용카드, the easy pay's name, 계좌이체, 가상계좌, 휴대폰. */
    methodName: string;
    /** Set when a card paid (an easy pay paid by card included). */
    card: CardFacts | null;
    /** The bank of a transfer. */
    bankName: string | null;
  }
  | { status: 'WAITING_FOR_DEPOSIT'; processorRef: string; amount: number; account: VirtualAccount; secret: string | null }
  /** Refused (`message` Korean, for the customer); nothing was charged. */
  | { status: 'DECLINED'; code: string; message: string }
  /** The processor knows the order but nothing is paid or confirmed yet (the window is open). */
  | { status: 'PENDING' }
  /** Cancelled at the processor (by Sunap, or in the processor's own dashboard). */
  | { status: 'CANCELED'; processorRef: string; canceledAtMs: number | null }
  /** A virtual account closed or expired without a deposit. */
  | { status: 'CLOSED' };

export type CloseOutcome = { outcome: 'CLOSED' } | { outcome: 'FAILED'; message: string };

/** A processor's notice as it arrived at /processor-events: the raw bytes and the headers. */
export interface RawEvent {
  body: Buffer;
  headers: Record<string, string | undefined>;
}

/**
 * A notice, verified and reduced to what Sunap needs: which order to look up. Its body's
 * status is never trusted: the service confirms every notice with `lookup`.
 */
export interface ProcessorEvent {
  /** The processor's own id of the notice (e.g. webhook-id), when it gives one; else the body's hash is used. */
  key: string | null;
  /** The processor's name of the event (DEPOSIT_CALLBACK, Transaction.Paid, ...). */
  type: string;
  /** Our attempt id the notice is about; null: not about a payment of ours. */
  orderId: string | null;
  /** A virtual account's secret the notice claims (Toss): compared with the one the confirm returned. */
  claimedSecret: string | null;
}

export type EventReading = { ok: true; event: ProcessorEvent } | { ok: false; reason: string };

/** A notice's body parsed as JSON, or the refusal every adapter gives one that is not JSON. */
export function noticeJson(raw: RawEvent): { ok: true; body: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, body: JSON.parse(raw.body.toString('utf8')) };
  } catch {
    return { ok: false, reason: 'body: not JSON' };
  }
}

export type CancelResult = { outcome: 'CANCELED' } | { outcome: 'FAILED'; message: string };

export interface CheckoutProcessor {
  readonly id: CheckoutProcessorId;
  /** The methods this processor (and the store's contract with it) can take. */
  readonly methods: readonly PayMethod[];
  begin(order: CheckoutOrder): Promise<CheckoutWindow>;
  readReturn(query: Record<string, string>, outcome: 'success' | 'fail'): ReturnReading;
  /**
   * Confirms the order for `amount` (the payment's). Idempotent under the order id. Throws
   * OutcomeUnknown (card-processor.ts) when the processor may have acted and could not say.
   */
  confirm(req: { orderId: string; processorRef: string | null; amount: number }): Promise<CheckoutResult>;
  /** What the processor holds for the order; null when it never saw it. Throws when it cannot tell now. */
  lookup(orderId: string): Promise<CheckoutResult | null>;
  /** Full cancel; a paid virtual account refunds to `refundAccount`. Cancelling a cancelled payment succeeds. */
  cancel(req: { idempotencyKey: string; orderId: string; processorRef: string | null; amount: number; reason: string; refundAccount: RefundAccount | null }): Promise<CancelResult>;
  /** Closes an open virtual account (no deposit yet); closing a closed one succeeds. */
  closeAccount(req: { idempotencyKey: string; orderId: string; processorRef: string | null }): Promise<CloseOutcome>;
  /** Verifies a notice (signature, secret) and reads it; `ok: false` refuses it. */
  readEvent(raw: RawEvent): EventReading | Promise<EventReading>;
  /** The longest one call can take, time limits and retries included (the reconcile's staleness). */
  readonly callLimitMs?: number;
  /** Proves the keys with a call that changes nothing (sunap doctor). */
  checkCredentials?(): Promise<{ ok: boolean; detail: string }>;
}

/**
 * The keys of one processor, as a store (or the operator) gave them. Secrets (secretKey,
 * apiSecret, webhookSecret) are sealed at rest and never shown again.
 */
export interface ProcessorKeys {
  /** Toss: the client key the browser uses (test_ck_… / live_ck_…). */
  clientKey?: string;
  /** Toss: the secret key of the same pair (test_sk_… / live_sk_…). */
  secretKey?: string;
  /** PortOne: the V2 API secret. */
  apiSecret?: string;
  /** PortOne: the store id (store-…). */
  storeId?: string;
  /** PortOne: the channel key of the store's PG contract (channel-key-…). */
  channelKey?: string;
  /** PortOne: the webhook secret (whsec_…), to verify its notices. */
  webhookSecret?: string;
}

export const SECRET_KEY_FIELDS = ['secretKey', 'apiSecret', 'webhookSecret'] as const satisfies readonly (keyof ProcessorKeys)[];
export const PUBLIC_KEY_FIELDS = ['clientKey', 'storeId', 'channelKey'] as const satisfies readonly (keyof ProcessorKeys)[];
