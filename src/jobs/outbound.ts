import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { HttpOut } from '../ports/http-out.js';
import { settleDelivery } from './delivery-repository.js';
import type { AttemptTrigger, OutboundTarget } from './job-state.js';
import { recordOutboundAttempt } from './repository.js';

/** The delivery an attempt belongs to, and whether this is its job's last try. */
export interface AttemptOf {
  deliveryId: string;
  trigger: AttemptTrigger;
  final: boolean;
}

/** A failed outbound attempt; `retryAfterMs` when the receiver asked for a pause (429/503 with Retry-After). */
export class OutboundFailure extends Error {
  override name = 'OutboundFailure';
  constructor(message: string, readonly status: number | null, readonly retryAfterMs: number | null) {
    super(message);
  }
}

/** Retry-After as seconds or as an HTTP date, in ms from `nowWall`; null when absent or unreadable. */
export function retryAfterMs(value: string | undefined, nowWall: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowWall);
}

/**
 * One outbound POST (callback or webhook), recorded whatever happens: the attempt and the
 * delivery's new status commit together. Resolves when the receiver answered 2xx; otherwise
 * throws an OutboundFailure, which makes the job retry on its schedule.
 */
export async function deliver(
  db: Kysely<Database>,
  http: HttpOut,
  a: { jobId: string; target: OutboundTarget; refId: string; attemptNo: number; url: string; body: Buffer; headers: Record<string, string>; now: number; of?: AttemptOf },
): Promise<void> {
  const started = Date.now();
  let status: number | null = null;
  let error: string | null = null;
  let responseBody: string | null = null;
  let pause: number | null = null;
  try {
    // The time limit is the port's own (SUNAP_OUTBOUND_TIMEOUT_MS, 10 s by default).
    const answer = await http.post(a.url, a.body, a.headers);
    status = answer.status;
    responseBody = answer.body ?? null;
    if (status < 200 || status >= 300) error = status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`;
    if (status === 429 || status === 503) pause = retryAfterMs(answer.retryAfter, Date.now());
  } catch (err) {
    error = (err as Error).message.slice(0, 300) || 'connection failed';
  }
  await recordAttempt(db, { ...a, statusCode: status, error, durationMs: Date.now() - started, responseBody });
  if (error) throw new OutboundFailure(error, status, pause);
}

/** An attempt, recorded with its delivery's new status in one transaction; also for one that never reached the network. */
export async function recordAttempt(
  db: Kysely<Database>,
  a: { jobId: string; target: OutboundTarget; refId: string; attemptNo: number; url: string; now: number; statusCode: number | null; error: string | null; durationMs: number; responseBody?: string | null; of?: AttemptOf },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // An attempt of a delivery is numbered in the delivery's one sequence, not its job's (a
    // redelivery's job counts from 1 again); the count and the attempt commit together.
    const attemptNo = (a.of ? await settleDelivery(trx, a.of.deliveryId, { ok: a.error === null, final: a.of.final, now: a.now }) : 0) || a.attemptNo;
    await recordOutboundAttempt(trx, {
      jobId: a.jobId, target: a.target, refId: a.refId, attemptNo, url: a.url, statusCode: a.statusCode,
      error: a.error, durationMs: a.durationMs, at: a.now, deliveryId: a.of?.deliveryId ?? null, trigger: a.of?.trigger ?? 'scheduled',
      responseBody: a.responseBody ?? null,
    });
  });
}
