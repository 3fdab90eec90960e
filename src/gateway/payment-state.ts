/**
 * The payment state machine, in one place (docs/reference.md, "States").
 *
 * A payment changes state only through an event of PAYMENT_TRANSITIONS, applied by the
 * repository as a compare-and-set (`UPDATE ... WHERE state IN (from)`); the caller checks
 * that it changed a row. An event whose target state the payment is already in has already
 * happened (a second CANCEL or DELETE answers 0000 and changes nothing).
 *
 * This file imports nothing, so the table types (src/db/schema.ts) can use these unions.
 */
export const PAYMENT_STATES = ['STORE_REQUEST', 'APPROVE_COMPLETE', 'CANCEL_COMPLETE', 'CANCEL_FAIL', 'STORE_DELETE'] as const;
export type PaymentState = (typeof PAYMENT_STATES)[number];

/**
 * Whether a virtual account is open on a waiting payment (its VBANK fields set): some events
 * need one open, others need none. The repository adds it to the compare-and-set.
 */
export type AccountGuard = 'none' | 'open';

export const PAYMENT_TRANSITIONS = {
  /** The card was approved (payment page or sandbox), or a terminal approval was recorded. */
  approve: { from: ['STORE_REQUEST'], to: 'APPROVE_COMPLETE', account: 'none' },
  /** A virtual account was issued: the payment keeps waiting, now for the deposit. */
  issueAccount: { from: ['STORE_REQUEST'], to: 'STORE_REQUEST', account: 'none' },
  /** The deposit into the open virtual account arrived: paid. */
  deposit: { from: ['STORE_REQUEST'], to: 'APPROVE_COMPLETE', account: 'open' },
  /** The open virtual account closed without a deposit (past its due time, DELETE, or the customer chose another way): payable again. */
  closeAccount: { from: ['STORE_REQUEST'], to: 'STORE_REQUEST', account: 'open' },
  /** The card cancel succeeded (also the retry of a CANCEL_FAIL). */
  cancel: { from: ['APPROVE_COMPLETE', 'CANCEL_FAIL'], to: 'CANCEL_COMPLETE' },
  /** The card cancel failed; a later CANCEL tries again. */
  cancelFail: { from: ['APPROVE_COMPLETE', 'CANCEL_FAIL'], to: 'CANCEL_FAIL' },
  /** DELETE of a request nobody has paid (an open virtual account is closed first). */
  delete: { from: ['STORE_REQUEST'], to: 'STORE_DELETE', account: 'none' },
} as const satisfies Record<string, { from: readonly PaymentState[]; to: PaymentState; account?: AccountGuard }>;
export type PaymentEvent = keyof typeof PAYMENT_TRANSITIONS;

/** The account guard of an event, if it has one. */
export function accountGuard(event: PaymentEvent): AccountGuard | undefined {
  const t = PAYMENT_TRANSITIONS[event] as { account?: AccountGuard };
  return t.account;
}

/**
 * True when `event` may move a payment that is in `state` (and, for events that care, whose
 * virtual account is open or not, as `accountOpen` says).
 */
export function canApply(event: PaymentEvent, state: PaymentState, accountOpen = false): boolean {
  if (!(PAYMENT_TRANSITIONS[event].from as readonly PaymentState[]).includes(state)) return false;
  const guard = accountGuard(event);
  return guard === undefined || guard === (accountOpen ? 'open' : 'none');
}

/**
 * True when the payment is already where `event` would take it (the operation is done). Only
 * for events that change the state: one that stays in its state (an account issued or
 * closed) is never "already applied" by the state alone.
 */
export function alreadyApplied(event: PaymentEvent, state: PaymentState): boolean {
  const t = PAYMENT_TRANSITIONS[event];
  return t.to === state && !(t.from as readonly PaymentState[]).includes(state);
}

/** How the payment was made: a link (WEB), a saved card (EPAY), or a terminal. */
export const PAY_PATHS = ['WEB', 'EPAY', 'KIOSK', 'VAN', 'CARD'] as const;
export type PayPath = (typeof PAY_PATHS)[number];

/** Terminal approvals are cancelled on their terminal, never through the gateway (4008). */
export const TERMINAL_PAY_PATHS = ['KIOSK', 'VAN', 'CARD'] as const satisfies readonly PayPath[];
export type TerminalPayPath = (typeof TERMINAL_PAY_PATHS)[number];

export function isTerminalPayPath(p: PayPath): p is TerminalPayPath {
  return (TERMINAL_PAY_PATHS as readonly PayPath[]).includes(p);
}

export const ORDER_TYPES = ['BILL', 'SHOP'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

/**
 * Attempts: one row per operation on a payment, committed OPEN before the card processor is
 * called (one OPEN attempt per payment: a partial unique index), then closed once, by a
 * compare-and-set on OPEN, with how it ended.
 */
export const ATTEMPT_KINDS = ['APPROVE', 'CHECKOUT', 'CANCEL', 'DELETE'] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];

/**
 * OPEN holds the payment's slot. A CHECKOUT attempt (one order handed to a processor's window)
 * also rests, without the slot, while the customer is in the window (WINDOW) and while its
 * virtual account waits for the deposit (ISSUED); an operation on the order takes the slot by
 * moving it from its resting status to OPEN (`claimAttempt`) and back or to its end.
 *
 * A key-in approval whose outcome the processor's look-up could not tell (it did not know the
 * order yet) rests as UNKNOWN, without the slot, so the customer may pay again; it is looked up
 * on a backoff (src/gateway/late-charge.ts) until the processor answers or stops keeping the
 * order. A charge found after the payment was paid otherwise is refunded: REFUNDED.
 *
 * A window order the payment cannot take (paid by another order, or an amount not its own) is
 * voided at the processor: CANCELED. When the processor refused the void or its answer was lost,
 * the order is VOIDING (charged, not yet taken back; without the slot) while its void is retried
 * (src/gateway/order-void.ts), then CANCELED, or FAILED when the retries end.
 */
export const ATTEMPT_STATUSES = [
  'OPEN', 'WINDOW', 'ISSUED', 'UNKNOWN', 'APPROVED', 'DECLINED', 'ERROR', 'ABANDONED', 'CLOSED', 'CANCELED', 'REFUNDED', 'FAILED', 'DELETED', 'SKIPPED', 'VOIDING',
] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];
export const RESTING_STATUSES = ['WINDOW', 'ISSUED', 'UNKNOWN'] as const satisfies readonly AttemptStatus[];
export type RestingStatus = (typeof RESTING_STATUSES)[number];
export type ClosedAttemptStatus = Exclude<AttemptStatus, 'OPEN' | RestingStatus>;
