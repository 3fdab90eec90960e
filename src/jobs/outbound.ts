import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { HttpOut } from '../ports/http-out.js';
import type { OutboundTarget } from './job-state.js';
import { recordOutboundAttempt } from './repository.js';

/**
 * One outbound POST (callback or webhook), recorded whatever happens. Resolves when the
 * receiver answered 2xx; otherwise throws, which makes the job retry on its schedule.
 */
export async function deliver(
  db: Kysely<Database>,
  http: HttpOut,
  a: { jobId: string; target: OutboundTarget; refId: string; attemptNo: number; url: string; body: Buffer; headers: Record<string, string>; now: number },
): Promise<void> {
  const started = Date.now();
  let status: number | null = null;
  let error: string | null = null;
  try {
    // The time limit is the port's own (SUNAP_OUTBOUND_TIMEOUT_MS, 10 s by default).
    status = (await http.post(a.url, a.body, a.headers)).status;
    if (status < 200 || status >= 300) error = status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`;
  } catch (err) {
    error = (err as Error).message.slice(0, 300) || 'connection failed';
  }
  await recordAttempt(db, { ...a, statusCode: status, error, durationMs: Date.now() - started });
  if (error) throw new Error(error);
}

/** An attempt that never reached the network (e.g. its secret could not be opened), kept beside the others. */
export async function recordAttempt(
  db: Kysely<Database>,
  a: { jobId: string; target: OutboundTarget; refId: string; attemptNo: number; url: string; now: number; statusCode: number | null; error: string | null; durationMs: number },
): Promise<void> {
  await recordOutboundAttempt(db, {
    jobId: a.jobId, target: a.target, refId: a.refId, attemptNo: a.attemptNo, url: a.url, statusCode: a.statusCode,
    error: a.error, durationMs: a.durationMs, at: a.now,
  });
}
