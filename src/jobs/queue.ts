import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database, Engine } from '../db/index.js';
import { newId } from '../platform/crypto.js';
import type { Clock } from '../platform/clock.js';


export interface JobRow {
  id: string;
  kind: string;
  payload: string;
  attempts: number;
  max_attempts: number;
}

export interface JobHandler {
  /** Runs the job; throwing schedules a retry (or gives up after max_attempts). */
  run(job: JobRow & { data: any }): Promise<void>;
  /** Delay in seconds before attempt n+1, indexed by n-1 (the attempt that just failed). */
  backoffSeconds: number[];
}

export interface EnqueueOptions {
  kind: string;
  payload: unknown;
  runAt: number;
  maxAttempts: number;
  /** When set, a second enqueue with the same key is a no-op (one job per cause). */
  uniqueKey?: string;
}

/**
 * Writes a job in the caller's transaction, so a state change and the work it causes commit
 * together (design note 7).
 */
export async function enqueue(trx: Kysely<Database> | Transaction<Database>, opts: EnqueueOptions, now: number): Promise<void> {
  const row = {
    id: newId(), kind: opts.kind, payload: JSON.stringify(opts.payload), status: 'PENDING', run_at: opts.runAt,
    lease_until: null, lease_owner: null, attempts: 0, max_attempts: opts.maxAttempts, last_error: null,
    unique_key: opts.uniqueKey ?? null, created_at: now, updated_at: now,
  };
  if (opts.uniqueKey) {
    await trx.insertInto('jobs').values(row).onConflict((oc) => oc.column('unique_key').doNothing()).execute();
  } else {
    await trx.insertInto('jobs').values(row).execute();
  }
}

export interface WorkerStats {
  failures: number;
  onFailure?: (kind: string, final: boolean) => void;
}

/**
 * Durable job worker (design note 8). Jobs are claimed with a lease; a worker that dies
 * leaves its lease to expire and another worker (or this one after restart) runs the job
 * again, so handlers are idempotent. `run_at` follows the service clock (the sandbox can
 * move it); leases follow real time, because they measure whether a worker is alive. While
 * a job runs, its worker renews the lease every third of it: a slow handler (a merchant
 * that takes longer than the lease to answer) is still one worker's, and only a dead
 * worker's jobs are taken over.
 */
export class JobWorker {
  private readonly handlers = new Map<string, JobHandler>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private polling: Promise<void> | null = null;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Ids of the jobs running here, whose leases the renewer keeps ahead. */
  private readonly runningIds = new Set<string>();
  private renewer: NodeJS.Timeout | null = null;
  readonly owner = newId();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
    private readonly clock: Clock & { refresh?: () => Promise<number> },
    private readonly log: Logger,
    private readonly opts: { pollMs: number; leaseMs: number; batch?: number; concurrency?: number; onFailure?: (kind: string, final: boolean) => void },
  ) {}

  register(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Polls at once: used after something made jobs due (enqueue, clock advance). */
  wake(): void {
    if (!this.running) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.polling;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Runs every due job until none is left; for tests and the CLI. */
  async drain(maxRounds = 50): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const n = await this.pollOnce();
      await Promise.allSettled([...this.inFlight]);
      total += n;
      if (n === 0) break;
    }
    return total;
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.polling = this.tick().finally(() => {
        this.polling = null;
        if (this.again) {
          this.again = false;
          this.schedule(0);
        } else this.schedule(this.opts.pollMs);
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    try {
      await this.clock.refresh?.();
      await this.pollOnce();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'job poll failed');
    }
  }

  private async pollOnce(): Promise<number> {
    const free = (this.opts.concurrency ?? 16) - this.inFlight.size;
    if (free <= 0) return 0;
    const jobs = await this.claim(Math.min(free, this.opts.batch ?? 32));
    for (const job of jobs) {
      const p = this.execute(job).finally(() => {
        this.inFlight.delete(p);
        // A finished job frees a slot; look again if the batch was full.
        if (jobs.length > 0) this.wake();
      });
      this.inFlight.add(p);
    }
    return jobs.length;
  }

  async claim(limit: number): Promise<JobRow[]> {
    const due = this.clock.nowMs();
    const wall = Date.now();
    const leaseUntil = wall + this.opts.leaseMs;
    const kinds = [...this.handlers.keys()];
    if (kinds.length === 0) return [];
    if (this.engine === 'postgres') {
      const r = await sql<JobRow>`
        update jobs set lease_until = ${leaseUntil}, lease_owner = ${this.owner}, attempts = attempts + 1, updated_at = ${wall}
        where id in (
          select id from jobs
          where status = 'PENDING' and run_at <= ${due} and (lease_until is null or lease_until < ${wall})
            and kind in (${sql.join(kinds)})
          order by run_at
          limit ${limit}
          for update skip locked)
        returning id, kind, payload, attempts, max_attempts`.execute(this.db);
      return r.rows;
    }
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx.selectFrom('jobs').select(['id', 'kind', 'payload', 'attempts', 'max_attempts'])
        .where('status', '=', 'PENDING').where('run_at', '<=', due)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', wall)]))
        .where('kind', 'in', kinds)
        .orderBy('run_at').limit(limit).execute();
      if (rows.length === 0) return [];
      await trx.updateTable('jobs')
        .set((eb) => ({ lease_until: leaseUntil, lease_owner: this.owner, attempts: eb('attempts', '+', 1), updated_at: wall }))
        .where('id', 'in', rows.map((r) => r.id)).execute();
      return rows.map((r) => ({ ...r, attempts: r.attempts + 1 }));
    });
  }

  private async renew(): Promise<void> {
    const ids = [...this.runningIds];
    if (ids.length === 0) return;
    try {
      await this.db.updateTable('jobs').set({ lease_until: Date.now() + this.opts.leaseMs })
        .where('id', 'in', ids).where('lease_owner', '=', this.owner).where('status', '=', 'PENDING').execute();
    } catch (err) {
      // The database is away: the leases may run out, and the jobs then run again elsewhere (handlers are idempotent).
      this.log.warn({ err: (err as Error).message }, 'could not renew job leases');
    }
  }

  private async execute(job: JobRow): Promise<void> {
    this.runningIds.add(job.id);
    if (!this.renewer) {
      this.renewer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.opts.leaseMs / 3)));
      this.renewer.unref();
    }
    try {
      await this.run(job);
    } finally {
      this.runningIds.delete(job.id);
      if (this.runningIds.size === 0 && this.renewer) {
        clearInterval(this.renewer);
        this.renewer = null;
      }
    }
  }

  private async run(job: JobRow): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    try {
      await handler.run({ ...job, data: JSON.parse(job.payload) });
      await this.db.updateTable('jobs').set({ status: 'DONE', lease_until: null, lease_owner: null, last_error: null, updated_at: Date.now() })
        .where('id', '=', job.id).where('lease_owner', '=', this.owner).execute();
    } catch (err) {
      const message = ((err as Error)?.message ?? String(err)).slice(0, 500);
      const final = job.attempts >= job.max_attempts;
      const delay = handler.backoffSeconds[Math.min(job.attempts - 1, handler.backoffSeconds.length - 1)] ?? 60;
      this.opts.onFailure?.(job.kind, final);
      this.log.warn({ job: job.id, kind: job.kind, attempt: job.attempts, final, error: message }, 'job attempt failed');
      try {
        await this.db.updateTable('jobs').set({
          status: final ? 'DEAD' : 'PENDING',
          run_at: final ? this.clock.nowMs() : this.clock.nowMs() + delay * 1000,
          lease_until: null, lease_owner: null, last_error: message, updated_at: Date.now(),
        }).where('id', '=', job.id).where('lease_owner', '=', this.owner).execute();
      } catch (e2) {
        // The lease expires by itself and the job is picked up again.
        this.log.error({ job: job.id, error: (e2 as Error).message }, 'could not record job failure');
      }
    }
  }
}

