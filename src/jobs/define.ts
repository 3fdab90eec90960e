import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import { insertJob } from './repository.js';

/** What a job's run is told about the attempt it is making. */
export interface JobContext {
  jobId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** This is the last attempt: a throw now makes the job DEAD instead of retrying it. */
  final: boolean;
}

/**
 * One kind of job, declared once at module level (src/jobs/README.md lists them all): its
 * name, its retry schedule and what a run does. The payload type travels from `enqueue` to
 * `run`; what a run needs besides its payload (`Deps`: the database, a service) is handed over
 * when the module registers the job on the worker.
 */
export interface JobDefinition<Payload, Deps = unknown> {
  readonly kind: string;
  /**
   * Seconds to wait after a failed attempt before the next one: entry i follows the failure
   * of attempt i + 1. The job makes `backoffSeconds.length + 1` attempts in all.
   */
  readonly backoffSeconds: readonly number[];
  readonly maxAttempts: number;
  /**
   * Upkeep that always has its next run pending (the hourly throttle purge, the daily pruning
   * of attempts): never a request's work left over, so drains and leftover-work checks skip it.
   */
  readonly housekeeping: boolean;
  /** Runs one attempt; a throw is a failed attempt. Must be idempotent: a job may run twice after a crash. */
  run(payload: Payload, deps: Deps, ctx: JobContext): Promise<void>;
}

export function defineJob<Payload, Deps>(spec: {
  kind: string;
  backoffSeconds: readonly number[];
  housekeeping?: boolean;
  run: (payload: Payload, deps: Deps, ctx: JobContext) => Promise<void>;
}): JobDefinition<Payload, Deps> {
  if (!/^[a-z]+\.[a-z-]+$/.test(spec.kind)) throw new Error(`job kind "${spec.kind}": must be module.name`);
  if (spec.backoffSeconds.some((s) => !Number.isInteger(s) || s <= 0)) {
    throw new Error(`job ${spec.kind}: every backoff delay must be a whole number of seconds above 0`);
  }
  return { kind: spec.kind, backoffSeconds: [...spec.backoffSeconds], maxAttempts: spec.backoffSeconds.length + 1,
    housekeeping: spec.housekeeping === true, run: spec.run };
}

/** When the job's attempt n (from 1) failed, how long until attempt n + 1; null after the last. */
export function retryDelaySeconds(job: Pick<JobDefinition<unknown, unknown>, 'backoffSeconds'>, attempt: number): number | null {
  return attempt >= 1 && attempt <= job.backoffSeconds.length ? job.backoffSeconds[attempt - 1]! : null;
}

/**
 * Writes a job in the caller's transaction, so a state change and the work it causes commit
 * together. With a `uniqueKey`, a second enqueue under the same key is a no-op and answers false (one job per
 * cause, e.g. one callback per approval). `storeCode` names the store the work is for: the
 * worker runs at most SUNAP_JOB_STORE_CONCURRENCY of one store's jobs at once, so one store's
 * slow receivers cannot hold every slot.
 */
export async function enqueue<Payload>(
  trx: Kysely<Database> | Transaction<Database>,
  job: JobDefinition<Payload, never>,
  payload: Payload,
  opts: { runAt: number; uniqueKey?: string; now: number; storeCode?: string },
): Promise<boolean> {
  return insertJob(trx, {
    kind: job.kind, payload: JSON.stringify(payload), runAt: opts.runAt, maxAttempts: job.maxAttempts, uniqueKey: opts.uniqueKey ?? null, now: opts.now,
    storeCode: opts.storeCode ?? null,
  });
}
