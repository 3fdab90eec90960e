/**
 * The card network behind one small port. Adapters map vendor outcomes to these enums and
 * treat "already cancelled" as success. The idempotency key is our attempt id: asking twice
 * with the same key must not charge or refund twice.
 */
export interface CardInput {
  number: string;
  expiryMonth: string;
  expiryYear: string;
  /** Birth date (YYMMDD) or business registration number, as the issuer verifies it. */
  holderId: string;
  passwordDigits: string;
}

export type ApproveOutcome =
  | {
    outcome: 'APPROVED'; approvalNumber: string; issuerName: string; accepterName: string;
    /** The processor's own key of the approval (a Toss paymentKey), kept with the payment to cancel it later. */
    processorRef?: string;
  }
  /** Refused; `message` is Korean and shown to the customer on the payment page. */
  | { outcome: 'DECLINED'; message: string }
  /** Nothing was approved (a processor fault, a refused configuration); the customer may try again. */
  | { outcome: 'ERROR'; message: string };

export type CancelOutcome = { outcome: 'CANCELED' } | { outcome: 'FAILED'; message: string };

/**
 * Thrown by an adapter when the processor may or may not have acted and no look-up could tell
 * yet (a time-out, a 5xx): the attempt stays open and the reconcile settles it later by asking
 * the processor under the same key (docs/going-live.md, "What happens when an answer is lost").
 */
export class OutcomeUnknown extends Error {
  override name = 'OutcomeUnknown';
}

/** What a harmless authenticated call to a provider showed (`sunap doctor`). */
export interface CredentialCheck {
  ok: boolean;
  detail: string;
}

export interface CardProcessor {
  approve(req: {
    idempotencyKey: string; amount: number; installmentMonth: string; card: CardInput;
    /** What is bought, as the processor's records show it (REQUEST_REASON). */
    orderName?: string;
  }): Promise<ApproveOutcome>;
  /**
   * What the processor did under an approval's idempotency key, or null if it never saw it:
   * how a crash between the processor's answer and our commit is settled.
   */
  lookup(idempotencyKey: string): Promise<ApproveOutcome | null>;
  /** Full cancel of an approval; cancelling an already cancelled approval succeeds. */
  cancel(req: {
    idempotencyKey: string; approvalNumber: string; amount: number; cardBin: string; cardLast4: string;
    /** The approval's `processorRef`, when the processor gave one. */
    processorRef?: string | null;
    reason?: string;
  }): Promise<CancelOutcome>;
  /**
   * The longest one call of this adapter can take, time limits and its own retries included:
   * an attempt open longer than that (with a margin) was left by a dead process. Absent: 60 s.
   */
  readonly callLimitMs?: number;
  /**
   * How long after an approval request the processor keeps its order id and idempotency key, so
   * that a look-up which found nothing may still find a charge it books late (Toss: 15 days).
   * Within it an unknown attempt is looked up again on a backoff (src/gateway/late-charge.ts).
   * Absent: a look-up that finds nothing is final (the sandbox's network books in one step).
   */
  readonly keepsOrdersMs?: number;
  /** Proves the credentials with a call that changes nothing. Absent: nothing to prove (sandbox). */
  checkCredentials?(): Promise<CredentialCheck>;
}

export function luhnValid(number: string): boolean {
  if (!/^\d{13,19}$/.test(number)) return false;
  let sum = 0;
  let dbl = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}
