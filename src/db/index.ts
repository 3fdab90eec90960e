import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import { directReads, preparedStatements } from './compiled.js';
import { migrations } from './migrations/index.js';
import { defaultCap, GroupCommitSqliteDialect, ImmediateSqliteDialect, withStatementCache, type GroupCommitCap } from './sqlite-driver.js';
import type { Database } from './schema.js';

export type { Database } from './schema.js';
export type Engine = 'sqlite' | 'postgres';

/** An open database: the Kysely instance, which engine it is, and how to close it. */
export interface DatabaseHandle {
  db: Kysely<Database>;
  engine: Engine;
  close(): Promise<void>;
}

// bigint columns hold epoch milliseconds and won amounts, both far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * The database holds API keys (encrypted), password hashes and customers' phone numbers: its
 * file is created readable by its owner only, before SQLite opens it. SQLite gives the WAL and
 * shared-memory files the database file's mode, so they follow; an existing file (or its WAL,
 * left by an older version) is narrowed to 0600 as well when we own it.
 */
function keepPrivate(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if (existsSync(f) && (statSync(f).mode & 0o077) !== 0) chmodSync(f, 0o600);
    } catch {
      // Not ours to change (another user's file): SQLite still opens it, as before.
    }
  }
}

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it on every call. The hot
 * lookups registered in `preparedStatements` (src/db/compiled.ts) go out as named statements
 * instead: parsed and planned once per connection (searchPayment, every waiting customer's
 * poll). Everything else is sent as before.
 */
function usePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' ? preparedStatements.get(text) : undefined;
    return name && callback === undefined ? query({ name, text, values }) : query(text, values, callback);
  };
}

export interface OpenOptions {
  /** PostgreSQL: the pool's size. */
  poolSize?: number;
  /**
   * SQLite on a file: group commit (GroupCommitSqliteDriver), on unless false
   * (SUNAP_SQLITE_GROUP_COMMIT=false: one fsync per commit). An in-memory database never has it.
   */
  groupCommit?: boolean;
  /** SQLite group commit: when a batch commits under a steady stream (tests). */
  groupCommitCap?: GroupCommitCap;
}

function openSqlite(path: string, opts: { readonly?: boolean } = {}): SQLite.Database {
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  // FULL: a committed payment survives power loss, not only a process crash.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  // The group commit's reader: writes nothing, whatever it is asked.
  if (opts.readonly) sqlite.pragma('query_only = ON');
  return sqlite;
}

export function openDatabase(databaseUrl: string, opts: OpenOptions = {}): DatabaseHandle {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    const inMemory = path === '' || path === ':memory:' || path.startsWith('file::memory:');
    if (path !== ':memory:') {
      mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
      keepPrivate(path);
    }
    const writer = openSqlite(path);
    // A second connection to an in-memory database would be another, empty database.
    const dialect = inMemory || opts.groupCommit === false
      ? new ImmediateSqliteDialect({ database: withStatementCache(writer) })
      : new GroupCommitSqliteDialect(writer, openSqlite(path, { readonly: true }), opts.groupCommitCap ?? defaultCap, resolve(path));
    const db = new Kysely<Database>({ dialect });
    if (dialect instanceof GroupCommitSqliteDialect) directReads.set(db, (sql, parameters) => dialect.readNow(sql, parameters));
    return { db, engine: 'sqlite', close: () => db.destroy() };
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.poolSize ?? 10, connectionTimeoutMillis: 5000 });
  // An idle client losing its server (restart) must not crash the process.
  pool.on('error', () => {});
  // Nor one that is checked out: pg emits 'error' on the client as well as failing its query,
  // and the pool listens only while the client is idle. The failed query reports the loss;
  // the pool drops the broken client when it is released.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    usePreparedStatements(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  directReads.set(db, async (text, values) => (await pool.query({ name: preparedStatements.get(text), text, values: values as unknown[] })).rows);
  return { db, engine: 'postgres', close: () => db.destroy() };
}

export async function migrate(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Numbers are reserved per change before they land, so one may land after a higher one
    // (0012 after 0013): a database that has the higher one applies the lower one next.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Which migrations a database has applied and which it has not, without applying any (sunap doctor). */
export async function migrationStatus(db: Kysely<Database>): Promise<{ applied: string[]; pending: string[] }> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true });
  const all = await migrator.getMigrations();
  return { applied: all.filter((m) => m.executedAt).map((m) => m.name), pending: all.filter((m) => !m.executedAt).map((m) => m.name) };
}
