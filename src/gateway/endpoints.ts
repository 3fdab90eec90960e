import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import { deliveryById, ensureDelivery, failDelivery, newDeliveryId } from '../jobs/delivery-repository.js';
import { deliver, OutboundFailure, recordAttempt } from '../jobs/outbound.js';
import type { Clock } from '../platform/clock.js';
import { newId, newWebhookSecret, standardWebhookSignature, webhookSignature, type SecretBox } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import { kstIso, kstIsoOrNull } from '../platform/kst.js';
import type { HttpOut } from '../ports/http-out.js';
import * as repo from './endpoints-repository.js';
import type { Endpoint } from './endpoints-repository.js';
import type { PaymentListener } from './context.js';
import type { Payment } from './repository.js';

/**
 * A store's webhook endpoints (docs/reference.md, "Webhook endpoints"): besides an invoice's
 * own webhookUrl, a store may register endpoints for events; each delivery carries the
 * Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) and the
 * X-Service-* ones, and is logged as a delivery like any other.
 */
export const ENDPOINT_EVENTS = ['bill.paid', 'bill.canceled', 'payment.approved', 'payment.canceled'] as const;
export type EndpointEvent = (typeof ENDPOINT_EVENTS)[number];
/** The event "Send a test event" delivers. */
export const TEST_EVENT = 'webhook.test';
export const MAX_ENDPOINTS = 10;
/** How many times a rotation reads again after another rotation got in first, before it gives up. */
const ROTATION_TURNS = 5;
/** After a rotation the old secret signs beside the new one this long. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
/** An endpoint whose every attempt failed this long is disabled. */
export const FAILING_DISABLE_MS = 3 * 86_400_000;
export const ENDPOINT_BACKOFF_SECONDS = [60, 300, 1800, 7200] as const;

export interface EndpointView {
  id: string;
  url: string;
  events: EndpointEvent[];
  enabled: boolean;
  disabledReason: string | null;
  /** True while a rotated-out secret still signs beside the current one. */
  rotating: boolean;
  failingSince: string | null;
  createdAt: string;
}

export function endpointView(e: Endpoint, now: number): EndpointView {
  return {
    id: e.id, url: e.url, events: JSON.parse(e.events) as EndpointEvent[], enabled: e.enabled === 1, disabledReason: e.disabled_reason,
    rotating: e.old_secret_sealed !== null && (e.old_secret_until ?? 0) > now, failingSince: kstIsoOrNull(e.failing_since), createdAt: kstIso(e.created_at),
  };
}

/** The body of a payment event. */
export function paymentEventBody(p: Payment, event: 'payment.approved' | 'payment.canceled', now: number): Record<string, unknown> {
  return {
    event, transSeqNo: p.trans_seqno, storeCode: p.store_code, amount: Number(p.amount), approvalNumber: p.approval_number,
    approvedAt: kstIsoOrNull(p.approval_at), canceledAt: kstIsoOrNull(p.cancel_at), occurredAt: kstIso(now),
  };
}

/**
 * Writes one delivery (and its job) per enabled endpoint of the store that listens to the
 * event, in the caller's transaction: the state change and its webhooks commit together.
 * `key` names the cause (e.g. `bill.paid:42`), so the same cause is delivered once per endpoint.
 */
export async function recordStoreEvent(
  trx: Transaction<Database>,
  e: { storeCode: string; event: EndpointEvent; key: string; body: Record<string, unknown>; transSeqNo?: string | null; billId?: string | null; now: number },
): Promise<void> {
  for (const ep of await repo.enabledEndpointsOfStore(trx, e.storeCode)) {
    if (!(JSON.parse(ep.events) as string[]).includes(e.event)) continue;
    await endpointDelivery(trx, ep, { ...e, refId: `${ep.id}/${e.key}` });
  }
}

async function endpointDelivery(
  trx: Kysely<Database> | Transaction<Database>, ep: Endpoint,
  e: { event: string; refId: string; body: Record<string, unknown>; transSeqNo?: string | null; billId?: string | null; now: number },
): Promise<string> {
  // The delivery's own id doubles as webhook-id (the number the receiver deduplicates by).
  const number = `msg_${newId().replace(/-/g, '')}`;
  const d = await ensureDelivery(trx, {
    storeCode: ep.store_code, kind: 'webhook', number, refId: e.refId, transSeqNo: e.transSeqNo ?? null, billId: e.billId ?? null, event: e.event,
    endpointId: ep.id, url: ep.url, headers: endpointHeaders(e.event, number), body: JSON.stringify(e.body), now: e.now,
  });
  await enqueue(trx, ENDPOINT_JOB, { deliveryId: d.id }, { runAt: e.now, uniqueKey: `endpoint:${d.id}`, now: e.now, storeCode: ep.store_code });
  return d.id;
}

/** The X-CariPay-* names beside X-Service-*, same values, as on every Sunap delivery (docs/reference.md, "Webhooks"). */
function endpointHeaders(event: string, number: string): Record<string, string> {
  return {
    'content-type': 'application/json', 'webhook-id': number,
    'x-service-event': event, 'x-service-delivery': number, 'x-caripay-event': event, 'x-caripay-delivery': number,
  };
}

/** payment.approved and payment.canceled, from the gateway's own listeners. */
export function endpointListener(): PaymentListener {
  return {
    onApproved: (trx, p) => recordStoreEvent(trx, {
      storeCode: p.store_code, event: 'payment.approved', key: `payment.approved:${p.id}`, body: paymentEventBody(p, 'payment.approved', Number(p.approval_at ?? p.updated_at)),
      transSeqNo: p.trans_seqno, now: Number(p.updated_at),
    }),
    onCanceled: (trx, p) => recordStoreEvent(trx, {
      storeCode: p.store_code, event: 'payment.canceled', key: `payment.canceled:${p.id}`, body: paymentEventBody(p, 'payment.canceled', Number(p.cancel_at ?? p.updated_at)),
      transSeqNo: p.trans_seqno, now: Number(p.updated_at),
    }),
  };
}

export interface EndpointDeps {
  db: Kysely<Database>;
  http: HttpOut;
  clock: Clock;
  box: SecretBox;
}

export interface EndpointPayload {
  deliveryId: string;
  manual?: boolean;
}

/**
 * One attempt of an endpoint delivery: the stored body, signed afresh with the endpoint's
 * secret (and the rotated-out one while it still signs). 410 Gone disables the endpoint and
 * ends the delivery; an endpoint whose every attempt failed for 3 days is disabled.
 */
export const ENDPOINT_JOB: JobDefinition<EndpointPayload, EndpointDeps> = defineJob({
  kind: 'gateway.endpoint-webhook',
  backoffSeconds: ENDPOINT_BACKOFF_SECONDS,
  async run({ deliveryId, manual }: EndpointPayload, { db, http, clock, box }: EndpointDeps, job) {
    const d = await deliveryById(db, deliveryId);
    if (!d || !d.endpoint_id) return;
    if (!manual && d.status !== 'pending') return;
    const ep = await repo.endpointById(db, d.endpoint_id);
    const now = clock.nowMs();
    const of = { deliveryId: d.id, trigger: manual && job.attempt === 1 ? ('manual' as const) : ('scheduled' as const), final: job.final };
    const attempt = { jobId: job.jobId, target: 'WEBHOOK' as const, refId: d.id, attemptNo: job.attempt, url: d.url, of };
    if (!ep || ep.enabled !== 1) {
      await recordAttempt(db, { ...attempt, of: { ...of, final: true }, now, statusCode: null, durationMs: 0, error: ep ? 'not sent: the endpoint is disabled' : 'not sent: the endpoint was removed' });
      return;
    }
    const body = Buffer.from(d.body, 'utf8');
    // Wall-clock time on purpose: receivers check the timestamp against their own clocks.
    const ts = Math.floor(Date.now() / 1000);
    const secrets = [box.open(ep.secret_sealed)];
    if (ep.old_secret_sealed && (ep.old_secret_until ?? 0) > now) secrets.push(box.open(ep.old_secret_sealed));
    const headers: Record<string, string> = {
      ...(JSON.parse(d.request_headers) as Record<string, string>),
      'webhook-timestamp': String(ts),
      'webhook-signature': secrets.map((s) => standardWebhookSignature(s, d.number, ts, body)).join(' '),
      'x-service-signature': webhookSignature(secrets[0]!, ts, body),
    };
    headers['x-caripay-signature'] = headers['x-service-signature']!;
    try {
      await deliver(db, http, { ...attempt, body, headers, now });
    } catch (err) {
      if (err instanceof OutboundFailure && err.status === 410) {
        await repo.disableEndpoint(db, ep.id, 'the endpoint answered 410 Gone', now);
        await failDelivery(db, d.id, now);
        return;
      }
      const since = await repo.noteFailure(db, ep.id, now);
      if (now - since >= FAILING_DISABLE_MS) await repo.disableEndpoint(db, ep.id, 'every attempt failed for 3 days', now);
      throw err;
    }
    await repo.noteSuccess(db, ep.id);
  },
});

/** Whether a store's endpoint still takes deliveries: recovery skips a delivery whose endpoint is off or gone. */
export async function endpointState(db: Kysely<Database> | Transaction<Database>, storeCode: string, id: string): Promise<'enabled' | 'disabled' | 'removed'> {
  const ep = await repo.endpointOfStore(db, storeCode, id);
  return !ep ? 'removed' : ep.enabled === 1 ? 'enabled' : 'disabled';
}

/** A store's endpoints, as its account manages them (API and console). */
export class EndpointService {
  constructor(private readonly db: Kysely<Database>, private readonly deps: { clock: Clock; box: SecretBox; wake: () => void }) {}

  async list(storeCode: string): Promise<EndpointView[]> {
    const now = this.deps.clock.nowMs();
    return (await repo.endpointsOfStore(this.db, storeCode)).map((e) => endpointView(e, now));
  }

  async get(storeCode: string, id: string): Promise<EndpointView> {
    return endpointView(await this.find(storeCode, id), this.deps.clock.nowMs());
  }

  /** Registers an endpoint; the answer carries its secret, the only time it is shown. */
  async create(storeCode: string, input: { url: string; events: EndpointEvent[] }): Promise<EndpointView & { secret: string }> {
    const now = this.deps.clock.nowMs();
    const events = [...new Set(input.events)];
    if (events.length === 0) throw new AppError('VALIDATION', 'events: choose at least one event');
    if ((await repo.endpointsOfStore(this.db, storeCode)).length >= MAX_ENDPOINTS) throw new AppError('VALIDATION', `url: a store has at most ${MAX_ENDPOINTS} endpoints`);
    const secret = newWebhookSecret();
    const row: Endpoint = {
      id: `we_${newId().replace(/-/g, '')}`, store_code: storeCode, url: input.url, events: JSON.stringify(events), secret_sealed: this.deps.box.seal(secret),
      old_secret_sealed: null, old_secret_until: null, enabled: 1, disabled_reason: null, failing_since: null, created_at: now, updated_at: now,
    };
    await repo.insertEndpoint(this.db, row);
    return { ...endpointView(row, now), secret };
  }

  async update(storeCode: string, id: string, input: { url?: string; events?: EndpointEvent[]; enabled?: boolean }): Promise<EndpointView> {
    await this.find(storeCode, id);
    const now = this.deps.clock.nowMs();
    if (input.events && input.events.length === 0) throw new AppError('VALIDATION', 'events: choose at least one event');
    await repo.updateEndpoint(this.db, storeCode, id, {
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.events !== undefined ? { events: JSON.stringify([...new Set(input.events)]) } : {}),
      ...(input.enabled === true ? { enabled: 1, disabled_reason: null, failing_since: null } : input.enabled === false ? { enabled: 0, disabled_reason: 'disabled by the store' } : {}),
      updated_at: now,
    });
    return this.get(storeCode, id);
  }

  /** A new secret; the old one keeps signing beside it for 24 hours. The answer shows the new secret once. */
  async rotate(storeCode: string, id: string): Promise<EndpointView & { secret: string }> {
    const secret = newWebhookSecret();
    // Two rotations at once take turns, as if one came after the other: each replaces the secret it
    // read only if that is still the current one, else reads again. Without this the later write
    // would replace the earlier caller's secret, which would then never sign.
    for (let turn = 1; ; turn++) {
      const ep = await this.find(storeCode, id);
      const now = this.deps.clock.nowMs();
      const set = { secret_sealed: this.deps.box.seal(secret), old_secret_until: now + ROTATION_OVERLAP_MS, updated_at: now };
      if (await repo.rotateSecret(this.db, storeCode, id, ep.secret_sealed, set)) break;
      if (turn === ROTATION_TURNS) throw new AppError('STATE', 'endpoint: its secret is being rotated by another request; try again');
    }
    return { ...(await this.get(storeCode, id)), secret };
  }

  async remove(storeCode: string, id: string): Promise<void> {
    if (!(await repo.deleteEndpoint(this.db, storeCode, id))) throw new AppError('NOT_FOUND', 'endpoint: not found');
  }

  /** "Send a test event": a webhook.test delivery to this endpoint now; returns the delivery id. */
  async sendTest(storeCode: string, id: string): Promise<{ deliveryId: string }> {
    const ep = await this.find(storeCode, id);
    if (ep.enabled !== 1) throw new AppError('STATE', 'endpoint: disabled; enable it first');
    const now = this.deps.clock.nowMs();
    const deliveryId = await this.db.transaction().execute((trx) => endpointDelivery(trx, ep, {
      event: TEST_EVENT, refId: `${ep.id}/test:${newDeliveryId()}`, body: { event: TEST_EVENT, endpointId: ep.id, occurredAt: kstIso(now) }, now,
    }));
    this.deps.wake();
    return { deliveryId };
  }

  private async find(storeCode: string, id: string): Promise<Endpoint> {
    const ep = await repo.endpointOfStore(this.db, storeCode, id);
    if (!ep) throw new AppError('NOT_FOUND', 'endpoint: not found');
    return ep;
  }
}
