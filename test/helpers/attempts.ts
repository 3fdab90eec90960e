import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/index.js';
import type { AttemptKind } from '../../src/gateway/index.js';
import { newId } from '../../src/platform/crypto.js';

/**
 * An OPEN attempt on a payment, written straight into the database: what another process holds
 * (created now) or what a dead one left behind (created long ago). Returns its id, which is also
 * the card network's idempotency key for it.
 */
export async function openAttempt(db: Kysely<Database>, a: {
  paymentId: string; kind: AttemptKind; createdAt: number; card_bin?: string; card_last4?: string; installment_month?: string;
}): Promise<string> {
  const id = newId();
  await db.insertInto('payment_attempts').values({
    id, payment_id: a.paymentId, kind: a.kind, status: 'OPEN', card_bin: a.card_bin ?? null, card_last4: a.card_last4 ?? null, issuer_name: null,
    installment_month: a.installment_month ?? null, message: null, created_at: a.createdAt, closed_at: null,
  }).execute();
  return id;
}
