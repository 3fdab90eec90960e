import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { newId } from '../platform/crypto.js';
import type { DeliveryStatus, MessageChannel, MessageRequest } from './messaging.js';

/**
 * The sandbox providers' own records (never a real card or message): the card network's
 * answers by idempotency key, and the messages the messaging provider accepted (the outbox a
 * developer reads at /sandbox/messages and /sandbox/outbox).
 */
type Db = Kysely<Database>;

// ---- card network ----------------------------------------------------------------------------

export async function recallCharge(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('sandbox_card_charges').select('outcome').where('idempotency_key', '=', key).executeTakeFirst();
  return row?.outcome;
}

/** Keeps the first answer under a key (a second write under the same key changes nothing). */
export async function rememberCharge(db: Db, key: string, outcome: string): Promise<void> {
  await db.insertInto('sandbox_card_charges').values({ idempotency_key: key, outcome, created_at: Date.now() })
    .onConflict((oc) => oc.column('idempotency_key').doNothing()).execute();
}

// ---- messages --------------------------------------------------------------------------------

export async function messageIdByKey(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('sandbox_messages').select('id').where('idempotency_key', '=', key).executeTakeFirst();
  return row?.id;
}

/** The accepted message, once per idempotency key; returns the id of whichever row landed first. */
export async function acceptMessage(db: Db, req: MessageRequest, now: number): Promise<string> {
  await db.insertInto('sandbox_messages').values({
    id: newId(), idempotency_key: req.idempotencyKey, channel: req.channel, to_phone: req.to, text: req.text, link: req.link,
    delivery_status: 'ACCEPTED', sent_at: now,
  }).onConflict((oc) => oc.column('idempotency_key').doNothing()).execute();
  return (await messageIdByKey(db, req.idempotencyKey))!;
}

/** True for the first call for this message only (recorded in the database, so on any instance). */
export async function firstFault(db: Db, req: MessageRequest, now: number): Promise<boolean> {
  const rows = await db.insertInto('sandbox_messages').values({
    id: newId(), idempotency_key: `fault:${req.idempotencyKey}`, channel: req.channel, to_phone: req.to, text: '', link: null,
    delivery_status: 'FAULT', sent_at: now,
  }).onConflict((oc) => oc.column('idempotency_key').doNothing()).returning('id').execute();
  return rows.length === 1;
}

export async function findMessage(db: Db, id: string) {
  return db.selectFrom('sandbox_messages').select(['channel', 'to_phone', 'delivery_status']).where('id', '=', id).executeTakeFirst();
}

/**
 * ACCEPTED → the final delivery, once. Two refreshes at once may both call it; the rule gives
 * both the same status, so which one lands does not matter and nothing is returned.
 */
export async function settleDelivery(db: Db, id: string, status: DeliveryStatus): Promise<void> {
  await db.updateTable('sandbox_messages').set({ delivery_status: status }).where('id', '=', id).where('delivery_status', '=', 'ACCEPTED').execute();
}

/** One message as the sandbox outbox shows it. */
export interface OutboxMessage {
  id: string;
  channel: MessageChannel;
  to: string;
  text: string;
  link: string | null;
  deliveryStatus: DeliveryStatus;
  /** Epoch milliseconds on the service clock. */
  sentAtMs: number;
}

/** Only what the sandbox provider accepted is listed (never the remembered faults). */
const LISTED_STATUSES: DeliveryStatus[] = ['ACCEPTED', 'DELIVERED', 'FAILED'];

export const OUTBOX_DEFAULT_LIMIT = 100;
export const OUTBOX_MAX_LIMIT = 500;

/** Digits only, as the provider stores numbers; "010-1234-5678" finds "01012345678". */
export function normalizePhone(phone: string): string {
  return phone.replace(/\D/g, '');
}

/** The outbox, newest first, optionally for one recipient number. */
export async function listSandboxMessages(db: Db, opts: { phone?: string; limit?: number } = {}): Promise<OutboxMessage[]> {
  let q = db.selectFrom('sandbox_messages').selectAll().where('delivery_status', 'in', LISTED_STATUSES);
  // A filter that holds no digits matches nothing rather than everything.
  if (opts.phone !== undefined && opts.phone.trim() !== '') q = q.where('to_phone', '=', normalizePhone(opts.phone));
  const limit = Math.min(Math.max(1, opts.limit ?? OUTBOX_DEFAULT_LIMIT), OUTBOX_MAX_LIMIT);
  const rows = await q.orderBy('sent_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  // The query keeps the remembered faults out; the cast says so to the type.
  return rows.map((r) => ({
    id: r.id, channel: r.channel, to: r.to_phone, text: r.text, link: r.link, deliveryStatus: r.delivery_status as DeliveryStatus,
    sentAtMs: Number(r.sent_at),
  }));
}
