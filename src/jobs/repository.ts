import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Engine } from '../db/index.js';
import { newId } from '../platform/crypto.js';
import type { AttemptTrigger, JobStatus, OutboundTarget } from './job-state.js';

/** SQL of the job queue and of the outbound attempts it records. Jobs are not tenant data. */
type Db = Kysely<Database> | Transaction<Database>;

export interface ClaimedJob {
  id: string;
  kind: string;
  payload: string;
  /** Counting this claim. */
  attempts: number;
  max_attempts: number;
}

export async function insertJob(db: Db, j: { kind: string; payload: string; runAt: number; maxAttempts: number; uniqueKey: string | null; now: number; storeCode: string | null }): Promise<void> {
  const row = {
    id: newId(), kind: j.kind, payload: j.payload, status: 'PENDING' as const, run_at: j.runAt, lease_until: null, lease_owner: null,
    attempts: 0, max_attempts: j.maxAttempts, last_error: null, unique_key: j.uniqueKey, created_at: j.now, updated_at: j.now, store_code: j.storeCode,
  };
  const q = db.insertInto('jobs').values(row);
  await (j.uniqueKey ? q.onConflict((oc) => oc.column('unique_key').doNothing()) : q).execute();
}

/** Key of the PostgreSQL advisory lock that makes claims take turns (so the per-store limit holds across instances). */
const CLAIM_LOCK = 7_150_015;

/**
 * Leases up to `limit` due jobs of the given kinds to `owner` and counts the attempt. A job
 * of a store (store_code set: callbacks and webhooks) is claimed only while fewer than
 * `perStore` jobs of that store run, counting every instance's leases, so one store's slow
 * receivers hold at most `perStore` slots and the rest go to everyone else in due order.
 * Claims take turns: on PostgreSQL under a transaction-scoped advisory lock, on SQLite in one
 * IMMEDIATE transaction (the write lock serializes claimers); each is one short statement pair.
 * `due` is the service clock (what run_at follows); `wall` is real time (what leases follow).
 */
export async function claimJobs(db: Kysely<Database>, engine: Engine, c: { kinds: string[]; due: number; wall: number; leaseUntil: number; owner: string; limit: number; perStore: number }): Promise<ClaimedJob[]> {
  if (c.kinds.length === 0 || c.limit <= 0) return [];
  // rn: the job's place among its store's due jobs; busy: its store's jobs running now.
  const candidates = sql<{ id: string }>`
    select id from (
      select j.id, j.run_at, j.store_code,
        row_number() over (partition by j.store_code order by j.run_at, j.id) as rn,
        (select count(*) from jobs r where r.store_code = j.store_code and r.status = 'PENDING' and r.lease_until >= ${c.wall}) as busy
      from jobs j
      where j.status = 'PENDING' and j.run_at <= ${c.due} and (j.lease_until is null or j.lease_until < ${c.wall})
        and j.kind in (${sql.join(c.kinds)})
    ) c
    where c.store_code is null or c.rn + c.busy <= ${c.perStore}
    order by c.run_at, c.id
    limit ${c.limit}`;
  if (engine === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
      const r = await sql<ClaimedJob>`
        update jobs set lease_until = ${c.leaseUntil}, lease_owner = ${c.owner}, attempts = attempts + 1, updated_at = ${c.wall}
        where id in (${candidates})
        returning id, kind, payload, attempts, max_attempts`.execute(trx);
      return r.rows;
    });
  }
  return db.transaction().execute(async (trx) => {
    const ids = (await candidates.execute(trx)).rows.map((r) => r.id);
    if (ids.length === 0) return [];
    const rows = await trx.selectFrom('jobs').select(['id', 'kind', 'payload', 'attempts', 'max_attempts']).where('id', 'in', ids).orderBy('run_at').orderBy('id').execute();
    await trx.updateTable('jobs')
      .set((eb) => ({ lease_until: c.leaseUntil, lease_owner: c.owner, attempts: eb('attempts', '+', 1), updated_at: c.wall }))
      .where('id', 'in', ids).execute();
    return rows.map((r) => ({ ...r, attempts: r.attempts + 1 }));
  });
}

/** Pushes the leases of the owner's running jobs forward; returns how many it still holds. */
export async function renewLeases(db: Db, owner: string, ids: string[], leaseUntil: number): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.updateTable('jobs').set({ lease_until: leaseUntil })
    .where('id', 'in', ids).where('lease_owner', '=', owner).where('status', '=', 'PENDING').executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Ends an attempt the owner still holds: DONE, PENDING again at `runAt`, or DEAD. False when
 * the lease was lost meanwhile (another worker took the job over and decides its fate).
 */
export async function finishAttempt(db: Db, owner: string, id: string, f: { status: JobStatus; runAt?: number; error: string | null; wall: number }): Promise<boolean> {
  const r = await db.updateTable('jobs').set({
    status: f.status, ...(f.runAt !== undefined ? { run_at: f.runAt } : {}), lease_until: null, lease_owner: null, last_error: f.error, updated_at: f.wall,
  }).where('id', '=', id).where('lease_owner', '=', owner).where('status', '=', 'PENDING').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Jobs by kind in one status: the queue-depth and dead-job gauges. */
export async function countJobsByKind(db: Db, status: JobStatus): Promise<{ key: string; n: number }[]> {
  const rows = await db.selectFrom('jobs').select((eb) => [eb.ref('kind').as('key'), eb.fn.countAll<number>().as('n')])
    .where('status', '=', status).groupBy('kind').execute();
  return rows.map((r) => ({ key: r.key, n: Number(r.n) }));
}

export async function recordOutboundAttempt(db: Db, a: {
  jobId: string; target: OutboundTarget; refId: string; attemptNo: number; url: string; statusCode: number | null; error: string | null;
  durationMs: number; at: number; deliveryId: string | null; trigger: AttemptTrigger; responseBody: string | null;
}): Promise<void> {
  await db.insertInto('outbound_attempts').values({
    job_id: a.jobId, target: a.target, ref_id: a.refId, attempt_no: a.attemptNo, url: a.url, status_code: a.statusCode,
    error: a.error, duration_ms: a.durationMs, created_at: a.at, delivery_id: a.deliveryId, trigger: a.trigger, response_body: a.responseBody,
  }).execute();
}
