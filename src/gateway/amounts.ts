import type { Item } from './schemas.js';

export const DEFAULT_VAT_BPS = 1000;

export interface Breakdown {
  supplyAmount: number;
  taxCharge: number;
  taxFreeAmount: number;
  /** Net of each line, in the order given. */
  lines: number[];
}

/** round(a / b) for non-negative integers, half up, exact for any size. */
function divRound(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

export function vatOf(net: number, bps: number): number {
  return Number(divRound(BigInt(net) * BigInt(bps), BigInt(10_000 + bps)));
}

/** Line net = unitPrice × qty − discount; a RATE discount is floor(line × rate / 100). */
export function lineNet(item: Item): number | { error: string } {
  const gross = BigInt(item.unitPrice) * BigInt(item.qty ?? 1);
  const d = BigInt(item.discountAmount ?? 0);
  let discount: bigint;
  if ((item.discountUnit ?? 'AMOUNT') === 'RATE') {
    if (d > 100n) return { error: 'discountAmount: a RATE discount must be at most 100' };
    discount = (gross * d) / 100n;
  } else discount = d;
  const net = gross - discount;
  if (net < 0n) return { error: 'discountAmount: is larger than the line amount' };
  if (net > 999_999_999_999n) return { error: 'unitPrice: the line amount is too large' };
  return Number(net);
}

/**
 * VAT and tax-free split (decisions §4). Without items the whole amount is one TAX_ON line at
 * the default rate. Returns an error naming the field when the items do not add up.
 */
export function breakdown(amount: number, items: Item[] | undefined): Breakdown | { error: string } {
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
    if (typeof net !== 'number') return { error: `ITEMS[${i}].${net.error}` };
    lines.push(net);
    sum += net;
    if ((item.taxType ?? 'TAX_ON') === 'TAX_FREE') free += net;
    else {
      const v = vatOf(net, item.vatRateBps ?? DEFAULT_VAT_BPS);
      tax += v;
      supply += net - v;
    }
  }
  if (sum !== amount) return { error: `APPROVAL_AMOUNT: must equal the sum of ITEMS (${sum})` };
  return { supplyAmount: supply, taxCharge: tax, taxFreeAmount: free, lines };
}
