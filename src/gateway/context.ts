import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import type { SecretBox } from '../platform/crypto.js';
import type { ProcessorRegistry } from './processors.js';
import type { Payment } from './repository.js';

/**
 * Lets another part of the service act in the same transaction as a payment change (the
 * invoicing side moves its invoice and writes its webhook event there). Called only when the
 * change really happened.
 */
export interface PaymentListener {
  onApproved?(trx: Transaction<Database>, payment: Payment): Promise<void>;
  onCanceled?(trx: Transaction<Database>, payment: Payment): Promise<void>;
  onDeleted?(trx: Transaction<Database>, payment: Payment): Promise<void>;
  /**
   * A charge the processor booked late, found after the payment was paid by another attempt
   * (or ended), was refunded (src/gateway/late-charge.ts): the console writes it to the audit log.
   */
  onLateChargeRefunded?(trx: Transaction<Database>, payment: Payment, refund: { attemptId: string; approvalNumber: string; amount: number }): Promise<void>;
  /**
   * The automatic void of a window order the payment cannot take was refused or lost (PENDING,
   * retried), done after a retry (VOIDED), or given up (FAILED) (src/gateway/order-void.ts): the
   * console writes it to the audit log.
   */
  onOrderVoid?(trx: Transaction<Database>, payment: Payment, event: { attemptId: string; outcome: 'PENDING' | 'VOIDED' | 'FAILED'; amount: number; detail: string }): Promise<void>;
}

export interface CallbackPayload {
  paymentId: string;
  /** Written by a redelivery or a recovery: its first attempt is a manual one, made whatever the delivery's status. */
  manual?: boolean;
}

/** What the payment operations (approval, checkout, cancellation, reconcile) work with. */
export interface GatewayContext {
  db: Kysely<Database>;
  clock: Clock;
  /** Which processor a store or a payment goes to, with its keys (src/gateway/processors.ts). */
  processors: ProcessorRegistry;
  /** Seals a virtual account's secret and a cancel's refund account. */
  box: SecretBox;
  log: Logger;
  listeners: readonly PaymentListener[];
  /** Called after a commit that made jobs due, so a worker picks them up at once. */
  wake: () => void;
  /** How long an attempt stays open before the reconcile takes it for abandoned (`staleAttemptMs`). */
  staleAttemptMs: number;
  /** Settles the payment's attempt if a dead process left it open; true when it did. */
  reconcile: (paymentId: string) => Promise<boolean>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
