import { resolve } from 'node:path';

/** Every scenario, in the order a run performs them. */
export const SCENARIOS = [
  'ceiling', 'floor', 'reference', 'searchPayment', 'requestReference', 'requestPayment', 'pgInsert', 'createInvoice', 'batch', 'listSmall', 'listLarge', 'webhooks',
  'consolePaymentsSmall', 'consolePaymentsLarge', 'consolePaymentSearchSmall', 'consolePaymentSearchLarge',
  'consoleInvoicesSmall', 'consoleInvoicesLarge', 'consoleInvoiceSearchSmall', 'consoleInvoiceSearchLarge',
  'consolePaymentNameSmall', 'consolePaymentNameLarge', 'consolePaymentReasonSmall', 'consolePaymentReasonLarge',
  'consoleInvoiceNameSmall', 'consoleInvoiceNameLarge', 'consoleInvoiceReasonSmall', 'consoleInvoiceReasonLarge',
] as const;
export type ScenarioKey = (typeof SCENARIOS)[number];
export type Engine = 'sqlite' | 'postgres';
/**
 * The hot path's pairs, repeated BENCH_ROUNDS times in this order (each reference right before
 * the Sunap scenario it is compared with), before every other scenario.
 */
export const HOT_PATH: readonly ScenarioKey[] = ['reference', 'searchPayment', 'requestReference', 'requestPayment', 'pgInsert'];

export interface BenchConfig {
  root: string;
  /** Seconds of measured load per request/response scenario. */
  duration: number;
  /** Seconds of warm-up load before each measured run (results discarded). */
  warmup: number;
  connections: number;
  /** How many times the hot path's pairs (HOT_PATH) run, for the median and spread of each ratio. */
  rounds: number;
  scenarios: ReadonlySet<ScenarioKey>;
  engines: Engine[];
  smoke: boolean;
  /** Invoices in the account of the small and the large list scenario. */
  listSmall: number;
  listLarge: number;
  /** Recipients of the one batch request. */
  batch: number;
  /** Webhook events delivered in the webhook scenario. */
  webhooks: number;
  /** Give up on a batch or a webhook run after this many seconds (it then counts as an error). */
  completionTimeout: number;
  pgAdminUrl: string;
  /** When set, every Sunap process runs under --cpu-prof and writes its profile here (one process per scenario). */
  profileDir: string | null;
  /** Where results (JSON, Markdown table, server logs) go. */
  outDir: string;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name}: must be a number ≥ ${min}, got "${raw}"`);
  return n;
}

const truthy = (v: string | undefined) => v !== undefined && ['1', 'true', 'yes'].includes(v.trim().toLowerCase());

export function loadBenchConfig(env: Env = process.env): BenchConfig {
  const root = resolve(import.meta.dirname, '..');
  const smoke = truthy(env.BENCH_SMOKE);
  const duration = int(env, 'BENCH_DURATION', smoke ? 1 : 10, 0.5);
  let scenarios: Set<ScenarioKey> = new Set(SCENARIOS);
  if (env.BENCH_SCENARIOS?.trim()) {
    const wanted = env.BENCH_SCENARIOS.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = wanted.filter((w) => !(SCENARIOS as readonly string[]).includes(w));
    if (unknown.length) throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
    scenarios = new Set(wanted as ScenarioKey[]);
  }
  const skipPostgres = truthy(env.BENCH_SKIP_POSTGRES) || truthy(env.SUNAP_TEST_SKIP_POSTGRES);
  let engines: Engine[] = skipPostgres ? ['sqlite'] : ['sqlite', 'postgres'];
  if (env.BENCH_ENGINES?.trim()) {
    const wanted = env.BENCH_ENGINES.split(',').map((s) => s.trim());
    if (wanted.some((w) => w !== 'sqlite' && w !== 'postgres')) throw new Error(`BENCH_ENGINES: sqlite and/or postgres, got "${env.BENCH_ENGINES}"`);
    engines = engines.filter((e) => wanted.includes(e));
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return {
    root,
    duration,
    warmup: int(env, 'BENCH_WARMUP', Math.min(3, duration), 0),
    connections: int(env, 'BENCH_CONNECTIONS', 50, 1),
    rounds: int(env, 'BENCH_ROUNDS', 1, 1),
    scenarios,
    engines,
    smoke,
    listSmall: int(env, 'BENCH_LIST_SMALL', smoke ? 20 : 1_000, 1),
    listLarge: int(env, 'BENCH_LIST_LARGE', smoke ? 100 : 100_000, 1),
    batch: Math.min(1000, int(env, 'BENCH_BATCH', smoke ? 50 : 1_000, 1)),
    webhooks: int(env, 'BENCH_WEBHOOKS', smoke ? 100 : 10_000, 1),
    completionTimeout: int(env, 'BENCH_COMPLETION_TIMEOUT', smoke ? 90 : 300, 1),
    pgAdminUrl: env.BENCH_PG_URL || env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    profileDir: env.BENCH_PROFILE_DIR ? resolve(env.BENCH_PROFILE_DIR) : truthy(env.BENCH_PROFILE) ? resolve(root, '.tmp', 'bench', `profiles-${stamp}`) : null,
    outDir: resolve(env.BENCH_OUT_DIR || resolve(root, '.tmp', 'bench', `run-${stamp}`)),
  };
}
