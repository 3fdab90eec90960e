import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../db/index.js';
import type { InvoiceTable } from '../db/schema.js';
import type { GatewayService } from '../gateway/service.js';
import { kstIso } from '../platform/clock.js';
import { AppError, appEnvelope } from '../platform/errors.js';

/** The interface's TRANS_SEQNO limit; anything longer cannot name an invoice. */
const MAX_TRANS_SEQNO = 64;

/**
 * Per-address limit of the unauthenticated lookups (API and page). The numbers are
 * unguessable, so this is about load, not secrecy. The counters live in process memory:
 * with several instances each one allows this much.
 */
export const PUBLIC_RATE_LIMIT = { max: 60, timeWindow: 60_000 };

export interface PublicItem {
  name: string;
  price: number;
  qty: number;
}

/** A line with its net (after discount), which the page shows; the API shows name, price and qty. */
export interface PublicLine extends PublicItem {
  net: number;
}

export interface PublicInvoice {
  transSeqNo: string;
  status: string;
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
 * Items as the public sees them. The stored lines are the invoicing core's JSON; only name,
 * price and quantity are shown, and a line that cannot be read is left out rather than
 * failing the page.
 */
export function publicItems(itemsJson: string | null): PublicLine[] {
  if (!itemsJson) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(itemsJson);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: PublicLine[] = [];
  for (const it of parsed) {
    if (!it || typeof it !== 'object') continue;
    const o = it as Record<string, unknown>;
    const price = Number(o.price ?? o.unitPrice);
    const qty = o.qty === undefined || o.qty === null ? 1 : Number(o.qty);
    if (typeof o.name !== 'string' || !Number.isFinite(price) || !Number.isFinite(qty)) continue;
    const net = Number(o.amount ?? price * qty);
    out.push({ name: o.name, price, qty, net: Number.isFinite(net) ? net : price * qty });
  }
  return out;
}

const kstOrNull = (ms: number | null) => (ms === null ? null : kstIso(ms));

/** A visible (not deleted) invoice by its transaction number, with its store's name. */
export async function findPublicInvoice(db: Kysely<Database>, transSeqNo: string): Promise<{ invoice: Selectable<InvoiceTable>; storeName: string } | undefined> {
  if (transSeqNo.length === 0 || transSeqNo.length > MAX_TRANS_SEQNO) return undefined;
  const row = await db.selectFrom('invoices')
    .leftJoin('stores', 'stores.code', 'invoices.store_code')
    .selectAll('invoices')
    .select('stores.name as store_name')
    .where('invoices.trans_seqno', '=', transSeqNo)
    .where('invoices.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { store_name, ...invoice } = row;
  return { invoice, storeName: store_name ?? '' };
}

export function publicInvoice(invoice: Selectable<InvoiceTable>, storeName: string, gateway: GatewayService): PublicInvoice {
  return {
    transSeqNo: invoice.trans_seqno,
    status: invoice.status,
    paymentUrl: invoice.payment_id ? gateway.redirectUrl({ id: invoice.payment_id }) : null,
    // The merchant is the business the customer deals with; the store carries its one name.
    corpName: storeName,
    businessName: storeName,
    receiverName: invoice.receiver_name,
    receiverPhoneMasked: maskPhone(invoice.receiver_phone),
    reason: invoice.reason,
    description: invoice.description,
    amount: Number(invoice.amount),
    issuedAt: kstIso(invoice.created_at),
    paidAt: kstOrNull(invoice.done_at),
    canceledAt: kstOrNull(invoice.canceled_at),
    items: publicItems(invoice.items_json),
  };
}

/** Shared by the API and the page: not found, deleted and malformed numbers look alike. */
export async function lookupPublicInvoice(app: FastifyInstance, transSeqNo: string): Promise<PublicInvoice | undefined> {
  const found = await findPublicInvoice(app.sunap.store.db, transSeqNo);
  return found ? publicInvoice(found.invoice, found.storeName, app.sunap.gateway) : undefined;
}

/** What the rate limiter throws; the root error handler answers it as 429 / -29. */
export function tooManyRequests(_req: FastifyRequest, ctx: { statusCode: number; after: string }) {
  return {
    statusCode: ctx.statusCode,
    result_code: -29,
    result_msg: `too many requests; try again in ${ctx.after}`,
    result_data: null,
  };
}

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const PublicInvoiceSchema = Type.Object({
  transSeqNo: Type.String(),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('DONE'), Type.Literal('CANCELED')]),
  paymentUrl: Nullable(Type.String({ description: 'The payment page link (REDIRECT_URL); null until the payment is issued' })),
  corpName: Type.String(),
  businessName: Type.String(),
  receiverName: Type.String(),
  receiverPhoneMasked: Type.String({ examples: ['010-****-5678'] }),
  reason: Type.String(),
  description: Nullable(Type.String()),
  amount: Type.Integer(),
  issuedAt: Type.String({ description: "yyyy-MM-dd'T'HH:mm:ss, KST" }),
  paidAt: Nullable(Type.String({ description: "yyyy-MM-dd'T'HH:mm:ss, KST" })),
  canceledAt: Nullable(Type.String({ description: "yyyy-MM-dd'T'HH:mm:ss, KST" })),
  items: Type.Array(Type.Object({ name: Type.String(), price: Type.Integer(), qty: Type.Integer() })),
});

const Envelope = <T extends TSchema>(data: T) => Type.Object({
  result_code: Type.Integer(), result_msg: Type.String(), result_data: data,
});

const Params = Type.Object({ transSeqNo: Type.String() });

/** GET /app/v1/sales/public/bill/:transSeqNo: no authentication, contact data masked. */
export function publicInvoiceRoutes(app: FastifyInstance): void {
  app.get('/app/v1/sales/public/bill/:transSeqNo', {
    config: { rateLimit: { ...PUBLIC_RATE_LIMIT, errorResponseBuilder: tooManyRequests } },
    schema: {
      tags: ['Invoicing'],
      summary: 'Public invoice lookup by transaction number (no authentication; contact data masked)',
      description: 'Unknown or deleted numbers answer HTTP 404 with result_code -10. Limited to 60 calls a minute per client address (429, -29).',
      params: Params,
      response: {
        200: Envelope(PublicInvoiceSchema),
        404: Envelope(Type.Null()),
        429: Envelope(Type.Null()),
      },
    },
  }, async (req) => {
    const { transSeqNo } = req.params as Static<typeof Params>;
    const view = await lookupPublicInvoice(app, transSeqNo);
    if (!view) throw new AppError('NOT_FOUND', 'transSeqNo: no invoice with this number');
    req.resultCode = '0';
    return appEnvelope(0, 'SUCCESS', { ...view, items: view.items.map(({ name, price, qty }) => ({ name, price, qty })) });
  });
}
