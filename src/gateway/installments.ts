/**
 * Installments (docs/reference.md, "Payment page"): a lump sum ("00") always; 2 to 12 months
 * from 50,000 won. The payment page and the approval both ask this rule.
 */
export const INSTALLMENT_MIN_AMOUNT = 50_000;
export const LUMP_SUM = '00';
export const INSTALLMENT_MONTHS = ['02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12'] as const;

export type InstallmentProblem = 'unknown' | 'below-minimum';

/** Why `month` cannot be chosen for `amount`; null when it can. */
export function installmentProblem(month: string, amount: number): InstallmentProblem | null {
  if (month === LUMP_SUM) return null;
  if (!(INSTALLMENT_MONTHS as readonly string[]).includes(month)) return 'unknown';
  return amount < INSTALLMENT_MIN_AMOUNT ? 'below-minimum' : null;
}
