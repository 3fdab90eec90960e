import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { migrate, openDatabase, type Database, type DatabaseHandle } from '../../src/db/index.js';

export type Engine = 'sqlite' | 'postgres';

/** Engines this run covers: SQLite always; PostgreSQL unless test/run.mjs found it down. */
export const engines: Engine[] = process.env.SUNAP_TEST_SKIP_POSTGRES ? ['sqlite'] : ['sqlite', 'postgres'];

const adminUrl = () => process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database: a real SQLite file, or a PostgreSQL database created for this test and dropped after. */
export async function createTestDatabase(engine: Engine): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sunap_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  if (engine === 'sqlite') {
    const dir = resolve('.tmp', 'db', name);
    mkdirSync(dir, { recursive: true });
    return { url: `sqlite:${join(dir, 'sunap.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * A fresh, migrated database for the enclosing suite: opened before its first test, closed and
 * dropped after its last. The handle reads through to the opened one, so tests use it directly.
 */
export function withDatabase(engine: Engine): DatabaseHandle {
  let opened: DatabaseHandle | undefined;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const d = await createTestDatabase(engine);
    drop = d.drop;
    opened = openDatabase(d.url);
    await migrate(opened.db);
  });
  after(async () => {
    await opened?.close();
    await drop?.();
  });
  const get = () => {
    if (!opened) throw new Error('withDatabase: used before the suite started');
    return opened;
  };
  return {
    get db() { return get().db; },
    get engine() { return get().engine; },
    close: () => get().close(),
  };
}

/**
 * Makes every INSERT into `table` fail with "simulated write failure" (as a full disk would),
 * on either engine, while `fn` runs; the trigger is gone again afterwards, whatever `fn` did.
 */
export async function withFailingInserts<T>(db: Kysely<Database>, engine: Engine, table: keyof Database, fn: () => Promise<T>): Promise<T> {
  const name = sql.raw(`${table}_fail`);
  if (engine === 'sqlite') {
    await sql`create trigger ${name} before insert on ${sql.table(table)} begin select raise(abort, 'simulated write failure'); end`.execute(db);
  } else {
    await sql`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'simulated write failure'; end $$`.execute(db);
    await sql`create trigger ${name} before insert on ${sql.table(table)} for each row execute function ${name}()`.execute(db);
  }
  try {
    return await fn();
  } finally {
    await sql`drop trigger ${name}${engine === 'postgres' ? sql` on ${sql.table(table)}` : sql``}`.execute(db);
    if (engine === 'postgres') await sql`drop function ${name}()`.execute(db);
  }
}

/**
 * The same database, except that after each query's answer and before the caller sees it,
 * `meanwhile(rows)` runs on the plain handle: what another request commits between a read and
 * the write that follows it. `meanwhile` decides which reads to act on.
 */
export function afterEachRead(db: Kysely<Database>, meanwhile: (rows: readonly unknown[]) => Promise<void>): Kysely<Database> {
  return db.withPlugin({
    transformQuery: (q) => q.node,
    transformResult: async (q) => {
      await meanwhile(q.result.rows);
      return q.result;
    },
  });
}

/**
 * A platform and its stores written straight into the database, for suites that test a module's
 * own SQL without the app (the operator's actions are `test/gateway/merchants`' subject).
 */
export async function insertStores(db: Kysely<Database>, platformCode: string, storeCodes: readonly string[], at: number): Promise<void> {
  await db.insertInto('platforms').values({ code: platformCode, name: 'p', created_at: at }).execute();
  await db.insertInto('stores').values(storeCodes.map((code) => ({
    code, platform_code: platformCode, name: 's', ceo_name: 'c', biz_reg_num: '1234567890', tel: '0212345678', cat_enabled: 0, created_at: at,
  }))).execute();
}
