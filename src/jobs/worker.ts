import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database, Engine } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { newId } from '../platform/crypto.js';
import { retryDelaySeconds, type JobDefinition } from './define.js';
import { OutboundFailure } from './outbound.js';
import { claimJobs, finishAttempt, renewLeases, type ClaimedJob } from './repository.js';

/** The longest pause a receiver's Retry-After can ask for. */
const MAX_RETRY_AFTER_SECONDS = 86_400;

export interface WorkerOptions {
  /** How often to look for due jobs when nothing woke the worker (SUNAP_JOB_POLL_MS). */
  pollMs: number;
  /** How long a claimed job stays this worker's without a renewal (SUNAP_JOB_LEASE_MS). */
  leaseMs: number;
  /** Jobs run at once by this instance (SUNAP_JOB_CONCURRENCY). */
  concurrency: number;
  /** Most jobs claimed by one query. */
  batch: number;
  /** A store's jobs running at once over all instances (SUNAP_JOB_STORE_CONCURRENCY); default: no limit. */
  perStore?: number;
  /** All stores of one platform together (SUNAP_JOB_PLATFORM_CONCURRENCY); default: no limit. */
  perPlatform?: number;
  /**
   * Slots of this instance kept for stores under their limit: while more than this many are
   * free, the rest may go to any store's due jobs (spare capacity). Default: all of them (the
   * per-store limit is strict).
   */
  reserve?: number;
  /** A failed attempt; `final` when the job was given up. */
  onFailure?: (kind: string, final: boolean) => void;
}

/**
 * The durable job worker (src/jobs/README.md). Jobs are claimed with a lease; a worker that
 * dies leaves its lease to expire and another worker (or this one after a restart) runs the
 * job again, so runs are idempotent. `run_at` follows the service clock (the sandbox can move
 * it); leases follow real time, because they measure whether a worker is alive. While a job
 * runs, its worker renews the lease every third of it: a slow run (a merchant that takes
 * longer than the lease to answer) stays one worker's; only a dead worker's jobs are taken over.
 */
export class JobWorker {
  private readonly jobs = new Map<string, { def: JobDefinition<unknown, unknown>; deps: unknown }>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private polling: Promise<void> | null = null;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Ids of the jobs running here, whose leases the renewer keeps ahead. */
  private readonly runningIds = new Set<string>();
  private renewer: NodeJS.Timeout | null = null;
  /**
   * Who holds a lease: host and process id first, so an operator looking at a stuck job (or a test
   * that kills one instance) can tell which process leased it; the random part keeps two workers of
   * one process apart.
   */
  readonly owner = `${hostname()}/${process.pid}/${newId()}`;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
    private readonly clock: Clock & { refresh?: () => Promise<number> },
    private readonly log: Logger,
    private readonly opts: WorkerOptions,
  ) {}

  /** The kinds registered so far (the list of every job in src/app.ts, `JOBS`, is checked against it). */
  registeredKinds(): string[] {
    return [...this.jobs.keys()];
  }

  /** Each module registers the jobs it defines, with what their runs need; a kind is registered once. */
  register<P, D>(job: JobDefinition<P, D>, deps: D): void {
    if (this.jobs.has(job.kind)) throw new Error(`job ${job.kind} is registered twice`);
    this.jobs.set(job.kind, { def: job as JobDefinition<unknown, unknown>, deps });
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
    const free = this.opts.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const jobs = await this.claim(Math.min(free, this.opts.batch), Math.max(0, free - (this.opts.reserve ?? this.opts.concurrency)));
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

  claim(limit: number, overflow = 0): Promise<ClaimedJob[]> {
    const wall = Date.now();
    return claimJobs(this.db, this.engine, {
      kinds: [...this.jobs.keys()], due: this.clock.nowMs(), wall, leaseUntil: wall + this.opts.leaseMs, owner: this.owner, limit,
      perStore: this.opts.perStore ?? 1_000_000, perPlatform: this.opts.perPlatform, overflow,
    });
  }

  private async renew(): Promise<void> {
    try {
      await renewLeases(this.db, this.owner, [...this.runningIds], Date.now() + this.opts.leaseMs);
    } catch (err) {
      // The database is away: the leases may run out, and the jobs then run again elsewhere (runs are idempotent).
      this.log.warn({ err: (err as Error).message }, 'could not renew job leases');
    }
  }

  private async execute(job: ClaimedJob): Promise<void> {
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

  private async run(job: ClaimedJob): Promise<void> {
    const { def, deps } = this.jobs.get(job.kind)!;
    // The schedule is the definition's; a row written under an older schedule keeps its own count.
    const final = job.attempts >= job.max_attempts;
    let outcome: { status: 'DONE' | 'PENDING' | 'DEAD'; runAt?: number; error: string | null };
    try {
      await def.run(JSON.parse(job.payload), deps, { jobId: job.id, attempt: job.attempts, final });
      outcome = { status: 'DONE', error: null };
    } catch (err) {
      const error = ((err as Error)?.message ?? String(err)).slice(0, 500);
      let delay = final ? null : retryDelaySeconds(def, job.attempts) ?? def.backoffSeconds[def.backoffSeconds.length - 1]!;
      // A receiver that asked for a pause (429/503 with Retry-After) gets at least that, up to a day.
      const pause = err instanceof OutboundFailure ? err.retryAfterMs : null;
      if (delay !== null && pause !== null) delay = Math.max(delay, Math.min(Math.ceil(pause / 1000), MAX_RETRY_AFTER_SECONDS));
      this.opts.onFailure?.(job.kind, final);
      this.log.warn({ job: job.id, kind: job.kind, attempt: job.attempts, final, error }, 'job attempt failed');
      outcome = delay === null ? { status: 'DEAD', error } : { status: 'PENDING', runAt: this.clock.nowMs() + delay * 1000, error };
    }
    try {
      if (!(await finishAttempt(this.db, this.owner, job.id, { ...outcome, wall: Date.now() }))) {
        this.log.warn({ job: job.id, kind: job.kind }, 'job lease lost while it ran; the worker that holds it now decides');
      }
    } catch (err) {
      // The lease expires by itself and the job is picked up again.
      this.log.error({ job: job.id, error: (err as Error).message }, 'could not record the end of a job attempt');
    }
  }
}
