import { CompiledQuery, SqliteAdapter, type Compilable, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Stands in for argument i while the query is compiled the first time. */
const placeholder = (i: number) => `\u0000sunap-arg-${i}\u0000`;

/**
 * A query Kysely builds and compiles once per dialect, then runs with new arguments.
 *
 * Building and compiling a query costs more CPU than SQLite spends answering a point lookup
 * (BENCHMARKS.md: ~12% of a signed searchPayment). `build` is called once with placeholders
 * for its arguments; the compiled SQL is kept, and each call substitutes its arguments for the
 * placeholders among the parameters. So `build` must use its arguments only as values (in
 * where, set, values), never to choose the shape of the query: a branch on an argument would
 * be decided once, by a placeholder. Any other parameter is a constant of the query.
 */
/**
 * SQL texts PostgreSQL should keep as named prepared statements, by text: src/db/index.ts sends
 * them with their name, so each pooled connection parses and plans them once instead of on
 * every call. Only queries that name their columns belong here: a prepared `select *` fails
 * with "cached plan must not change result type" once a migration adds a column under a
 * running instance.
 */
export const preparedStatements = new Map<string, string>();

/**
 * The SQL with each parameter `?` written `+?` (outside quoted names and strings), for SQLite.
 *
 * SQLite may mark a statement to be planned again whenever a parameter is bound, when the
 * parameter's value could change the plan; the build of SQLite that better-sqlite3 ships does
 * so for every statement that joins tables and binds a parameter in its WHERE or ON. A join
 * lookup was then parsed and planned on every call: the signed-call lookup of three tables cost
 * 58 µs of CPU a call against 8 µs with this rewrite, with the same plan (BENCHMARKS.md, "The
 * hot path at the stack's own cost"). Unary plus is a no-op on any value (text, number, blob,
 * null) and a parameter has no affinity either way, so comparisons and inserts are unchanged;
 * what it removes is the value's say in the plan, which these point lookups by a unique or
 * equality index never needed. Kept to the queries of compiledOnce: a partial index whose
 * WHERE is matched by a bound value (`state = ?` against `where state = 'OPEN'`) needs the
 * value, and those queries are not here.
 */
export function fixedPlanParameters(text: string): string {
  let out = '';
  let quote: string | null = null;
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '?') {
      out += '+?';
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * Reads answered without Kysely's executor, by the database they belong to (src/db/index.ts
 * registers them): on SQLite with group commit the driver's readNow (the same statements, the
 * same choice of writer or reader connection as a query through Kysely), on PostgreSQL the pool
 * (the same clients, the same named statements). Kysely's executor adds nothing to a compiled
 * raw query here (no plugins), but its connection hand-over and promises cost ~12 µs around a
 * 6 µs lookup on SQLite, more under load (BENCHMARKS.md, "The hot path at the stack's own
 * cost"). Only a compiledOnce SELECT outside a transaction goes this way: a transaction is
 * never registered (its reads run in it, through Kysely, and see its own writes), and writes
 * always go through Kysely.
 */
export const directReads = new WeakMap<object, (sql: string, parameters: readonly unknown[]) => Promise<unknown[]> | unknown[] | undefined>();

export function compiledOnce<A extends unknown[], Row>(build: (db: Db, ...args: A) => Compilable<Row>, opts: { prepareAs?: string } = {}) {
  // Per adapter: SQLite and PostgreSQL compile to different SQL ("?" vs "$1").
  const byAdapter = new WeakMap<object, { sql: string; slots: (number | { value: unknown })[]; read: boolean }>();
  const compiledFor = (db: Db, arity: number) => {
    const adapter = db.getExecutor().adapter;
    let compiled = byAdapter.get(adapter);
    if (!compiled) {
      const placeholders = Array.from({ length: arity }, (_, i) => placeholder(i)) as unknown as A;
      const first = build(db, ...placeholders).compile();
      const slots = first.parameters.map((p) => {
        const i = placeholders.indexOf(p as never);
        return i >= 0 ? i : { value: p };
      });
      const used = new Set(slots.filter((s): s is number => typeof s === 'number'));
      if (used.size !== arity) throw new Error(`compiledOnce: ${arity - used.size} argument(s) are not query parameters`);
      compiled = { sql: adapter instanceof SqliteAdapter ? fixedPlanParameters(first.sql) : first.sql, slots, read: first.query.kind === 'SelectQueryNode' };
      byAdapter.set(adapter, compiled);
      if (opts.prepareAs) preparedStatements.set(compiled.sql, `sunap_${opts.prepareAs}`);
    }
    return compiled;
  };
  const run = async (db: Db, ...args: A): Promise<Row[]> => {
    const compiled = compiledFor(db, args.length);
    const parameters = compiled.slots.map((s) => (typeof s === 'number' ? args[s] : s.value));
    const rows = compiled.read ? directReads.get(db)?.(compiled.sql, parameters) : undefined;
    if (rows) return (await rows) as Row[];
    const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
  /** The SQL this query runs on `db`'s engine, given arguments of a call (the plan tests read it). */
  return Object.assign(run, { sqlOn: (db: Db, ...args: A) => compiledFor(db, args.length).sql });
}
