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

/** Writes a job; false when its `uniqueKey` was taken already (nothing written). */
export async function insertJob(db: Db, j: { kind: string; payload: string; runAt: number; maxAttempts: number; uniqueKey: string | null; now: number; storeCode: string | null }): Promise<boolean> {
  const row = {
    id: newId(), kind: j.kind, payload: j.payload, status: 'PENDING' as const, run_at: j.runAt, lease_until: null, lease_owner: null,
    attempts: 0, max_attempts: j.maxAttempts, last_error: null, unique_key: j.uniqueKey, created_at: j.now, updated_at: j.now, store_code: j.storeCode,
  };
  const q = db.insertInto('jobs').values(row);
  const r = j.uniqueKey ? await q.onConflict((oc) => oc.column('unique_key').doNothing()).executeTakeFirst() : await q.executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 1n) === 1;
}

/** Key of the PostgreSQL advisory lock that makes claims take turns (so the per-store limit holds across instances). */
const CLAIM_LOCK = 7_150_015;

/**
 * Leases up to `limit` due jobs of the given kinds to `owner` and counts the attempt, in due
 * order. A job of a store (store_code set: callbacks and webhooks) is taken only while fewer
 * than `perStore` jobs of that store hold a live lease, counted over every instance, so one
 * store's slow receivers cannot take the slots the other stores' work needs. Beyond that,
 * `overflow` more jobs may be taken whatever their store: spare capacity the caller can give
 * (a single store's bulk of fast deliveries is not held to `perStore`).
 * `perPlatform` holds the stores of one platform together the same way (live leases of all its
 * stores, over every instance), so a platform with many stores cannot take every slot kept for
 * fairness from another platform's callbacks. Jobs of a store that is not in `stores` have no
 * platform and only the per-store limit.
 * Claims take turns (on PostgreSQL a transaction-scoped advisory lock, on SQLite the IMMEDIATE
 * write lock), so the counts hold across instances; each claim reads the running jobs per store
 * and the first due jobs by index, never the whole backlog.
 * `due` is the service clock (what run_at follows); `wall` is real time (what leases follow).
 */
export async function claimJobs(
  db: Kysely<Database>, engine: Engine,
  c: { kinds: string[]; due: number; wall: number; leaseUntil: number; owner: string; limit: number; perStore: number; perPlatform?: number; overflow?: number },
): Promise<ClaimedJob[]> {
  if (c.kinds.length === 0 || c.limit <= 0) return [];
  return db.transaction().execute(async (trx) => {
    if (engine === 'postgres') await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
    const running = await trx.selectFrom('jobs').select((eb) => ['store_code', eb.fn.countAll<number>().as('n')])
      .where('status', '=', 'PENDING').where('lease_until', '>=', c.wall).where('store_code', 'is not', null).groupBy('store_code').execute();
    const room = new Map(running.map((r) => [r.store_code!, c.perStore - Number(r.n)]));
    const perPlatform = c.perPlatform;
    const platformRoom = new Map<string, number>();
    const platformOf = new Map<string, string>();
    if (perPlatform !== undefined && running.length) {
      const rows = await trx.selectFrom('jobs').innerJoin('stores', 'stores.code', 'jobs.store_code')
        .select((eb) => ['stores.platform_code', eb.fn.countAll<number>().as('n')])
        .where('jobs.status', '=', 'PENDING').where('jobs.lease_until', '>=', c.wall).groupBy('stores.platform_code').execute();
      for (const r of rows) platformRoom.set(r.platform_code, perPlatform - Number(r.n));
    }
    const fullStores = () => [...room].filter(([, n]) => n <= 0).map(([code]) => code);
    const fullPlatforms = () => [...platformRoom].filter(([, n]) => n <= 0).map(([code]) => code);
    const due = (exclude: string[], storesOut: string[], platformsOut: string[], limit: number) => {
      let q = trx.selectFrom('jobs').select(['id', 'kind', 'payload', 'attempts', 'max_attempts', 'store_code'])
        .where('status', '=', 'PENDING').where('run_at', '<=', c.due)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', c.wall)]))
        .where('kind', 'in', c.kinds);
      if (storesOut.length) q = q.where((eb) => eb.or([eb('store_code', 'is', null), eb('store_code', 'not in', storesOut)]));
      if (platformsOut.length) {
        q = q.where((eb) => eb.or([eb('store_code', 'is', null), eb('store_code', 'not in', eb.selectFrom('stores').select('code').where('platform_code', 'in', platformsOut))]));
      }
      if (exclude.length) q = q.where('id', 'not in', exclude);
      return q.orderBy('run_at').orderBy('id').limit(limit).execute();
    };
    // Stores and platforms at their limit are left out in SQL; the room of the others is kept
    // here. When this claim fills a store or a platform, the next read leaves it out too, so its
    // backlog cannot crowd another's later job out of the claim (three reads at most).
    const picked: Awaited<ReturnType<typeof due>> = [];
    for (let read = 0; read < 3 && picked.length < c.limit; read++) {
      let skipped = false;
      const rows = await due(picked.map((r) => r.id), fullStores(), fullPlatforms(), c.limit * 4);
      if (perPlatform !== undefined) {
        const unknown = [...new Set(rows.map((r) => r.store_code).filter((s): s is string => s !== null && !platformOf.has(s)))];
        if (unknown.length) {
          for (const s of await trx.selectFrom('stores').select(['code', 'platform_code']).where('code', 'in', unknown).execute()) platformOf.set(s.code, s.platform_code);
        }
      }
      for (const r of rows) {
        if (picked.length >= c.limit) break;
        if (r.store_code !== null) {
          const left = room.get(r.store_code) ?? c.perStore;
          const platform = perPlatform === undefined ? undefined : platformOf.get(r.store_code);
          const platformLeft = platform === undefined ? Infinity : platformRoom.get(platform) ?? perPlatform!;
          if (left <= 0 || platformLeft <= 0) {
            skipped = true;
            continue;
          }
          room.set(r.store_code, left - 1);
          if (platform !== undefined) platformRoom.set(platform, platformLeft - 1);
        }
        picked.push(r);
      }
      if (!skipped || rows.length < c.limit * 4) break;
    }
    // Spare capacity counts what this claim already took: `overflow` bounds the whole claim.
    const spare = Math.min(c.overflow ?? 0, c.limit) - picked.length;
    if (spare > 0) picked.push(...(await due(picked.map((r) => r.id), [], [], spare)));
    if (picked.length === 0) return [];
    // Checked again as it is set: a worker whose lease ran out may settle its job meanwhile (it
    // does not take the claim lock); such a job is not leased out again.
    const leased = await trx.updateTable('jobs')
      .set((eb) => ({ lease_until: c.leaseUntil, lease_owner: c.owner, attempts: eb('attempts', '+', 1), updated_at: c.wall }))
      .where('id', 'in', picked.map((r) => r.id)).where('status', '=', 'PENDING')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', c.wall)]))
      .returning('id').execute();
    const ok = new Set(leased.map((r) => r.id));
    return picked.filter((r) => ok.has(r.id)).map(({ store_code: _s, ...r }) => ({ ...r, attempts: r.attempts + 1 }));
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

/** The waiting jobs of `kind` whose payload is one of `payloads` (as enqueue wrote them), earliest due first. */
export function pendingJobsWithPayload(db: Db, kind: string, payloads: string[]): Promise<{ id: string; run_at: number; lease_owner: string | null }[]> {
  return db.selectFrom('jobs').select(['id', 'run_at', 'lease_owner']).where('kind', '=', kind).where('status', '=', 'PENDING')
    .where('payload', 'in', payloads).orderBy('run_at').execute();
}

/**
 * A waiting job's next attempt brought forward to `now`; compare-and-set: false when it is
 * already due, running (leased) or settled, so two callers at once move it once.
 */
export async function bringForward(db: Db, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('jobs').set({ run_at: now, updated_at: now }).where('id', '=', id).where('status', '=', 'PENDING')
    .where('run_at', '>', now).where('lease_owner', 'is', null).executeTakeFirst();
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
