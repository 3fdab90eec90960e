import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDatabase } from 'kysely';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import { preparedStatements } from './compiled.js';
import { migrations } from './migrations/index.js';
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
 * SQLite write transactions start IMMEDIATE: the write lock is taken at BEGIN, so two
 * processes on one file (server and CLI, or two tests) wait for each other through
 * busy_timeout instead of failing with SQLITE_BUSY on lock upgrade.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  private readonly turn = new FifoLock();
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.turn.lock();
    return super.acquireConnection();
  }
  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.turn.unlock();
  }
}

/**
 * The one SQLite connection is handed straight to the oldest waiter. Kysely's own mutex wakes
 * every waiter on each release (one wins, the rest sleep again): O(waiters) of CPU per query
 * under load, with 50 requests waiting. Measured in BENCHMARKS.md.
 */
class FifoLock {
  private held = false;
  private readonly waiters: (() => void)[] = [];
  lock(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  /** Passes the lock straight to the oldest waiter, so it is never free in between. */
  unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * Kysely's SQLite connection calls prepare() for every query; better-sqlite3 statements are
 * reusable, so the handle Kysely sees keeps them by SQL text. Only the holder of the
 * connection runs a statement, so a cached one is never busy when handed out. Bounded because
 * multi-row inserts make a distinct text per row count.
 */
function withStatementCache(sqlite: SQLite.Database, max = 500): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (statement) return statement;
      statement = sqlite.prepare(text);
      if (statements.size >= max) statements.delete(statements.keys().next().value!);
      statements.set(text, statement);
      return statement;
    },
  };
}
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly cfg: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(cfg);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.cfg);
  }
}

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

export function openDatabase(databaseUrl: string, opts: { poolSize?: number } = {}): DatabaseHandle {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path !== ':memory:') {
      mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
      keepPrivate(path);
    }
    const sqlite = new SQLite(path);
    sqlite.pragma('journal_mode = WAL');
    // FULL: a committed payment survives power loss, not only a process crash.
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('busy_timeout = 10000');
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }) });
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
  return { db, engine: 'postgres', close: () => db.destroy() };
}

export async function migrate(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Which migrations a database has applied and which it has not, without applying any (sunap doctor). */
export async function migrationStatus(db: Kysely<Database>): Promise<{ applied: string[]; pending: string[] }> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const all = await migrator.getMigrations();
  return { applied: all.filter((m) => m.executedAt).map((m) => m.name), pending: all.filter((m) => !m.executedAt).map((m) => m.name) };
}
