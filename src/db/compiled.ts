import { CompiledQuery, type Compilable, type Kysely, type Transaction } from 'kysely';
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

export function compiledOnce<A extends unknown[], Row>(build: (db: Db, ...args: A) => Compilable<Row>, opts: { prepareAs?: string } = {}) {
  // Per adapter: SQLite and PostgreSQL compile to different SQL ("?" vs "$1").
  const byAdapter = new WeakMap<object, { sql: string; slots: (number | { value: unknown })[] }>();
  return async (db: Db, ...args: A): Promise<Row[]> => {
    const adapter = db.getExecutor().adapter;
    let compiled = byAdapter.get(adapter);
    if (!compiled) {
      const placeholders = args.map((_, i) => placeholder(i)) as unknown as A;
      const first = build(db, ...placeholders).compile();
      const slots = first.parameters.map((p) => {
        const i = placeholders.indexOf(p as never);
        return i >= 0 ? i : { value: p };
      });
      const used = new Set(slots.filter((s): s is number => typeof s === 'number'));
      if (used.size !== args.length) throw new Error(`compiledOnce: ${args.length - used.size} argument(s) are not query parameters`);
      compiled = { sql: first.sql, slots };
      byAdapter.set(adapter, compiled);
      if (opts.prepareAs) preparedStatements.set(first.sql, `sunap_${opts.prepareAs}`);
    }
    const parameters = compiled.slots.map((s) => (typeof s === 'number' ? args[s] : s.value));
    const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
}
