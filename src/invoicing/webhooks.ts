import type { FastifyInstance } from 'fastify';
import type { Selectable, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { InvoiceTable } from '../db/schema.js';
import { enqueue } from '../jobs/queue.js';
import { kstIso } from '../platform/clock.js';

export const WEBHOOK_JOB = 'invoicing.webhook';
/** Delays after attempts 1..4 fail (interface: 1 min, 5 min, 30 min, 2 h); the 5th is the last. */
export const WEBHOOK_BACKOFF_SECONDS = [60, 300, 1800, 7200];
export const WEBHOOK_MAX_ATTEMPTS = 5;

export type WebhookEvent = 'bill.paid' | 'bill.canceled';

const kstOrNull = (ms: number | null) => (ms === null ? null : kstIso(ms));

/** The webhook body (interface "Events"); its serialized bytes are stored and sent unchanged on every attempt. */
export function webhookBody(invoice: Selectable<InvoiceTable>, event: WebhookEvent, now: number): Record<string, unknown> {
  return {
    event,
    billId: invoice.unique_id,
    requestId: invoice.request_id ?? null,
    transSeqNo: invoice.trans_seqno,
    status: event === 'bill.paid' ? 'DONE' : 'CANCELED',
    amount: Number(invoice.amount),
    reason: invoice.reason,
    paidAt: kstOrNull(invoice.done_at),
    canceledAt: kstOrNull(invoice.canceled_at),
    occurredAt: kstIso(now),
  };
}

/**
 * Writes the webhook event and its delivery job in the caller's transaction (design note 7:
 * the state change and the event it causes commit together). Called twice for the same
 * invoice and event, it does nothing the second time: the event exists once.
 */
export async function recordWebhookEvent(
  trx: Transaction<Database>,
  invoice: Selectable<InvoiceTable>,
  event: WebhookEvent,
  now: number,
): Promise<void> {
  if (!invoice.webhook_url) return;
  const body = JSON.stringify(webhookBody(invoice, event, now));
  const row = await trx.insertInto('webhook_events')
    .values({
      invoice_id: invoice.id, account_id: invoice.account_id, event, url: invoice.webhook_url, body,
      status: 'PENDING', attempts: 0, created_at: now, updated_at: now,
    })
    .onConflict((oc) => oc.columns(['invoice_id', 'event']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!row) return;
  await enqueue(trx, {
    kind: WEBHOOK_JOB, payload: { eventId: Number(row.id) }, runAt: now, maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    uniqueKey: `webhook:${row.id}`,
  }, now);
}

/** Webhooks (bill.paid / bill.canceled), the public invoice lookup and the sandbox outbox. */
export async function invoicingWebPlugin(_app: FastifyInstance): Promise<void> {}
