/**
 * Job and delivery states (src/jobs/README.md). A job is PENDING until a run succeeds (DONE)
 * or its last attempt fails (DEAD). This file imports nothing, so the table types
 * (src/db/schema.ts) can use it.
 */
export const JOB_STATUSES = ['PENDING', 'DONE', 'DEAD'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What an outbound attempt delivered: a CONFIRM_URL callback or an invoice webhook. */
export const OUTBOUND_TARGETS = ['CALLBACK', 'WEBHOOK'] as const;
export type OutboundTarget = (typeof OUTBOUND_TARGETS)[number];

/**
 * A delivery (a callback or webhook a store is owed): pending until an attempt gets a 2xx,
 * failed when its job gave up; recovery or a manual redelivery makes a failed one pending again.
 */
export const DELIVERY_KINDS = ['callback', 'webhook'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];
/**
 * The delivery's transitions, each a compare-and-set on `from`: a 2xx delivers from any state
 * (a redelivery of a delivered one stays delivered); the last scheduled failure, 410 Gone or a
 * disabled endpoint fail a pending one only (a delivery the receiver has stays delivered);
 * a redelivery or recovery reopens a failed one.
 */
export const DELIVERY_TRANSITIONS = {
  deliver: { from: ['pending', 'failed', 'delivered'], to: 'delivered' },
  fail: { from: ['pending'], to: 'failed' },
  reopen: { from: ['failed'], to: 'pending' },
} as const satisfies Record<string, { from: readonly DeliveryState[]; to: DeliveryState }>;
export type DeliveryEvent = keyof typeof DELIVERY_TRANSITIONS;

/**
 * What "failed" means for a delivery, everywhere a merchant sees it (the overview's count, the
 * console list's "실패", recovery): given up, or still being retried after its first failed
 * attempt. Per state, the fewest attempts that make it failing (null: never): a pending delivery
 * with an attempt behind it has failed at least once, since a 2xx delivers it at once. A fresh
 * delivery not yet attempted, and a delivered one, are not failing.
 */
export const FAILING_FROM_ATTEMPTS: Record<DeliveryState, number | null> = { failed: 0, pending: 1, delivered: null };

/** The one predicate of a failing delivery (FAILING_FROM_ATTEMPTS); the repository's SQL is built from the same table. */
export function isFailing(d: { status: DeliveryState; attempts: number }): boolean {
  const min = FAILING_FROM_ATTEMPTS[d.status];
  return min !== null && Number(d.attempts) >= min;
}
/** What made an attempt: the job's schedule, or a person (redeliver, recover). */
export const ATTEMPT_TRIGGERS = ['scheduled', 'manual'] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];
