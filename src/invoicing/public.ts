import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { GatewayService } from '../gateway/index.js';
import { AppError, rateLimitError } from '../platform/errors.js';
import { ok, type App } from '../platform/http.js';
import { kstIso, kstIsoOrNull } from '../platform/kst.js';
import { Envelope, ErrorEnvelope, Nullable } from '../platform/schemas.js';
import { INVOICE_STATUSES, type InvoiceStatus } from './invoice-state.js';
import { invoiceLines } from './items.js';
import * as repo from './repository.js';
import { isOverdue } from './due.js';
import type { Clock } from '../platform/clock.js';

/** The longest TRANS_SEQNO; anything longer cannot name an invoice. */
const MAX_TRANS_SEQNO = 64;

/**
 * Per-address limit of the unauthenticated lookups (API and page). The numbers are
 * unguessable, so this is about load, not secrecy. The counters live in process memory:
 * with several instances each one allows this much.
 */
export const PUBLIC_RATE_LIMIT = { max: 60, timeWindow: 60_000, errorResponseBuilder: rateLimitError };

/** A line as the public sees it; `net` (after discount) is shown by the page, not the API. */
export interface PublicLine {
  name: string;
  price: number;
  qty: number;
  net: number;
}

export interface PublicInvoice {
  transSeqNo: string;
  status: InvoiceStatus;
  paymentUrl: string | null;
  corpName: string;
  businessName: string;
  receiverName: string;
  receiverPhoneMasked: string;
  reason: string;
  description: string | null;
  amount: number;
  issuedAt: string;
  paidAt: string | null;
  canceledAt: string | null;
  /** yyyy-MM-dd (KST), or null. */
  dueDate: string | null;
  /** Unpaid past the due date. */
  overdue: boolean;
  items: PublicLine[];
}

/** 01012345678 → 010-****-5678; the middle digits are hidden whatever the length. */
export function maskPhone(phone: string): string {
  const d = phone.replace(/\D/g, '');
  if (d.length < 8) return '*'.repeat(d.length);
  const head = d.startsWith('02') ? d.slice(0, 2) : d.slice(0, 3);
  const tail = d.slice(-4);
  return `${head}-${'*'.repeat(d.length - head.length - 4)}-${tail}`;
}

/**
 * The public invoice by its transaction number (docs/reference.md, "Public invoice"): unknown,
 * deleted and malformed numbers all read as undefined. Shared by the API and the page.
 */
export async function lookupPublicInvoice(db: Kysely<Database>, gateway: GatewayService, transSeqNo: string, nowMs: number): Promise<PublicInvoice | undefined> {
  if (transSeqNo.length === 0 || transSeqNo.length > MAX_TRANS_SEQNO) return undefined;
  const invoice = await repo.findVisibleInvoiceBySeqNo(db, transSeqNo);
  if (!invoice) return undefined;
  // The merchant is the business the customer deals with; the store carries its one name.
  const storeName = (await gateway.findStore(invoice.store_code))?.name ?? '';
  return {
    transSeqNo: invoice.trans_seqno,
    status: invoice.status,
    paymentUrl: invoice.payment_id ? gateway.redirectUrl({ id: invoice.payment_id }) : null,
    corpName: storeName,
    businessName: storeName,
    receiverName: invoice.receiver_name,
    receiverPhoneMasked: maskPhone(invoice.receiver_phone),
    reason: invoice.reason,
    description: invoice.description,
    amount: Number(invoice.amount),
    issuedAt: kstIso(invoice.created_at),
    paidAt: kstIsoOrNull(invoice.done_at),
    canceledAt: kstIsoOrNull(invoice.canceled_at),
    dueDate: invoice.due_date,
    overdue: isOverdue(invoice, nowMs),
    items: invoiceLines(invoice).map((l) => ({ name: l.name, price: l.unitPrice, qty: l.qty, net: l.net })),
  };
}

const Time = Type.String({ description: "yyyy-MM-dd'T'HH:mm:ss, KST", examples: ['2026-11-22T14:30:05'] });

export const PublicInvoiceSchema = Type.Object({
  transSeqNo: Type.String({ examples: ['INV43TZLMJM2U7HMVSZXJNLQTCM'] }),
  status: Type.Union(INVOICE_STATUSES.map((s) => Type.Literal(s))),
  paymentUrl: Nullable(Type.String({ description: 'The payment page link (REDIRECT_URL); null until the payment is issued' })),
  corpName: Type.String(),
  businessName: Type.String(),
  receiverName: Type.String(),
  receiverPhoneMasked: Type.String({ examples: ['010-****-5678'] }),
  reason: Type.String(),
  description: Nullable(Type.String()),
  amount: Type.Integer(),
  issuedAt: Time,
  paidAt: Nullable(Time),
  canceledAt: Nullable(Time),
  dueDate: Nullable(Type.String({ description: 'yyyy-MM-dd (KST), or null without one', examples: ['2026-12-10'] })),
  overdue: Type.Boolean({ description: 'Unpaid and past its due date' }),
  items: Type.Array(Type.Object({ name: Type.String(), price: Type.Integer(), qty: Type.Integer() })),
});

/** GET /app/v1/sales/public/bill/:transSeqNo: no authentication, contact data masked. */
export function publicInvoiceRoutes(app: App, db: Kysely<Database>, gateway: GatewayService, clock: Clock): void {
  app.get('/app/v1/sales/public/bill/:transSeqNo', {
    config: { rateLimit: PUBLIC_RATE_LIMIT },
    schema: {
      tags: ['Invoicing'],
      summary: 'Public invoice lookup by transaction number (no authentication; contact data masked)',
      description: 'Unknown or deleted numbers answer HTTP 404 with result_code -10. Limited to 60 calls a minute per client address (429, -29).',
      params: Type.Object({ transSeqNo: Type.String() }),
      response: { 200: Envelope(PublicInvoiceSchema), 404: ErrorEnvelope, 429: ErrorEnvelope },
    },
  }, async (req) => {
    const view = await lookupPublicInvoice(db, gateway, req.params.transSeqNo, clock.nowMs());
    if (!view) throw new AppError('NOT_FOUND', 'transSeqNo: no invoice with this number');
    return ok(req, { ...view, items: view.items.map(({ name, price, qty }) => ({ name, price, qty })) });
  });
}

/**
 * The due date of the invoice a gateway payment belongs to (null: none, or not an invoice's
 * payment): the payment page shows it.
 */
export async function dueDateOfPayment(db: Kysely<Database>, paymentId: string, storeCode: string): Promise<string | null> {
  return (await repo.findInvoiceByPayment(db, paymentId, storeCode))?.due_date ?? null;
}
