/**
 * The invoicing state machines, in one place (docs/reference.md, "States").
 *
 * - An invoice (`status`) follows its gateway payment: paid → DONE, cancelled → CANCELED.
 * - Its send status (`send_status`) says whether the first message went out.
 * - Each send (one message to one recipient, a row of `sends`) is WAITING until its job runs,
 *   ACCEPTING once committed just before the provider call, then SUCCESS or FAILED, once.
 * - Each webhook event is PENDING until delivered, or ABANDONED after its last attempt.
 *
 * Repositories apply these as compare-and-sets on the from-states and report whether a row
 * changed. This file imports nothing, so the table types (src/db/schema.ts) can use it.
 */
export const INVOICE_STATUSES = ['PENDING', 'DONE', 'CANCELED'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const INVOICE_TRANSITIONS = {
  /** Its payment was approved. */
  paid: { from: ['PENDING'], to: 'DONE' },
  /** Its payment was cancelled (refunded). */
  canceled: { from: ['DONE'], to: 'CANCELED' },
} as const satisfies Record<string, { from: readonly InvoiceStatus[]; to: InvoiceStatus }>;
export type InvoiceEvent = keyof typeof INVOICE_TRANSITIONS;

/** Whether the first message of an invoice went out (a failed resend leaves it SENT). */
export const INVOICE_SEND_STATUSES = ['WAITING', 'SENT', 'FAILED'] as const;
export type InvoiceSendStatus = (typeof INVOICE_SEND_STATUSES)[number];

export const SEND_STATUSES = ['WAITING', 'ACCEPTING', 'SUCCESS', 'FAILED'] as const;
export type SendStatus = (typeof SEND_STATUSES)[number];

export const SEND_TRANSITIONS = {
  /** Committed before the provider is called; a crashed run's ACCEPTING send is taken up again. */
  accepting: { from: ['WAITING', 'ACCEPTING'], to: 'ACCEPTING' },
  /** The provider accepted the message. */
  succeeded: { from: ['WAITING', 'ACCEPTING'], to: 'SUCCESS' },
  /** Refused by the provider, the invoice no longer payable, or the last attempt failed. */
  failed: { from: ['WAITING', 'ACCEPTING'], to: 'FAILED' },
} as const satisfies Record<string, { from: readonly SendStatus[]; to: SendStatus }>;
export type SendEvent = keyof typeof SEND_TRANSITIONS;

/** A send still open: not yet settled. */
export const OPEN_SEND_STATUSES = SEND_TRANSITIONS.failed.from;

/** REMINDER (0013): a resend made by a reminder to the unpaid (docs/invoicing.md, "Reminders"). */
export const SEND_TYPES = ['INITIAL', 'RESEND', 'REMINDER'] as const;
export type SendType = (typeof SEND_TYPES)[number];

export const SEND_CHANNELS = ['ALIMTALK', 'SMS', 'ALIMTALK_THEN_SMS'] as const;
export type SendChannel = (typeof SEND_CHANNELS)[number];

export const TEMPLATE_TYPES = ['SAME', 'INDIVIDUAL'] as const;
export type TemplateType = (typeof TEMPLATE_TYPES)[number];

export const WEBHOOK_EVENTS = ['bill.paid', 'bill.canceled'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

export const WEBHOOK_EVENT_STATUSES = ['PENDING', 'DELIVERED', 'ABANDONED'] as const;
export type WebhookEventStatus = (typeof WEBHOOK_EVENT_STATUSES)[number];

/**
 * Ledger movements: points granted by the operator, reserved by a send, refunded by its
 * settlement, bought in the console (RECHARGE, once per recharge: ref = the recharge id).
 */
export const LEDGER_KINDS = ['GRANT', 'RESERVE', 'REFUND', 'RECHARGE'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export const TOKEN_KINDS = ['ACCESS', 'REFRESH'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/**
 * Roles of a team's accounts (docs/console.md, "Team"): an owner does everything, a manager
 * everything but the team and the store's settings, a viewer only reads.
 */
export const ACCOUNT_ROLES = ['owner', 'manager', 'viewer'] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

/** A points recharge: PENDING until its card payment is approved, then CREDITED, once. */
export const RECHARGE_STATUSES = ['PENDING', 'CREDITED'] as const;
export type RechargeStatus = (typeof RECHARGE_STATUSES)[number];

/** A schedule's repeat and status (0013; docs/invoicing.md, "Schedules"). */
export const SCHEDULE_REPEATS = ['MONTHLY', 'ONCE'] as const;
export type ScheduleRepeat = (typeof SCHEDULE_REPEATS)[number];
export const SCHEDULE_STATUSES = ['ACTIVE', 'PAUSED', 'ENDED'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/**
 * A schedule run (one per period): SENT once its invoices exist, WAITING_POINTS while the
 * wallet cannot pay for them (tried again until the period ends), MISSED when the period ended
 * first, SKIPPED when there was nothing to bill (an empty or archived class, a deleted template).
 */
export const SCHEDULE_RUN_STATUSES = ['WAITING_POINTS', 'SENT', 'MISSED', 'SKIPPED'] as const;
export type ScheduleRunStatus = (typeof SCHEDULE_RUN_STATUSES)[number];

/** A reminder of an unpaid invoice: PENDING until its time, then SENT, or SKIPPED (paid, cancelled, deleted, short of points). */
export const REMINDER_STATUSES = ['PENDING', 'SENT', 'SKIPPED'] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];
