import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import { cardProcessorOf, messagingOf, processorSetupOf } from '../app.js';
import { migrationStatus, openDatabase } from '../db/index.js';
import { textSearchCheck } from '../db/search.js';
import { ServiceClock } from '../platform/clock.js';
import { ConfigError, loadConfig, type Config } from '../platform/config.js';
import { createLogger } from '../platform/logging.js';
import { secretKeyWeakness } from '../platform/providers.js';
import { SecretBox } from '../platform/crypto.js';
import { ProcessorRegistry, ProcessorUnavailable } from '../gateway/processors.js';
import { storesOnLiveProcessors } from '../gateway/settings-repository.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
}
export interface DoctorReport {
  ok: boolean;
  /** The configuration could not be read: the other checks did not run. */
  configError: boolean;
  checks: Check[];
}

/**
 * `sunap doctor` (README.md, "Operator CLI"; docs/going-live.md): checks a configuration
 * without changing anything: no migration, no key file written, no message sent, no payment
 * made. The providers' credentials are proven by calls that only read (a look-up of an order
 * that cannot exist, a list of one message).
 */
export async function doctor(env: Record<string, string | undefined> = process.env): Promise<DoctorReport> {
  const checks: Check[] = [];
  let config: Config;
  try {
    config = loadConfig(env, { keyFile: false });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    checks.push({ name: 'configuration', status: 'fail', detail: err.message });
    return { ok: false, configError: true, checks };
  }
  checks.push({ name: 'configuration', status: 'ok', detail: `${config.mode} mode; card processor ${config.cardProcessor.kind}; messaging ${config.messaging.kind}` });
  const database = await databaseCheck(config);
  checks.push(database);
  if (database.status === 'ok') checks.push(await searchCheck(config));
  checks.push(secretKeyCheck(config));

  // Quiet: a refused key is reported on its check line, not as a log line.
  const log = createLogger('silent');
  const noDb = null as never;
  checks.push(await cardProcessorCheck(config, log));
  const messaging = config.messaging.kind === 'sandbox' ? null : messagingOf(config, noDb, new ServiceClock(null), log);
  checks.push(messaging?.checkCredentials
    ? { name: 'messaging', ...(await messaging.checkCredentials().then((c) => ({ status: c.ok ? 'ok' as const : 'fail' as const, detail: c.detail }))) }
    : { name: 'messaging', status: 'ok', detail: 'sandbox provider: messages go to the sandbox outbox, none is sent' });
  checks.push(...(await storeProcessorChecks(config, log)));
  checks.push(await publicUrlCheck(config));
  return { ok: checks.every((c) => c.status !== 'fail'), configError: false, checks };
}

/**
 * The operator's processor: the sandbox needs nothing; Toss's card-number API and a checkout
 * adapter prove their keys with a call that changes nothing; a processor this build has no
 * adapter for fails with what to do.
 */
async function cardProcessorCheck(config: Config, log: ReturnType<typeof createLogger>): Promise<Check> {
  const name = 'card processor';
  const kind = config.cardProcessor.kind;
  if (kind === 'sandbox') return { name, status: 'ok', detail: 'sandbox card network and window: test cards only, nothing is ever charged' };
  const noDb = null as never;
  let adapter: { checkCredentials?(): Promise<{ ok: boolean; detail: string }> } | null;
  if (kind === 'toss-keyin') adapter = cardProcessorOf(config, noDb, log);
  else {
    const setup = processorSetupOf(config, noDb, log, { sandbox: noDb });
    const id = kind === 'portone' ? 'portone' : 'toss';
    const factory = setup.checkout[id];
    if (!factory) return { name, status: 'fail', detail: 'toss (the payment window): this build has no Toss checkout adapter; use toss-keyin with a key-in contract, or the sandbox' };
    adapter = factory(setup.globalKeys[id] ?? {});
  }
  if (!adapter?.checkCredentials) return { name, status: 'ok', detail: `${kind}: nothing to prove` };
  const c = await adapter.checkCredentials();
  return { name, status: c.ok ? 'ok' : 'fail', detail: c.detail };
}

/** How many stores' own processor keys one run proves. */
const STORE_CHECK_LIMIT = 50;

/**
 * Each store on a live processor (its own settings: sunap store set-processor, or the console)
 * proves its keys, its own or the operator's, the same way as the operator's: `store S…
 * (portone)`. Nothing when the database cannot be read (its own check says why).
 */
async function storeProcessorChecks(config: Config, log: ReturnType<typeof createLogger>): Promise<Check[]> {
  // Opening a SQLite file that is not there would create it: doctor changes nothing.
  if (config.databaseUrl.startsWith('sqlite:') && config.databaseUrl !== 'sqlite::memory:' && !existsSync(resolve(config.databaseUrl.slice('sqlite:'.length)))) return [];
  const database = openDatabase(config.databaseUrl, { poolSize: 1 });
  try {
    const rows = await storesOnLiveProcessors(database.db, STORE_CHECK_LIMIT).catch(() => []);
    const registry = new ProcessorRegistry(database.db, new SecretBox(config.secretKey), processorSetupOf(config, database.db, log, { sandbox: null as never }));
    const checks: Check[] = [];
    for (const row of rows) {
      const name = `store ${row.store_code} (${row.processor})`;
      try {
        const p = await registry.byId(ProcessorRegistry.processorIdOf(row), row.store_code);
        const c = p.adapter.checkCredentials ? await p.adapter.checkCredentials() : { ok: true, detail: `${p.id}: nothing to prove` };
        checks.push({ name, status: c.ok ? 'ok' : 'fail', detail: c.detail });
      } catch (err) {
        checks.push({ name, status: 'fail', detail: err instanceof ProcessorUnavailable ? err.message : `its keys cannot be read with this SUNAP_SECRET_KEY (${(err as Error).message})` });
      }
    }
    return checks;
  } finally {
    await database.close();
  }
}

async function databaseCheck(config: Config): Promise<Check> {
  const name = 'database';
  const where = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl : 'postgres';
  if (config.databaseUrl.startsWith('sqlite:')) {
    const path = config.databaseUrl.slice('sqlite:'.length);
    if (path !== ':memory:' && !existsSync(resolve(path))) return { name, status: 'fail', detail: `${where}: no such file yet; sunap migrate (or the first sunap serve) creates it` };
  }
  const database = openDatabase(config.databaseUrl, { poolSize: 1 });
  try {
    await sql`select 1`.execute(database.db);
    const { applied, pending } = await migrationStatus(database.db);
    if (pending.length) return { name, status: 'fail', detail: `${where}: reachable; ${pending.length} migration(s) not applied (${pending.join(', ')}): run sunap migrate` };
    return { name, status: 'ok', detail: `${where}: reachable; all ${applied.length} migrations applied` };
  } catch (err) {
    const e = err as Error & { code?: string };
    return { name, status: 'fail', detail: `${where}: not reachable (${(e.message || e.code || String(err)).split('\n')[0]})` };
  } finally {
    await database.close();
  }
}

/** The console search's text indexes (src/db/search.ts), once the database is reachable and migrated. */
async function searchCheck(config: Config): Promise<Check> {
  const database = openDatabase(config.databaseUrl, { poolSize: 1 });
  try {
    return { name: 'text search', ...(await textSearchCheck(database.db as never)) };
  } catch (err) {
    return { name: 'text search', status: 'fail', detail: (err as Error).message.split('\n')[0]! };
  } finally {
    await database.close();
  }
}

function secretKeyCheck(config: Config): Check {
  const name = 'secret key';
  if (config.secretKeySource === 'generated') return { name, status: 'warn', detail: 'not set and no key file yet: the sandbox generates one beside the database at first start' };
  if (config.secretKeySource === 'file') return { name, status: 'ok', detail: 'the sandbox key file beside the database (live mode needs SUNAP_SECRET_KEY)' };
  const weak = secretKeyWeakness(config.secretKey);
  if (weak) return { name, status: config.mode === 'live' ? 'fail' : 'warn', detail: `SUNAP_SECRET_KEY ${weak}` };
  return { name, status: 'ok', detail: 'SUNAP_SECRET_KEY: 32 bytes, not a pattern' };
}

async function publicUrlCheck(config: Config): Promise<Check> {
  const name = 'public URL';
  const https = config.publicUrl.startsWith('https://');
  const base = `${config.publicUrl}${https ? '' : ' (http: fine for the sandbox; live mode needs https)'}`;
  try {
    const res = await fetch(`${config.publicUrl}/healthz`, { redirect: 'manual', signal: AbortSignal.timeout(3000) });
    if (res.ok) return { name, status: 'ok', detail: `${base}; /healthz answers` };
    return { name, status: 'warn', detail: `${base}; /healthz answered ${res.status}` };
  } catch {
    return { name, status: https || config.mode === 'sandbox' ? 'warn' : 'fail', detail: `${base}; not reachable from here now (is the server running behind it?)` };
  }
}

/** One line per check: `ok    database        sqlite:… reachable; …`. */
export function doctorText(report: DoctorReport): string {
  const lines = report.checks.map((c) => `${c.status.padEnd(5)} ${c.name.padEnd(15)} ${c.detail.replace(/\n\s*/g, ' ')}`);
  lines.push(report.ok ? 'All checks passed.' : `${report.checks.filter((c) => c.status === 'fail').length} check(s) failed.`);
  return lines.join('\n') + '\n';
}
