import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { defineJob, enqueue, retryDelaySeconds, type JobDefinition } from '../../src/jobs/define.js';
import { JobWorker } from '../../src/jobs/worker.js';
import { ServiceClock } from '../../src/platform/clock.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

const silent = pino({ level: 'silent' });

describe('defineJob', () => {
  test('maxAttempts is one more than the delays; the schedule is copied', () => {
    const delays = [10, 60];
    const job = defineJob<{ n: number }, null>({ kind: 'test.job', backoffSeconds: delays, run: async () => {} });
    assert.equal(job.maxAttempts, 3);
    delays.push(99);
    assert.deepEqual(job.backoffSeconds, [10, 60]);
    assert.equal(defineJob<null, null>({ kind: 'test.once', backoffSeconds: [], run: async () => {} }).maxAttempts, 1);
  });

  test('housekeeping is said by the definition; a job is not housekeeping unless it says so', () => {
    const run = async () => {};
    assert.equal(defineJob({ kind: 'test.plain', backoffSeconds: [1], run }).housekeeping, false);
    assert.equal(defineJob({ kind: 'test.plain', backoffSeconds: [1], housekeeping: false, run }).housekeeping, false);
    assert.equal(defineJob({ kind: 'test.upkeep', backoffSeconds: [1], housekeeping: true, run }).housekeeping, true);
  });

  test('refuses delays that are not whole seconds above 0, and kinds that are not module.name', () => {
    for (const bad of [[0], [-1], [1.5], [Number.NaN]]) {
      assert.throws(() => defineJob({ kind: 'test.job', backoffSeconds: bad, run: async () => {} }), /whole number of seconds above 0/);
    }
    for (const kind of ['job', 'Test.job', 'test.job.x', 'test.']) {
      assert.throws(() => defineJob({ kind, backoffSeconds: [1], run: async () => {} }), /must be module\.name/);
    }
  });

  test('retryDelaySeconds: the delay after each failed attempt, none after the last', () => {
    const job = { backoffSeconds: [10, 60, 300] };
    assert.equal(retryDelaySeconds(job, 0), null);
    assert.equal(retryDelaySeconds(job, 1), 10);
    assert.equal(retryDelaySeconds(job, 2), 60);
    assert.equal(retryDelaySeconds(job, 3), 300);
    assert.equal(retryDelaySeconds(job, 4), null);
  });
});

forEachEngine('durable jobs', (engine) => {
  let url: string;
  let drop: () => Promise<void>;
  let store: DatabaseHandle;
  let clock: ServiceClock;
  before(async () => {
    ({ url, drop } = await createTestDatabase(engine));
    store = openDatabase(url);
    await migrate(store.db);
    clock = new ServiceClock(store.db);
  });
  after(async () => {
    await store?.close();
    await drop?.();
  });

  const worker = (s: DatabaseHandle, c = clock, leaseMs = 60_000) => new JobWorker(s.db, s.engine, c, silent, { pollMs: 20, leaseMs, concurrency: 8, batch: 8 });
  const job = <P>(kind: string, backoffSeconds: number[], run: (p: P) => Promise<void>): JobDefinition<P, null> =>
    defineJob<P, null>({ kind, backoffSeconds, run: (p) => run(p) });
  const add = <P>(def: JobDefinition<P, null>, payload: P, uniqueKey?: string) =>
    enqueue(store.db, def, payload, { runAt: clock.nowMs(), uniqueKey, now: clock.nowMs() });
  const row = (kind: string) => store.db.selectFrom('jobs').selectAll().where('kind', '=', kind).executeTakeFirstOrThrow();

  test('a failing job runs again just after each delay, never before, and never after its last attempt', async () => {
    const w = worker(store);
    let runs = 0;
    const flaky = job<Record<string, never>>('test.flaky', [30, 120, 600], async () => {
      runs++;
      throw new Error('receiver down');
    });
    w.register(flaky, null);
    await add(flaky, {});
    assert.equal(await w.drain(), 1);
    assert.equal(runs, 1);
    const first = await row('test.flaky');
    assert.equal(first.status, 'PENDING');
    assert.equal(first.last_error, 'receiver down');
    assert.equal(first.max_attempts, 4);
    for (const delay of [30, 120, 600]) {
      await clock.advance(delay - 2);
      assert.equal(await w.drain(), 0, `not yet, 2 s before the ${delay} s delay ends`);
      await clock.advance(2);
      const runsBefore: number = runs;
      assert.equal(await w.drain(), 1, `due once the ${delay} s delay has passed`);
      assert.equal(runs, runsBefore + 1);
    }
    assert.equal(runs, 4);
    assert.equal((await row('test.flaky')).status, 'DEAD');
    await clock.advance(100_000);
    assert.equal(await w.drain(), 0, 'no attempt after the last');
  });

  test('the run is told its attempt number and whether it is the last', async () => {
    const w = worker(store);
    const seen: { attempt: number; final: boolean }[] = [];
    const def = defineJob<null, null>({
      kind: 'test.told', backoffSeconds: [5], run: async (_p, _d, ctx) => {
        seen.push({ attempt: ctx.attempt, final: ctx.final });
        throw new Error('again');
      },
    });
    w.register(def, null);
    await enqueue(store.db, def, null, { runAt: clock.nowMs(), now: clock.nowMs() });
    await w.drain();
    await clock.advance(5);
    await w.drain();
    assert.deepEqual(seen, [{ attempt: 1, final: false }, { attempt: 2, final: true }]);
  });

  test('a run gets the deps its job was registered with, and its payload as enqueued', async () => {
    const w = worker(store);
    const got: unknown[] = [];
    const def = defineJob<{ n: number }, { tag: string }>({ kind: 'test.deps', backoffSeconds: [1], run: async (p, deps) => void got.push([p, deps.tag]) });
    w.register(def, { tag: 'registered' });
    assert.throws(() => w.register(def, { tag: 'twice' }), /registered twice/);
    await enqueue(store.db, def, { n: 7 }, { runAt: clock.nowMs(), now: clock.nowMs() });
    await w.drain();
    assert.deepEqual(got, [[{ n: 7 }, 'registered']]);
  });

  test('jobs survive a restart: another process picks up what was committed', async () => {
    const durable = job<{ n: number }>('test.durable', [1], async () => {});
    await add(durable, { n: 1 });
    // A new connection and worker, as after a restart.
    const store2 = openDatabase(url);
    try {
      const clock2 = new ServiceClock(store2.db);
      await clock2.refresh();
      const w = worker(store2, clock2);
      const seen: unknown[] = [];
      w.register(job<{ n: number }>('test.durable', [1], async (p) => void seen.push(p)), null);
      assert.equal(await w.drain(), 1);
      assert.deepEqual(seen, [{ n: 1 }]);
      assert.equal((await row('test.durable')).status, 'DONE');
    } finally {
      await store2.close();
    }
  });

  test('a crashed worker\'s lease expires and another worker runs the job', async () => {
    const leased = job<null>('test.leased', [1], async () => {});
    await add(leased, null);
    // A lease of one second: B's first look must come while A's lease lives, which a loaded CI
    // machine could delay past a shorter one.
    const a = worker(store, clock, 1000);
    a.register(leased, null);
    const claimed = await a.claim(10);
    assert.equal(claimed.length, 1, 'worker A holds it and then "dies"');
    const b = worker(store, clock, 1000);
    let ran = 0;
    b.register(job<null>('test.leased', [1], async () => void ran++), null);
    assert.equal(await b.drain(), 0, 'leased to A');
    await new Promise((r) => setTimeout(r, 1050));
    assert.equal(await b.drain(), 1);
    assert.equal(ran, 1);
    const r = await row('test.leased');
    assert.equal(r.status, 'DONE');
    assert.equal(r.attempts, 2);
  });

  test('two workers on one database run each job exactly once', async () => {
    const counts = new Map<number, number>();
    const shared = job<{ i: number }>('test.shared', [1], async ({ i }) => {
      counts.set(i, (counts.get(i) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 2));
    });
    for (let i = 0; i < 40; i++) await add(shared, { i });
    // PostgreSQL: two pools, as two instances. SQLite serves one process per file for
    // writers (a second in-process connection would block the event loop on the lock).
    const s2 = engine === 'postgres' ? openDatabase(url) : store;
    try {
      const clock2 = new ServiceClock(s2.db);
      await clock2.refresh();
      const w1 = worker(store);
      const w2 = worker(s2, clock2);
      w1.register(shared, null);
      w2.register(shared, null);
      await Promise.all([w1.drain(), w2.drain()]);
      assert.equal(counts.size, 40);
      assert.ok([...counts.values()].every((n) => n === 1));
    } finally {
      if (s2 !== store) await s2.close();
    }
  });

  test('enqueue keeps the store a job is for, and none when not given', async () => {
    const def = job<{ s: number }>('test.storeof', [1], async () => {});
    await enqueue(store.db, def, { s: 1 }, { runAt: clock.nowMs(), now: clock.nowMs(), storeCode: 'S9' });
    await enqueue(store.db, def, { s: 2 }, { runAt: clock.nowMs(), now: clock.nowMs() });
    const rows = await store.db.selectFrom('jobs').select(['payload', 'store_code']).where('kind', '=', 'test.storeof').execute();
    assert.deepEqual(rows.map((r) => [JSON.parse(r.payload).s, r.store_code]).sort(), [[1, 'S9'], [2, null]]);
  });

  test('a unique key makes a second enqueue a no-op', async () => {
    const once = job<{ a: number }>('test.once', [1], async () => {});
    await add(once, { a: 1 }, 'once:1');
    await add(once, { a: 2 }, 'once:1');
    await add(once, { a: 3 }, 'once:2');
    const rows = await store.db.selectFrom('jobs').select('payload').where('kind', '=', 'test.once').orderBy('created_at').execute();
    assert.deepEqual(rows.map((r) => JSON.parse(r.payload)).sort((x, y) => x.a - y.a), [{ a: 1 }, { a: 3 }]);
  });
});
