/**
 * Money rules of a payment (docs/reference.md, "Amounts"): how a line nets, and how
 * an amount splits into supply, VAT and tax-free parts. The invoicing side nets its invoice
 * lines with the same lineNet.
 */
export const DEFAULT_VAT_BPS = 1000;
/** The largest line (and payment) amount: APPROVAL_AMOUNT has at most 12 digits. */
export const MAX_LINE_AMOUNT = 999_999_999_999;

export interface Line {
  unitPrice: number;
  qty?: number;
  /** Won for AMOUNT, percent for RATE. */
  discountAmount?: number;
  discountUnit?: 'AMOUNT' | 'RATE';
}

export type LineProblem = { field: 'discountAmount' | 'qty'; reason: string };

/** Line net = unitPrice × qty − discount, where a RATE discount is floor(unitPrice × qty × rate / 100). */
export function lineNet(line: Line): number | LineProblem {
  const gross = BigInt(line.unitPrice) * BigInt(line.qty ?? 1);
  const d = BigInt(line.discountAmount ?? 0);
  let discount = d;
  if (line.discountUnit === 'RATE') {
    if (d > 100n) return { field: 'discountAmount', reason: 'a RATE discount must be at most 100' };
    discount = (gross * d) / 100n;
  }
  if (discount > gross) return { field: 'discountAmount', reason: 'is larger than the line amount' };
  const net = gross - discount;
  if (net > BigInt(MAX_LINE_AMOUNT)) return { field: 'qty', reason: 'the line amount is too large' };
  return Number(net);
}

/** round(a / b) for non-negative integers, half up, exact for any size. */
function divRound(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

/** VAT inside a VAT-inclusive amount: round(net × bps / (10000 + bps)). */
export function vatOf(net: number, bps: number): number {
  return Number(divRound(BigInt(net) * BigInt(bps), BigInt(10_000 + bps)));
}

export interface TaxLine extends Line {
  taxType?: 'TAX_ON' | 'TAX_FREE';
  vatRateBps?: number;
}

export interface Breakdown {
  supplyAmount: number;
  taxCharge: number;
  taxFreeAmount: number;
  /** Net of each line, in the order given. */
  lines: number[];
}

/**
 * Supply, VAT and tax-free parts of a payment. Without items the whole amount is one TAX_ON
 * line at the default rate; with items the amount must equal their nets' sum, and
 * supply + VAT + tax-free = amount. Problems name the field (`ITEMS[1].discountAmount: ...`).
 *
 * `taxFree`, given by the invoicing side only (an invoice's taxFreeAmount: its lines carry no
 * taxType), is the tax-free part itself, 0..amount; the rest is taxed at the default rate.
 */
export function breakdown(amount: number, items: TaxLine[] | undefined, taxFree?: number): Breakdown | { error: string } {
  if (taxFree !== undefined) {
    if (!Number.isSafeInteger(taxFree) || taxFree < 0 || taxFree > amount) return { error: `taxFreeAmount: must be from 0 to APPROVAL_AMOUNT (${amount})` };
    const lines = items && items.length > 0 ? breakdown(amount, items) : { lines: [] as number[] };
    if ('error' in lines) return lines;
    const tax = vatOf(amount - taxFree, DEFAULT_VAT_BPS);
    return { supplyAmount: amount - taxFree - tax, taxCharge: tax, taxFreeAmount: taxFree, lines: lines.lines };
  }
  if (!items || items.length === 0) {
    const tax = vatOf(amount, DEFAULT_VAT_BPS);
    return { supplyAmount: amount - tax, taxCharge: tax, taxFreeAmount: 0, lines: [] };
  }
  let supply = 0;
  let tax = 0;
  let free = 0;
  let sum = 0;
  const lines: number[] = [];
  for (const [i, item] of items.entries()) {
    const net = lineNet(item);
    if (typeof net !== 'number') return { error: `ITEMS[${i}].${net.field}: ${net.reason}` };
    lines.push(net);
    sum += net;
    if (item.taxType === 'TAX_FREE') free += net;
    else {
      const v = vatOf(net, item.vatRateBps ?? DEFAULT_VAT_BPS);
      tax += v;
      supply += net - v;
    }
  }
  if (sum !== amount) return { error: `APPROVAL_AMOUNT: must equal the sum of ITEMS (${sum})` };
  return { supplyAmount: supply, taxCharge: tax, taxFreeAmount: free, lines };
}
