import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Insertable } from 'kysely';
import type { DeliveryTable } from '../../src/db/schema.js';
import { DeliveryLog, RECOVER_MAX } from '../../src/invoicing/delivery-log.js';
import { ENDPOINT_JOB } from '../../src/gateway/endpoints.js';
import { WEBHOOK_JOB } from '../../src/invoicing/webhooks.js';
import { enqueue } from '../../src/jobs/define.js';
import type { DeliveryState } from '../../src/jobs/job-state.js';
import { kstIso } from '../../src/platform/kst.js';
import { forEachEngine } from '../helpers/app.js';
import { afterEachRead, insertStores, withDatabase } from '../helpers/db.js';

/**
 * The delivery log's recovery (docs/reference.md, "Deliveries") on the database itself, at its
 * limit of RECOVER_MAX a call: exactly that many, one more, the rest on the next call; the
 * worker woken only when something was re-queued; a delivery another request reopened
 * meanwhile left to that one.
 */
forEachEngine('delivery recovery', (engine) => {
  const h = withDatabase(engine);
  const T = Date.UTC(2026, 10, 23, 5);
  const clock = { nowMs: () => T + 86_400_000, now: () => new Date(T + 86_400_000) };
  let seq = 0;

  before(async () => {
    await insertStores(h.db, 'PDLOG', ['SDLOG', 'SRACE', 'SMIX', 'SBOTH', 'SMEAN'], T);
  });

  async function failed(storeCode: string, n: number): Promise<void> {
    const rows: Insertable<DeliveryTable>[] = Array.from({ length: n }, () => {
      const i = seq++;
      return {
        id: `dlv_${i.toString(16).padStart(32, '0')}`, store_code: storeCode, kind: 'webhook', number: String(i), ref_id: String(i), trans_seqno: null, bill_id: null,
        event: 'bill.paid', endpoint_id: null, url: 'https://example.com/hook', request_headers: '{}', body: '{}', status: 'failed', attempts: 8,
        last_attempt_at: T + i, created_at: T + i, updated_at: T + i,
      };
    });
    for (let i = 0; i < rows.length; i += 200) await h.db.insertInto('deliveries').values(rows.slice(i, i + 200)).execute();
  }
  /** One webhook delivery of the store in a given state, with its attempt count (and endpoint). */
  async function one(storeCode: string, status: DeliveryState, attempts: number, endpointId: string | null = null): Promise<string> {
    const i = seq++;
    const id = `dlv_${i.toString(16).padStart(32, '0')}`;
    await h.db.insertInto('deliveries').values({
      id, store_code: storeCode, kind: 'webhook', number: String(i), ref_id: endpointId ? `${endpointId}/${i}` : String(i), trans_seqno: null, bill_id: null,
      event: 'bill.paid', endpoint_id: endpointId, url: 'https://example.com/hook', request_headers: '{}', body: '{}', status, attempts,
      last_attempt_at: attempts ? T + i : null, created_at: T + i, updated_at: T + i,
    }).execute();
    return id;
  }
  const refOf = (id: string) => String(parseInt(id.slice(4), 16));
  /** The scheduled webhook job of a delivery, due at `runAt`. */
  const scheduled = (storeCode: string, id: string, runAt: number) => enqueue(h.db, WEBHOOK_JOB, { eventId: Number(refOf(id)) }, { runAt, uniqueKey: `webhook:${refOf(id)}`, now: T, storeCode });
  const jobsOf = async (id: string) => (await h.db.selectFrom('jobs').select(['payload', 'run_at', 'unique_key']).where('kind', '=', WEBHOOK_JOB.kind)
    .where('payload', 'in', [JSON.stringify({ eventId: Number(refOf(id)) }), JSON.stringify({ eventId: Number(refOf(id)), manual: true })]).execute())
    .map((j) => ({ manual: (JSON.parse(j.payload) as { manual?: boolean }).manual === true, runAt: Number(j.run_at), key: j.unique_key }));
  const endpoint = async (id: string, storeCode: string, enabled: number) => h.db.insertInto('webhook_endpoints').values({
    id, store_code: storeCode, url: 'https://example.com/ep', events: '["bill.paid"]', secret_sealed: 'x', old_secret_sealed: null, old_secret_until: null,
    enabled, disabled_reason: enabled ? null : 'disabled by the store', failing_since: null, created_at: T, updated_at: T,
  }).execute();
  const statusOf = async (id: string) => (await h.db.selectFrom('deliveries').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

  const count = async (storeCode: string, status: 'failed' | 'pending') =>
    Number((await h.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('store_code', '=', storeCode).where('status', '=', status).executeTakeFirstOrThrow()).n);
  const jobs = async (storeCode: string) => {
    const rows = await h.db.selectFrom('jobs').select(['payload']).where('kind', '=', WEBHOOK_JOB.kind).where('store_code', '=', storeCode).execute();
    return rows.map((r) => JSON.parse(r.payload) as { eventId: number; manual: boolean });
  };

  test(`recovery re-queues at most ${RECOVER_MAX} a call, says when more are left, and wakes the worker only when it re-queued something`, async () => {
    let wakes = 0;
    const log = new DeliveryLog(h.db, { clock, wake: () => { wakes++; } });
    const since = kstIso(T);
    await failed('SDLOG', RECOVER_MAX);
    assert.deepEqual(await log.recover('SDLOG', since), { requeued: RECOVER_MAX, more: false, skipped: [] }, 'exactly the limit: nothing more');
    assert.equal(wakes, 1);
    assert.equal(await count('SDLOG', 'pending'), RECOVER_MAX);
    const queued = await jobs('SDLOG');
    assert.equal(queued.length, RECOVER_MAX);
    assert.ok(queued.every((j) => j.manual === true));

    await h.db.updateTable('deliveries').set({ status: 'failed' }).where('store_code', '=', 'SDLOG').execute();
    await failed('SDLOG', 1);
    assert.deepEqual(await log.recover('SDLOG', since), { requeued: RECOVER_MAX, more: true, skipped: [] }, 'one over the limit');
    assert.equal(await count('SDLOG', 'failed'), 1, 'the newest waits for the next call');
    // The thousand re-queued are still failing (pending after failed attempts) until their job
    // runs: the next call skips them as on their way, without counting them against the limit,
    // and reaches the newest.
    const third = await log.recover('SDLOG', since);
    assert.equal(third.requeued, 1);
    assert.equal(third.more, false);
    assert.equal(third.skipped.length, RECOVER_MAX);
    assert.ok(third.skipped.every((k) => k.reason === 'on_its_way'));
    assert.equal(wakes, 3);
    const again = await log.recover('SDLOG', since);
    assert.equal(again.requeued, 0);
    assert.equal(again.skipped.length, RECOVER_MAX + 1);
    assert.equal((await jobs('SDLOG')).length, 2 * RECOVER_MAX + 1, 'no job doubled');
    assert.equal(wakes, 3, 'nothing re-queued: no wake-up');
  });

  test('a delivery another request reopened between the read and its turn is left to that one: not counted, no second job', async () => {
    await failed('SRACE', 3);
    const [first] = await h.db.selectFrom('deliveries').select('id').where('store_code', '=', 'SRACE').orderBy('created_at').execute();
    let done = false;
    const racing = afterEachRead(h.db, async (rows) => {
      if (done || rows.length !== 3) return;
      done = true;
      // A redelivery meanwhile: pending again, with its manual job due now.
      await h.db.updateTable('deliveries').set({ status: 'pending' }).where('id', '=', first!.id).execute();
      await enqueue(h.db, WEBHOOK_JOB, { eventId: Number(refOf(first!.id)), manual: true }, { runAt: clock.nowMs(), now: clock.nowMs(), storeCode: 'SRACE' });
    });
    let wakes = 0;
    const log = new DeliveryLog(racing, { clock, wake: () => { wakes++; } });
    const r = await log.recover('SRACE', kstIso(T));
    assert.deepEqual({ requeued: r.requeued, more: r.more, skipped: r.skipped.map((k) => [k.id, k.reason]) }, { requeued: 2, more: false, skipped: [[first!.id, 'on_its_way']] });
    assert.equal(done, true);
    assert.equal(wakes, 1);
    assert.equal((await jobs('SRACE')).length, 3, 'the two it re-queued and the redelivery\'s own');
  });

  test('recovery re-queues exactly the failing ones: failed (reopened, one manual job), retrying (its waiting job brought forward, no second job); never the fresh or the delivered; skips a disabled or removed endpoint with why', async () => {
    const S = 'SMIX';
    const now = clock.nowMs();
    const failedOne = await one(S, 'failed', 5);
    const retrying = await one(S, 'pending', 1);
    await scheduled(S, retrying, now + 60_000);
    const retryingDue = await one(S, 'pending', 2);
    await scheduled(S, retryingDue, now - 1);
    const retryingNoJob = await one(S, 'pending', 3);
    const fresh = await one(S, 'pending', 0);
    await scheduled(S, fresh, now + 60_000);
    const delivered = await one(S, 'delivered', 2);
    await endpoint('we_off', S, 0);
    const offEp = await one(S, 'failed', 5, 'we_off');
    const goneEp = await one(S, 'pending', 1, 'we_gone');
    let wakes = 0;
    const log = new DeliveryLog(h.db, { clock, wake: () => { wakes++; } });
    assert.deepEqual(await log.failing(S, T), { callback: 0, webhook: 4, endpoint: 2 }, 'the overview\'s count: six failing');

    const r = await log.recover(S, kstIso(T));
    assert.equal(r.requeued, 3);
    assert.equal(r.more, false);
    assert.deepEqual(r.skipped.map((k) => [k.id, k.reason]), [[retryingDue, 'on_its_way'], [offEp, 'endpoint_disabled'], [goneEp, 'endpoint_removed']]);
    assert.equal(wakes, 1);

    assert.equal(await statusOf(failedOne), 'pending');
    assert.deepEqual(await jobsOf(failedOne), [{ manual: true, runAt: now, key: null }]);
    assert.deepEqual(await jobsOf(retrying), [{ manual: false, runAt: now, key: `webhook:${refOf(retrying)}` }], 'brought forward to now, not doubled');
    assert.deepEqual(await jobsOf(retryingDue), [{ manual: false, runAt: now - 1, key: `webhook:${refOf(retryingDue)}` }], 'already due: left alone');
    assert.deepEqual(await jobsOf(retryingNoJob), [{ manual: true, runAt: now, key: `recover:${retryingNoJob}:3` }], 'no job waiting: a manual one');
    assert.deepEqual(await jobsOf(fresh), [{ manual: false, runAt: now + 60_000, key: `webhook:${refOf(fresh)}` }], 'never attempted: not failing, untouched');
    assert.equal(await statusOf(delivered), 'delivered');
    assert.deepEqual(await jobsOf(delivered), []);
    assert.equal(await statusOf(offEp), 'failed');
    assert.equal((await h.db.selectFrom('jobs').select('id').where('kind', '=', ENDPOINT_JOB.kind).execute()).length, 0, 'no endpoint job');

    // Pressed again: everything re-queued is on its way now; nothing doubles.
    const again = await log.recover(S, kstIso(T));
    assert.equal(again.requeued, 0);
    assert.deepEqual(again.skipped.map((k) => k.reason).sort(), ['endpoint_disabled', 'endpoint_removed', 'on_its_way', 'on_its_way', 'on_its_way', 'on_its_way']);
    assert.equal((await jobsOf(failedOne)).length, 1);
    assert.equal((await jobsOf(retryingNoJob)).length, 1);
    assert.equal(wakes, 1);
  });

  test('two recoveries at once re-queue each failing delivery once: one manual job per failed one, retrying ones brought forward once', async () => {
    const S = 'SBOTH';
    const now = clock.nowMs();
    const failedIds = [await one(S, 'failed', 5), await one(S, 'failed', 5), await one(S, 'failed', 5)];
    const retryingIds = [await one(S, 'pending', 1), await one(S, 'pending', 4)];
    for (const id of retryingIds) await scheduled(S, id, now + 300_000);
    const noJob = await one(S, 'pending', 2);
    const log = new DeliveryLog(h.db, { clock, wake: () => {} });
    const [a, b] = await Promise.all([log.recover(S, kstIso(T)), log.recover(S, kstIso(T))]);
    assert.equal(a.requeued + b.requeued, 6, `${a.requeued} + ${b.requeued}`);
    assert.equal(a.skipped.length + b.skipped.length, 6, 'each delivery skipped by the one that came second');
    assert.ok([...a.skipped, ...b.skipped].every((k) => k.reason === 'on_its_way'));
    for (const id of failedIds) assert.deepEqual((await jobsOf(id)).map((j) => j.manual), [true], 'one manual job');
    for (const id of retryingIds) assert.deepEqual(await jobsOf(id), [{ manual: false, runAt: now, key: `webhook:${refOf(id)}` }]);
    assert.equal((await jobsOf(noJob)).length, 1);
  });

  test('a failing delivery delivered between the read and its turn is skipped as delivered, with no job', async () => {
    const S = 'SMEAN';
    const ids = [await one(S, 'failed', 5), await one(S, 'failed', 5)];
    let done = false;
    const racing = afterEachRead(h.db, async (rows) => {
      if (done || rows.length !== 2) return;
      done = true;
      await h.db.updateTable('deliveries').set({ status: 'delivered' }).where('id', '=', ids[0]!).execute();
    });
    const r = await new DeliveryLog(racing, { clock, wake: () => {} }).recover(S, kstIso(T));
    assert.equal(done, true);
    assert.equal(r.requeued, 1);
    assert.deepEqual(r.skipped, [{ id: ids[0], number: refOf(ids[0]!), kind: 'webhook', event: 'bill.paid', reason: 'delivered' }]);
    assert.deepEqual(await jobsOf(ids[0]!), []);
  });
});
