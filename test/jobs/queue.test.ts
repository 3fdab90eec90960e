import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { migrate, openStore, type Store } from '../../src/db/index.js';
import { enqueue, JobWorker } from '../../src/jobs/queue.js';
import { ServiceClock } from '../../src/platform/clock.js';
import { createTestDatabase, engines } from '../helpers/db.js';

const silent = pino({ level: 'silent' });

for (const engine of engines) {
  describe(`durable jobs [${engine}]`, () => {
    let url: string;
    let drop: () => Promise<void>;
    let store: Store;
    let clock: ServiceClock;
    before(async () => {
      ({ url, drop } = await createTestDatabase(engine));
      store = openStore(url);
      await migrate(store.db);
      clock = new ServiceClock(store.db);
    });
    after(async () => {
      await store?.close();
      await drop?.();
    });

    const worker = (s: Store, c = clock, leaseMs = 60_000) => new JobWorker(s.db, s.engine, c, silent, { pollMs: 20, leaseMs });
    const add = (kind: string, payload: unknown, extra: { uniqueKey?: string; maxAttempts?: number } = {}) =>
      enqueue(store.db, { kind, payload, runAt: clock.nowMs(), maxAttempts: extra.maxAttempts ?? 3, uniqueKey: extra.uniqueKey }, clock.nowMs());
    const row = (kind: string) => store.db.selectFrom('jobs').selectAll().where('kind', '=', kind).executeTakeFirstOrThrow();

    test('a failing job is retried on its schedule by the service clock, then given up', async () => {
      const w = worker(store);
      let runs = 0;
      w.register('flaky', { backoffSeconds: [30, 120], run: async () => { runs++; throw new Error('receiver down'); } });
      await add('flaky', {});
      assert.equal(await w.drain(), 1);
      assert.equal(runs, 1);
      const first = await row('flaky');
      assert.equal(first.status, 'PENDING');
      assert.equal(first.last_error, 'receiver down');
      assert.ok(first.run_at >= clock.nowMs() + 29_000, 'next attempt 30 s later');
      assert.equal(await w.drain(), 0, 'not due yet');
      await clock.advance(30);
      assert.equal(await w.drain(), 1);
      await clock.advance(120);
      assert.equal(await w.drain(), 1);
      assert.equal(runs, 3);
      assert.equal((await row('flaky')).status, 'DEAD');
      await clock.advance(100_000);
      assert.equal(await w.drain(), 0, 'no attempt after the last');
    });

    test('jobs survive a restart: another process picks up what was committed', async () => {
      await add('durable', { n: 1 });
      // A new connection and worker, as after a restart.
      const store2 = openStore(url);
      try {
        const clock2 = new ServiceClock(store2.db);
        await clock2.refresh();
        const w = worker(store2, clock2);
        const seen: unknown[] = [];
        w.register('durable', { backoffSeconds: [1], run: async (job) => { seen.push(job.data); } });
        assert.equal(await w.drain(), 1);
        assert.deepEqual(seen, [{ n: 1 }]);
        assert.equal((await row('durable')).status, 'DONE');
      } finally {
        await store2.close();
      }
    });

    test('a crashed worker\'s lease expires and another worker runs the job', async () => {
      await add('leased', {});
      const a = worker(store, clock, 300);
      a.register('leased', { backoffSeconds: [1], run: async () => {} });
      const claimed = await a.claim(10);
      assert.equal(claimed.length, 1, 'worker A holds it and then "dies"');
      const b = worker(store, clock, 300);
      let ran = 0;
      b.register('leased', { backoffSeconds: [1], run: async () => { ran++; } });
      assert.equal(await b.drain(), 0, 'leased to A');
      await new Promise((r) => setTimeout(r, 350));
      assert.equal(await b.drain(), 1);
      assert.equal(ran, 1);
      const r = await row('leased');
      assert.equal(r.status, 'DONE');
      assert.equal(r.attempts, 2);
    });

    test('two workers on one database run each job exactly once', async () => {
      for (let i = 0; i < 40; i++) await add('shared', { i });
      const counts = new Map<number, number>();
      const run = async (job: { data: { i: number } }) => {
        counts.set(job.data.i, (counts.get(job.data.i) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 2));
      };
      // PostgreSQL: two pools, as two instances. SQLite serves one process per file for
      // writers (a second in-process connection would block the event loop on the lock).
      const s2 = engine === 'postgres' ? openStore(url) : store;
      try {
        const clock2 = new ServiceClock(s2.db);
        await clock2.refresh();
        const w1 = worker(store);
        const w2 = worker(s2, clock2);
        w1.register('shared', { backoffSeconds: [1], run });
        w2.register('shared', { backoffSeconds: [1], run });
        await Promise.all([w1.drain(), w2.drain()]);
        assert.equal(counts.size, 40);
        assert.ok([...counts.values()].every((n) => n === 1));
      } finally {
        if (s2 !== store) await s2.close();
      }
    });

    test('a unique key makes a second enqueue a no-op', async () => {
      await add('once', { a: 1 }, { uniqueKey: 'once:1' });
      await add('once', { a: 2 }, { uniqueKey: 'once:1' });
      const rows = await store.db.selectFrom('jobs').select('payload').where('kind', '=', 'once').execute();
      assert.deepEqual(rows.map((r) => JSON.parse(r.payload)), [{ a: 1 }]);
    });
  });
}
