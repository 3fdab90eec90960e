import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Insertable } from 'kysely';
import type { DeliveryTable } from '../../src/db/schema.js';
import { DeliveryLog, RECOVER_MAX } from '../../src/invoicing/delivery-log.js';
import { WEBHOOK_JOB } from '../../src/invoicing/webhooks.js';
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
    await insertStores(h.db, 'PDLOG', ['SDLOG', 'SRACE'], T);
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
    assert.deepEqual(await log.recover('SDLOG', since), { requeued: RECOVER_MAX, more: false }, 'exactly the limit: nothing more');
    assert.equal(wakes, 1);
    assert.equal(await count('SDLOG', 'pending'), RECOVER_MAX);
    const queued = await jobs('SDLOG');
    assert.equal(queued.length, RECOVER_MAX);
    assert.ok(queued.every((j) => j.manual === true));

    await h.db.updateTable('deliveries').set({ status: 'failed' }).where('store_code', '=', 'SDLOG').execute();
    await failed('SDLOG', 1);
    assert.deepEqual(await log.recover('SDLOG', since), { requeued: RECOVER_MAX, more: true }, 'one over the limit');
    assert.equal(await count('SDLOG', 'failed'), 1, 'the newest waits for the next call');
    assert.deepEqual(await log.recover('SDLOG', since), { requeued: 1, more: false });
    assert.equal(wakes, 3);
    assert.deepEqual(await log.recover('SDLOG', since), { requeued: 0, more: false });
    assert.equal(wakes, 3, 'nothing re-queued: no wake-up');
  });

  test('a delivery another request reopened between the read and its turn is left to that one: not counted, no second job', async () => {
    await failed('SRACE', 3);
    const [first] = await h.db.selectFrom('deliveries').select('id').where('store_code', '=', 'SRACE').orderBy('created_at').execute();
    let done = false;
    const racing = afterEachRead(h.db, async (rows) => {
      if (done || rows.length !== 3) return;
      done = true;
      await h.db.updateTable('deliveries').set({ status: 'pending' }).where('id', '=', first!.id).execute();
    });
    let wakes = 0;
    const log = new DeliveryLog(racing, { clock, wake: () => { wakes++; } });
    assert.deepEqual(await log.recover('SRACE', kstIso(T)), { requeued: 2, more: false });
    assert.equal(done, true);
    assert.equal(wakes, 1);
    assert.equal((await jobs('SRACE')).length, 2);
  });
});
