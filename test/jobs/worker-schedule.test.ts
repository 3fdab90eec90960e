import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely, KyselyPlugin } from 'kysely';
import pino from 'pino';
import { migrate, openDatabase, type Database, type DatabaseHandle } from '../../src/db/index.js';
import { defineJob, enqueue, type JobDefinition } from '../../src/jobs/define.js';
import { OutboundFailure } from '../../src/jobs/outbound.js';
import { JobWorker, type WorkerOptions } from '../../src/jobs/worker.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { captureLog } from '../helpers/log.js';
import { eventually } from '../helpers/wait.js';

/**
 * The worker's own timing and bookkeeping, through the ports it takes: a clock whose refresh
 * (the first step of every poll) the test counts and can hold, a logger whose lines the test
 * reads, and a database it can make fail. Polls are counted by refreshes; a poll interval of
 * ten minutes means "never within this test", so a second poll can only come from a wake.
 */
const NEVER = 600_000;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

class TestClock {
  t = Date.UTC(2026, 0, 1);
  refreshes = 0;
  /** While set, a refresh (so a poll) waits for it. */
  hold: Promise<void> | null = null;
  failNext: Error | null = null;
  nowMs(): number {
    return this.t;
  }
  now(): Date {
    return new Date(this.t);
  }
  async refresh(): Promise<number> {
    this.refreshes++;
    if (this.failNext) {
      const e = this.failNext;
      this.failNext = null;
      throw e;
    }
    if (this.hold) await this.hold;
    return 0;
  }
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => { open = r; });
  return { opened, open };
}


forEachEngine('job worker timing', (engine) => {
  let drop: () => Promise<void>;
  let store: DatabaseHandle;
  /** Set to make every UPDATE through `failing` throw, as with the database away. */
  let updatesFail = false;
  let failing: Kysely<Database>;
  /** Queries through `counted`, by kind of statement. */
  const queries = new Map<string, number>();
  let counted: Kysely<Database>;
  before(async () => {
    const d = await createTestDatabase(engine);
    drop = d.drop;
    store = openDatabase(d.url);
    await migrate(store.db);
    const plugin: KyselyPlugin = {
      transformQuery: ({ node }) => {
        if (updatesFail && node.kind === 'UpdateQueryNode') throw new Error('database away');
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    failing = store.db.withPlugin(plugin);
    counted = store.db.withPlugin({
      transformQuery: ({ node }) => {
        queries.set(node.kind, (queries.get(node.kind) ?? 0) + 1);
        return node;
      },
      transformResult: async ({ result }) => result,
    });
  });
  after(async () => {
    await store?.close();
    await drop?.();
  });

  let n = 0;
  /** A fresh kind per test, so one test's rows never reach another's worker. */
  const kind = () => {
    const i = n++;
    return `test.timing-${String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26))}`;
  };
  const make = (clock: TestClock, opts: Partial<WorkerOptions> = {}, log = pino({ level: 'silent' }), db: Kysely<Database> = store.db) =>
    new JobWorker(db, store.engine, clock, log, { pollMs: NEVER, leaseMs: 60_000, concurrency: 8, batch: 8, ...opts });
  const add = (def: JobDefinition<unknown, null>, clock: TestClock, payload: unknown = {}) =>
    enqueue(store.db, def, payload, { runAt: clock.nowMs(), now: clock.nowMs() });
  const rowOf = (k: string) => store.db.selectFrom('jobs').selectAll().where('kind', '=', k).executeTakeFirstOrThrow();

  test('start polls at once, and once: a second start and a wake during the poll start no other', async () => {
    const clock = new TestClock();
    const held = gate();
    clock.hold = held.opened;
    const w = make(clock);
    w.start();
    await eventually(async () => clock.refreshes === 1, 'the first poll');
    w.start();
    w.wake();
    await pause(100);
    assert.equal(clock.refreshes, 1, 'no poll beside the one in progress');
    clock.hold = null;
    held.open();
    // The wake that came during the poll is kept: one more poll follows at once...
    await eventually(async () => clock.refreshes === 2, 'the poll the wake asked for');
    // ...and only one: then the worker waits its interval (ten minutes).
    await pause(150);
    assert.equal(clock.refreshes, 2);
    await w.stop();
  });

  test('a wake while idle polls before the interval; without one, the next poll waits the interval', async () => {
    const clock = new TestClock();
    const k = kind();
    let ran = 0;
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => void ran++ });
    const w = make(clock);
    w.register(def, null);
    w.start();
    await eventually(async () => clock.refreshes === 1, 'the first poll');
    await add(def, clock);
    await pause(150);
    assert.equal(ran, 0, 'a job enqueued after the poll waits for the next one');
    assert.equal(clock.refreshes, 1);
    w.wake();
    await eventually(async () => ran === 1, 'the woken poll ran the job');
    await w.stop();
  });

  test('a clock without refresh (a plain clock) still polls and runs jobs', async () => {
    const t = new TestClock();
    const plain = { nowMs: () => t.nowMs(), now: () => t.now() };
    const k = kind();
    let ran = 0;
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => void ran++ });
    await add(def, t);
    const { log, msgs } = captureLog();
    const w = new JobWorker(store.db, store.engine, plain, log, { pollMs: NEVER, leaseMs: 60_000, concurrency: 8, batch: 8 });
    w.register(def, null);
    w.start();
    await eventually(async () => ran === 1, 'the job ran');
    await w.stop();
    assert.deepEqual(msgs('job poll failed'), []);
  });

  test('drain stops at the first round that finds nothing', async () => {
    const clock = new TestClock();
    const k = kind();
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => {} });
    await add(def, clock);
    const w = make(clock, {}, pino({ level: 'silent' }), counted);
    w.register(def, null);
    queries.clear();
    assert.equal(await w.drain(), 1);
    const rounds = queries.get('SelectQueryNode') ?? 0;
    queries.clear();
    assert.equal(await w.drain(), 0);
    const empty = queries.get('SelectQueryNode') ?? 0;
    assert.ok(empty > 0, 'an empty round reads the queue');
    // The run's round and the empty one that ends the drain: twice an empty round's reads.
    assert.equal(rounds, 2 * empty);
  });

  test('the poll runs again after its interval, by itself', async () => {
    const clock = new TestClock();
    const w = make(clock, { pollMs: 20 });
    w.start();
    await eventually(async () => clock.refreshes >= 4, 'four polls without a wake');
    await w.stop();
  });

  test('a failed poll is logged and polling goes on', async () => {
    const clock = new TestClock();
    const { log, msgs } = captureLog();
    clock.failNext = new Error('settings unreadable');
    const w = make(clock, { pollMs: 20 }, log);
    w.start();
    await eventually(async () => clock.refreshes >= 3, 'polls after the failed one');
    await w.stop();
    assert.deepEqual(msgs('job poll failed').map((l) => [l.level, l.err]), [[40, 'settings unreadable']]);
  });

  test('after stop no poll follows: neither the pending timer, nor the end of a poll in progress, nor a wake', async () => {
    const clock = new TestClock();
    const w = make(clock, { pollMs: 20 });
    w.start();
    await eventually(async () => clock.refreshes >= 2, 'polling');
    await w.stop();
    const seen = clock.refreshes;
    w.wake();
    await pause(150);
    assert.equal(clock.refreshes, seen, 'stopped between polls');

    const clock2 = new TestClock();
    const held = gate();
    clock2.hold = held.opened;
    const w2 = make(clock2, { pollMs: 20 });
    w2.start();
    await eventually(async () => clock2.refreshes === 1, 'a poll in progress');
    let stopped = false;
    const stopping = w2.stop().then(() => { stopped = true; });
    await pause(50);
    assert.equal(stopped, false, 'stop waits for the poll in progress');
    held.open();
    await stopping;
    await pause(150);
    assert.equal(clock2.refreshes, 1, 'stopped during a poll');
  });

  test('stop waits for the jobs in flight', async () => {
    const clock = new TestClock();
    const k = kind();
    const hang = gate();
    let started = false;
    let done = false;
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => { started = true; await hang.opened; done = true; } });
    await add(def, clock);
    const w = make(clock);
    w.register(def, null);
    w.start();
    await eventually(async () => started, 'the job started');
    let stopped = false;
    const stopping = w.stop().then(() => { stopped = true; });
    await pause(50);
    assert.equal(stopped, false);
    hang.open();
    await stopping;
    assert.equal(done, true);
    assert.equal((await rowOf(k)).status, 'DONE');
  });

  test('concurrency bounds the jobs running at once; a finished job frees its slot for the next at once', async () => {
    const clock = new TestClock();
    const k = kind();
    const hang = gate();
    let running = 0;
    let peak = 0;
    let ran = 0;
    const def = defineJob<unknown, null>({
      kind: k, backoffSeconds: [1], run: async () => {
        running++;
        peak = Math.max(peak, running);
        await hang.opened;
        running--;
        ran++;
      },
    });
    for (let i = 0; i < 3; i++) await add(def, clock, { i });
    const w = make(clock, { concurrency: 2 });
    w.register(def, null);
    w.start();
    await eventually(async () => running === 2, 'two running');
    await pause(100);
    assert.equal(peak, 2, 'never three');
    hang.open();
    // The poll interval is ten minutes: the third job runs because the finished ones woke the worker.
    await eventually(async () => ran === 3, 'the third job ran');
    assert.equal(peak, 2);
    await w.stop();
  });

  test('one poll claims at most a batch', async () => {
    const clock = new TestClock();
    const k = kind();
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => {} });
    for (let i = 0; i < 5; i++) await add(def, clock, { i });
    const w = make(clock, { batch: 2 });
    w.register(def, null);
    assert.equal(await w.drain(1), 2);
    assert.equal(await w.drain(1), 2);
    assert.equal(await w.drain(), 1);
  });

  test('leases are renewed while a run lasts: a slow run stays this worker\'s past its lease', async () => {
    const clock = new TestClock();
    const k = kind();
    const hang = gate();
    let started = false;
    let runs = 0;
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => { runs++; started = true; await hang.opened; } });
    await add(def, clock);
    const leaseMs = 1200;
    const w = make(clock, { leaseMs });
    w.register(def, null);
    const draining = w.drain();
    await eventually(async () => started, 'the run started');
    const first = Number((await rowOf(k)).lease_until);
    const since = Date.now();
    await eventually(async () => Number((await rowOf(k)).lease_until) > first, 'a renewal');
    // Twice the lease has passed: without renewals (every 400 ms) another worker could take it now.
    await pause(Math.max(0, since + 2 * leaseMs - Date.now()));
    const other = make(clock, { leaseMs });
    other.register(def, null);
    assert.deepEqual(await other.claim(10), [], 'still leased to the running worker');
    assert.ok(Number((await rowOf(k)).lease_until) > Date.now(), 'the lease is ahead of real time');
    hang.open();
    await draining;
    const r = await rowOf(k);
    assert.equal(r.status, 'DONE');
    assert.equal(r.lease_until, null);
    assert.equal(runs, 1);
  });

  test('no renewal before a third of the lease has passed, and none after the run', async () => {
    const clock = new TestClock();
    const k = kind();
    const hang = gate();
    let started = false;
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => { started = true; await hang.opened; } });
    await add(def, clock);
    // A minute's lease is renewed every 20 s: a run of a few hundred ms is never renewed.
    const w = make(clock, { leaseMs: 60_000 });
    w.register(def, null);
    const draining = w.drain();
    await eventually(async () => started, 'the run started');
    const first = (await rowOf(k)).lease_until;
    await pause(300);
    assert.equal((await rowOf(k)).lease_until, first);
    hang.open();
    await draining;

    // Renewals every 100 ms while a run lasts; once it ended, no more writes.
    const k2 = kind();
    const hang2 = gate();
    let started2 = false;
    const def2 = defineJob<unknown, null>({ kind: k2, backoffSeconds: [1], run: async () => { started2 = true; await hang2.opened; } });
    await add(def2, clock);
    const w2 = make(clock, { leaseMs: 300 }, pino({ level: 'silent' }), counted);
    w2.register(def2, null);
    const draining2 = w2.drain();
    await eventually(async () => started2, 'the second run started');
    queries.clear();
    await eventually(async () => (queries.get('UpdateQueryNode') ?? 0) >= 2, 'renewals during the run');
    hang2.open();
    await draining2;
    queries.clear();
    await pause(350);
    assert.equal(queries.get('UpdateQueryNode') ?? 0, 0, 'no renewal after the run');
    assert.equal((await rowOf(k2)).status, 'DONE');
  });

  test('when one of two runs ends, the other\'s lease is still renewed', async () => {
    const clock = new TestClock();
    const k = kind();
    const hangs = new Map<number, ReturnType<typeof gate>>([[1, gate()], [2, gate()]]);
    const started = new Set<number>();
    const def = defineJob<{ i: number }, null>({ kind: k, backoffSeconds: [1], run: async ({ i }) => { started.add(i); await hangs.get(i)!.opened; } });
    await add(def as JobDefinition<unknown, null>, clock, { i: 1 });
    await add(def as JobDefinition<unknown, null>, clock, { i: 2 });
    const leaseMs = 1200;
    const w = make(clock, { leaseMs });
    w.register(def, null);
    const draining = w.drain();
    await eventually(async () => started.size === 2, 'both runs started');
    hangs.get(1)!.open();
    await eventually(async () => (await store.db.selectFrom('jobs').select('status').where('kind', '=', k).where('status', '=', 'DONE').execute()).length === 1, 'the first run recorded');
    const since = Date.now();
    // Twice the lease after the first run ended: the second is still renewed (every 400 ms).
    await pause(Math.max(0, since + 2 * leaseMs - Date.now()));
    const other = make(clock, { leaseMs });
    other.register(def, null);
    assert.deepEqual(await other.claim(10), [], 'the running job is still leased');
    hangs.get(2)!.open();
    await draining;
    assert.deepEqual((await store.db.selectFrom('jobs').select('status').where('kind', '=', k).execute()).map((r) => r.status), ['DONE', 'DONE']);
  });

  test('a renewal the database refuses is logged; so is an end that cannot be recorded, and the job keeps its row', async () => {
    const clock = new TestClock();
    const k = kind();
    const hang = gate();
    let started = false;
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => { started = true; await hang.opened; } });
    await add(def, clock);
    const { log, msgs } = captureLog();
    // leaseMs 150: renewals every 100 ms (the shortest interval the worker uses).
    const w = make(clock, { leaseMs: 150 }, log, failing);
    w.register(def, null);
    const draining = w.drain();
    await eventually(async () => started, 'the run started');
    assert.deepEqual(msgs('could not renew job leases'), []);
    updatesFail = true;
    try {
      await eventually(async () => msgs('could not renew job leases').length > 0, 'a failed renewal logged');
      hang.open();
      // The lease (150 ms) runs out 50 ms after the first refused renewal: on a loaded machine the
      // drain's next poll finds the job due again, and its claim is refused like every update.
      // Either way nothing is claimed while the database is away.
      await draining.catch((err: Error) => assert.equal(err.message, 'database away'));
    } finally {
      updatesFail = false;
    }
    assert.deepEqual(msgs('could not renew job leases').map((l) => [l.level, l.err])[0], [40, 'database away']);
    const id = (await rowOf(k)).id;
    assert.deepEqual(msgs('could not record the end of a job attempt').map((l) => [l.level, l.job, l.error]), [[50, id, 'database away']]);
    const r = await rowOf(k);
    assert.equal(r.status, 'PENDING', 'left for the lease to expire');
    assert.equal(r.attempts, 1);
  });

  test('a run whose lease was taken over meanwhile is not recorded, and says so', async () => {
    const clock = new TestClock();
    const k = kind();
    const hang = gate();
    let started = false;
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [1], run: async () => { started = true; await hang.opened; } });
    await add(def, clock);
    const { log, msgs } = captureLog();
    const w = make(clock, {}, log);
    w.register(def, null);
    const draining = w.drain();
    await eventually(async () => started, 'the run started');
    await store.db.updateTable('jobs').set({ lease_owner: 'someone-else' }).where('kind', '=', k).execute();
    hang.open();
    await draining;
    const r = await rowOf(k);
    assert.equal(r.status, 'PENDING');
    assert.equal(r.lease_owner, 'someone-else');
    assert.deepEqual(msgs('job lease lost while it ran; the worker that holds it now decides').map((l) => [l.level, l.job, l.kind]), [[40, r.id, k]]);

    // The other side: a run that kept its lease is recorded and logs nothing of the kind.
    const k2 = kind();
    const def2 = defineJob<unknown, null>({ kind: k2, backoffSeconds: [1], run: async () => {} });
    await add(def2, clock);
    w.register(def2, null);
    await w.drain();
    assert.equal((await rowOf(k2)).status, 'DONE');
    assert.equal(msgs('job lease lost while it ran; the worker that holds it now decides').length, 1);
  });

  test('a failed attempt: the warning names the job, kind, attempt, finality and error; onFailure is told', async () => {
    const clock = new TestClock();
    const k = kind();
    const def = defineJob<unknown, null>({ kind: k, backoffSeconds: [5], run: async () => { throw new Error('receiver down'); } });
    await add(def, clock);
    const { log, msgs } = captureLog();
    const failures: [string, boolean][] = [];
    const w = make(clock, { onFailure: (kd, final) => void failures.push([kd, final]) }, log);
    w.register(def, null);
    await w.drain();
    clock.t += 5000;
    await w.drain();
    const id = (await rowOf(k)).id;
    assert.deepEqual(msgs('job attempt failed').map(({ level, job, kind: kd, attempt, final, error }) => ({ level, job, kind: kd, attempt, final, error })), [
      { level: 40, job: id, kind: k, attempt: 1, final: false, error: 'receiver down' },
      { level: 40, job: id, kind: k, attempt: 2, final: true, error: 'receiver down' },
    ]);
    assert.deepEqual(failures, [[k, false], [k, true]]);
    assert.equal((await rowOf(k)).status, 'DEAD');
  });

  test('the error kept is the first 500 characters of the message; a thrown non-Error is kept as text', async () => {
    const clock = new TestClock();
    const long = defineJob<unknown, null>({ kind: kind(), backoffSeconds: [5], run: async () => { throw new Error(`${'x'.repeat(500)}TAIL`); } });
    const text = defineJob<unknown, null>({ kind: kind(), backoffSeconds: [5], run: async () => { throw 'plain text'; } });
    const nothing = defineJob<unknown, null>({ kind: kind(), backoffSeconds: [5], run: async () => { throw null; } });
    await add(long, clock);
    await add(text, clock);
    await add(nothing, clock);
    const w = make(clock);
    w.register(long, null);
    w.register(text, null);
    w.register(nothing, null);
    await w.drain();
    assert.equal((await rowOf(nothing.kind)).last_error, 'null');
    assert.equal((await rowOf(nothing.kind)).status, 'PENDING');
    assert.equal((await rowOf(long.kind)).last_error, 'x'.repeat(500));
    assert.equal((await rowOf(text.kind)).last_error, 'plain text');
    assert.equal((await rowOf(text.kind)).run_at, clock.t + 5000);
  });

  test('Retry-After: the pause asked for when longer than the delay (whole seconds up), the delay when shorter, a day at most', async () => {
    const clock = new TestClock();
    const cases: { pauseMs: number | null; plain?: boolean; expect: number }[] = [
      { pauseMs: 120_001, expect: 121 },
      { pauseMs: 120_000, expect: 120 },
      { pauseMs: 29_000, expect: 30 },
      { pauseMs: 31_000, expect: 31 },
      { pauseMs: null, expect: 30 },
      { pauseMs: 10 * 86_400_000, expect: 86_400 },
      { pauseMs: 86_399_000, expect: 86_399 },
      { pauseMs: 120_000, plain: true, expect: 30 },
    ];
    const w = make(clock);
    const defs = cases.map((c) => {
      const def = defineJob<unknown, null>({
        kind: kind(), backoffSeconds: [30],
        run: async () => {
          // A plain error carrying the same field is not a receiver's answer: no pause.
          throw c.plain ? Object.assign(new Error('HTTP 429'), { retryAfterMs: c.pauseMs }) : new OutboundFailure('HTTP 429', 429, c.pauseMs);
        },
      });
      w.register(def, null);
      return def;
    });
    for (const def of defs) await add(def, clock);
    await w.drain();
    for (const [i, def] of defs.entries()) {
      const r = await rowOf(def.kind);
      assert.equal(r.status, 'PENDING');
      assert.equal(r.run_at - clock.t, cases[i]!.expect * 1000, `case ${i}: ${JSON.stringify(cases[i])}`);
    }
  });

  test('Retry-After does not keep a job past its last attempt', async () => {
    const clock = new TestClock();
    const def = defineJob<unknown, null>({ kind: kind(), backoffSeconds: [], run: async () => { throw new OutboundFailure('HTTP 503', 503, 60_000); } });
    await add(def, clock);
    const w = make(clock);
    w.register(def, null);
    await w.drain();
    const r = await rowOf(def.kind);
    assert.equal(r.status, 'DEAD');
    assert.equal(r.run_at, clock.t);
  });

  test('a row written under a longer schedule keeps its attempts, retrying after the definition\'s last delay', async () => {
    const clock = new TestClock();
    const k = kind();
    const old = defineJob<unknown, null>({ kind: k, backoffSeconds: [1, 1, 1], run: async () => {} });
    await add(old, clock);
    let runs = 0;
    const now = defineJob<unknown, null>({ kind: k, backoffSeconds: [7, 11], run: async () => { runs++; throw new Error('no'); } });
    const w = make(clock);
    w.register(now, null);
    for (const delay of [7, 11, 11]) {
      await w.drain();
      const r = await rowOf(k);
      assert.equal(r.status, 'PENDING');
      assert.equal(r.run_at - clock.t, delay * 1000);
      clock.t = r.run_at;
    }
    await w.drain();
    assert.equal(runs, 4);
    assert.equal((await rowOf(k)).status, 'DEAD');
  });
});
