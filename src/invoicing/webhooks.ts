import type { FastifyInstance } from 'fastify';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { InvoiceTable } from '../db/schema.js';
import { deliver } from '../jobs/outbound.js';
import { enqueue, type JobHandler } from '../jobs/queue.js';
import { sandboxOutboxRoutes } from '../pages/outbox.js';
import { invoicePageRoutes } from '../pages/invoice-page.js';
import type { HttpOut } from '../ports/http-out.js';
import { kstIso, type Clock } from '../platform/clock.js';
import { webhookSignature, type SecretBox } from '../platform/crypto.js';
import { publicInvoiceRoutes } from './public.js';

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

/**
 * Delivers one webhook event (design notes, "Webhook/callback jobs"): the stored body bytes,
 * signed at send time, through deliver() (timeout, no redirects, SSRF guard, every attempt
 * recorded). A throw makes the worker retry on WEBHOOK_BACKOFF_SECONDS; after the last
 * attempt the event is marked ABANDONED.
 */
export function webhookHandler(db: Kysely<Database>, http: HttpOut, clock: Clock, box: SecretBox): JobHandler {
  return {
    backoffSeconds: WEBHOOK_BACKOFF_SECONDS,
    async run(job) {
      const eventId = Number(job.data.eventId);
      const ev = await db.selectFrom('webhook_events')
        .leftJoin('invoices', 'invoices.id', 'webhook_events.invoice_id')
        .select(['webhook_events.id', 'webhook_events.event', 'webhook_events.body', 'webhook_events.url', 'webhook_events.status',
          'invoices.webhook_secret_sealed'])
        .where('webhook_events.id', '=', eventId).executeTakeFirst();
      // Already settled by an earlier run (a job may run twice after a crash): nothing to send.
      if (!ev || ev.status !== 'PENDING') return;
      const body = Buffer.from(ev.body, 'utf8');
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-service-event': ev.event,
        'x-service-delivery': String(ev.id),
      };
      const final = job.attempts >= job.max_attempts;
      try {
        if (ev.webhook_secret_sealed) {
          let secret: string;
          try {
            secret = box.open(ev.webhook_secret_sealed);
          } catch (err) {
            // Never send unsigned what the partner expects signed; keep the failure visible with the other attempts.
            await db.insertInto('outbound_attempts').values({
              job_id: job.id, target: 'WEBHOOK', ref_id: String(ev.id), attempt_no: job.attempts, url: ev.url, status_code: null,
              error: `not sent: the webhook secret cannot be opened (${(err as Error).message})`.slice(0, 300), duration_ms: 0,
              created_at: clock.nowMs(),
            }).execute();
            throw err;
          }
          // Wall clock on purpose (decisions §8): receivers check t against their own clocks,
          // so a moved sandbox clock must not make every signature look stale.
          const t = Math.floor(Date.now() / 1000);
          headers['x-service-signature'] = webhookSignature(secret, t, body);
        }
        await deliver(db, http, {
          jobId: job.id, target: 'WEBHOOK', refId: String(ev.id), attemptNo: job.attempts, url: ev.url, body, headers,
          now: clock.nowMs(),
        });
      } catch (err) {
        await db.updateTable('webhook_events')
          .set({ status: final ? 'ABANDONED' : 'PENDING', attempts: job.attempts, updated_at: clock.nowMs() })
          .where('id', '=', ev.id).where('status', '=', 'PENDING').execute();
        throw err;
      }
      await db.updateTable('webhook_events')
        .set({ status: 'DELIVERED', attempts: job.attempts, updated_at: clock.nowMs() })
        .where('id', '=', ev.id).execute();
    },
  };
}

/** Webhooks (bill.paid / bill.canceled), the public invoice lookup and page, and the sandbox outbox. */
export async function invoicingWebPlugin(app: FastifyInstance): Promise<void> {
  const { store, http, clock, box, worker, config } = app.sunap;
  worker.register(WEBHOOK_JOB, webhookHandler(store.db, http, clock, box));
  publicInvoiceRoutes(app);
  invoicePageRoutes(app);
  if (config.mode === 'sandbox') sandboxOutboxRoutes(app);
}
