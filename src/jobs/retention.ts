import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { defineJob, enqueue, type JobDefinition } from './define.js';
import { pruneAttempts } from './delivery-repository.js';

const DAY_MS = 86_400_000;

export interface RetentionDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** SUNAP_DELIVERY_RETENTION_DAYS. */
  retentionDays: number;
  onPruned?: (n: number) => void;
}

/**
 * Retention of the delivery log: once a day (service clock), the outbound attempts older than
 * SUNAP_DELIVERY_RETENTION_DAYS (30 by default) are deleted, answers and all; the deliveries
 * themselves stay, with their status and attempt count. The day's run is written by
 * startRetention (at start, then hourly), once per day over every instance.
 */
export const PRUNE_JOB: JobDefinition<Record<string, never>, RetentionDeps> = defineJob({
  kind: 'jobs.prune-attempts',
  backoffSeconds: [300, 3600],
  housekeeping: true,
  async run(_payload, { db, clock, retentionDays, onPruned }) {
    const now = clock.nowMs();
    const n = await pruneAttempts(db, now - retentionDays * DAY_MS);
    onPruned?.(n);
  },
});

/** The prune run of the day of `runAt`; once per day whatever the number of instances (its unique key). */
export async function schedulePrune(db: Kysely<Database>, runAt: number, now: number): Promise<void> {
  await enqueue(db, PRUNE_JOB, {}, { runAt, uniqueKey: `prune-attempts:${Math.floor(runAt / DAY_MS)}`, now });
}

/** How often an instance checks that the day's prune run is written. */
const RETENTION_CHECK_MS = 3600_000;

/** Writes the day's prune run now and every hour; returns the function that stops it. */
export function startRetention(d: { db: Kysely<Database>; clock: Clock; wake: () => void; onError: (err: Error) => void }): () => void {
  const tick = () => void schedulePrune(d.db, d.clock.nowMs(), d.clock.nowMs()).then(d.wake, d.onError);
  tick();
  const timer = setInterval(tick, RETENTION_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
