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
  | { outcome: 'APPROVED'; approvalNumber: string; issuerName: string; accepterName: string }
  | { outcome: 'DECLINED'; message: string }
  | { outcome: 'ERROR'; message: string };

export type CancelOutcome = { outcome: 'CANCELED' } | { outcome: 'FAILED'; message: string };

export interface CardProcessor {
  approve(req: { idempotencyKey: string; amount: number; installmentMonth: string; card: CardInput }): Promise<ApproveOutcome>;
  /**
   * What the processor did under an approval's idempotency key, or null if it never saw it:
   * how a crash between the processor's answer and our commit is settled.
   */
  lookup(idempotencyKey: string): Promise<ApproveOutcome | null>;
  /** Full cancel of an approval; cancelling an already cancelled approval succeeds. */
  cancel(req: { idempotencyKey: string; approvalNumber: string; amount: number; cardBin: string; cardLast4: string }): Promise<CancelOutcome>;
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
