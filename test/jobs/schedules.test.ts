/**
 * Every retry schedule of the service, pinned (issue 28, item 9; src/jobs/README.md, "Jobs"):
 * each job definition's delays, one by one, and its number of attempts, and then each schedule
 * walked through the real worker on a clock that stands still: after the n-th failed attempt the
 * job is not due one millisecond before its delay ends and is due at that millisecond, the last
 * attempt is told it is the last, and after it the job is DEAD and never runs again. A delay
 * changed anywhere in a schedule (not only the first two) fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import {
  ACCOUNT_EXPIRY_BACKOFF_SECONDS, ACCOUNT_EXPIRY_JOB, ATTEMPT_LOOKUP_JOB, CALLBACK_BACKOFF_SECONDS, CALLBACK_JOB, ENDPOINT_BACKOFF_SECONDS, ENDPOINT_JOB, LATE_CHARGE_BACKOFF_SECONDS, ORDER_VOID_BACKOFF_SECONDS, ORDER_VOID_JOB,
} from '../../src/gateway/index.js';
import { THROTTLE_PURGE_JOB } from '../../src/invoicing/accounts.js';
import { DELIVERY_BACKOFF_SECONDS, DELIVERY_FIRST_CHECK_MS, DELIVERY_JOB } from '../../src/invoicing/delivery.js';
import { SEND_BACKOFF_SECONDS, SEND_JOB } from '../../src/invoicing/sends.js';
import { WEBHOOK_BACKOFF_SECONDS, WEBHOOK_JOB } from '../../src/invoicing/webhooks.js';
import { defineJob, enqueue, type JobDefinition } from '../../src/jobs/define.js';
import { PRUNE_JOB } from '../../src/jobs/retention.js';
import { JobWorker } from '../../src/jobs/worker.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

const MIN = 60;
const HOUR = 3600;
const DAY = 86_400;

/** Each job kind and its delays after attempts 1, 2, …, as src/jobs/README.md states them. */
const SCHEDULES: [JobDefinition<never, never>, readonly number[]][] = [
  [CALLBACK_JOB as JobDefinition<never, never>, [10, MIN, 5 * MIN, 30 * MIN]],
  [SEND_JOB as JobDefinition<never, never>, [10, MIN, 5 * MIN, 30 * MIN]],
  [DELIVERY_JOB as JobDefinition<never, never>, [5 * MIN, 30 * MIN, 2 * HOUR, 6 * HOUR, DAY, 2 * DAY]],
  [WEBHOOK_JOB as JobDefinition<never, never>, [MIN, 5 * MIN, 30 * MIN, 2 * HOUR]],
  [ENDPOINT_JOB as JobDefinition<never, never>, [MIN, 5 * MIN, 30 * MIN, 2 * HOUR]],
  [ACCOUNT_EXPIRY_JOB as JobDefinition<never, never>, [MIN, 5 * MIN, 30 * MIN, 2 * HOUR, 6 * HOUR]],
  [ATTEMPT_LOOKUP_JOB as JobDefinition<never, never>, [2 * MIN, 5 * MIN, 10 * MIN, 30 * MIN, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 12 * HOUR, ...Array<number>(13).fill(DAY)]],
  [ORDER_VOID_JOB as JobDefinition<never, never>, [5 * MIN, 15 * MIN, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, DAY, DAY]],
  [THROTTLE_PURGE_JOB as JobDefinition<never, never>, [MIN, 5 * MIN]],
  [PRUNE_JOB as JobDefinition<never, never>, [5 * MIN, HOUR]],
];

describe('every retry schedule, pinned', () => {
  test('each job\'s delays, every one of them, and its attempts (one more than its delays)', () => {
    for (const [def, delays] of SCHEDULES) {
      assert.deepEqual(def.backoffSeconds, delays, def.kind);
      assert.equal(def.maxAttempts, delays.length + 1, def.kind);
    }
    assert.deepEqual([...CALLBACK_BACKOFF_SECONDS], [10, 60, 300, 1800]);
    assert.deepEqual([...SEND_BACKOFF_SECONDS], [10, 60, 300, 1800]);
    assert.deepEqual([...DELIVERY_BACKOFF_SECONDS], [300, 1800, 7200, 21_600, 86_400, 172_800]);
    assert.equal(DELIVERY_FIRST_CHECK_MS, 60_000, 'the first delivery check, 1 minute after acceptance');
    assert.deepEqual([...WEBHOOK_BACKOFF_SECONDS], [60, 300, 1800, 7200]);
    assert.deepEqual([...ENDPOINT_BACKOFF_SECONDS], [60, 300, 1800, 7200]);
    assert.deepEqual([...ACCOUNT_EXPIRY_BACKOFF_SECONDS], [60, 300, 1800, 7200, 21_600]);
    assert.deepEqual([...ORDER_VOID_BACKOFF_SECONDS], [300, 900, 3600, 10_800, 21_600, 43_200, 86_400, 86_400, 86_400]);
    assert.deepEqual([...LATE_CHARGE_BACKOFF_SECONDS], [120, 300, 600, 1800, 3600, 7200, 14_400, 28_800, 43_200, ...Array<number>(13).fill(86_400)]);
  });

  test('src/jobs/README.md names every job kind with its number of attempts', () => {
    const readme = readFileSync(new URL('../../src/jobs/README.md', import.meta.url), 'utf8');
    for (const [def] of SCHEDULES) {
      const row = readme.split('\n').find((l) => l.startsWith(`| \`${def.kind}\` |`));
      assert.ok(row, `${def.kind} is listed`);
      assert.match(row, new RegExp(`\\| ${def.maxAttempts}: `), `${def.kind}: ${def.maxAttempts} attempts`);
    }
  });
});

/** A clock that moves only when told (the worker's due times are read from it). */
class StillClock {
  t = Date.UTC(2026, 0, 1);
  nowMs(): number {
    return this.t;
  }
  now(): Date {
    return new Date(this.t);
  }
  async refresh(): Promise<number> {
    return 0;
  }
}

forEachEngine('every retry schedule through the worker', (engine) => {
  let drop: () => Promise<void>;
  let store: DatabaseHandle;
  before(async () => {
    const d = await createTestDatabase(engine);
    drop = d.drop;
    store = openDatabase(d.url);
    await migrate(store.db);
  });
  after(async () => {
    await store?.close();
    await drop?.();
  });

  for (const [real, delays] of SCHEDULES) {
    test(`${real.kind}: due at each delay to the millisecond, not before; the last attempt is the last`, async () => {
      const clock = new StillClock();
      // The real schedule on a job that always fails, under a kind of its own.
      const kind = `pin.${real.kind.replace('.', '-')}`;
      const seen: { attempt: number; final: boolean; at: number }[] = [];
      const def = defineJob<Record<string, never>, null>({
        kind, backoffSeconds: real.backoffSeconds, run: async (_p, _d, ctx) => {
          seen.push({ attempt: ctx.attempt, final: ctx.final, at: clock.t });
          throw new Error('still failing');
        },
      });
      const w = new JobWorker(store.db, store.engine, clock, pino({ level: 'silent' }), { pollMs: 600_000, leaseMs: 60_000, concurrency: 4, batch: 4 });
      w.register(def, null);
      await enqueue(store.db, def, {}, { runAt: clock.t, now: clock.t });
      const row = () => store.db.selectFrom('jobs').selectAll().where('kind', '=', kind).executeTakeFirstOrThrow();
      assert.equal(await w.drain(), 1);
      assert.equal((await row()).max_attempts, delays.length + 1);
      for (const [i, delay] of delays.entries()) {
        const failedAt = clock.t;
        assert.equal(Number((await row()).run_at), failedAt + delay * 1000, `after attempt ${i + 1}: ${delay} s`);
        clock.t = failedAt + delay * 1000 - 1;
        assert.equal(await w.drain(), 0, `attempt ${i + 2} not due 1 ms before ${delay} s`);
        clock.t = failedAt + delay * 1000;
        assert.equal(await w.drain(), 1, `attempt ${i + 2} due at ${delay} s`);
      }
      const last = await row();
      assert.equal(last.status, 'DEAD');
      assert.equal(last.attempts, delays.length + 1);
      assert.deepEqual(seen.map((s) => [s.attempt, s.final]), [...Array.from({ length: delays.length }, (_, i) => [i + 1, false]), [delays.length + 1, true]]);
      clock.t += 10 * DAY * 1000;
      assert.equal(await w.drain(), 0, 'nothing after the last attempt');
      assert.equal(seen.length, delays.length + 1);
    });
  }
});
