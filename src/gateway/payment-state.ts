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

export const PAYMENT_TRANSITIONS = {
  /** The card was approved (payment page or sandbox), or a terminal approval was recorded. */
  approve: { from: ['STORE_REQUEST'], to: 'APPROVE_COMPLETE' },
  /** The card cancel succeeded (also the retry of a CANCEL_FAIL). */
  cancel: { from: ['APPROVE_COMPLETE', 'CANCEL_FAIL'], to: 'CANCEL_COMPLETE' },
  /** The card cancel failed; a later CANCEL tries again. */
  cancelFail: { from: ['APPROVE_COMPLETE', 'CANCEL_FAIL'], to: 'CANCEL_FAIL' },
  /** DELETE of a request nobody has paid. */
  delete: { from: ['STORE_REQUEST'], to: 'STORE_DELETE' },
} as const satisfies Record<string, { from: readonly PaymentState[]; to: PaymentState }>;
export type PaymentEvent = keyof typeof PAYMENT_TRANSITIONS;

/** True when `event` may move a payment that is in `state`. */
export function canApply(event: PaymentEvent, state: PaymentState): boolean {
  return (PAYMENT_TRANSITIONS[event].from as readonly PaymentState[]).includes(state);
}

/** True when the payment is already where `event` would take it (the operation is done). */
export function alreadyApplied(event: PaymentEvent, state: PaymentState): boolean {
  return PAYMENT_TRANSITIONS[event].to === state;
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
export const ATTEMPT_KINDS = ['APPROVE', 'CANCEL', 'DELETE'] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];

export const ATTEMPT_STATUSES = ['OPEN', 'APPROVED', 'DECLINED', 'ERROR', 'CANCELED', 'FAILED', 'DELETED', 'SKIPPED'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];
export type ClosedAttemptStatus = Exclude<AttemptStatus, 'OPEN'>;
