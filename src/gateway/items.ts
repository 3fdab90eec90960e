/**
 * Item lines as stored (the `items_json` column of payments and invoices) and read back: one
 * writer and one reader for both. Rows written before this shape existed are read too: a
 * payment's lines kept the request's fields plus `net`; an invoice's kept `price` and its net
 * as `amount`.
 */
export interface StoredLine {
  name: string;
  unitPrice: number;
  qty: number;
  /** Won for AMOUNT, percent for RATE. */
  discountAmount: number;
  discountUnit: 'AMOUNT' | 'RATE';
  /** unitPrice × qty − discount. */
  net: number;
  taxType: 'TAX_ON' | 'TAX_FREE' | null;
  vatRateBps: number | null;
  /** Shown on the payment page for SHOP orders. */
  publisher: string | null;
  imageUrl: string | null;
  /** The invoice line's free-text type. */
  type: string | null;
}

export type LineInput = Partial<StoredLine> & { name: string; unitPrice: number; net: number };

export function storedLine(l: LineInput): StoredLine {
  return {
    name: l.name, unitPrice: l.unitPrice, qty: l.qty ?? 1, discountAmount: l.discountAmount ?? 0, discountUnit: l.discountUnit ?? 'AMOUNT',
    net: l.net, taxType: l.taxType ?? null, vatRateBps: l.vatRateBps ?? null, publisher: l.publisher ?? null,
    imageUrl: l.imageUrl ?? null, type: l.type ?? null,
  };
}

/** The JSON to store, or null for no lines. */
export function storeLines(lines: StoredLine[]): string | null {
  return lines.length > 0 ? JSON.stringify(lines) : null;
}

// Number.isFinite is false for anything but a finite number (it never converts a string).
const num = (v: unknown): number | null => (Number.isFinite(v) ? (v as number) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The stored lines; an entry that cannot be read is left out rather than failing a page or an answer. */
export function parseStoredLines(json: string | null): StoredLine[] {
  if (json === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: StoredLine[] = [];
  for (const it of parsed) {
    if (!it || typeof it !== 'object') continue;
    const o = it as Record<string, unknown>;
    const unitPrice = num(o.unitPrice) ?? num(o.price);
    const qty = o.qty === undefined || o.qty === null ? 1 : num(o.qty);
    if (typeof o.name !== 'string' || unitPrice === null || qty === null) continue;
    out.push(storedLine({
      name: o.name, unitPrice, qty, net: num(o.net) ?? num(o.amount) ?? unitPrice * qty,
      discountAmount: num(o.discountAmount) ?? 0, discountUnit: o.discountUnit === 'RATE' ? 'RATE' : 'AMOUNT',
      taxType: o.taxType === 'TAX_FREE' || o.taxType === 'TAX_ON' ? o.taxType : null, vatRateBps: num(o.vatRateBps),
      publisher: str(o.publisher), imageUrl: str(o.imageUrl), type: str(o.type),
    }));
  }
  return out;
}
