import type { Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';

/**
 * The expiry of a virtual account (docs/reference.md, "Virtual accounts"): written with the
 * account's issue, due at its due time on the service clock. A run looks the order up first (a
 * deposit may have come with its notice lost), then closes the account at the processor and
 * makes the payment payable again. The work itself is the gateway's (`expire`, handed in when
 * the job is registered), so this file depends on nothing of it.
 */
export const ACCOUNT_EXPIRY_BACKOFF_SECONDS = [60, 300, 1800, 7200, 21600] as const;

export interface AccountExpiryPayload {
  paymentId: string;
  orderId: string;
}

export interface AccountExpiryDeps {
  /** Settles the order's account if it is past due; throws to try again later (the processor did not answer). */
  expire(payload: AccountExpiryPayload): Promise<void>;
}

export const ACCOUNT_EXPIRY_JOB: JobDefinition<AccountExpiryPayload, AccountExpiryDeps> = defineJob({
  kind: 'gateway.account-expiry',
  backoffSeconds: ACCOUNT_EXPIRY_BACKOFF_SECONDS,
  run: (payload: AccountExpiryPayload, deps: AccountExpiryDeps) => deps.expire(payload),
});

/** In the transaction: the account's expiry, due at its due time, once per order. */
export async function scheduleExpiry(trx: Transaction<Database>, p: { paymentId: string; orderId: string; storeCode: string; dueAtMs: number; now: number }): Promise<void> {
  await enqueue(trx, ACCOUNT_EXPIRY_JOB, { paymentId: p.paymentId, orderId: p.orderId }, { runAt: p.dueAtMs, uniqueKey: `account-expiry:${p.orderId}`, now: p.now });
}
