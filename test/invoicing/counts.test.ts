import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { Migrator, type Insertable } from 'kysely';
import { migrate, openDatabase } from '../../src/db/index.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { InvoiceTable } from '../../src/db/schema.js';
import { listInvoices, markDeleted } from '../../src/invoicing/repository.js';
import { kstMonth, kstMonthRange } from '../../src/platform/kst.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, engines } from '../helpers/db.js';
import { billBody, newAccount, type Login } from './support.js';

/**
 * The list's totalCount comes from a per-account live-invoice counter (invoice_counts) kept in
 * the transactions that create and delete invoices; with a month it is counted by query. Here:
 * the counter, the API's totalCount and a real count(*) agree after every kind of change.
 */

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const STRESS = process.env.SUNAP_STRESS === '1';
const tag = () => randomBytes(6).toString('hex');
const members = (n: number) => Array.from({ length: n }, (_, i) => ({ studentName: `학생${i}`, studentPhone: `0101234${String(i).padStart(4, '0')}` }));

for (const engine of engines) {
  describe(`invoice counts [${engine}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine);
    });
    after(async () => t?.close());

    const db = () => t.app.sunap.database.db;
    const create = (a: Login, body: Record<string, unknown>) => t.post('/app/v1/sales/bill', body, a.h);
    const remove = (a: Login, id: string) => t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h);
    const totalCount = async (a: Login, month?: string) => {
      const r = await t.get(`/app/v1/sales/bill?size=1${month ? `&month=${month}` : ''}`, a.h);
      assert.equal(r.body?.result_code, 0, JSON.stringify(r.body));
      return r.body.result_data.totalCount as number;
    };
    /** count(*) of the account's live invoices, optionally within [from, to) of created_at. */
    const realCount = async (accountId: string, range?: [number, number]) => {
      let q = db().selectFrom('invoices').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId).where('deleted_at', 'is', null);
      if (range) q = q.where('created_at', '>=', range[0]).where('created_at', '<', range[1]);
      return Number((await q.executeTakeFirstOrThrow()).n);
    };
    const counter = async (accountId: string) => {
      const r = await db().selectFrom('invoice_counts').select('live_invoices').where('account_id', '=', accountId).executeTakeFirst();
      return r ? Number(r.live_invoices) : 0;
    };
    /** The three agree, and equal what the test expects. */
    async function expectCount(a: Login, expected: number, ctx = '') {
      assert.equal(await realCount(a.accountId), expected, `count(*) ${ctx}`);
      assert.equal(await counter(a.accountId), expected, `counter ${ctx}`);
      assert.equal(await totalCount(a), expected, `totalCount ${ctx}`);
    }
    /** uniqueIds of the account's n newest invoices. */
    const newest = async (a: Login, n: number): Promise<string[]> =>
      (await t.get(`/app/v1/sales/bill?size=${n}`, a.h)).body.result_data.bills.map((b: { uniqueId: string }) => b.uniqueId);
    const ok = (r: { status: number; body: any }) => assert.equal(r.body?.result_code, 0, `${r.status} ${JSON.stringify(r.body)}`);

    test('creates (one and many recipients), requestId repeats, refusals, deletes and repeated deletes', async () => {
      const a = await newAccount(t, { points: 100_000 });
      await expectCount(a, 0, 'new account');

      ok(await create(a, billBody()));
      await expectCount(a, 1, 'one recipient');
      ok(await create(a, billBody({ members: members(3) })));
      await expectCount(a, 4, 'three recipients');
      ok(await create(a, billBody({
        templateType: 'INDIVIDUAL', amount: undefined, members: members(2),
        recipientItems: members(2).map((m, i) => ({ ...m, amount: 1000 * (i + 1) })),
      })));
      await expectCount(a, 6, 'INDIVIDUAL, two recipients');

      // A requestId counts once: a later repeat and concurrent repeats are the same invoice.
      const once = billBody({ requestId: `count-${tag()}` });
      ok(await create(a, once));
      ok(await create(a, once));
      await expectCount(a, 7, 'requestId repeated');
      const twice = billBody({ requestId: `count-${tag()}` });
      for (const r of await Promise.all([create(a, twice), create(a, twice), create(a, twice)])) ok(r);
      await expectCount(a, 8, 'requestId sent three times at once');
      const conflict = await create(a, { ...twice, amount: 5000 });
      assert.equal(conflict.body.result_code, -22, JSON.stringify(conflict.body));
      await expectCount(a, 8, 'requestId with other content');

      // Refused creations leave the count alone: validation, and no points (the whole transaction rolls back).
      assert.equal((await create(a, billBody({ amount: 99 }))).body.result_code, -20);
      const poor = await newAccount(t);
      assert.equal((await create(poor, billBody({ members: members(2) }))).body.result_code, -21);
      await expectCount(poor, 0, 'insufficient points');
      await expectCount(a, 8, 'validation refusal');

      // Deletes: one after its send (it has a payment), one before (worker held: no payment).
      const [sentId] = await newest(a, 1);
      await t.app.sunap.worker.drain();
      ok(await remove(a, sentId!));
      await expectCount(a, 7, 'deleted after the send');
      assert.equal((await remove(a, sentId!)).body.result_code, -10);
      await expectCount(a, 7, 'deleted again');

      await t.app.sunap.worker.stop();
      let waitingId: string;
      try {
        ok(await create(a, billBody()));
        [waitingId] = (await newest(a, 1)) as [string];
        await expectCount(a, 8, 'created while the worker is held');
        ok(await remove(a, waitingId));
        await expectCount(a, 7, 'deleted before its send');
      } finally {
        t.app.sunap.worker.start();
      }
      assert.equal((await remove(a, waitingId)).body.result_code, -10);

      // The same invoice deleted twice at once: decremented once.
      const [raced] = await newest(a, 1);
      const both = await Promise.all([remove(a, raced!), remove(a, raced!)]);
      assert.equal(both.filter((r) => r.body.result_code === 0).length, 1, JSON.stringify(both.map((r) => r.body)));
      await expectCount(a, 6, 'one invoice deleted twice at once');

      // A paid invoice cannot be deleted: still counted.
      await t.app.sunap.worker.drain();
      const [paidId] = await newest(a, 1);
      const d = (await t.get(`/app/v1/sales/bill/${paidId}`, a.h)).body.result_data;
      assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
      assert.equal((await remove(a, paidId!)).body.result_code, -24);
      await expectCount(a, 6, 'paid invoice not deletable');

      // Another account's delete attempt changes nothing; its own count stays 0.
      const intruder = await newAccount(t, { points: 1000 });
      const [victim] = await newest(a, 1);
      assert.equal((await remove(intruder, victim!)).body.result_code, -10);
      await expectCount(a, 6, 'after an intruder');
      await expectCount(intruder, 0, 'intruder');
    });

    test('markDeleted decrements only when its UPDATE hid the row (a second call, even in one transaction, does not)', async () => {
      const a = await newAccount(t, { points: 100_000 });
      ok(await create(a, billBody({ members: members(2) })));
      const inv = await db().selectFrom('invoices').select('id').where('account_id', '=', a.accountId).orderBy('id').executeTakeFirstOrThrow();
      const now = t.app.sunap.clock.nowMs();
      const hide = () => db().transaction().execute((trx) => markDeleted(trx, a.accountId, inv.id, now, { paymentIdIsNull: false }));
      assert.equal(await hide(), true);
      assert.equal(await hide(), false);
      await expectCount(a, 1, 'after two markDeleted calls');
      const inOne = await db().transaction().execute(async (trx) => [
        await markDeleted(trx, a.accountId, inv.id, now, { paymentIdIsNull: false }),
        await markDeleted(trx, a.accountId, inv.id, now, { paymentIdIsNull: false }),
      ]);
      assert.deepEqual(inOne, [false, false]);
      // Another account's id filter: nothing changes for either.
      const other = await newAccount(t);
      const [live] = await newest(a, 1);
      const liveId = (await db().selectFrom('invoices').select('id').where('unique_id', '=', live!).executeTakeFirstOrThrow()).id;
      assert.equal(await db().transaction().execute((trx) => markDeleted(trx, other.accountId, liveId, now, { paymentIdIsNull: false })), false);
      await expectCount(a, 1, 'after another account\'s markDeleted');
      await expectCount(other, 0, 'the other account');
    });

    test('with a month, totalCount counts that month only (by query); without, the counter', async () => {
      const a = await newAccount(t, { points: 100_000 });
      ok(await create(a, billBody({ members: members(5) })));
      const [gone] = await newest(a, 1);
      ok(await remove(a, gone!));
      // Two live invoices moved back to January 2001 (created_at does not change liveness).
      const old = kstMonthRange('2001-01')[0] + 86_400_000;
      const moved = (await db().selectFrom('invoices').select('id').where('account_id', '=', a.accountId).where('deleted_at', 'is', null)
        .orderBy('id').limit(2).execute()).map((r) => r.id);
      await db().updateTable('invoices').set({ created_at: old }).where('id', 'in', moved).execute();

      // The month the other two were made in, from a row: the clock may be in the next one by now.
      const kept = await db().selectFrom('invoices').select('created_at').where('account_id', '=', a.accountId).where('deleted_at', 'is', null)
        .where('id', 'not in', moved).executeTakeFirstOrThrow();
      const month = kstMonth(Number(kept.created_at));
      assert.equal(await totalCount(a, month), 2);
      assert.equal(await realCount(a.accountId, kstMonthRange(month)), 2);
      assert.equal(await totalCount(a, '2001-01'), 2);
      assert.equal(await totalCount(a, '2001-02'), 0);
      await expectCount(a, 4, 'all months');
      // The page itself follows the same filter.
      const page = (await t.get('/app/v1/sales/bill?month=2001-01&size=100', a.h)).body.result_data;
      assert.equal(page.bills.length, 2);
      assert.deepEqual(Object.keys(page).sort(), ['bills', 'page', 'size', 'totalCount']);
      // Without a month the answer is the counter, not a count(*): a counter set by hand shows
      // through, while a month still counts rows.
      await db().updateTable('invoice_counts').set({ live_invoices: 999 }).where('account_id', '=', a.accountId).execute();
      try {
        assert.equal(await totalCount(a), 999);
        assert.equal(await totalCount(a, month), 2);
      } finally {
        await db().updateTable('invoice_counts').set({ live_invoices: 4 }).where('account_id', '=', a.accountId).execute();
      }
      await expectCount(a, 4, 'restored');
    });

    test('concurrency: 20 creates (two accounts, repeated requestIds) and 10 invoices deleted twice each, all at once', async () => {
      const a = await newAccount(t, { points: 1_000_000 });
      const b = await newAccount(t, { points: 1_000_000 });
      ok(await create(a, billBody({ members: members(5) })));
      ok(await create(a, billBody({ members: members(5) })));
      const seeded = await newest(a, 10);
      assert.equal(seeded.length, 10);

      const work: Promise<{ status: number; body: any }>[] = [];
      let expectA = 0; // the ten seeded ones are all deleted below
      let expectB = 0;
      const reqIds = Array.from({ length: 3 }, () => billBody({ requestId: `conc-${tag()}` }));
      for (let i = 0; i < 20; i++) {
        if (i < 6) {
          // three requestIds, each sent twice to account a: three invoices
          work.push(create(a, reqIds[i % 3]!));
          if (i < 3) expectA += 1;
        } else if (i % 2 === 0) {
          const n = 1 + (i % 3);
          work.push(create(a, billBody({ members: members(n) })));
          expectA += n;
        } else {
          // b starts with no counter row: its first creates race to make it
          const n = 1 + (i % 4);
          work.push(create(b, billBody({ members: members(n) })));
          expectB += n;
        }
      }
      const deletes = seeded.flatMap((id) => [remove(a, id), remove(a, id)]);
      const created = await Promise.all(work);
      const deleted = await Promise.all(deletes);
      for (const r of created) ok(r);
      for (let i = 0; i < seeded.length; i++) {
        const pair = [deleted[2 * i]!, deleted[2 * i + 1]!];
        assert.equal(pair.filter((r) => r.body.result_code === 0).length, 1, `invoice ${seeded[i]}: ${JSON.stringify(pair.map((r) => r.body))}`);
      }
      await t.app.sunap.worker.drain();
      await expectCount(a, expectA, 'account a');
      await expectCount(b, expectB, 'account b');
    });

    test('property: any sequence of creates, repeats and deletes keeps counter = totalCount = count(*)', { timeout: 600_000 }, async () => {
      type Op = { kind: 'create'; n: number; requestId: boolean } | { kind: 'repeat' } | { kind: 'delete'; k: number; twice: boolean };
      const op: fc.Arbitrary<Op> = fc.oneof(
        fc.record({ kind: fc.constant('create' as const), n: fc.integer({ min: 1, max: 3 }), requestId: fc.boolean() }),
        fc.record({ kind: fc.constant('repeat' as const) }),
        fc.record({ kind: fc.constant('delete' as const), k: fc.nat(), twice: fc.boolean() }),
      );
      await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async (ops) => {
        const a = await newAccount(t, { points: 100_000 });
        const ids: string[] = [];
        const live = new Set<string>();
        let last: Record<string, unknown> | undefined;
        for (const o of ops) {
          if (o.kind === 'create') {
            const n = o.requestId ? 1 : o.n;
            last = billBody({ members: members(n), ...(o.requestId ? { requestId: `prop-${tag()}` } : {}) });
            ok(await create(a, last));
            for (const id of await newest(a, n)) {
              ids.push(id);
              live.add(id);
            }
          } else if (o.kind === 'repeat') {
            if (!last || last.requestId === undefined) continue;
            ok(await create(a, last));
          } else {
            if (ids.length === 0) continue;
            const id = ids[o.k % ids.length]!;
            const r = await remove(a, id);
            assert.equal(r.body.result_code, live.has(id) ? 0 : -10, JSON.stringify(r.body));
            live.delete(id);
            if (o.twice) assert.equal((await remove(a, id)).body.result_code, -10);
          }
          assert.equal(await totalCount(a), live.size);
        }
        await expectCount(a, live.size, JSON.stringify(ops));
      }), { numRuns: STRESS ? 100 : 6, seed });
    });
  });

  describe(`invoice counts migration [${engine}]`, () => {
    test('0004 backfills each account\'s live invoices from the rows already there, and the counter cannot go below 0', async () => {
      const database = await createTestDatabase(engine);
      const store = openDatabase(database.url);
      try {
        const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0004'));
        assert.deepEqual(Object.keys(before), ['0001_gateway', '0002_invoicing', '0003_sandbox_card_network']);
        const old = await new Migrator({ db: store.db, provider: { getMigrations: async () => before } }).migrateToLatest();
        assert.equal(old.error, undefined);

        const { db } = store;
        const now = Date.now();
        await db.insertInto('platforms').values({ code: 'PMIG', name: 'p', created_at: now }).execute();
        await db.insertInto('stores').values({ code: 'SMIG', platform_code: 'PMIG', name: 's', ceo_name: 'c', biz_reg_num: '1234567890', tel: '0212345678', cat_enabled: 0, created_at: now }).execute();
        const accounts = ['mixed', 'deleted-only', 'none', 'other'];
        for (const id of accounts) {
          await db.insertInto('accounts').values({ id, email: `${id}@example.com`, password_hash: 'x', store_code: 'SMIG', invoicing_enabled: 1, created_at: now }).execute();
        }
        let seq = 0;
        const invoice = (accountId: string, deleted: boolean, status: InvoiceTable['status'] = 'PENDING'): Insertable<InvoiceTable> => ({
          unique_id: `u${seq}`, account_id: accountId, store_code: 'SMIG', trans_seqno: `INVMIG${seq++}`, payment_id: null,
          status, send_status: 'SENT', deleted_at: deleted ? now : null, request_id: null, request_hash: null, template_type: 'SAME',
          receiver_name: '홍길동', receiver_phone: '01012345678', guardian_phone: null, amount: 1000, reason: 'r', description: null,
          items_json: null, send_channel: 'ALIMTALK', webhook_url: null, webhook_secret_sealed: null, bill_template_id: null,
          related_subject: null, etc: null, student_birth_date: null, classroom_id: null, send_count: 1, first_sent_at: now,
          last_sent_at: now, done_at: status === 'DONE' ? now : null, canceled_at: null, created_at: now - seq * 1000, updated_at: now,
        });
        const rows = [
          ...Array.from({ length: 7 }, () => invoice('mixed', false)),
          invoice('mixed', false, 'DONE'), // paid invoices are live too
          ...Array.from({ length: 3 }, () => invoice('mixed', true)),
          ...Array.from({ length: 4 }, () => invoice('deleted-only', true)),
          ...Array.from({ length: 2 }, () => invoice('other', false)),
        ];
        await db.insertInto('invoices').values(rows).execute();

        // 0004 and whatever came after it (later migrations apply in the same run).
        assert.deepEqual(await migrate(db), Object.keys(migrations).filter((name) => name >= '0004'));
        const counts = await db.selectFrom('invoice_counts').select(['account_id', 'live_invoices']).orderBy('account_id').execute();
        assert.deepEqual(counts.map((r) => [r.account_id, Number(r.live_invoices)]), [['deleted-only', 0], ['mixed', 8], ['none', 0], ['other', 2]]);

        await assert.rejects(
          db.updateTable('invoice_counts').set({ live_invoices: -1 }).where('account_id', '=', 'none').execute(),
          /check|live_invoices/i,
        );
        // The list reads the backfilled counter.
        assert.equal((await listInvoices(db, 'mixed', { offset: 0, limit: 1 })).total, 8);
        assert.equal((await listInvoices(db, 'none', { offset: 0, limit: 1 })).total, 0);
        // An account created after the migration has no row until its first invoice: 0.
        assert.equal((await listInvoices(db, 'nobody', { offset: 0, limit: 1 })).total, 0);
      } finally {
        await store.close();
        await database.drop();
      }
    });
  });
}
