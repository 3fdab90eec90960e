import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { recordOutboundAttempt } from '../../src/jobs/repository.js';
import { PRUNE_JOB, schedulePrune, startRetention } from '../../src/jobs/retention.js';
import { forEachEngine } from '../helpers/app.js';
import { withDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/wait.js';

const DAY = 86_400_000;

test('the prune job: its kind, its schedule, and it is housekeeping', () => {
  assert.equal(PRUNE_JOB.kind, 'jobs.prune-attempts');
  assert.deepEqual(PRUNE_JOB.backoffSeconds, [300, 3600]);
  assert.equal(PRUNE_JOB.maxAttempts, 3);
  assert.equal(PRUNE_JOB.housekeeping, true);
});

forEachEngine('retention of delivery attempts', (engine) => {
  const store = withDatabase(engine);

  const T = Date.UTC(2026, 5, 15, 10);
  const clock = (t: number) => ({ nowMs: () => t, now: () => new Date(t) });
  const pruneJobs = () => store.db.selectFrom('jobs').selectAll().where('kind', '=', PRUNE_JOB.kind).orderBy('run_at').execute();

  test('a run deletes the attempts older than the retention, keeps the rest, and tells how many went', async () => {
    for (const [i, at] of [T - 30 * DAY - 1, T - 30 * DAY, T - DAY].entries()) {
      await recordOutboundAttempt(store.db, {
        jobId: `j${i}`, target: 'CALLBACK', refId: 'r', attemptNo: 1, url: 'https://m.example/', statusCode: 200, error: null, durationMs: 1, at, deliveryId: null,
        trigger: 'scheduled', responseBody: null,
      });
    }
    const told: number[] = [];
    await PRUNE_JOB.run({}, { db: store.db, clock: clock(T), retentionDays: 30, onPruned: (k) => void told.push(k) }, { jobId: 'x', attempt: 1, final: false });
    assert.deepEqual(told, [1]);
    const left = await store.db.selectFrom('outbound_attempts').select('job_id').orderBy('job_id').execute();
    assert.deepEqual(left.map((r) => r.job_id), ['j1', 'j2']);
    await PRUNE_JOB.run({}, { db: store.db, clock: clock(T + DAY), retentionDays: 30 }, { jobId: 'x', attempt: 1, final: false });
    assert.deepEqual((await store.db.selectFrom('outbound_attempts').select('job_id').execute()).map((r) => r.job_id), ['j2']);
  });

  test('schedulePrune writes one run per service-clock day, whatever the number of calls', async () => {
    const day = Math.floor(T / DAY) * DAY;
    await schedulePrune(store.db, day + 1000, T);
    await schedulePrune(store.db, day + DAY - 1, T);
    await schedulePrune(store.db, day + DAY, T);
    const rows = await pruneJobs();
    assert.deepEqual(rows.map((r) => [r.run_at, r.unique_key, r.status, r.max_attempts, r.payload]), [
      [day + 1000, `prune-attempts:${day / DAY}`, 'PENDING', 3, '{}'],
      [day + DAY, `prune-attempts:${day / DAY + 1}`, 'PENDING', 3, '{}'],
    ]);
  });

  test('startRetention writes the day\'s run at once and then wakes the worker; a failure goes to onError', async () => {
    await store.db.deleteFrom('jobs').execute();
    const t = T + 10 * DAY;
    let woken = 0;
    const errors: Error[] = [];
    const stop = startRetention({ db: store.db, clock: clock(t), wake: () => void woken++, onError: (e) => void errors.push(e) });
    await eventually(async () => woken === 1, 'the wake after the write');
    stop();
    assert.deepEqual((await pruneJobs()).map((r) => r.run_at), [t]);
    assert.equal(errors.length, 0);

    const refusing: KyselyPlugin = {
      transformQuery: () => { throw new Error('database away'); },
      transformResult: async ({ result }) => result,
    };
    let woken2 = 0;
    const stop2 = startRetention({ db: store.db.withPlugin(refusing), clock: clock(t + DAY), wake: () => void woken2++, onError: (e) => void errors.push(e) });
    await eventually(async () => errors.length === 1, 'the failure reported');
    stop2();
    assert.equal(errors[0]!.message, 'database away');
    assert.equal(woken2, 0);
  });

  test('the check runs again every hour until stopped', async () => {
    await store.db.deleteFrom('jobs').execute();
    // Only setInterval is faked: the hour passes at once, the database keeps its real timers.
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      let t = T + 20 * DAY;
      let woken = 0;
      const c = { nowMs: () => t, now: () => new Date(t) };
      const stop = startRetention({ db: store.db, clock: c, wake: () => void woken++, onError: (e) => { throw e; } });
      await eventually(async () => woken === 1, 'the first check');
      t += DAY;
      mock.timers.tick(3600_000);
      await eventually(async () => woken === 2, 'the hourly check');
      assert.equal((await pruneJobs()).length, 2, 'the next day\'s run written by the hourly check');
      stop();
      t += DAY;
      mock.timers.tick(3 * 3600_000);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(woken, 2, 'no check after stop');
      assert.equal((await pruneJobs()).length, 2);
    } finally {
      mock.timers.reset();
    }
  });
});
