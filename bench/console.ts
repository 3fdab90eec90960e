import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../src/db/index.js';
import type { PaymentTable } from '../src/db/schema.js';
import { benchName, benchPhone, benchReason } from './database.js';

/**
 * The console's list scenarios (docs/console.md, "Fast lists"): the payments and invoices list
 * pages and their search, signed in as a store's owner, on a store and account of 1,000 rows and
 * one of 100,000. The question is whether a page costs the same however much data there is.
 */
export const CONSOLE_LISTS = {
  consolePaymentsSmall: { what: 'payments', search: false, size: 'small' },
  consolePaymentsLarge: { what: 'payments', search: false, size: 'large' },
  consolePaymentSearchSmall: { what: 'payments', search: 'phone', size: 'small' },
  consolePaymentSearchLarge: { what: 'payments', search: 'phone', size: 'large' },
  consoleInvoicesSmall: { what: 'invoices', search: false, size: 'small' },
  consoleInvoicesLarge: { what: 'invoices', search: false, size: 'large' },
  consoleInvoiceSearchSmall: { what: 'invoices', search: 'phone', size: 'small' },
  consoleInvoiceSearchLarge: { what: 'invoices', search: 'phone', size: 'large' },
  consolePaymentNameSmall: { what: 'payments', search: 'name', size: 'small' },
  consolePaymentNameLarge: { what: 'payments', search: 'name', size: 'large' },
  consolePaymentReasonSmall: { what: 'payments', search: 'reason', size: 'small' },
  consolePaymentReasonLarge: { what: 'payments', search: 'reason', size: 'large' },
  consoleInvoiceNameSmall: { what: 'invoices', search: 'name', size: 'small' },
  consoleInvoiceNameLarge: { what: 'invoices', search: 'name', size: 'large' },
  consoleInvoiceReasonSmall: { what: 'invoices', search: 'reason', size: 'small' },
  consoleInvoiceReasonLarge: { what: 'invoices', search: 'reason', size: 'large' },
} as const;
export type ConsoleListKey = keyof typeof CONSOLE_LISTS;

/** The pairs whose p99 at 100,000 must stay within 2× of the p99 at 1,000. */
export const CONSOLE_PAIRS: [ConsoleListKey, ConsoleListKey, string][] = [
  ['consolePaymentsSmall', 'consolePaymentsLarge', 'console payments list'],
  ['consolePaymentSearchSmall', 'consolePaymentSearchLarge', 'console payment search'],
  ['consoleInvoicesSmall', 'consoleInvoicesLarge', 'console invoices list'],
  ['consoleInvoiceSearchSmall', 'consoleInvoiceSearchLarge', 'console invoice search'],
  ['consolePaymentNameSmall', 'consolePaymentNameLarge', 'console payment search by a given name'],
  ['consolePaymentReasonSmall', 'consolePaymentReasonLarge', 'console payment search by a part of a reason'],
  ['consoleInvoiceNameSmall', 'consoleInvoiceNameLarge', 'console invoice search by a given name'],
  ['consoleInvoiceReasonSmall', 'consoleInvoiceReasonLarge', 'console invoice search by a part of a reason'],
];

/**
 * What the search box holds in a search scenario, each about the middle row of the seed: its
 * phone (one match); its given name, two Korean syllables such as 영희 (about one row in 400 at
 * 100,000, one in 50 at 1,000); the first three characters of its class, a part of its reason
 * (one row in 40).
 */
export function searchTerm(kind: 'phone' | 'name' | 'reason', count: number): string {
  const i = Math.floor(count / 2);
  if (kind === 'phone') return searchPhone(count);
  if (kind === 'name') return benchName(i).slice(1);
  return benchReason(i).split(' · ')[1]!.slice(0, 3);
}

/** The phone the search looks for: one row in the middle of the seeded range (every seeded phone is distinct). */
export function searchPhone(count: number): string {
  return benchPhone(Math.floor(count / 2));
}

/**
 * Payments written straight into the table (a seeding shortcut, like seedInvoices): the shape
 * requestPayment and an approval leave, most approved with a card, some waiting, a few cancelled.
 */
export async function seedPayments(db: Kysely<Database>, opts: { platformCode: string; storeCode: string; count: number; tag: string; spanDays: number }): Promise<void> {
  const now = Date.now();
  const span = opts.spanDays * 86_400_000;
  const row = (i: number): Insertable<PaymentTable> => {
    const created = now - Math.floor((span * (opts.count - 1 - i)) / Math.max(1, opts.count - 1));
    const state = i % 10 === 9 ? 'STORE_REQUEST' : i % 25 === 3 ? 'CANCEL_COMPLETE' : 'APPROVE_COMPLETE';
    const approved = state !== 'STORE_REQUEST';
    return {
      id: randomUUID(), platform_code: opts.platformCode, store_code: opts.storeCode, trans_seqno: `B${opts.tag}P${i.toString(36).padStart(6, '0')}`,
      state, amount: 128_000, supply_amount: 116_364, tax_charge: 11_636, tax_free_amount: 0, mobile_no: benchPhone(i), pay_user_name: benchName(i),
      request_reason: benchReason(i), info_message: null, confirm_url: null, return_display_yn: 'N', return_url: null, temp_value: null, user_id: null,
      order_type: 'BILL', items_json: null, pay_path: 'WEB', approval_number: approved ? String(10_000_000 + i) : null, approval_at: approved ? created + 60_000 : null,
      installment_month: approved ? '00' : null, issuer_name: approved ? '신한카드' : null, accepter_name: approved ? '신한카드' : null,
      method_name: approved ? '신용카드' : null, card_bin: approved ? '424242' : null, card_last4: approved ? String(1000 + (i % 9000)) : null,
      cancel_at: state === 'CANCEL_COMPLETE' ? created + 120_000 : null, cancel_reason: '', cancel_amount: state === 'CANCEL_COMPLETE' ? 128_000 : 0,
      created_at: created, updated_at: created, processor: approved ? 'sandbox' : null, processor_order: null, method: approved ? 'CARD' : null,
      vbank_code: '', vbank_name: '', vbank_account: '', vbank_holder: '', vbank_due_at: null, vbank_secret_sealed: null,
    };
  };
  for (let tx = 0; tx < opts.count; tx += 10_000) {
    await db.transaction().execute(async (trx) => {
      for (let i = tx; i < Math.min(opts.count, tx + 10_000); i += 500) {
        const rows: Insertable<PaymentTable>[] = [];
        for (let j = i; j < Math.min(opts.count, tx + 10_000, i + 500); j++) rows.push(row(j));
        await trx.insertInto('payments').values(rows).execute();
      }
    });
  }
}

/** Signs in to the console as a browser would (the sign-in page's CSRF token, then the form): the Cookie header. */
export async function consoleSignIn(base: string, email: string, password: string): Promise<string> {
  const page = await fetch(`${base}/console/login`);
  const jar = new Map(page.headers.getSetCookie().map((c) => c.split(';')[0]!.split('=') as [string, string]));
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!token) throw new Error('no CSRF token on the sign-in page');
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const r = await fetch(`${base}/console/login`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
    body: new URLSearchParams({ _csrf: token, email, password, next: '/console' }),
  });
  if (r.status !== 303) throw new Error(`console sign-in answered ${r.status}: ${(await r.text()).slice(0, 300)}`);
  for (const c of r.headers.getSetCookie()) {
    const [k, v] = c.split(';')[0]!.split('=') as [string, string];
    jar.set(k, v);
  }
  return cookie();
}
