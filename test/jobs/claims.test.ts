import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely, KyselyPlugin } from 'kysely';
import type { Database } from '../../src/db/index.js';
import { claimJobs, countJobsByKind, finishAttempt, insertJob, renewLeases } from '../../src/jobs/repository.js';
import { forEachEngine } from '../helpers/app.js';
import { insertStores, withDatabase } from '../helpers/db.js';

/**
 * The queue's SQL read directly, each rule on both sides of its boundary: what is due, what a
 * live lease keeps, the per-store limit, the spare capacity, and who may renew or end a lease.
 * The worker suites reach the same code through timing; here each claim is one call.
 */
forEachEngine('job claims', (engine) => {
  const store = withDatabase(engine);
  const T = Date.UTC(2026, 5, 15, 10);
  let n = 0;
  /** A fresh kind per test, so one test's rows never reach another's claim. */
  const freshKind = () => `test.claim-${n++}`;

  /** Store codes are per kind (`<kind>/<code>`): live leases count over every kind, so tests must not share stores. */
  async function job(kind: string, o: { runAt?: number; storeCode?: string | null; leaseUntil?: number | null; status?: 'PENDING' | 'DONE' | 'DEAD'; owner?: string } = {}): Promise<string> {
    const payload = `{"n":${n++}}`;
    await insertJob(store.db, { kind, payload, runAt: o.runAt ?? T, maxAttempts: 3, uniqueKey: null, now: T, storeCode: o.storeCode ? `${kind}/${o.storeCode}` : null });
    const row = await store.db.selectFrom('jobs').select('id').where('kind', '=', kind).where('payload', '=', payload).executeTakeFirstOrThrow();
    await store.db.updateTable('jobs').set({
      lease_until: o.leaseUntil ?? null, lease_owner: o.leaseUntil != null ? (o.owner ?? 'other') : null, status: o.status ?? 'PENDING',
    }).where('id', '=', row.id).execute();
    return row.id;
  }
  const claim = (kinds: string[], c: Partial<Parameters<typeof claimJobs>[2]> = {}, db: Kysely<Database> = store.db) =>
    claimJobs(db, store.engine, { kinds, due: T, wall: T, leaseUntil: T + 60_000, owner: 'me', limit: 10, perStore: 2, ...c });
  const lease = (id: string) => store.db.selectFrom('jobs').select(['lease_until', 'lease_owner', 'attempts', 'status', 'run_at', 'last_error']).where('id', '=', id).executeTakeFirstOrThrow();

  test('a job is due at its run_at, not a millisecond before; it is leased to the claimer and its attempt counted', async () => {
    const k = freshKind();
    const now = await job(k, { runAt: T });
    const later = await job(k, { runAt: T + 1 });
    const got = await claim([k]);
    assert.deepEqual(got.map((j) => j.id), [now]);
    assert.equal(got[0]!.kind, k);
    assert.equal(got[0]!.attempts, 1, 'the claim counts itself');
    assert.equal(got[0]!.max_attempts, 3);
    assert.match(got[0]!.payload, /^\{"n":\d+\}$/);
    assert.equal('store_code' in got[0]!, false, 'the store is the queue\'s business, not the job\'s');
    assert.deepEqual(await lease(now), { lease_until: T + 60_000, lease_owner: 'me', attempts: 1, status: 'PENDING', run_at: T, last_error: null });
    assert.deepEqual(await lease(later), { lease_until: null, lease_owner: null, attempts: 0, status: 'PENDING', run_at: T + 1, last_error: null });
    assert.deepEqual((await claim([k], { due: T + 1, wall: T + 1 })).map((j) => j.id), [later], 'the one leased is not claimed again');
  });

  test('only the kinds asked for, only PENDING jobs, in run_at then id order, at most the limit', async () => {
    const k = freshKind();
    const other = freshKind();
    await job(other);
    await job(k, { status: 'DONE' });
    await job(k, { status: 'DEAD' });
    const c = await job(k, { runAt: T - 1 });
    const a = await job(k, { runAt: T - 3 });
    const b = await job(k, { runAt: T - 2 });
    assert.deepEqual((await claim([k], { limit: 2 })).map((j) => j.id), [a, b], 'the limit, in due order');
    assert.deepEqual((await claim([k], { limit: 2 })).map((j) => j.id), [c]);
    assert.deepEqual(await claim([k]), []);
    // Equal run_at: the id decides, so the order is the same on every instance.
    const k2 = freshKind();
    const ids = [await job(k2), await job(k2), await job(k2)];
    assert.deepEqual((await claim([k2])).map((j) => j.id), [...ids].sort());
  });

  test('a live lease keeps a job, to its last millisecond; an expired one does not', async () => {
    const k = freshKind();
    const live = await job(k, { leaseUntil: T });
    const expired = await job(k, { leaseUntil: T - 1 });
    assert.deepEqual((await claim([k])).map((j) => j.id), [expired]);
    assert.equal((await lease(expired)).lease_owner, 'me');
    assert.equal((await lease(live)).lease_owner, 'other');
    assert.deepEqual((await claim([k], { wall: T + 1 })).map((j) => j.id), [live], 'once the lease has run out, it is claimed');
  });

  test('no kinds or no room: nothing is claimed and the database is not asked', async () => {
    const k = freshKind();
    await job(k);
    const seen: string[] = [];
    const plugin: KyselyPlugin = {
      transformQuery: ({ node }) => { seen.push(node.kind); return node; },
      transformResult: async ({ result }) => result,
    };
    const counted = store.db.withPlugin(plugin);
    assert.deepEqual(await claim([], {}, counted), []);
    assert.deepEqual(await claim([k], { limit: 0 }, counted), []);
    assert.deepEqual(await claim([k], { limit: -1 }, counted), []);
    assert.equal(seen.length, 0, `no statement, saw ${seen.join(", ")}`);
    assert.equal((await claim([k], { limit: 1 }, counted)).length, 1, 'a limit of one claims');
    assert.ok(seen.includes('UpdateQueryNode'));
  });

  test('a store with fewer than perStore live leases gets the difference; at its limit none; other stores and store-less jobs are not held', async () => {
    const k = freshKind();
    // Store A already runs one of its jobs (a live lease), store B two, with perStore 2.
    await job(k, { storeCode: 'A', leaseUntil: T + 5_000 });
    await job(k, { storeCode: 'B', leaseUntil: T + 5_000 });
    await job(k, { storeCode: 'B', leaseUntil: T });
    // An expired lease of store C does not count against it.
    await job(k, { storeCode: 'C', leaseUntil: T - 1, runAt: T + 10 });
    const a = [await job(k, { storeCode: 'A', runAt: T - 9 }), await job(k, { storeCode: 'A', runAt: T - 8 })];
    const b = await job(k, { storeCode: 'B', runAt: T - 7 });
    const c = [await job(k, { storeCode: 'C', runAt: T - 6 }), await job(k, { storeCode: 'C', runAt: T - 5 }), await job(k, { storeCode: 'C', runAt: T - 4 })];
    const free = [await job(k, { runAt: T - 3 }), await job(k, { runAt: T - 2 }), await job(k, { runAt: T - 1 })];
    const got = (await claim([k], { perStore: 2 })).map((j) => j.id);
    assert.deepEqual(got, [a[0], c[0], c[1], ...free], 'A gets one more, B none, C two, store-less all');
    assert.ok(!got.includes(b));
    // Now A and C are at their limit too: only B's job waits, for a lease to end.
    assert.deepEqual(await claim([k], { perStore: 2 }), []);
    // Once B's lease at T has run out (wall T + 1), B has room for one.
    assert.deepEqual((await claim([k], { perStore: 2, wall: T + 1 })).map((j) => j.id), [b]);
  });

  test('a store at its limit with a long backlog does not crowd another store\'s later job out of the claim', async () => {
    const k = freshKind();
    await job(k, { storeCode: 'BUSY', leaseUntil: T + 5_000 });
    // Far more due jobs of the busy store than one claim reads (four times its limit), all earlier.
    for (let i = 0; i < 12; i++) await job(k, { storeCode: 'BUSY', runAt: T - 100 + i });
    const quiet = await job(k, { storeCode: 'QUIET', runAt: T });
    assert.deepEqual((await claim([k], { limit: 2, perStore: 1 })).map((j) => j.id), [quiet]);
  });

  test('a platform with fewer than perPlatform live leases over all its stores gets the difference; at its limit none; another platform is not held', async () => {
    const k = freshKind();
    await insertStores(store.db, `${k}/P`, ['p1', 'p2', 'p3', 'p4'].map((s) => `${k}/${s}`), T);
    await insertStores(store.db, `${k}/Q`, [`${k}/q1`], T);
    // Platform P runs two jobs (store p1, each store's limit 2): room for one more at perPlatform 3.
    await job(k, { storeCode: 'p1', leaseUntil: T + 5_000 });
    await job(k, { storeCode: 'p1', leaseUntil: T });
    const p = [await job(k, { storeCode: 'p2', runAt: T - 9 }), await job(k, { storeCode: 'p2', runAt: T - 8 }), await job(k, { storeCode: 'p3', runAt: T - 7 }), await job(k, { storeCode: 'p4', runAt: T - 6 })];
    const q = await job(k, { storeCode: 'q1', runAt: T - 1 });
    assert.deepEqual((await claim([k], { perStore: 2, perPlatform: 3 })).map((j) => j.id), [p[0], q], 'P one more (its first due), Q its own');
    assert.deepEqual(await claim([k], { perStore: 2, perPlatform: 3 }), [], 'P at 3: none');
    // p1's lease at T runs out (wall T + 1): P has room for one again.
    assert.deepEqual((await claim([k], { perStore: 2, perPlatform: 3, wall: T + 1 })).map((j) => j.id), [p[1]]);
    // Without a platform limit, the stores' own limits only.
    const k2 = freshKind();
    await insertStores(store.db, `${k2}/P`, ['a', 'b'].map((s) => `${k2}/${s}`), T);
    const free = [await job(k2, { storeCode: 'a', runAt: T - 2 }), await job(k2, { storeCode: 'b', runAt: T - 1 })];
    assert.deepEqual((await claim([k2], { perStore: 1 })).map((j) => j.id), free);
  });

  test('a platform filled within one claim does not crowd another platform\'s later job out of it (20 stores, far more due than one read)', async () => {
    const k = freshKind();
    const stores = Array.from({ length: 20 }, (_, i) => `${k}/s${i}`);
    await insertStores(store.db, `${k}/BIG`, stores, T);
    await insertStores(store.db, `${k}/SMALL`, [`${k}/quiet`], T);
    for (let round = 0; round < 4; round++) for (let i = 0; i < 20; i++) await job(k, { storeCode: `s${i}`, runAt: T - 1_000 + round * 20 + i });
    const quiet = await job(k, { storeCode: 'quiet', runAt: T });
    const got = await claim([k], { limit: 4, perStore: 4, perPlatform: 2 });
    assert.equal(got.length, 3);
    assert.equal(got[2]!.id, quiet, 'the small platform\'s job, though 80 of the big one are due earlier');
    const platforms = await store.db.selectFrom('jobs').innerJoin('stores', 'stores.code', 'jobs.store_code').select('stores.platform_code')
      .where('jobs.id', 'in', got.map((j) => j.id)).execute();
    assert.deepEqual(platforms.map((r) => r.platform_code).sort(), [`${k}/BIG`, `${k}/BIG`, `${k}/SMALL`]);
  });

  test('a store below its limit is not left out with the full ones', async () => {
    const k = freshKind();
    await job(k, { storeCode: 'A', leaseUntil: T + 5_000 });
    const next = await job(k, { storeCode: 'A' });
    assert.deepEqual((await claim([k], { perStore: 2 })).map((j) => j.id), [next]);
  });

  test('spare capacity: up to `overflow` jobs in all, whatever their store; never more than the limit', async () => {
    const k = freshKind();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await job(k, { storeCode: 'ONE', runAt: T - 10 + i }));
    // perStore 1: one by the store's room; overflow 3 lets two more through; the order stays due order.
    assert.deepEqual((await claim([k], { perStore: 1, limit: 5, overflow: 3 })).map((j) => j.id), ids.slice(0, 3));
    const k2 = freshKind();
    const more: string[] = [];
    for (let i = 0; i < 6; i++) more.push(await job(k2, { storeCode: 'TWO', runAt: T - 10 + i }));
    // An overflow above the limit is bounded by the limit.
    assert.deepEqual((await claim([k2], { perStore: 1, limit: 2, overflow: 9 })).map((j) => j.id), more.slice(0, 2));
    // Without overflow the store's room is all: one, even with the rest still due.
    const k4 = freshKind();
    const four: string[] = [];
    for (let i = 0; i < 3; i++) four.push(await job(k4, { storeCode: 'FOUR', runAt: T - 10 + i }));
    assert.deepEqual((await claim([k4], { perStore: 1, limit: 5 })).map((j) => j.id), [four[0]]);
    // An overflow no greater than what the room already gave adds nothing.
    const k3 = freshKind();
    const three = [await job(k3, { storeCode: 'A', runAt: T - 2 }), await job(k3, { storeCode: 'B', runAt: T - 1 }), await job(k3, { storeCode: 'A' })];
    assert.deepEqual((await claim([k3], { perStore: 1, limit: 5, overflow: 2 })).map((j) => j.id), three.slice(0, 2));
  });

  if (engine === 'postgres') {
    test('a job settled by its old owner while the claim runs is not handed out (PostgreSQL: the claim does not lock rows it reads)', async () => {
      const k = freshKind();
      const settled = await job(k, { leaseUntil: T - 1, owner: 'old', runAt: T - 2 });
      const free = await job(k, { runAt: T - 1 });
      let fired = false;
      // After the claim has read the due rows, the old owner (whose lease ran out) ends its attempt
      // on another connection, as a worker that was merely slow would.
      const plugin: KyselyPlugin = {
        transformQuery: ({ node }) => node,
        transformResult: async ({ result }) => {
          const rows = result.rows as { id?: string; payload?: string }[];
          if (!fired && rows.some((r) => r.id === settled && r.payload !== undefined)) {
            fired = true;
            assert.equal(await finishAttempt(store.db, 'old', settled, { status: 'DONE', error: null, wall: T }), true);
          }
          return result;
        },
      };
      const got = await claim([k], {}, store.db.withPlugin(plugin));
      assert.equal(fired, true);
      assert.deepEqual(got.map((j) => j.id), [free]);
      assert.equal((await lease(settled)).status, 'DONE');
    });

    test('claims of two instances take turns (PostgreSQL: an advisory lock), so a store never runs more than perStore between them', async () => {
      const k = freshKind();
      const ids = [await job(k, { storeCode: 'S', runAt: T - 2 }), await job(k, { storeCode: 'S', runAt: T - 1 })];
      // The first claim pauses just after counting the store's live leases, and lets a second
      // instance's claim run meanwhile (for up to 300 ms: taking turns, it cannot finish sooner).
      let countId: unknown;
      let second: Promise<unknown> | undefined;
      const plugin: KyselyPlugin = {
        transformQuery: ({ node, queryId }) => {
          if (node.kind === 'SelectQueryNode' && node.groupBy) countId = queryId;
          return node;
        },
        transformResult: async ({ result, queryId }) => {
          if (queryId === countId && !second) {
            second = claim([k], { perStore: 1, owner: 'instance-2' });
            await Promise.race([second, new Promise((r) => setTimeout(r, 300))]);
          }
          return result;
        },
      };
      const first = await claim([k], { perStore: 1, owner: 'instance-1' }, store.db.withPlugin(plugin));
      const other = (await second) as { id: string }[];
      assert.deepEqual(first.map((j) => j.id), [ids[0]], 'the first claim, taken first, gets the store\'s one slot');
      assert.deepEqual(other, [], 'the second waited for it and found the store full');
      const live = await store.db.selectFrom('jobs').select('lease_owner').where('kind', '=', k).where('lease_until', '>=', T).execute();
      assert.deepEqual(live.map((r) => r.lease_owner), ['instance-1']);
    });
  }

  test('leases are renewed only for the owner\'s PENDING jobs, and the count tells how many it still holds', async () => {
    const k = freshKind();
    const mine = [await job(k, { leaseUntil: T, owner: 'me' }), await job(k, { leaseUntil: T, owner: 'me' })];
    const theirs = await job(k, { leaseUntil: T, owner: 'them' });
    const done = await job(k, { leaseUntil: T, owner: 'me', status: 'DONE' });
    assert.equal(await renewLeases(store.db, 'me', [...mine, theirs, done], T + 9_000), 2);
    assert.equal((await lease(mine[0]!)).lease_until, T + 9_000);
    assert.equal((await lease(mine[1]!)).lease_until, T + 9_000);
    assert.equal((await lease(theirs)).lease_until, T);
    assert.equal((await lease(done)).lease_until, T);
    assert.equal(await renewLeases(store.db, 'me', [mine[0]!], T + 10_000), 1);
    assert.equal(await renewLeases(store.db, 'me', [], T + 10_000), 0);
  });

  test('an attempt ends only for the lease\'s owner: DONE, PENDING again at a later run_at, or DEAD, with its error', async () => {
    const k = freshKind();
    const [a, b, c] = [await job(k, { leaseUntil: T + 1, owner: 'me' }), await job(k, { leaseUntil: T + 1, owner: 'me' }), await job(k, { leaseUntil: T + 1, owner: 'me' })];
    assert.equal(await finishAttempt(store.db, 'them', a, { status: 'DONE', error: null, wall: T }), false, 'not the owner');
    assert.deepEqual(await lease(a), { lease_until: T + 1, lease_owner: 'me', attempts: 0, status: 'PENDING', run_at: T, last_error: null });
    assert.equal(await finishAttempt(store.db, 'me', a, { status: 'DONE', error: null, wall: T }), true);
    assert.deepEqual(await lease(a), { lease_until: null, lease_owner: null, attempts: 0, status: 'DONE', run_at: T, last_error: null });
    assert.equal(await finishAttempt(store.db, 'me', a, { status: 'DEAD', error: 'late', wall: T }), false, 'an ended attempt cannot end again');
    assert.equal(await finishAttempt(store.db, 'me', b, { status: 'PENDING', runAt: T + 30_000, error: 'HTTP 503', wall: T }), true);
    assert.deepEqual(await lease(b), { lease_until: null, lease_owner: null, attempts: 0, status: 'PENDING', run_at: T + 30_000, last_error: 'HTTP 503' });
    assert.equal(await finishAttempt(store.db, 'me', c, { status: 'DEAD', error: 'gave up', wall: T }), true);
    assert.deepEqual(await lease(c), { lease_until: null, lease_owner: null, attempts: 0, status: 'DEAD', run_at: T, last_error: 'gave up' });
  });

  test('the queue-depth count: jobs of one status, by kind', async () => {
    const [k1, k2, k3] = [freshKind(), freshKind(), freshKind()];
    await job(k1); await job(k1); await job(k2); await job(k2, { status: 'DEAD' }); await job(k3, { status: 'DONE' });
    const mine = (rows: { key: string; n: number }[]) => rows.filter((r) => [k1, k2, k3].includes(r.key)).sort((x, y) => x.key.localeCompare(y.key));
    assert.deepEqual(mine(await countJobsByKind(store.db, 'PENDING')), [{ key: k1, n: 2 }, { key: k2, n: 1 }]);
    assert.deepEqual(mine(await countJobsByKind(store.db, 'DEAD')), [{ key: k2, n: 1 }]);
    assert.deepEqual(mine(await countJobsByKind(store.db, 'DONE')), [{ key: k3, n: 1 }]);
    for (const r of await countJobsByKind(store.db, 'PENDING')) assert.equal(typeof r.n, 'number');
  });
});
