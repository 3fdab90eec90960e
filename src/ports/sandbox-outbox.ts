import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';

/** One message as the sandbox outbox shows it (decisions §6, §8). */
export interface OutboxMessage {
  id: string;
  channel: string;
  to: string;
  text: string;
  link: string | null;
  deliveryStatus: string;
  /** Epoch milliseconds on the service clock. */
  sentAtMs: number;
}

/** Only what the sandbox provider accepted is listed (decisions §8). */
const LISTED_STATUSES = ['ACCEPTED', 'DELIVERED', 'FAILED'];

export const OUTBOX_DEFAULT_LIMIT = 100;
export const OUTBOX_MAX_LIMIT = 500;

/** Digits only, as the provider stores numbers; "010-1234-5678" finds "01012345678". */
export function normalizePhone(phone: string): string {
  return phone.replace(/\D/g, '');
}

/**
 * Reads the sandbox messaging provider's own records (table sandbox_messages, written by its
 * adapter), newest first, optionally for one recipient number.
 */
export async function listSandboxMessages(
  db: Kysely<Database>,
  opts: { phone?: string; limit?: number } = {},
): Promise<OutboxMessage[]> {
  let q = db.selectFrom('sandbox_messages').selectAll().where('delivery_status', 'in', LISTED_STATUSES);
  // A filter that holds no digits matches nothing rather than everything.
  if (opts.phone !== undefined && opts.phone.trim() !== '') q = q.where('to_phone', '=', normalizePhone(opts.phone));
  const limit = Math.min(Math.max(1, opts.limit ?? OUTBOX_DEFAULT_LIMIT), OUTBOX_MAX_LIMIT);
  const rows = await q.orderBy('sent_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({
    id: r.id, channel: r.channel, to: r.to_phone, text: r.text, link: r.link, deliveryStatus: r.delivery_status,
    sentAtMs: Number(r.sent_at),
  }));
}
