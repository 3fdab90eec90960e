import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { CALLBACK_JOB, ENDPOINT_JOB } from '../gateway/index.js';
import { enqueue } from '../jobs/define.js';
import * as deliveries from '../jobs/delivery-repository.js';
import type { Delivery, DeliveryAttempt, DeliveryFilter } from '../jobs/delivery-repository.js';
import type { DeliveryKind, DeliveryState } from '../jobs/job-state.js';
import type { Clock } from '../platform/clock.js';
import { AppError } from '../platform/errors.js';
import { kstIso, kstIsoOrNull } from '../platform/kst.js';
import { WEBHOOK_JOB } from './webhooks.js';

/** Page size of the delivery list when none is asked for, and the most one page holds. */
export const DELIVERY_PAGE_SIZE = 20;
/** Most failed deliveries one recovery re-queues; call again for the rest. */
export const RECOVER_MAX = 1000;

export interface DeliveryView {
  id: string;
  kind: DeliveryKind;
  number: string;
  status: DeliveryState;
  event: string | null;
  endpointId: string | null;
  transSeqNo: string | null;
  billId: string | null;
  url: string;
  attempts: number;
  lastAttemptAt: string | null;
  createdAt: string;
}

export interface AttemptView {
  at: string;
  trigger: 'scheduled' | 'manual';
  attemptNo: number;
  statusCode: number | null;
  durationMs: number;
  responseBody: string | null;
  error: string | null;
}

export interface DeliveryDetail extends DeliveryView {
  request: { url: string; headers: Record<string, string>; body: string };
  attemptLog: AttemptView[];
}

export interface DeliveryQuery {
  kind?: DeliveryKind;
  status?: DeliveryState;
  since?: string;
  transSeqNo?: string;
  billId?: string;
  cursor?: string;
  size?: string;
}

export function deliveryView(d: Delivery): DeliveryView {
  return {
    id: d.id, kind: d.kind, number: d.number, status: d.status, event: d.event, endpointId: d.endpoint_id, transSeqNo: d.trans_seqno, billId: d.bill_id, url: d.url,
    attempts: d.attempts, lastAttemptAt: kstIsoOrNull(d.last_attempt_at), createdAt: kstIso(d.created_at),
  };
}

export function attemptView(a: DeliveryAttempt): AttemptView {
  return {
    at: kstIso(a.created_at), trigger: a.trigger, attemptNo: a.attempt_no, statusCode: a.status_code, durationMs: a.duration_ms,
    responseBody: a.response_body, error: a.error,
  };
}

/** `YYYY-MM-DDThh:mm`, optional seconds and milliseconds (1 to 3 digits), then Z, ±hh:mm or nothing. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?([zZ]|[+-]\d{2}:\d{2})?$/;

/** `since`: an ISO 8601 date-time; without an offset it is read as KST (the time zone of every time the API shows). */
export function parseSince(s: string, field = 'since'): number {
  // The whole value is checked here, not left to Date.parse, which also takes looser forms
  // ("Nov 22 2026", more than three digits of a second).
  const m = ISO_DATE_TIME.exec(s);
  const ms = m ? Date.parse(m[1] ? s : `${s}+09:00`) : NaN;
  if (Number.isNaN(ms)) throw new AppError('VALIDATION', `${field}: must be an ISO 8601 date-time such as 2026-11-22T09:00:00+09:00`);
  return ms;
}

function encodeCursor(d: Delivery): string {
  return Buffer.from(`${d.created_at}:${d.id}`).toString('base64url');
}

function decodeCursor(c: string): { createdAt: number; id: string } {
  const m = /^(\d{1,16}):(dlv_[0-9a-f]{32})$/.exec(Buffer.from(c, 'base64url').toString('utf8'));
  if (!m) throw new AppError('VALIDATION', 'cursor: not a cursor this list returned');
  return { createdAt: Number(m[1]), id: m[2]! };
}

/**
 * The delivery log of a store (docs/reference.md, "Deliveries"): its callbacks and webhooks,
 * each with the request as sent and every attempt; redelivery and recovery. Every call is
 * scoped to the caller's store: another store's delivery is not found.
 */
export class DeliveryLog {
  constructor(private readonly db: Kysely<Database>, private readonly deps: { clock: Clock; wake: () => void }) {}

  async list(storeCode: string, q: DeliveryQuery & { failedFirst?: boolean }): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null }> {
    const limit = q.size ? Number(q.size) : DELIVERY_PAGE_SIZE;
    const f: DeliveryFilter = {
      kind: q.kind, status: q.status, transSeqNo: q.transSeqNo, billId: q.billId, limit, failedFirst: q.failedFirst,
      ...(q.since ? { since: parseSince(q.since) } : {}), ...(q.cursor ? { after: decodeCursor(q.cursor) } : {}),
    };
    // Failed-first pages (the console) are not keyset-paged: they show the first page only.
    const rows = await deliveries.listDeliveries(this.db, storeCode, f);
    const page = rows.slice(0, limit);
    return { deliveries: page.map(deliveryView), nextCursor: rows.length > limit && !q.failedFirst ? encodeCursor(page[page.length - 1]!) : null };
  }

  async detail(storeCode: string, id: string): Promise<DeliveryDetail> {
    const d = await this.find(storeCode, id);
    const attempts = await deliveries.attemptsOf(this.db, storeCode, d.id);
    return { ...deliveryView(d), request: { url: d.url, headers: JSON.parse(d.request_headers) as Record<string, string>, body: d.body }, attemptLog: attempts.map(attemptView) };
  }

  /**
   * A new manual attempt of one delivery, whatever its status: same number and body, signed
   * afresh when sent. A failed delivery is pending again until the attempt settles it.
   */
  async redeliver(storeCode: string, id: string): Promise<DeliveryView> {
    const d = await this.find(storeCode, id);
    const now = this.deps.clock.nowMs();
    await this.db.transaction().execute(async (trx) => {
      await deliveries.reopenDelivery(trx, storeCode, d.id, now);
      await this.enqueueManual(trx, d, now);
    });
    this.deps.wake();
    return deliveryView((await deliveries.deliveryOfStore(this.db, storeCode, d.id))!);
  }

  /** Re-queues every failed delivery of the store created since `since` (at most RECOVER_MAX a call). */
  async recover(storeCode: string, since: string): Promise<{ requeued: number; more: boolean }> {
    const from = parseSince(since);
    const now = this.deps.clock.nowMs();
    const failed = await deliveries.failedSince(this.db, storeCode, from, RECOVER_MAX + 1);
    let requeued = 0;
    for (const d of failed.slice(0, RECOVER_MAX)) {
      // One transaction each: the status and its job commit together; one that another
      // recovery or redelivery reopened meanwhile is left to that one.
      const done = await this.db.transaction().execute(async (trx) => {
        if (!(await deliveries.reopenDelivery(trx, storeCode, d.id, now))) return false;
        await this.enqueueManual(trx, d, now);
        return true;
      });
      if (done) requeued++;
    }
    if (requeued > 0) this.deps.wake();
    return { requeued, more: failed.length > RECOVER_MAX };
  }

  private async enqueueManual(trx: Parameters<typeof enqueue>[0], d: Delivery, now: number): Promise<void> {
    if (d.endpoint_id) await enqueue(trx, ENDPOINT_JOB, { deliveryId: d.id, manual: true }, { runAt: now, now, storeCode: d.store_code });
    else if (d.kind === 'callback') await enqueue(trx, CALLBACK_JOB, { paymentId: d.ref_id, manual: true }, { runAt: now, now, storeCode: d.store_code });
    else await enqueue(trx, WEBHOOK_JOB, { eventId: Number(d.ref_id), manual: true }, { runAt: now, now, storeCode: d.store_code });
  }

  private async find(storeCode: string, id: string): Promise<Delivery> {
    const d = await deliveries.deliveryOfStore(this.db, storeCode, id);
    if (!d) throw new AppError('NOT_FOUND', 'delivery: not found');
    return d;
  }
}
