import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/index.js';
import { eventually } from './wait.js';

/**
 * Waits until the worker has let go of the job under `uniqueKey` after attempt `attempts`
 * (`callback:<paymentId>`, `send:<sendId>`, `webhook:<eventId>`, ...). What a test can see of
 * an attempt (the receiver's request, the attempt row) comes before the job's next run time is
 * written, so a test that moves the clock in between would have the retry scheduled from the
 * moved clock, and not due when it expects it.
 */
export function jobSettled(db: Kysely<Database>, uniqueKey: string, attempts: number): Promise<true> {
  return eventually(async () => {
    const j = await db.selectFrom('jobs').select(['attempts', 'lease_owner']).where('unique_key', '=', uniqueKey).executeTakeFirst();
    return j !== undefined && j.attempts === attempts && j.lease_owner === null;
  }, `job ${uniqueKey}: attempt ${attempts} settled`);
}
