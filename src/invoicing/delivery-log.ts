import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { CALLBACK_JOB, ENDPOINT_JOB, endpointState } from '../gateway/index.js';
import { enqueue, type JobDefinition } from '../jobs/define.js';
import * as deliveries from '../jobs/delivery-repository.js';
import type { Delivery, DeliveryAttempt, DeliveryFilter } from '../jobs/delivery-repository.js';
import { isFailing, type DeliveryKind, type DeliveryState } from '../jobs/job-state.js';
import { bringForward, pendingJobsWithPayload } from '../jobs/repository.js';
import type { Clock } from '../platform/clock.js';
import { AppError } from '../platform/errors.js';
import { kstIso, kstIsoOrNull } from '../platform/kst.js';
import { WEBHOOK_JOB } from './webhooks.js';

/** Page size of the delivery list when none is asked for, and the most one page holds. */
export const DELIVERY_PAGE_SIZE = 20;
/** Most failing deliveries one recovery re-queues; call again for the rest. */
export const RECOVER_MAX = 1000;
/** Most failing deliveries one recovery looks at (re-queued or skipped); `more` says when some were left. */
export const RECOVER_SCAN_MAX = 5 * RECOVER_MAX;
/** The overview counts the failing deliveries made in the last 7 days; recovery's console form starts there too. */
export const FAILING_WINDOW_MS = 7 * 86_400_000;

/**
 * Why recovery left a failing delivery alone: delivered meanwhile (by its own retry or a
 * redelivery), its next attempt already due or under way (another recovery or the schedule got
 * there first), its store endpoint turned off or removed (enable it, then send it again).
 */
export const SKIP_REASONS = ['delivered', 'on_its_way', 'endpoint_disabled', 'endpoint_removed'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface RecoverResult {
  requeued: number;
  more: boolean;
  skipped: { id: string; number: string; kind: DeliveryKind; event: string | null; reason: SkipReason }[];
}

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
  /** Failing ones only (isFailing): failed, or retrying after a failure; the console's "실패". */
  failing?: boolean;
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
      kind: q.kind, status: q.status, failing: q.failing, transSeqNo: q.transSeqNo, billId: q.billId, limit, failedFirst: q.failedFirst,
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

  /** How many of the store's deliveries made since `since` are failing (isFailing), by kind: the overview's count. */
  failing(storeCode: string, since: number): Promise<{ callback: number; webhook: number; endpoint: number }> {
    return deliveries.countFailing(this.db, storeCode, since);
  }

  /**
   * Re-queues every failing delivery (isFailing) of the store made since `since`, at most
   * RECOVER_MAX a call: a failed one becomes pending with a manual attempt queued; one still
   * being retried has its next attempt brought forward to now (no second job). Each in its own
   * transaction, the status and its job together, every step a compare-and-set, so two
   * recoveries at once re-queue a delivery once: the other skips it as on its way.
   */
  async recover(storeCode: string, since: string): Promise<RecoverResult> {
    const from = parseSince(since);
    const now = this.deps.clock.nowMs();
    let requeued = 0;
    let examined = 0;
    let more = false;
    const skipped: RecoverResult['skipped'] = [];
    // Page by page, oldest first: what is skipped (already on its way) does not count against
    // RECOVER_MAX, so it cannot crowd a later failed one out of every call; the scan itself stops
    // at RECOVER_SCAN_MAX rows.
    let after: { createdAt: number; id: string } | undefined;
    for (;;) {
      const page = await deliveries.failingSince(this.db, storeCode, from, RECOVER_MAX, after);
      for (const listed of page) {
        if (requeued === RECOVER_MAX || examined === RECOVER_SCAN_MAX) {
          more = true;
          break;
        }
        examined++;
        const outcome = await this.requeue(storeCode, listed.id, now);
        if (outcome === 'requeued') requeued++;
        else skipped.push({ id: listed.id, number: listed.number, kind: listed.kind, event: listed.event, reason: outcome });
      }
      if (more || page.length < RECOVER_MAX) break;
      const last = page[page.length - 1]!;
      after = { createdAt: Number(last.created_at), id: last.id };
    }
    if (requeued > 0) this.deps.wake();
    return { requeued, more, skipped };
  }

  /** One failing delivery re-queued in its own transaction, or why not. */
  private requeue(storeCode: string, id: string, now: number): Promise<SkipReason | 'requeued'> {
    return this.db.transaction().execute(async (trx): Promise<SkipReason | 'requeued'> => {
      const d = (await deliveries.deliveryOfStore(trx, storeCode, id))!;
      if (!isFailing(d)) return d.status === 'delivered' ? 'delivered' : 'on_its_way';
      if (d.endpoint_id) {
        const state = await endpointState(trx, storeCode, d.endpoint_id);
        if (state !== 'enabled') return state === 'removed' ? 'endpoint_removed' : 'endpoint_disabled';
      }
      if (d.status === 'failed') {
        if (!(await deliveries.reopenDelivery(trx, storeCode, d.id, now))) return 'on_its_way';
        await this.enqueueManual(trx, d, now);
        return 'requeued';
      }
      // Retrying: its waiting job is brought forward; none waiting (its job ended without
      // settling it) gets a manual one, once per attempt count (the unique key), so a
      // concurrent recovery cannot add a second.
      const job = jobOf(d);
      const waiting = await pendingJobsWithPayload(trx, job.def.kind, [JSON.stringify(job.payload(false)), JSON.stringify(job.payload(true))]);
      if (waiting.length > 0) return (await bringForward(trx, waiting[0]!.id, now)) ? 'requeued' : 'on_its_way';
      return (await this.enqueueManual(trx, d, now, `recover:${d.id}:${d.attempts}`)) ? 'requeued' : 'on_its_way';
    });
  }

  private enqueueManual(trx: Parameters<typeof enqueue>[0], d: Delivery, now: number, uniqueKey?: string): Promise<boolean> {
    const job = jobOf(d);
    return enqueue(trx, job.def, job.payload(true), { runAt: now, now, storeCode: d.store_code, ...(uniqueKey ? { uniqueKey } : {}) });
  }

  private async find(storeCode: string, id: string): Promise<Delivery> {
    const d = await deliveries.deliveryOfStore(this.db, storeCode, id);
    if (!d) throw new AppError('NOT_FOUND', 'delivery: not found');
    return d;
  }
}

/** The job that sends a delivery, and its payload as enqueue writes it (scheduled, or manual). */
function jobOf(d: Delivery): { def: JobDefinition<object, never>; payload: (manual: boolean) => object } {
  const m = (manual: boolean) => (manual ? { manual: true } : {});
  if (d.endpoint_id) return { def: ENDPOINT_JOB as JobDefinition<object, never>, payload: (manual) => ({ deliveryId: d.id, ...m(manual) }) };
  if (d.kind === 'callback') return { def: CALLBACK_JOB as JobDefinition<object, never>, payload: (manual) => ({ paymentId: d.ref_id, ...m(manual) }) };
  return { def: WEBHOOK_JOB as JobDefinition<object, never>, payload: (manual) => ({ eventId: Number(d.ref_id), ...m(manual) }) };
}
