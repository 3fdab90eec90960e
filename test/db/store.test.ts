import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { compiledOnce, fixedPlanParameters } from '../../src/db/compiled.js';
import { HOT_LOOKUPS } from '../../src/gateway/repository.js';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

const now = 1_790_000_000_000;

test('fixedPlanParameters writes each parameter +?, and leaves a ? inside a quoted name or string alone', () => {
  assert.equal(fixedPlanParameters('select "a?" from t where x = ? and y = \'?\' limit ?'), 'select "a?" from t where x = +? and y = \'?\' limit +?');
  assert.equal(fixedPlanParameters('insert into t (a, b) values (?, ?)'), 'insert into t (a, b) values (+?, +?)');
  assert.equal(fixedPlanParameters('select 1'), 'select 1');
});

forEachEngine('database access', (engine) => {
  let store: DatabaseHandle;
  let drop: () => Promise<void>;
  before(async () => {
    const database = await createTestDatabase(engine);
    drop = database.drop;
    store = openDatabase(database.url);
    await migrate(store.db);
    await store.db.insertInto('platforms').values([
      { code: 'P1', name: 'one', created_at: now },
      { code: 'P2', name: 'two', created_at: now },
    ]).execute();
    await store.db.insertInto('platform_keys').values([
      { id: 'k1', platform_code: 'P1', key_sealed: 'current', retired_at: null, created_at: now },
      { id: 'k2', platform_code: 'P1', key_sealed: 'in-grace', retired_at: now + 1000, created_at: now },
      { id: 'k3', platform_code: 'P1', key_sealed: 'retired', retired_at: now - 1, created_at: now },
      { id: 'k4', platform_code: 'P2', key_sealed: 'other', retired_at: null, created_at: now },
    ]).execute();
  });
  after(async () => {
    await store?.close();
    await drop?.();
  });

  const keysOf = compiledOnce((db, platform: string, at: number) => db.selectFrom('platform_keys').select('key_sealed')
    .where('platform_code', '=', platform)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', at)]))
    .where('key_sealed', '!=', 'never-a-key')
    .orderBy('key_sealed'));

  test('compiledOnce: each call gets its own arguments; constants of the query stay', async () => {
    assert.deepEqual((await keysOf(store.db, 'P1', now)).map((r) => r.key_sealed), ['current', 'in-grace']);
    assert.deepEqual((await keysOf(store.db, 'P1', now + 5000)).map((r) => r.key_sealed), ['current']);
    assert.deepEqual((await keysOf(store.db, 'P1', now - 10)).map((r) => r.key_sealed), ['current', 'in-grace', 'retired']);
    assert.deepEqual((await keysOf(store.db, 'P2', now)).map((r) => r.key_sealed), ['other']);
    assert.deepEqual(await keysOf(store.db, 'P3', now), []);
  });

  test('compiledOnce: an argument used twice, and a call inside a transaction sees its own writes', async () => {
    const twice = compiledOnce((db, code: string) => db.selectFrom('platforms').select('code').where('code', '=', code).where('name', '!=', code));
    assert.deepEqual(await twice(store.db, 'P1'), [{ code: 'P1' }]);
    await store.db.transaction().execute(async (trx) => {
      await trx.insertInto('platforms').values({ code: 'P9', name: 'nine', created_at: now }).execute();
      assert.deepEqual(await twice(trx, 'P9'), [{ code: 'P9' }]);
    });
    assert.deepEqual(await twice(store.db, 'P9'), [{ code: 'P9' }]);
  });

  test('compiledOnce refuses a query that ignores an argument (it would run with a stale value)', async () => {
    const ignores = compiledOnce((db, _code: string) => db.selectFrom('platforms').select('code'));
    await assert.rejects(ignores(store.db, 'P1'), /1 argument\(s\) are not query parameters/);
  });

  test('compiledOnce with prepareAs: right answers for each call; other queries are not prepared', async () => {
    const prepared = compiledOnce((db, code: string) => db.selectFrom('platforms').select(['code', 'name']).where('code', '=', code), { prepareAs: 'test_platform_by_code' });
    // One pooled connection, so the session asked below is the one that ran the queries.
    const database = await createTestDatabase(engine);
    const one = openDatabase(database.url, { poolSize: 1 });
    try {
      await migrate(one.db);
      await one.db.insertInto('platforms').values([{ code: 'A1', name: 'a', created_at: now }, { code: 'B1', name: 'b', created_at: now }]).execute();
      assert.deepEqual(await prepared(one.db, 'A1'), [{ code: 'A1', name: 'a' }]);
      assert.deepEqual(await prepared(one.db, 'B1'), [{ code: 'B1', name: 'b' }]);
      assert.deepEqual(await prepared(one.db, 'C1'), []);
      await one.db.selectFrom('platforms').select('code').where('code', '=', 'A1').execute();
      if (engine === 'postgres') {
        const names = (await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(one.db)).rows.map((r) => r.name);
        assert.deepEqual(names, ['sunap_test_platform_by_code'], 'the registered query is prepared, once; the unregistered one is not');
        // A column added under a running instance (a migration of a rolling upgrade) leaves the named-column statement working.
        await sql`alter table platforms add column extra text`.execute(one.db);
        assert.deepEqual(await prepared(one.db, 'B1'), [{ code: 'B1', name: 'b' }]);
      }
    } finally {
      await one.close();
      await database.drop();
    }
  });

  test('the hot lookups: on SQLite every parameter is +? and each table is found by an index (no scan); PostgreSQL keeps $n', async () => {
    for (const [name, sqlOn] of Object.entries(HOT_LOOKUPS)) {
      const text = sqlOn(store.db);
      if (engine === 'postgres') {
        assert.match(text, /\$1\b/, name);
        assert.doesNotMatch(text, /\+\$|\?/, name);
        continue;
      }
      const params = text.split('+?').length - 1;
      assert.ok(params >= 3, `${name}: its parameters written +?`);
      assert.equal(text.replaceAll('+?', '').includes('?'), false, `${name}: no bare ? left`);
      const plan = await store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, Array.from({ length: params }, () => 'x')));
      const details = plan.rows.map((r) => r.detail);
      assert.ok(details.length >= 1, name);
      for (const d of details) assert.match(d, /^SEARCH \w+ USING (COVERING )?INDEX /, `${name}: ${details.join(' | ')}`);
    }
    // What the rewritten queries answer: the first compiledOnce test above (its lookup is rewritten
    // too, on both sides of the key's grace) and every gateway suite.
  });

  if (engine === 'sqlite') {
    test('SQLite: the connection goes to waiters in the order they asked, not back to the one that just had it', async () => {
      const finished: string[] = [];
      const query = (label: string) => store.db.selectFrom('platforms').select('code').execute().then(() => { finished.push(label); });
      // A request running several queries one after another, and 30 others asking meanwhile.
      const sequential = (async () => {
        for (let i = 0; i < 5; i++) await query(`seq${i}`);
      })();
      const others = Array.from({ length: 30 }, (_, i) => query(`other${i}`));
      await Promise.all([sequential, ...others]);
      // seq0 asked first; everything else asked before seq1 could, so seq1 comes after all the others.
      assert.deepEqual(finished.slice(0, 31), ['seq0', ...Array.from({ length: 30 }, (_, i) => `other${i}`)]);
    });

    test('SQLite: right answers beyond the statement cache (more distinct statements than it keeps)', async () => {
      for (let n = 1; n <= 700; n++) {
        // A distinct SQL text per n: "in (?, ?, ...)" with n placeholders.
        const codes = Array.from({ length: n }, (_, i) => (i === n - 1 ? 'P2' : `X${i}`));
        const rows = await store.db.selectFrom('platforms').select('code').where('code', 'in', codes).execute();
        assert.deepEqual(rows, [{ code: 'P2' }], `n=${n}`);
      }
      // The first statements were evicted; they still answer (prepared again).
      assert.deepEqual(await store.db.selectFrom('platforms').select('code').where('code', 'in', ['P1']).execute(), [{ code: 'P1' }]);
    });
  }
});
