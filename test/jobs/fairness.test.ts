import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { defineJob, enqueue } from '../../src/jobs/define.js';
import { JobWorker } from '../../src/jobs/worker.js';
import { ServiceClock } from '../../src/platform/clock.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase, insertStores } from '../helpers/db.js';
import { eventually } from '../helpers/wait.js';

const silent = pino({ level: 'silent' });

/**
 * Fairness of the queue: a store's jobs (callbacks, webhooks) run at most perStore at once
 * over every instance, so a store whose receivers hang cannot hold the other stores' work.
 */
forEachEngine('job fairness', (engine) => {
  let drop: () => Promise<void>;
  let handles: DatabaseHandle[] = [];
  let clock: ServiceClock;
  before(async () => {
    const d = await createTestDatabase(engine);
    drop = d.drop;
    handles = [openDatabase(d.url), openDatabase(d.url)];
    await migrate(handles[0]!.db);
    clock = new ServiceClock(handles[0]!.db);
  });
  after(async () => {
    for (const h of handles) await h.close();
    await drop?.();
  });

  /** A job that hangs until released, counting how many of each store run at once. */
  function hangingKind(kind: string) {
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const ran: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => { release = r; });
    const def = defineJob<{ store: string; hang: boolean }, null>({
      kind, backoffSeconds: [60],
      async run({ store, hang }) {
        running.set(store, (running.get(store) ?? 0) + 1);
        peak.set(store, Math.max(peak.get(store) ?? 0, running.get(store)!));
        ran.push(store);
        if (hang) await released;
        running.set(store, running.get(store)! - 1);
      },
    });
    return { def, running, peak, ran, release };
  }
  const workerOn = (h: DatabaseHandle, perStore: number | undefined, reserve?: number, perPlatform?: number) =>
    new JobWorker(h.db, h.engine, clock, silent, { pollMs: 20, leaseMs: 60_000, concurrency: 8, batch: 8, perStore, reserve, perPlatform });

  test('two instances run at most perStore of one store\'s hanging jobs; another store\'s job runs at once', async () => {
    const k = hangingKind('test.hangtwo');
    const workers = handles.map((h) => workerOn(h, 3));
    for (const w of workers) w.register(k.def, null);
    const now = clock.nowMs();
    for (let i = 0; i < 40; i++) await enqueue(handles[0]!.db, k.def, { store: 'A', hang: true }, { runAt: now, now, storeCode: 'A' });
    for (const w of workers) w.start();
    await eventually(async () => k.running.get('A') === 3, '3 of store A running');
    await enqueue(handles[0]!.db, k.def, { store: 'B', hang: false }, { runAt: now, now, storeCode: 'B' });
    for (const w of workers) w.wake();
    await eventually(async () => k.ran.includes('B'), 'store B ran while A hangs');
    // Polls go on; A never gets a fourth slot while three hang (the rule's other side: 3 did run).
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(k.peak.get('A'), 3);
    assert.equal(k.ran.filter((s) => s === 'A').length, 3);
    k.release();
    await eventually(async () => k.ran.filter((s) => s === 'A').length === 40, 'every A job ran once released');
    assert.equal(k.peak.get('A'), 3);
    await Promise.all(workers.map((w) => w.stop()));
  });

  test('without a store, jobs are not limited: all hang at once up to the instance\'s concurrency', async () => {
    const k = hangingKind('test.hangfree');
    const w = workerOn(handles[1]!, 2);
    w.register(k.def, null);
    const now = clock.nowMs();
    for (let i = 0; i < 6; i++) await enqueue(handles[1]!.db, k.def, { store: '-', hang: true }, { runAt: now, now });
    w.start();
    await eventually(async () => k.running.get('-') === 6, 'all 6 running');
    k.release();
    await w.stop();
  });

  test('spare capacity: beyond the reserve a store may use more than its limit; the reserve stays for the others', async () => {
    const k = hangingKind('test.hangspare');
    const w = workerOn(handles[0]!, 2, 3);
    w.register(k.def, null);
    const now = clock.nowMs();
    for (let i = 0; i < 20; i++) await enqueue(handles[0]!.db, k.def, { store: 'S', hang: true }, { runAt: now, now, storeCode: 'S' });
    w.start();
    // 8 slots, 3 kept: 5 of the store run (2 within its limit, 3 spare), never 6.
    await eventually(async () => k.running.get('S') === 5, '5 of the store running');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(k.peak.get('S'), 5);
    await enqueue(handles[0]!.db, k.def, { store: 'T', hang: false }, { runAt: now, now, storeCode: 'T' });
    w.wake();
    await eventually(async () => k.ran.includes('T'), 'another store ran in the reserve');
    k.release();
    await w.stop();
  });

  test('across platforms: 20 stores of one platform hang; its jobs hold perPlatform plus the spare slots, never the reserve, and another platform\'s job runs at once', async () => {
    const k = hangingKind('test.hangplatform');
    const now = clock.nowMs();
    const big = Array.from({ length: 20 }, (_, i) => `BIG-${engine}-${i}`);
    await insertStores(handles[0]!.db, `PBIG-${engine}`, big, now);
    await insertStores(handles[0]!.db, `PSMALL-${engine}`, [`SMALL-${engine}`], now);
    // 8 slots, 3 kept for fairness, 2 per store, 3 per platform.
    const w = workerOn(handles[0]!, 2, 3, 3);
    w.register(k.def, null);
    for (const s of big) for (let i = 0; i < 2; i++) await enqueue(handles[0]!.db, k.def, { store: 'BIG', hang: true }, { runAt: now, now, storeCode: s });
    w.start();
    try {
      // 3 by the platform's room, 2 spare (8 - 3 kept - 3): 5, never 6, though every store is under its own limit.
      await eventually(async () => k.running.get('BIG') === 5, '5 of the big platform running');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(k.peak.get('BIG'), 5);
      await enqueue(handles[0]!.db, k.def, { store: 'SMALL', hang: false }, { runAt: now, now, storeCode: `SMALL-${engine}` });
      w.wake();
      await eventually(async () => k.ran.includes('SMALL'), 'the other platform\'s job ran while the big one hangs', 2_000);
      k.release();
      await eventually(async () => k.ran.filter((s) => s === 'BIG').length === 40, 'every job of the big platform ran once released');
    } finally {
      k.release();
      await w.stop();
    }
  });
});
