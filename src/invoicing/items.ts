import { won } from '../pages/html.js';
import type { BillItem } from './schemas.js';

/** An invoice line as stored (items_json) and shown: the request's fields with defaults and its net. */
export interface StoredItem {
  name: string;
  price: number;
  qty: number;
  discountAmount: number;
  discountUnit: 'AMOUNT' | 'RATE';
  type: string | null;
  /** Net of the line: price × qty − discount (RATE: floor of the line × rate / 100). */
  amount: number;
}

/**
 * Nets the lines the way the gateway does (decisions §4 and §8: RATE floored), and checks
 * that they add up to the amount. Errors name the field under `path` (`items[1].discountAmount`).
 */
export function netItems(items: BillItem[], amount: number, path: string): StoredItem[] | { error: string } {
  const out: StoredItem[] = [];
  let sum = 0;
  for (const [i, it] of items.entries()) {
    const qty = it.qty ?? 1;
    const unit = it.discountUnit ?? 'AMOUNT';
    const d = it.discountAmount ?? 0;
    const gross = it.price * qty;
    if (!Number.isSafeInteger(gross)) return { error: `${path}[${i}].qty: the line amount is too large` };
    if (unit === 'RATE' && d > 100) return { error: `${path}[${i}].discountAmount: a RATE discount must be at most 100` };
    const discount = unit === 'RATE' ? Math.floor((gross * d) / 100) : d;
    if (discount > gross) return { error: `${path}[${i}].discountAmount: is larger than the line amount` };
    const net = gross - discount;
    sum += net;
    out.push({ name: it.name, price: it.price, qty, discountAmount: d, discountUnit: unit, type: it.type ?? null, amount: net });
  }
  if (sum !== amount) return { error: `${path}: the net sum of the items (${sum}) must equal the amount (${amount})` };
  return out;
}

/** The gateway's ITEMS for the invoice's payment (the payment page shows all of them). */
export function gatewayItems(items: StoredItem[]) {
  return items.map((it) => ({
    name: it.name, unitPrice: it.price, qty: it.qty, discountAmount: it.discountAmount, discountUnit: it.discountUnit,
  }));
}

export function parseItems(json: string | null): StoredItem[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json) as StoredItem[];
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** Notification items: the first five (interface limits). */
export const MESSAGE_ITEMS = 5;

/**
 * The notification text: business, recipient, reason, amount, up to five items under
 * "청구 항목", the description and the payment link.
 */
export function invoiceMessage(m: {
  businessName: string; receiverName: string; reason: string; amount: number; items: StoredItem[];
  description: string | null; link: string;
}): string {
  const lines = [`[${m.businessName}] 청구서 안내`, '', `${m.receiverName}님, ${m.reason} 청구서가 도착했습니다.`, `청구 금액: ${won(m.amount)}`];
  if (m.items.length > 0) {
    lines.push('', '청구 항목');
    for (const it of m.items.slice(0, MESSAGE_ITEMS)) lines.push(`- ${it.name}${it.qty > 1 ? ` x${it.qty}` : ''} ${won(it.amount)}`);
    if (m.items.length > MESSAGE_ITEMS) lines.push(`외 ${m.items.length - MESSAGE_ITEMS}건`);
  }
  if (m.description) lines.push('', m.description);
  lines.push('', `결제하기: ${m.link}`);
  return lines.join('\n');
}
