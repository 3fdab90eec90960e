// The SQLite drivers Kysely runs on (docs/architecture.md, "Group commit (SQLite)"): one
// IMMEDIATE transaction per unit of work, or group commit; both with statements prepared once
// and the connection handed to waiters in arrival order. src/db/index.ts chooses between them.
import type SQLite from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type QueryResult, type SqliteDatabase } from 'kysely';
import { FifoLock } from './fifo-lock.js';

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
 * Kysely's SQLite connection calls prepare() for every query; better-sqlite3 statements are
 * reusable, so the handle Kysely sees keeps them by SQL text. Statements run synchronously
 * (`all`, `run`; no streaming), so a cached one is never busy when handed out. Bounded because
 * multi-row inserts make a distinct text per row count.
 */
function statementCache(sqlite: SQLite.Database, max = 500): { prepare(text: string): SQLite.Statement } {
  const statements = new Map<string, SQLite.Statement>();
  return {
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
export function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const cache = statementCache(sqlite);
  return { close: () => sqlite.close(), prepare: (text: string) => cache.prepare(text) };
}

/** What SqliteDriver's connection answers for a statement: rows, or what a write changed. */
function run(statement: SQLite.Statement, parameters: readonly unknown[]): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** A batch of units sharing one outer transaction; `durable` settles with its COMMIT. */
interface Batch {
  units: number;
  openedAt: number;
  durable: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

/** When a batch commits although units keep coming: after this many units, or this old (ms). */
export interface GroupCommitCap {
  maxUnits: number;
  maxMs: number;
}
/**
 * 10 ms: under the bench's requestPayment load (BENCHMARKS.md, item 12) a cap of 5 ms ended
 * about 70% of the batches at ~12 units, 10 ms about 20% at ~23, 20 or 50 ms almost none at
 * ~25 (the batch the load itself makes) with longer tails.
 */
export const defaultCap: GroupCommitCap = { maxUnits: 100, maxMs: 10 };

/**
 * A batch holds SQLite's write lock from its BEGIN IMMEDIATE until the setImmediate that
 * commits it. Another process waits in busy_timeout meanwhile; another handle on the same file
 * in this process must not (it would block the event loop the COMMIT needs, for the whole
 * busy_timeout), so the handles of one process take turns at a file through this lock first.
 */
const fileTurns = new Map<string, FifoLock>();
function fileTurn(file: string): FifoLock {
  let turn = fileTurns.get(file);
  if (!turn) fileTurns.set(file, (turn = new FifoLock()));
  return turn;
}

/** The savepoint of the unit that holds the writer (units run one at a time, so one name). */
const UNIT = 'sunap_unit';
const quoteName = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** One use of the writer by Kysely (a transaction, or one autocommit query). */
class UnitConnection implements DatabaseConnection {
  /** The batch this unit's transaction runs in, while it runs (it then holds the lock). */
  batch: Batch | null = null;
  constructor(private readonly driver: GroupCommitSqliteDriver) {}
  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute(this, query) as Promise<QueryResult<R>>;
  }
  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('SQLite: streaming queries are not supported (statements run synchronously, see statementCache)');
  }
}

/**
 * Group commit (SQLite on a file; docs/architecture.md, "Group commit (SQLite)"). With
 * `synchronous=FULL` every COMMIT waits for an fdatasync, and better-sqlite3 waits on the event
 * loop: one fsync per payment bounded requestPayment by the disk (BENCHMARKS.md). Here the units
 * of write work that reach the one writer connection in the same turn of the event loop (Kysely
 * transactions, and autocommit writes) share one outer `BEGIN IMMEDIATE … COMMIT`, so one fsync:
 *
 * - A unit runs alone on the writer: it holds the FIFO lock from its start to its end, exactly
 *   as a transaction did before, so units of a batch run one after the other (serializable, the
 *   same as before), and the batch's `BEGIN IMMEDIATE` holds SQLite's write lock against other
 *   processes (the CLI waits through busy_timeout, as before).
 * - A transaction runs inside its own SAVEPOINT. Its failure (a unique violation, an error
 *   thrown by its callback) rolls back to the savepoint and releases it: only its own writes
 *   go, the other units of the batch keep theirs. An autocommit write needs no savepoint: a
 *   failing statement undoes itself only (SQLite's ABORT). An error after which SQLite has
 *   rolled back the whole transaction (I/O error, disk full) fails the whole batch.
 * - A unit passes the lock to the next waiter as soon as its savepoint is released, so the
 *   waiter joins the batch; its own promise waits for the batch's COMMIT and resolves only
 *   after it (nothing is ever answered before it is durable), or rejects with the COMMIT's error.
 *   A failed unit waits too: its error may rest on rows of the batch (a duplicate of a row
 *   inserted by an earlier unit), which must be durable before anyone is told.
 * - The batch commits when the lock is free and nobody waits for it (on setImmediate, checked
 *   again then), or, under a stream that never frees the lock, when a unit ends and the batch has
 *   `maxUnits` units or is `maxMs` old.
 * - Autocommit reads never see a batch's uncommitted rows: a read-only statement runs on the
 *   writer only when no batch is open (no uncommitted data, better-sqlite3 is synchronous so
 *   nothing opens one meanwhile), otherwise on a second, query-only connection to the same
 *   file, which in WAL mode reads the last committed state and needs no lock. Reads inside a
 *   transaction stay on the writer: they see their own writes.
 */
class GroupCommitSqliteDriver implements Driver {
  private readonly turn = new FifoLock();
  private readonly writes: ReturnType<typeof statementCache>;
  private readonly reads: ReturnType<typeof statementCache>;
  private batch: Batch | null = null;
  private flushScheduled = false;
  constructor(
    private readonly writer: SQLite.Database,
    private readonly reader: SQLite.Database,
    private readonly cap: GroupCommitCap,
    /** This process's turn at the file's write lock (fileTurn). */
    private readonly file: FifoLock,
  ) {
    this.writes = statementCache(writer);
    this.reads = statementCache(reader);
  }
  async init(): Promise<void> {}

  /** Each use of the connection gets its own handle: a unit's state (in a savepoint, its batch) lives on it. */
  async acquireConnection(): Promise<DatabaseConnection> {
    return new UnitConnection(this);
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // Kysely always ends a transaction before it releases; a unit still open here would hold
    // the lock forever, so it is rolled back.
    const unit = connection as UnitConnection;
    if (unit.batch) await this.rollbackTransaction(unit);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const unit = connection as UnitConnection;
    await this.turn.lock();
    try {
      if (!this.batch) await this.open();
      this.writer.exec(`savepoint ${UNIT}`);
    } catch (err) {
      this.lost(err);
      this.release();
      throw err;
    }
    unit.batch = this.batch;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const unit = connection as UnitConnection;
    const batch = unit.batch!;
    // A failure here leaves the unit open: Kysely then calls rollbackTransaction, which ends it.
    this.inUnit(unit, () => this.writer.exec(`release ${UNIT}`));
    unit.batch = null;
    batch.units++;
    this.release();
    await batch.durable;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const unit = connection as UnitConnection;
    const batch = unit.batch;
    if (!batch) return;
    unit.batch = null;
    if (this.batch === batch) {
      try {
        this.writer.exec(`rollback to ${UNIT}`);
        this.writer.exec(`release ${UNIT}`);
      } catch (err) {
        this.fail(err);
      }
    }
    this.release();
    // Kysely throws the unit's own error once this resolves; a failed batch's error replaces it.
    await batch.durable;
  }

  // Savepoints a transaction opens itself (trx.savepoint()), nested in its unit's.
  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    this.inUnit(connection as UnitConnection, () => this.writer.exec(`savepoint ${quoteName(name)}`));
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    this.inUnit(connection as UnitConnection, () => this.writer.exec(`rollback to ${quoteName(name)}`));
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    this.inUnit(connection as UnitConnection, () => this.writer.exec(`release ${quoteName(name)}`));
  }

  /**
   * Closes both connections after the units under way ended and the open batch committed.
   * Units still waiting then get the lock and fail on the closed connection, rather than wait
   * for ever.
   */
  async destroy(): Promise<void> {
    await this.turn.lock();
    try {
      if (this.batch) this.commit();
    } finally {
      this.reader.close();
      this.writer.close();
      this.turn.unlock();
    }
  }

  execute(unit: UnitConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    const { sql, parameters } = query;
    if (unit.batch) return Promise.resolve(this.inUnit(unit, () => run(this.writes.prepare(sql), parameters)));
    const rows = this.readNow(sql, parameters);
    if (rows) return Promise.resolve({ rows });
    return this.autocommitWrite(this.writes.prepare(sql), parameters);
  }

  /**
   * An autocommit read, answered at once: on the writer when no batch is open, else on the
   * reader. `execute` reads through it, and so does compiledOnce without Kysely's executor
   * (src/db/compiled.ts); undefined for a statement that writes, which runs as a unit.
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    const statement = this.writes.prepare(sql);
    if (!statement.readonly) return undefined;
    return (this.writer.inTransaction ? this.reads.prepare(sql) : statement).all(parameters);
  }

  /** An autocommit write is a unit of its own: one statement, atomic by itself. */
  private async autocommitWrite(statement: SQLite.Statement, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    await this.turn.lock();
    let result: QueryResult<unknown>;
    try {
      if (!this.batch) await this.open();
      result = run(statement, parameters);
    } catch (err) {
      this.lost(err);
      const joined = this.batch;
      this.release();
      if (joined) await joined.durable;
      throw err;
    }
    const joined = this.batch!;
    joined.units++;
    this.release();
    await joined.durable;
    return result;
  }

  /** Runs a statement of a unit, which must still be inside its batch's transaction. */
  private inUnit<T>(unit: UnitConnection, fn: () => T): T {
    if (!unit.batch || unit.batch !== this.batch || !this.writer.inTransaction) {
      throw new Error('SQLite group commit: this transaction was rolled back with its batch (an earlier statement failed the batch)');
    }
    try {
      return fn();
    } catch (err) {
      this.lost(err);
      throw err;
    }
  }

  /**
   * Opens a batch. Only the holder of the lock calls it, when no batch is open. Another handle
   * of this process on the same file (tests, the bench) waits for this one's batch here rather
   * than in busy_timeout, which would block the event loop that must run the COMMIT.
   */
  private async open(): Promise<void> {
    await this.file.lock();
    try {
      this.writer.exec('begin immediate');
    } catch (err) {
      this.file.unlock();
      throw err;
    }
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const durable = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Nobody may be waiting yet (an empty batch whose only unit failed to begin).
    durable.catch(() => {});
    this.batch = { units: 0, openedAt: performance.now(), durable, resolve, reject };
  }

  /** After a failed statement: if SQLite rolled back the whole transaction, the batch failed. */
  private lost(err: unknown): void {
    if (this.batch && !this.writer.inTransaction) this.fail(err);
  }

  /** Fails the open batch: every unit that joined it rejects with `err`. */
  private fail(err: unknown): void {
    const batch = this.batch!;
    this.batch = null;
    if (this.writer.inTransaction) {
      try {
        this.writer.exec('rollback');
      } catch {
        // The transaction is gone either way; its units reject below.
      }
    }
    this.file.unlock();
    batch.reject(err);
  }

  private commit(): void {
    const batch = this.batch!;
    this.batch = null;
    try {
      this.writer.exec('commit');
    } catch (err) {
      // A COMMIT that fails may leave the transaction open (a deferred constraint): end it.
      this.batch = batch;
      this.fail(err);
      return;
    }
    this.file.unlock();
    batch.resolve();
  }

  /**
   * A unit ended (the holder of the lock): the batch commits now if it reached its cap,
   * otherwise the lock goes to the next waiter, who joins the batch. With nobody waiting, the
   * batch commits on setImmediate, unless a unit took the lock meanwhile (its end looks again).
   */
  private release(): void {
    const batch = this.batch;
    if (batch && (batch.units >= this.cap.maxUnits || performance.now() - batch.openedAt >= this.cap.maxMs)) this.commit();
    this.turn.unlock();
    if (this.batch && !this.turn.held && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        if (this.batch && !this.turn.held) this.commit();
      });
    }
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly cfg: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(cfg);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.cfg);
  }
}
export class GroupCommitSqliteDialect extends SqliteDialect {
  constructor(private readonly writer: SQLite.Database, private readonly reader: SQLite.Database, private readonly cap: GroupCommitCap, private readonly file: string) {
    super({ database: writer });
  }
  private driver: GroupCommitSqliteDriver | undefined;
  override createDriver(): Driver {
    return (this.driver = new GroupCommitSqliteDriver(this.writer, this.reader, this.cap, fileTurn(this.file)));
  }
  /** The driver's readNow, once Kysely made the driver (src/db/index.ts registers it for compiledOnce). */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    return this.driver?.readNow(sql, parameters);
  }
}
