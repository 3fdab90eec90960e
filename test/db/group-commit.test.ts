import SQLite from 'better-sqlite3';
import type { Insertable } from 'kysely';
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compiledOnce, directReads } from '../../src/db/compiled.js';
import { migrate, openDatabase, type Database, type DatabaseHandle } from '../../src/db/index.js';
import { isUniqueViolation } from '../../src/platform/errors.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

// SQLite group commit (src/db/index.ts, GroupCommitSqliteDriver; docs/architecture.md, "Group
// commit"): the units that reach the writer in one turn share one COMMIT. The rules a caller
// relies on hold on both engines (one row per unique key, a promise resolves only once its row
// is committed, no read sees uncommitted rows); where the engines differ (PostgreSQL commits
// every transaction on its own) the test says so and asserts each side.

const now = 1_790_000_000_000;

function payment(seqno: string, id = `pay-${seqno}-${Math.random().toString(36).slice(2)}`): Insertable<Database['payments']> {
  return {
    id, platform_code: 'P1', store_code: 'S1', trans_seqno: seqno, state: 'STORE_REQUEST', amount: 1000, supply_amount: 909,
    tax_charge: 91, tax_free_amount: 0, mobile_no: '01012345678', pay_user_name: '홍길동', request_reason: 'test',
    info_message: null, confirm_url: null, return_display_yn: 'N', return_url: null, temp_value: null, user_id: null,
    order_type: 'BILL', items_json: '[]', pay_path: 'WEB', approval_number: null, approval_at: null, installment_month: null,
    issuer_name: null, accepter_name: null, method_name: null, card_bin: null, card_last4: null, processor_ref: null,
    cancel_at: null, cancel_reason: '', cancel_amount: 0, created_at: now, updated_at: now,
    processor: null, processor_order: null, method: null, vbank_code: '', vbank_name: '', vbank_account: '', vbank_holder: '', vbank_due_at: null, vbank_secret_sealed: null,
  };
}

/** Settles to 'resolved' or the rejection, and records when it settled. */
function track<T>(p: Promise<T>) {
  const t = { settled: false, ok: false, error: undefined as unknown, value: undefined as T | undefined, done: p };
  t.done = p.then((v) => {
    Object.assign(t, { settled: true, ok: true, value: v });
    return v;
  }, (e: unknown) => {
    Object.assign(t, { settled: true, ok: false, error: e });
    return undefined as T;
  });
  return t;
}

type Tracked = ReturnType<typeof track>;

/**
 * Exactly one of two units with one key commits and the other gets the unique violation. On
 * SQLite the first to ask wins (units take the writer in arrival order); PostgreSQL runs them
 * on two connections, so either may.
 */
function oneWinner(a: Tracked, b: Tracked): void {
  assert.equal([a, b].filter((t) => t.ok).length, 1, `a: ${String(a.error)}, b: ${String(b.error)}`);
  const loser = a.ok ? b : a;
  assert.ok(isUniqueViolation(loser.error), `the loser's error is a unique violation: ${String(loser.error)}`);
}

forEachEngine('SQLite group commit, and the same rules on PostgreSQL', (engine) => {
  let url: string;
  let store: DatabaseHandle;
  let drop: () => Promise<void>;
  /** A second connection that is no part of the store's driver: what another process sees. */
  let visible: (table: 'payments' | 'platforms', column: 'trans_seqno' | 'code', keys: string[]) => Promise<string[]>;
  let raw: SQLite.Database | undefined;
  let other: DatabaseHandle | undefined;
  before(async () => {
    const database = await createTestDatabase(engine);
    url = database.url;
    drop = database.drop;
    // The time cap (10 ms by default) would make the tests of what shares a batch depend on the
    // machine's load; here only the unit cap applies. The caps have tests of their own below.
    store = openDatabase(url, { groupCommitCap: { maxUnits: 100, maxMs: 60_000 } });
    await migrate(store.db);
    await store.db.insertInto('platforms').values({ code: 'P1', name: 'one', created_at: now }).execute();
    await store.db.insertInto('stores').values({ code: 'S1', platform_code: 'P1', name: 's', ceo_name: 'c', biz_reg_num: '1', tel: '1', cat_enabled: 0, created_at: now }).execute();
    if (engine === 'sqlite') {
      // Synchronous, so a check made the moment a promise resolves cannot be overtaken by a later COMMIT.
      raw = new SQLite(url.slice('sqlite:'.length), { readonly: true });
      visible = async (table, column, keys) => {
        const rows = raw!.prepare(`select ${column} as k from ${table} where ${column} in (${keys.map(() => '?').join(',')}) order by ${column}`).all(keys) as { k: string }[];
        return rows.map((r) => r.k);
      };
    } else {
      other = openDatabase(url, { poolSize: 2 });
      visible = async (table, column, keys) => {
        const rows = await sql<{ k: string }>`select ${sql.ref(column)} as k from ${sql.table(table)} where ${sql.ref(column)} in (${sql.join(keys)}) order by ${sql.ref(column)}`.execute(other!.db);
        return rows.rows.map((r) => r.k);
      };
    }
  });
  after(async () => {
    raw?.close();
    await other?.close();
    await store?.close();
    await drop?.();
  });

  test('two units with one TRANS_SEQNO: one row, the loser gets the unique violation, an unrelated third unit commits (transactions)', async () => {
    const events: string[] = [];
    const unit = (name: string, seqno: string) => track(store.db.transaction().execute(async (trx) => {
      events.push(`${name} runs`);
      await trx.insertInto('payments').values(payment(seqno)).execute();
      // A read inside the unit sees its own write.
      const mine = await trx.selectFrom('payments').select('trans_seqno').where('trans_seqno', '=', seqno).execute();
      assert.equal(mine.length, 1);
      return name;
    }).finally(() => events.push(`${name} settled`)));
    const a = unit('a', 'DUP-T');
    const b = unit('b', 'DUP-T');
    const c = unit('c', 'OTHER-T');
    await Promise.all([a.done, b.done, c.done]);
    oneWinner(a, b);
    assert.ok(c.ok, String(c.error));
    if (engine === 'sqlite') assert.ok(a.ok);
    assert.deepEqual(await visible('payments', 'trans_seqno', ['DUP-T', 'OTHER-T']), ['DUP-T', 'OTHER-T']);
    const dup = await store.db.selectFrom('payments').select('id').where('trans_seqno', '=', 'DUP-T').execute();
    assert.equal(dup.length, 1);
    if (engine === 'sqlite') {
      // One batch: the third unit ran before the first was answered (their COMMIT is shared).
      assert.ok(events.indexOf('c runs') < events.indexOf('a settled'), events.join(', '));
    }
  });

  test('the same with autocommit inserts (how requestPayment writes)', async () => {
    const a = track(store.db.insertInto('payments').values(payment('DUP-A')).execute());
    const b = track(store.db.insertInto('payments').values(payment('DUP-A')).execute());
    const c = track(store.db.insertInto('payments').values(payment('OTHER-A')).execute());
    await Promise.all([a.done, b.done, c.done]);
    oneWinner(a, b);
    assert.ok(c.ok, String(c.error));
    if (engine === 'sqlite') assert.ok(a.ok);
    assert.deepEqual(await visible('payments', 'trans_seqno', ['DUP-A', 'OTHER-A']), ['DUP-A', 'OTHER-A']);
  });

  test('a failing unit rolls back only its own writes; the units around it keep theirs', async () => {
    const before1 = track(store.db.insertInto('platforms').values({ code: 'RB1', name: 'x', created_at: now }).execute());
    const failing = track(store.db.transaction().execute(async (trx) => {
      await trx.insertInto('platforms').values({ code: 'RB2', name: 'x', created_at: now }).execute();
      throw new Error('the callback gives up');
    }));
    const after1 = track(store.db.transaction().execute((trx) => trx.insertInto('platforms').values({ code: 'RB3', name: 'x', created_at: now }).execute()));
    await Promise.all([before1.done, failing.done, after1.done]);
    assert.ok(before1.ok && after1.ok);
    assert.match(String(failing.error), /the callback gives up/);
    assert.deepEqual(await visible('platforms', 'code', ['RB1', 'RB2', 'RB3']), ['RB1', 'RB3']);
  });

  test('a unit resolves only once another connection already sees its row (it is committed)', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `DUR${String(i).padStart(2, '0')}`);
    const seenAtResolve = await Promise.all(keys.map((k, i) => {
      const write = i % 2 === 0
        ? store.db.insertInto('platforms').values({ code: k, name: 'x', created_at: now }).execute()
        : store.db.transaction().execute((trx) => trx.insertInto('platforms').values({ code: k, name: 'x', created_at: now }).execute());
      return write.then(() => visible('platforms', 'code', [k]));
    }));
    assert.deepEqual(seenAtResolve, keys.map((k) => [k]));
  });

  test('an autocommit read during an open unit sees none of the uncommitted rows; afterwards it sees them', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    let inside!: () => void;
    const isInside = new Promise<void>((r) => { inside = r; });
    let seenInside: string[] = [];
    const a = track(store.db.insertInto('platforms').values({ code: 'RD1', name: 'x', created_at: now }).execute());
    const b = track(store.db.transaction().execute(async (trx) => {
      await trx.insertInto('platforms').values({ code: 'RD2', name: 'x', created_at: now }).execute();
      seenInside = (await trx.selectFrom('platforms').select('code').where('code', 'in', ['RD1', 'RD2']).orderBy('code').execute()).map((r) => r.code);
      inside();
      await gate;
    }));
    await isInside;
    try {
      const during = (await store.db.selectFrom('platforms').select('code').where('code', 'in', ['RD1', 'RD2']).orderBy('code').execute()).map((r) => r.code);
      const aResolvedBeforeRead = a.settled;
      // Whatever the engine: an open unit's row is not seen, an answered unit's row is.
      assert.ok(!during.includes('RD2'));
      if (aResolvedBeforeRead) assert.ok(during.includes('RD1'));
      if (engine === 'sqlite') {
        // Group commit: RD1's unit waits for the batch that RD2's unit keeps open, and the read
        // (on the second connection) does not see it although the writer does.
        assert.equal(aResolvedBeforeRead, false);
        assert.deepEqual(during, []);
        assert.deepEqual(seenInside, ['RD1', 'RD2']);
      } else {
        // PostgreSQL commits each unit on its own, on its own connection: RD1 may or may not
        // be committed when RD2's unit reads, and RD2's unit sees its own row.
        assert.ok(seenInside.includes('RD2'));
      }
    } finally {
      // Whatever failed above, the unit must end, or closing the store would wait for it.
      open();
    }
    await Promise.all([a.done, b.done]);
    assert.ok(a.ok && b.ok);
    assert.deepEqual((await store.db.selectFrom('platforms').select('code').where('code', 'in', ['RD1', 'RD2']).orderBy('code').execute()).map((r) => r.code), ['RD1', 'RD2']);
  });

  test('a compiledOnce lookup outside a transaction (answered without Kysely\'s executor) sees no uncommitted row; inside the transaction it sees its own', async () => {
    const codes = compiledOnce((db, a: string, b: string) => db.selectFrom('platforms').select('code').where('code', 'in', [a, b]).orderBy('code'));
    const registered = directReads.get(store.db);
    assert.ok(registered, 'SQLite on a file registers the driver\'s direct read, PostgreSQL its pool');
    const direct = engine === 'sqlite' ? registered : undefined;
    if (direct) {
      assert.equal(direct(`insert into platforms (code, name, created_at) values ('CD0', 'x', ${now})`, []), undefined, 'a write is not read directly');
      assert.equal((await store.db.selectFrom('platforms').select('code').where('code', '=', 'CD0').execute()).length, 0, 'and was not run');
    }
    await store.db.insertInto('platforms').values({ code: 'CD1', name: 'x', created_at: now }).execute();
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    let inside!: () => void;
    const isInside = new Promise<void>((r) => { inside = r; });
    let seenInside: string[] = [];
    const unit = track(store.db.transaction().execute(async (trx) => {
      await trx.insertInto('platforms').values({ code: 'CD2', name: 'x', created_at: now }).execute();
      seenInside = (await codes(trx, 'CD1', 'CD2')).map((r) => r.code);
      inside();
      await gate;
    }));
    await isInside;
    try {
      assert.deepEqual(seenInside, ['CD1', 'CD2'], 'the transaction sees its own row');
      assert.deepEqual((await codes(store.db, 'CD1', 'CD2')).map((r) => r.code), ['CD1'], 'the open unit\'s row is not seen outside; the committed one is');
      if (direct) assert.deepEqual(direct(codes.sqlOn(store.db, 'CD1', 'CD2'), ['CD1', 'CD2']), [{ code: 'CD1' }], 'SQLite: the open batch is read past, on the reader');
    } finally {
      open();
    }
    await unit.done;
    assert.ok(unit.ok);
    assert.deepEqual((await codes(store.db, 'CD1', 'CD2')).map((r) => r.code), ['CD1', 'CD2']);
  });

  test('a steady stream that never frees the connection still commits, within the cap of units', async () => {
    const capped = openDatabase(url, { groupCommitCap: { maxUnits: 50, maxMs: 60_000 }, poolSize: 2 });
    try {
      const events: string[] = [];
      const n = 300;
      const units = Array.from({ length: n }, (_, i) => capped.db.transaction().execute(async (trx) => {
        events.push(`start ${i}`);
        await trx.insertInto('platforms').values({ code: `ST${i}`, name: 'x', created_at: now }).execute();
      }).then(() => events.push(`done ${i}`)));
      await Promise.all(units);
      // Without a cap all 300 would run before the first COMMIT (each waiter joins the batch).
      assert.ok(events.indexOf('done 0') < events.indexOf('start 150'), `first answer at ${events.indexOf('done 0')}`);
      if (engine === 'sqlite') {
        // ...and with it, the first 50 share one COMMIT: nothing is answered before the 50th ran.
        assert.ok(events.indexOf('done 0') > events.indexOf('start 49'), `first answer at ${events.indexOf('done 0')}`);
      }
      const count = await store.db.selectFrom('platforms').select((eb) => eb.fn.countAll<number>().as('n')).where('code', 'like', 'ST%').executeTakeFirstOrThrow();
      assert.equal(Number(count.n), n);
    } finally {
      await capped.close();
    }
  });

  test('a stream of slow units commits within the cap of time', async () => {
    const capped = openDatabase(url, { groupCommitCap: { maxUnits: 1_000_000, maxMs: 20 }, poolSize: 2 });
    try {
      const events: string[] = [];
      const units = Array.from({ length: 40 }, (_, i) => capped.db.transaction().execute(async (trx) => {
        events.push(`start ${i}`);
        await trx.insertInto('platforms').values({ code: `SL${i}`, name: 'x', created_at: now }).execute();
        // Holds the connection across turns of the event loop; the others wait for it.
        await new Promise((r) => setTimeout(r, 2));
      }).then(() => events.push(`done ${i}`)));
      await Promise.all(units);
      // 40 units of ≥ 2 ms each: without the time cap nothing would be answered before the last started.
      assert.ok(events.indexOf('done 0') < events.indexOf('start 39'), events.slice(0, 30).join(', '));
    } finally {
      await capped.close();
    }
  });

  test('two handles of one process on one file: a write of the second waits for the first\'s open batch, without blocking', async () => {
    const second = openDatabase(url, { poolSize: 2 });
    try {
      const started = performance.now();
      // The first handle's unit keeps its batch (and SQLite's write lock) open across a timer.
      const first = store.db.transaction().execute(async (trx) => {
        await trx.insertInto('platforms').values({ code: 'TWO1', name: 'x', created_at: now }).execute();
        await new Promise((r) => setTimeout(r, 50));
      });
      await new Promise((r) => setTimeout(r, 10));
      // Waiting in busy_timeout instead would block the event loop the first handle's COMMIT
      // needs: SQLITE_BUSY after 10 s.
      await second.db.insertInto('platforms').values({ code: 'TWO2', name: 'x', created_at: now }).execute();
      await first;
      assert.ok(performance.now() - started < 3_000, `took ${Math.round(performance.now() - started)} ms`);
      assert.deepEqual(await visible('platforms', 'code', ['TWO1', 'TWO2']), ['TWO1', 'TWO2']);
    } finally {
      await second.close();
    }
  });

  if (engine === 'sqlite') {
    test('SQLite: a COMMIT that fails rejects every unit of its batch, and the next batch works', async () => {
      const a = track(store.db.insertInto('platforms').values({ code: 'CF1', name: 'x', created_at: now }).execute());
      // A foreign key checked only at COMMIT (defer_foreign_keys): the batch's COMMIT fails.
      const b = track(store.db.transaction().execute(async (trx) => {
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await trx.insertInto('stores').values({ code: 'CF-S', platform_code: 'NO-SUCH-PLATFORM', name: 's', ceo_name: 'c', biz_reg_num: '1', tel: '1', cat_enabled: 0, created_at: now }).execute();
      }));
      const c = track(store.db.transaction().execute((trx) => trx.insertInto('platforms').values({ code: 'CF3', name: 'x', created_at: now }).execute()));
      await Promise.all([a.done, b.done, c.done]);
      for (const [name, t] of [['a', a], ['b', b], ['c', c]] as const) {
        assert.equal(t.ok, false, `${name} must reject`);
        assert.match(String(t.error), /FOREIGN KEY constraint failed/, name);
      }
      assert.deepEqual(await visible('platforms', 'code', ['CF1', 'CF3']), []);
      await store.db.insertInto('platforms').values({ code: 'CF4', name: 'x', created_at: now }).execute();
      assert.deepEqual(await visible('platforms', 'code', ['CF1', 'CF3', 'CF4']), ['CF4']);
    });

    test('SQLite: with group commit off each unit commits on its own (the other side of the batch)', async () => {
      const single = openDatabase(url, { groupCommit: false });
      try {
        let open!: () => void;
        const gate = new Promise<void>((r) => { open = r; });
        const a = track(single.db.insertInto('platforms').values({ code: 'OFF1', name: 'x', created_at: now }).execute());
        const b = track(single.db.transaction().execute(async (trx) => {
          await trx.insertInto('platforms').values({ code: 'OFF2', name: 'x', created_at: now }).execute();
          await gate;
        }));
        try {
          await new Promise((r) => setTimeout(r, 20));
          assert.equal(a.settled, true, 'the first unit is answered while the second is still open');
          assert.deepEqual(await visible('platforms', 'code', ['OFF1', 'OFF2']), ['OFF1']);
        } finally {
          open();
        }
        await Promise.all([a.done, b.done]);
        assert.ok(a.ok && b.ok);
      } finally {
        await single.close();
      }
    });

    test('SQLite: an in-memory database works without a second connection', async () => {
      const memory = openDatabase('sqlite::memory:');
      try {
        await migrate(memory.db);
        await memory.db.transaction().execute((trx) => trx.insertInto('platforms').values({ code: 'M1', name: 'x', created_at: now }).execute());
        await memory.db.insertInto('platforms').values({ code: 'M2', name: 'x', created_at: now }).execute();
        assert.deepEqual((await memory.db.selectFrom('platforms').select('code').orderBy('code').execute()).map((r) => r.code), ['M1', 'M2']);
      } finally {
        await memory.close();
      }
    });
  }
});
