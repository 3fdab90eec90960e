import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { HttpOut } from '../ports/http-out.js';

/**
 * One outbound POST (callback or webhook), recorded whatever happens. Resolves when the
 * receiver answered 2xx; otherwise throws, which makes the job retry on its schedule.
 */
export async function deliver(
  db: Kysely<Database>,
  http: HttpOut,
  a: { jobId: string; target: 'CALLBACK' | 'WEBHOOK'; refId: string; attemptNo: number; url: string; body: Buffer; headers: Record<string, string>; now: number },
): Promise<void> {
  const started = Date.now();
  let status: number | null = null;
  let error: string | null = null;
  try {
    // The timeout is the port's own (SUNAP_OUTBOUND_TIMEOUT_MS, 10 s by default).
    status = (await http.post(a.url, a.body, a.headers)).status;
    if (status < 200 || status >= 300) error = status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`;
  } catch (err) {
    error = (err as Error).message.slice(0, 300) || 'connection failed';
  }
  await db.insertInto('outbound_attempts').values({
    job_id: a.jobId, target: a.target, ref_id: a.refId, attempt_no: a.attemptNo, url: a.url,
    status_code: status, error, duration_ms: Date.now() - started, created_at: a.now,
  }).execute();
  if (error) throw new Error(error);
}
