import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import { recordStoreEvent } from '../gateway/index.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import { deliveryByRef, ensureDelivery } from '../jobs/delivery-repository.js';
import { deliver, recordAttempt } from '../jobs/outbound.js';
import type { HttpOut } from '../ports/http-out.js';
import type { Clock } from '../platform/clock.js';
import { webhookSignature, type SecretBox } from '../platform/crypto.js';
import { kstIso, kstIsoOrNull } from '../platform/kst.js';
import type { WebhookEventName } from './invoice-state.js';
import * as repo from './repository.js';
import type { Invoice } from './repository.js';

/**
 * Webhooks (docs/reference.md, "Webhooks"): attempts at once, then 1 min, 5 min, 30 min and
 * 2 h after each failure (5 in all); after the last the event is ABANDONED.
 */
export const WEBHOOK_BACKOFF_SECONDS = [60, 300, 1800, 7200] as const;

export interface WebhookPayload {
  eventId: number;
  /** Written by a redelivery or a recovery: its first attempt is a manual one, made whatever the event's status. */
  manual?: boolean;
}

/** The webhook body; its serialized bytes are stored and sent unchanged on every attempt. */
export function webhookBody(invoice: Invoice, event: WebhookEventName, now: number): Record<string, unknown> {
  return {
    event,
    billId: invoice.unique_id,
    requestId: invoice.request_id ?? null,
    transSeqNo: invoice.trans_seqno,
    status: event === 'bill.paid' ? 'DONE' : 'CANCELED',
    amount: Number(invoice.amount),
    reason: invoice.reason,
    paidAt: kstIsoOrNull(invoice.done_at),
    canceledAt: kstIsoOrNull(invoice.canceled_at),
    occurredAt: kstIso(now),
  };
}

/**
 * Writes the webhook event and its delivery job in the caller's transaction (the state change
 * and the event it causes commit together). Called twice for the same invoice and event, it
 * does nothing the second time: the event exists once.
 */
export async function recordWebhookEvent(trx: Transaction<Database>, invoice: Invoice, event: WebhookEventName, now: number): Promise<void> {
  // The store's own endpoints that listen to this event (besides the invoice's webhookUrl).
  await recordStoreEvent(trx, {
    storeCode: invoice.store_code, event, key: `${event}:${invoice.id}`, body: webhookBody(invoice, event, now), transSeqNo: invoice.trans_seqno, billId: invoice.unique_id, now,
  });
  if (!invoice.webhook_url) return;
  const body = JSON.stringify(webhookBody(invoice, event, now));
  const eventId = await repo.insertWebhookEvent(trx, { invoiceId: invoice.id, accountId: invoice.account_id, event, url: invoice.webhook_url, body, now });
  if (eventId === undefined) return;
  await ensureDelivery(trx, webhookDelivery({ id: eventId, event, url: invoice.webhook_url, body, store_code: invoice.store_code, unique_id: invoice.unique_id, trans_seqno: invoice.trans_seqno }, now));
  await enqueue(trx, WEBHOOK_JOB, { eventId }, { runAt: now, uniqueKey: `webhook:${eventId}`, now, storeCode: invoice.store_code });
}

/** The headers every attempt carries besides the signature, which the delivery log leaves out. */
function webhookHeaders(ev: { id: number; event: string }): Record<string, string> {
  return { 'content-type': 'application/json', 'x-service-event': ev.event, 'x-service-delivery': String(ev.id) };
}

/** The event's delivery (the request as sent); its number is the X-Service-Delivery header. */
function webhookDelivery(ev: { id: number; event: string; url: string; body: string; store_code: string | null; unique_id: string | null; trans_seqno: string | null }, now: number) {
  return {
    storeCode: ev.store_code ?? '', kind: 'webhook' as const, number: String(ev.id), refId: String(ev.id), billId: ev.unique_id, transSeqNo: ev.trans_seqno,
    event: ev.event, url: ev.url, headers: withAliases(webhookHeaders(ev)), body: ev.body, now,
  };
}

/**
 * Delivers one webhook event: the stored body bytes, signed at send time, through deliver()
 * (time limit, no redirects, private targets refused, every attempt recorded).
 */
export interface WebhookDeps {
  db: Kysely<Database>;
  http: HttpOut;
  clock: Clock;
  box: SecretBox;
}

/**
 * Every X-Service-* header again under its X-CariPay-* name, with the same value: receivers
 * written for the public client SDKs read the X-CariPay-* names (docs/reference.md, "Webhooks").
 */
export function withAliases(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('x-service-')) out[`x-caripay-${name.slice('x-service-'.length)}`] = value;
  }
  return out;
}

export const WEBHOOK_JOB: JobDefinition<WebhookPayload, WebhookDeps> = defineJob({
  kind: 'invoicing.webhook',
  backoffSeconds: WEBHOOK_BACKOFF_SECONDS,
  async run({ eventId, manual }: WebhookPayload, { db, http, clock, box }: WebhookDeps, job) {
    const ev = await repo.webhookForDelivery(db, eventId);
    if (!ev) return;
    // Already settled by an earlier run (a job may run twice after a crash): nothing to send.
    // A redelivery or recovery sends again, whatever the status.
    if (!manual && ev.status !== 'PENDING') return;
    // A job written before deliveries existed makes its delivery on its first run.
    const d = (await deliveryByRef(db, 'webhook', String(ev.id))) ?? (await ensureDelivery(db, webhookDelivery(ev, clock.nowMs())));
    const body = Buffer.from(ev.body, 'utf8');
    const headers = webhookHeaders(ev);
    const attempt = {
      jobId: job.jobId, target: 'WEBHOOK' as const, refId: String(ev.id), attemptNo: job.attempt, url: ev.url,
      of: { deliveryId: d.id, trigger: manual && job.attempt === 1 ? ('manual' as const) : ('scheduled' as const), final: job.final },
    };
    try {
      if (ev.webhook_secret_sealed) {
        let secret: string;
        try {
          secret = box.open(ev.webhook_secret_sealed);
        } catch (err) {
          // Never send unsigned what the partner expects signed; keep the failure visible with the other attempts.
          await recordAttempt(db, { ...attempt, now: clock.nowMs(), statusCode: null, durationMs: 0, error: `not sent: the webhook secret cannot be opened (${(err as Error).message})`.slice(0, 300) });
          throw err;
        }
        // Wall-clock time on purpose: receivers check t against their own clocks, so a moved
        // sandbox clock must not make every signature look stale.
        headers['x-service-signature'] = webhookSignature(secret, Math.floor(Date.now() / 1000), body);
      }
      await deliver(db, http, { ...attempt, body, headers: withAliases(headers), now: clock.nowMs() });
    } catch (err) {
      await repo.settleWebhookEvent(db, ev.id, job.final ? 'ABANDONED' : 'PENDING', job.attempt, clock.nowMs());
      throw err;
    }
    if (!(await repo.settleWebhookEvent(db, ev.id, 'DELIVERED', job.attempt, clock.nowMs())) && manual) {
      await repo.reviveWebhookEvent(db, ev.id, clock.nowMs());
    }
  },
});
