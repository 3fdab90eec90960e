import { lineNet, parseStoredLines, storedLine, type StoredLine } from '../gateway/index.js';
import { won } from '../platform/format.js';
import { eucKrBytes, SMS_MAX_BYTES } from '../ports/messaging.js';
import { dueDateText } from './due.js';
import type { Invoice } from './repository.js';
import type { BillItem } from './schemas.js';

/**
 * Nets an invoice's lines with the gateway's rule (RATE discounts floored) and checks that they
 * add up to the amount. Problems name the field under `path` (`items[1].discountAmount: ...`).
 */
export function netItems(items: BillItem[], amount: number, path: string): StoredLine[] | { error: string } {
  const out: StoredLine[] = [];
  let sum = 0;
  for (const [i, it] of items.entries()) {
    const net = lineNet({ unitPrice: it.price, qty: it.qty, discountAmount: it.discountAmount, discountUnit: it.discountUnit });
    if (typeof net !== 'number') return { error: `${path}[${i}].${net.field}: ${net.reason}` };
    sum += net;
    out.push(storedLine({ name: it.name, unitPrice: it.price, qty: it.qty, discountAmount: it.discountAmount, discountUnit: it.discountUnit, type: it.type, net }));
  }
  if (sum !== amount) return { error: `${path}: the net sum of the items (${sum}) must equal the amount (${amount})` };
  return out;
}

/** The invoice's lines as stored. */
export function invoiceLines(invoice: Pick<Invoice, 'items_json'>): StoredLine[] {
  return parseStoredLines(invoice.items_json);
}

/** A line as the invoicing API shows it (its net as `amount`). */
export function itemView(l: StoredLine) {
  return { name: l.name, price: l.unitPrice, qty: l.qty, discountAmount: l.discountAmount, discountUnit: l.discountUnit, type: l.type, amount: l.net };
}

/** The gateway's ITEMS for the invoice's payment: the payment page shows all of them. */
export function gatewayItems(lines: StoredLine[]) {
  return lines.map((l) => ({ name: l.name, unitPrice: l.unitPrice, qty: l.qty, discountAmount: l.discountAmount, discountUnit: l.discountUnit }));
}

/** Notification items: the first five. */
export const MESSAGE_ITEMS = 5;

/**
 * The ALIMTALK template an operator registers with Kakao for the invoice message (docs/going-live.md,
 * "The ALIMTALK template"): every message Sunap sends, on any channel, is this text with its
 * variables filled, so what Kakao approved is exactly what goes out.
 */
export const INVOICE_TEMPLATE = [
  '[#{상호}] 청구서 안내',
  '',
  '#{고객명}님, #{청구사유} 청구서가 도착했습니다.',
  '청구 금액: #{청구금액}',
  '',
  '#{청구내용}',
  '',
  '결제하기: #{결제링크}',
].join('\n');

/** What #{청구내용} says when an invoice has neither items nor a description (a variable is never empty). */
export const NO_DETAILS = '아래 링크에서 카드로 결제하실 수 있습니다.';

/**
 * The template's variables for one invoice (docs/reference.md, "Invoices"): business, recipient,
 * reason, amount, and as #{청구내용} up to five items under "청구 항목", the description and the
 * due date.
 */
export function invoiceVariables(m: {
  businessName: string; receiverName: string; reason: string; amount: number; items: StoredLine[];
  description: string | null; link: string;
  /** yyyy-MM-dd: "납부 기한" closes #{청구내용} (the registered template stays as it is). */
  dueDate?: string | null;
}): Record<string, string> {
  const details: string[] = [];
  if (m.items.length > 0) {
    details.push('청구 항목');
    for (const it of m.items.slice(0, MESSAGE_ITEMS)) details.push(`- ${it.name}${it.qty > 1 ? ` x${it.qty}` : ''} ${won(it.net)}`);
    if (m.items.length > MESSAGE_ITEMS) details.push(`외 ${m.items.length - MESSAGE_ITEMS}건`);
  }
  if (m.description) details.push(...(details.length ? [''] : []), m.description);
  if (m.dueDate) details.push(...(details.length ? [''] : []), `납부 기한: ${dueDateText(m.dueDate)}`);
  return {
    '#{상호}': m.businessName, '#{고객명}': m.receiverName, '#{청구사유}': m.reason, '#{청구금액}': won(m.amount),
    '#{청구내용}': details.length ? details.join('\n') : NO_DETAILS, '#{결제링크}': m.link,
  };
}

/**
 * The invoice as an SMS (docs/invoicing.md, "SMS or LMS"): one line with the business, the
 * recipient, the reason, the amount and the short payment link. Used when it fits an SMS
 * (SMS_MAX_BYTES in EUC-KR); otherwise the message is the whole invoice text, sent as LMS.
 */
export const SMS_TEMPLATE = '[#{상호}] #{고객명}님 #{청구사유} #{청구금액} #{결제링크}';

/** The SMS text when it fits 90 bytes, else the whole invoice text (an LMS). */
export function smsText(variables: Record<string, string>): string {
  const short = fillTemplate(SMS_TEMPLATE, variables);
  return eucKrBytes(short) <= SMS_MAX_BYTES ? short : fillTemplate(INVOICE_TEMPLATE, variables);
}

/** A template with its variables filled, in one pass: a value that looks like a variable stays as it is. */
export function fillTemplate(template: string, variables: Record<string, string>): string {
  return template.replace(/#\{[^}]+\}/g, (name) => variables[name] ?? name);
}

/** The notification text: the template filled for this invoice. */
export function invoiceMessage(m: Parameters<typeof invoiceVariables>[0]): string {
  return fillTemplate(INVOICE_TEMPLATE, invoiceVariables(m));
}
