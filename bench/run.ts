// `npm run bench`: Sunap on SQLite and on PostgreSQL (each a child `node bin/sunap.js serve` on a
// fresh database) against a bare node:http ceiling, same connections and duration, warm-up first.
// Knobs: BENCH_DURATION (s, 10), BENCH_CONNECTIONS (50), BENCH_SCENARIOS (comma list),
// BENCH_SKIP_POSTGRES, BENCH_ENGINES (sqlite,postgres), BENCH_SMOKE (small seeds, 1 s), BENCH_PROFILE (--cpu-prof, one process per
// scenario). See BENCHMARKS.md. Exits 1 when a scenario errs (never because of a missed target).
import { execFileSync } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { join } from 'node:path';
import type { DatabaseHandle } from '../src/db/index.js';
import { SecretBox } from '../src/platform/crypto.js';
import { HOT_PATH, loadBenchConfig, SCENARIOS, type BenchConfig, type Engine, type ScenarioKey } from './config.js';
import {
  analyze, createDatabase, durability, invoiceIdRange, openBenchStore, postgresAnswers, seedAccount, seedInvoices, type BenchDatabase,
} from './database.js';
import { call } from './http.js';
import { loadProblem, runLoad } from './load.js';
import { cli, RssSampler, startCeiling, startFloor, startReference, startSunap, type Child } from './processes.js';
import { BenchReceiver, ensureTls } from './receiver.js';
import { CONSOLE_LISTS, consoleSignIn, seedPayments } from './console.js';
import { hmacToken } from '../src/platform/crypto.js';
import { paymentInsertSql, paymentValues, PAYMENT_COLUMNS } from './payment-row.js';
import { runPgInsert } from './pg-insert.js';
import { checkTargets, hotPathTable, keyPaths, notes, relateToReference, table, targetTable, type Row } from './report.js';
import { drainJobs, GW_OK, INVOICING, labelOf, paymentRequest, runScenario, signedSearch, type Target } from './scenarios.js';

const SECRET_KEY = '5b'.repeat(32);
const onInterrupt = new Set<() => Promise<void>>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`[bench] ${signal}: stopping the servers and dropping the databases\n`);
    void Promise.allSettled([...onInterrupt].map((f) => f())).then(() => process.exit(130));
  });
}
const MB = 1024 * 1024;
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

/** fdatasync latency of the disk under .tmp right now: what one durable SQLite commit waits for. */
function fsyncProbe(root: string): { avgUs: number; p50Us: number; p90Us: number } {
  const dir = join(root, '.tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `fsync-probe-${process.pid}`);
  const fd = openSync(file, 'w');
  const page = Buffer.alloc(4096, 1);
  const us: number[] = [];
  try {
    for (let i = 0; i < 100; i++) {
      writeSync(fd, page);
      const t = process.hrtime.bigint();
      fdatasyncSync(fd);
      us.push(Number(process.hrtime.bigint() - t) / 1000);
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  us.sort((a, b) => a - b);
  return { avgUs: Math.round(us.reduce((a, b) => a + b, 0) / us.length), p50Us: Math.round(us[50]!), p90Us: Math.round(us[90]!) };
}

function machine() {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? '?';
  let busy = '';
  try {
    busy = execFileSync('ps', ['-eo', 'pid,pcpu,rss,args', '--sort=-pcpu'], { encoding: 'utf8' }).split('\n').slice(0, 9)
      .map((l) => l.slice(0, 150)).join('\n');
  } catch {}
  return {
    nproc: os.availableParallelism(), cpu, memoryGB: +(os.totalmem() / 1024 ** 3).toFixed(1), node: process.version,
    kernel: os.release(), loadavg: os.loadavg().map((x) => +x.toFixed(2)), busiestProcesses: busy,
  };
}

interface TargetOutcome {
  rows: Row[];
  durability: Record<string, string>;
  errors: string[];
  profiles: string[];
  /** One searchPayment answer of Sunap and one of the reference, as received (results.json → answers). */
  answers: { searchPayment?: unknown; reference?: unknown; requestPayment?: unknown; requestReference?: unknown };
}

/** The shared state of a run: the ceiling is measured once, with the first target's real searchPayment answer. */
interface RunState {
  ceilingRps?: number;
  ceilingDone: boolean;
}

async function runCeiling(cfg: BenchConfig, body: string, state: RunState, key: 'ceiling' | 'floor' = 'ceiling'): Promise<Row> {
  const bodyFile = join(cfg.outDir, 'ceiling-body.json');
  writeFileSync(bodyFile, body);
  const child = key === 'ceiling'
    ? await startCeiling({ root: cfg.root, bodyFile, logFile: join(cfg.outDir, 'ceiling.log') })
    : await startFloor({ root: cfg.root, bodyFile, logFile: join(cfg.outDir, 'floor.log') });
  const rss = new RssSampler(child.pid).start();
  const row: Row = { target: key === 'ceiling' ? 'node:http' : 'fastify', key, label: labelOf(key, cfg), status: 'ok' };
  try {
    const load = await runLoad({
      url: child.url, method: 'POST', path: '/api/searchPayment', body: '{"TRANS_SEQNO":"x"}', verify: (b) => b.length === Buffer.byteLength(body) || b === body,
      connections: cfg.connections, duration: cfg.duration, warmup: cfg.warmup, serverPid: child.pid,
    });
    Object.assign(row, {
      rps: load.rps, p50: load.p50, p99: load.p99, latency: load.percentiles, requests: load.requests, statusCodes: load.statusCodes, warmupSeconds: load.warmupSeconds, admitted: load.admitted, cpuUs: load.cpuUsPerRequest,
      vsCeiling: key === 'ceiling' ? 1 : state.ceilingRps ? load.rps / state.ceilingRps : undefined,
      note: key === 'ceiling' ? `${Buffer.byteLength(body)}-byte body, the size of the searchPayment answer` : 'Fastify 5 and Sunap\'s security headers answering the ceiling\'s body: what any production route costs before its own work',
    });
    const problem = loadProblem(load);
    if (problem) Object.assign(row, { status: 'error', error: problem });
    else if (key === 'ceiling') state.ceilingRps = load.rps;
  } finally {
    row.peakRssMB = rss.stop() / MB;
    await child.stop();
  }
  if (key === 'ceiling') state.ceilingDone = true;
  return row;
}

/** The columns two payment rows may differ in when they hold the same payment: its identity and its times. */
const ROW_IDENTITY = new Set(['id', 'trans_seqno', 'created_at', 'updated_at']);

/**
 * Whether the payment rows of two TRANS_SEQNOs of the target's store hold the same values in
 * every other column (PAYMENT_COLUMNS): the reference and the PostgreSQL-alone scenario must
 * write the row Sunap writes. Null when they do, else what differs.
 */
async function rowDifference(t: Target, ours: string, theirs: string): Promise<string | null> {
  const rows = await t.store.db.selectFrom('payments').selectAll().where('store_code', '=', t.storeCode).where('trans_seqno', 'in', [ours, theirs]).execute();
  const a = rows.find((r) => r.trans_seqno === ours);
  const b = rows.find((r) => r.trans_seqno === theirs);
  if (!a || !b) return `no payment row ${!a ? ours : theirs}`;
  const differ = PAYMENT_COLUMNS.filter((c) => !ROW_IDENTITY.has(c) && JSON.stringify(a[c]) !== JSON.stringify(b[c]));
  return differ.length ? `its row differs from Sunap's in ${differ.map((c) => `${c} (${JSON.stringify(a[c])} vs ${JSON.stringify(b[c])})`).join(', ')}` : null;
}

let referenceSeq = 0;
/** Sunap's payment page, from its requestPayment answer (the reference's REDIRECT_URL points there too). */
function pageOf(answer: string): string | undefined {
  const link = (JSON.parse(answer) as { result_data?: { REDIRECT_URL?: string } }).result_data?.REDIRECT_URL;
  if (!link) return undefined;
  const u = new URL(link);
  return u.origin + u.pathname;
}

/**
 * A same-stack reference (bench/reference-server.ts) on the target's database, with the same
 * signed bodies, connections, warm-up and duration as the Sunap scenario it stands beside:
 * `reference` for searchPayment, `requestReference` for requestPayment. Before measuring, its
 * answer must have exactly the keys of Sunap's (a requestPayment's REDIRECT_URL must carry the
 * payment's own page token, and its row Sunap's values), and it must refuse a wrong API_SIGN with
 * 3001 (writing nothing), else the row is an error: the two would not be doing the same work.
 */
async function runReference(cfg: BenchConfig, t: Target, key: 'reference' | 'requestReference', databaseUrl: string, sunapAnswer: string, out: TargetOutcome, state: RunState, round: number): Promise<Row> {
  const row: Row = { target: t.engine, key, label: labelOf(key, cfg), status: 'ok', round, loadavg: loadNow() };
  const search = key === 'reference';
  const path = search ? '/api/searchPayment' : '/api/requestPayment';
  const prefix = `B${t.tag}Q`;
  const confirm = `${t.receiver.base}/callback`;
  const body = search ? () => signedSearch(t) : () => paymentRequest(t, prefix + (referenceSeq++).toString(36), confirm);
  let child: Child;
  try {
    const profile = cfg.profileDir ? { dir: join(cfg.profileDir, `${t.engine}-${key}-${round}`) } : undefined;
    if (profile) out.profiles.push(profile.dir);
    child = await startReference({ root: cfg.root, databaseUrl, secretKey: SECRET_KEY, logFile: join(cfg.outDir, `${t.engine}-${key}.log`), profile, pageUrl: pageOf(sunapAnswer) });
  } catch (err) {
    return Object.assign(row, { status: 'error' as const, error: `the reference did not start: ${(err as Error).message}` });
  }
  const rss = new RssSampler(child.pid).start();
  try {
    const firstBody = body();
    const first = await call(child.url, 'POST', path, JSON.parse(firstBody));
    out.answers[search ? 'reference' : 'requestReference'] = first.body;
    const ours = keyPaths(JSON.parse(sunapAnswer));
    const theirs = keyPaths(first.body);
    if (first.status !== 200 || ours.join() !== theirs.join() || first.body?.result_data?.RESULT_CODE !== '0000') {
      Object.assign(row, { status: 'error', error: `its answer (${first.status}) differs in keys from Sunap's: Sunap ${ours.filter((k) => !theirs.includes(k)).join(', ') || '–'} / reference ${theirs.filter((k) => !ours.includes(k)).join(', ') || '–'}: ${first.text.slice(0, 300)}` });
      return row;
    }
    if (!search) {
      // The page link: Sunap's page, the new payment's id, and the token Sunap's page accepts for it.
      const link = new URL(first.body.result_data.REDIRECT_URL as string);
      const theirsLink = new URL(JSON.parse(sunapAnswer).result_data.REDIRECT_URL as string);
      const tid = link.searchParams.get('tid') ?? '';
      const problem = link.pathname !== theirsLink.pathname || [...link.searchParams.keys()].join() !== [...theirsLink.searchParams.keys()].join()
        ? `its REDIRECT_URL ${link} is not shaped as Sunap's ${theirsLink}`
        : link.searchParams.get('token') !== hmacToken(Buffer.from(SECRET_KEY, 'hex'), 'payment-page', tid) ? 'its REDIRECT_URL does not carry the page token of its payment'
          : await rowDifference(t, t.requestSeq, (JSON.parse(firstBody) as { TRANS_SEQNO: string }).TRANS_SEQNO);
      if (problem) return Object.assign(row, { status: 'error' as const, error: problem });
    }
    // It must really check the signature: one wrong hex digit is refused with 3001, as by Sunap.
    const forged = JSON.parse(body()) as { API_SIGN: string; TRANS_SEQNO: string };
    forged.API_SIGN = (forged.API_SIGN[0] === '0' ? '1' : '0') + forged.API_SIGN.slice(1);
    const refused = await call(child.url, 'POST', path, forged);
    if (refused.body?.result_data?.RESULT_CODE !== '3001') {
      return Object.assign(row, { status: 'error' as const, error: `a wrong API_SIGN was not refused with 3001: ${refused.text.slice(0, 300)}` });
    }
    if (!search && await t.store.db.selectFrom('payments').select('id').where('trans_seqno', '=', forged.TRANS_SEQNO).executeTakeFirst()) {
      return Object.assign(row, { status: 'error' as const, error: 'a request with a wrong API_SIGN was refused but its payment was written' });
    }
    let n = 0;
    const load = await runLoad({
      url: child.url, method: 'POST', path, ...(search ? { body: signedSearch(t) } : { makeBody: () => (n++, body()) }), verify: (b) => b.includes(GW_OK),
      connections: cfg.connections, duration: cfg.duration, warmup: cfg.warmup, serverPid: child.pid,
    });
    const same = first.text === sunapAnswer ? 'byte for byte' : `with the same ${ours.length} keys (${Buffer.byteLength(first.text)} vs ${Buffer.byteLength(sunapAnswer)} bytes)`;
    Object.assign(row, {
      rps: load.rps, p50: load.p50, p99: load.p99, latency: load.percentiles, requests: load.requests, statusCodes: load.statusCodes,
      warmupSeconds: load.warmupSeconds, admitted: load.admitted, cpuUs: load.cpuUsPerRequest,
      note: search
        ? `Fastify 5, one prepared ${t.engine === 'sqlite' ? 'better-sqlite3 statement (read-only)' : 'pg query'} joining store, keys and payment, the API_SIGN check; answers as Sunap's searchPayment ${same}`
        : `Fastify 5, the same lookup, the API_SIGN check, one prepared INSERT of Sunap's row (${t.engine === 'sqlite' ? 'synchronous=FULL, the inserts of a turn in one BEGIN IMMEDIATE … COMMIT' : 'a pool of 10, each INSERT its own commit'}), the page token; answers as Sunap's requestPayment ${same}; ${n.toLocaleString('en-US')} payments created`,
    });
    if (state.ceilingRps) row.vsCeiling = load.rps / state.ceilingRps;
    const problem = loadProblem(load);
    if (problem) Object.assign(row, { status: 'error', error: problem });
  } catch (err) {
    Object.assign(row, { status: 'error', error: (err as Error).message });
  } finally {
    row.peakRssMB = rss.stop() / MB;
    const r = await child.stop();
    if (r.code !== 0 && row.status === 'ok') Object.assign(row, { status: 'error', error: `the reference exited with code ${r.code} (signal ${r.signal}):\n${child.tail()}` });
  }
  return row;
}

/**
 * PostgreSQL alone (bench/pg-insert.ts): requestPayment's INSERT of Sunap's row, from a pool of
 * Sunap's size with as many callers as the bench has connections. One insert is checked against
 * Sunap's row first.
 */
async function runPgAlone(cfg: BenchConfig, t: Target, databaseUrl: string, round: number): Promise<Row> {
  const row: Row = { target: t.engine, key: 'pgInsert', label: labelOf('pgInsert', cfg), status: 'ok', round, loadavg: loadNow() };
  const prefix = `B${t.tag}P${round}_`;
  const confirm = `${t.receiver.base}/callback`;
  try {
    const check = `${prefix}check`;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(paymentInsertSql('postgres'), paymentValues({
        platformCode: t.platformCode, storeCode: t.storeCode, transSeqNo: check, amount: 128000, mobileNo: '01012345678',
        payUserName: '홍길동', requestReason: '11월 수강료', confirmUrl: confirm, tempValue: 'bench',
      }, Date.now()));
    } finally {
      await client.end();
    }
    const differs = await rowDifference(t, t.requestSeq, check);
    if (differs) return Object.assign(row, { status: 'error' as const, error: differs });
    const r = await runPgInsert({
      url: databaseUrl, poolSize: PG_POOL_SIZE, concurrency: cfg.connections, duration: cfg.duration, warmup: cfg.warmup,
      platformCode: t.platformCode, storeCode: t.storeCode, prefix, confirmUrl: confirm,
    });
    Object.assign(row, {
      rps: r.rps, p50: r.p50, p99: r.p99, requests: r.requests,
      note: `the same INSERT of Sunap's row, a pg pool of ${PG_POOL_SIZE} (named prepared statement), ${cfg.connections} concurrent callers, no HTTP; the client process used ${Math.round(r.clientCpuUs)} µs of CPU per insert`,
    });
    if (r.errors || !r.requests) Object.assign(row, { status: 'error', error: `${r.errors} inserts failed${r.firstError ? `: ${r.firstError}` : ''}${r.requests ? '' : '; none completed in the window'}` });
  } catch (err) {
    Object.assign(row, { status: 'error', error: (err as Error).message });
  }
  return row;
}

/** Sunap's pool size on PostgreSQL (SUNAP_PG_POOL_SIZE's default; the bench does not pass the variable on). */
const PG_POOL_SIZE = 10;
const loadNow = () => os.loadavg().map((x) => +x.toFixed(2));

async function runTarget(cfg: BenchConfig, engine: Engine, receiver: BenchReceiver, caFile: string, state: RunState): Promise<TargetOutcome> {
  const out: TargetOutcome = { rows: [], durability: {}, errors: [], profiles: [], answers: {} };
  const tag = Math.random().toString(36).slice(2, 7).toUpperCase();
  let database: BenchDatabase | null = null;
  // Ctrl-C or SIGTERM mid-run: stop the server and drop the database before leaving.
  const interrupted = async () => {
    await server?.stop().catch(() => {});
    await store?.close().catch(() => {});
    await database?.drop().catch(() => {});
  };
  onInterrupt.add(interrupted);
  let store: DatabaseHandle | null = null;
  let server: Child | null = null;
  const serverLog = join(cfg.outDir, `${engine}-server.log`);
  const startServer = async (label: string) => {
    if (server) return server;
    const profile = cfg.profileDir ? { dir: join(cfg.profileDir, `${engine}-${label}`) } : undefined;
    const memProbe = process.env.BENCH_MEM_PROBE ? join(cfg.outDir, `${engine}-memory.jsonl`) : undefined;
    server = await startSunap({ root: cfg.root, databaseUrl: database!.url, secretKey: SECRET_KEY, caFile, logFile: serverLog, profile, memProbe });
    if (profile) out.profiles.push(profile.dir);
    return server;
  };
  const stopServer = async () => {
    if (!server) return;
    const s = server;
    server = null;
    const r = await s.stop();
    if (r.code !== 0) out.errors.push(`the ${engine} server exited with code ${r.code} (signal ${r.signal}) on SIGTERM:\n${s.tail()}`);
  };
  try {
    log(`${engine}: fresh database`);
    database = await createDatabase(engine, cfg.root, cfg.pgAdminUrl);
    // Platform and store through the operator CLI, as an operator would (it also migrates).
    const platform = await cli(cfg.root, database.url, SECRET_KEY, ['platform', 'create', '--name', '벤치 플랫폼']);
    const shop = await cli(cfg.root, database.url, SECRET_KEY, ['store', 'create', '--platform-code', platform.platformCode!, '--name', '행복 피아노 학원', '--ceo-name', '김대표', '--biz-reg-num', '1234567890', '--tel', '0212345678']);
    store = openBenchStore(database.url);
    out.durability = await durability(store);
    const box = new SecretBox(Buffer.from(SECRET_KEY, 'hex'));

    const wantInvoicing = [...cfg.scenarios].some((k) => INVOICING.has(k));
    const wantConsole = [...cfg.scenarios].some((k) => k in CONSOLE_LISTS);
    const consoleOwners: Partial<Record<'small' | 'large', { email: string; password: string; accountId: string }>> = {};
    const accounts = {} as Target['accounts'];
    const hooks: Target['hooks'] = { warm: [0, -1], main: [0, -1] };
    if (wantInvoicing) {
      log(`${engine}: accounts and seeded invoices (${cfg.listSmall} + ${cfg.listLarge} listed, ${cfg.webhooks} paid with a webhook)${wantConsole ? `; console stores of ${cfg.listSmall} and ${cfg.listLarge} payments and invoices` : ''}`);
      for (const label of ['create', 'batchWarm', 'batch', 'listSmall', 'listLarge', 'webhooks'] as const) {
        accounts[label] = { ...(await seedAccount(store, shop.storeCode!, label, 1_000_000_000)), token: '' };
      }
      const t0 = Date.now();
      if (cfg.scenarios.has('listSmall')) await seedInvoices(store.db, { accountId: accounts.listSmall.accountId, storeCode: shop.storeCode!, count: cfg.listSmall, tag: `${tag}S`, spanDays: 30 });
      if (cfg.scenarios.has('listLarge')) await seedInvoices(store.db, { accountId: accounts.listLarge.accountId, storeCode: shop.storeCode!, count: cfg.listLarge, tag: `${tag}L`, spanDays: 365 });
      if (cfg.scenarios.has('webhooks')) {
        const warm = Math.max(1, Math.min(100, Math.floor(cfg.webhooks / 10)));
        await seedInvoices(store.db, {
          accountId: accounts.webhooks.accountId, storeCode: shop.storeCode!, count: warm + cfg.webhooks, tag: `${tag}W`, spanDays: 30, paid: true,
          webhook: { url: `${receiver.base}/hook`, secretSealed: box.seal('whsec_bench_0123456789abcdef') },
        });
        const r = await invoiceIdRange(store.db, accounts.webhooks.accountId);
        hooks.warm = [r.min, r.min + warm - 1];
        hooks.main = [r.min + warm, r.max];
      }
      if (wantConsole) {
        // Two stores, each with an owner: 1,000 and 100,000 payments and invoices.
        for (const size of ['small', 'large'] as const) {
          const count = size === 'small' ? cfg.listSmall : cfg.listLarge;
          const s = await cli(cfg.root, database.url, SECRET_KEY, ['store', 'create', '--platform-code', platform.platformCode!, '--name', `콘솔 ${size}`]);
          consoleOwners[size] = await seedAccount(store, s.storeCode!, `console-${size}`, 1000);
          await seedPayments(store.db, { platformCode: platform.platformCode!, storeCode: s.storeCode!, count, tag: `${tag}${size[0]!.toUpperCase()}`, spanDays: size === 'small' ? 30 : 365 });
          await seedInvoices(store.db, { accountId: consoleOwners[size]!.accountId, storeCode: s.storeCode!, count, tag: `${tag}C${size[0]!.toUpperCase()}`, spanDays: size === 'small' ? 30 : 365 });
        }
      }
      await analyze(store);
      log(`${engine}: seeding took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    await startServer('setup');
    const t: Target = {
      cfg, engine, url: () => server!.url, pid: () => server!.pid, store, receiver, platformCode: platform.platformCode!, apiKey: platform.apiKey!,
      storeCode: shop.storeCode!, tag, invoicing: false, accounts, searchSeq: `B${tag}SEARCH`, requestSeq: `B${tag}REQUEST`, hooks, console: { small: '', large: '' },
    };

    // Is the invoicing API there? (It was being finished while this harness was written.)
    const probe = await call(t.url(), 'GET', '/app/v1/points/me');
    t.invoicing = probe.status === 401;
    if (t.invoicing && wantInvoicing) {
      for (const a of Object.values(accounts)) {
        const r = await call(t.url(), 'POST', '/app/v1/auth/login', { email: a.email, password: a.password, loginType: 'EMAIL' });
        if (r.body?.result_code !== 0) throw new Error(`login failed: ${r.text.slice(0, 300)}`);
        a.token = r.body.result_data.accessToken;
      }
      for (const size of ['small', 'large'] as const) {
        const o = consoleOwners[size];
        if (o) t.console[size] = await consoleSignIn(t.url(), o.email, o.password);
      }
    }

    // The searchPayment fixture: a payment created through the API and paid through the sandbox.
    const created = await call(t.url(), 'POST', '/api/requestPayment', paymentRequest(t, t.searchSeq, `${receiver.base}/callback`));
    if (created.body?.result_data?.RESULT_CODE !== '0000') throw new Error(`requestPayment fixture: ${created.text.slice(0, 300)}`);
    const paid = await call(t.url(), 'POST', `/sandbox/payments/${t.searchSeq}/pay`, { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode });
    if (paid.body?.approved !== true) throw new Error(`sandbox pay fixture: ${paid.text.slice(0, 300)}`);
    const search = await call(t.url(), 'POST', '/api/searchPayment', signedSearch(t));
    if (search.body?.result_data?.RESULT_CODE !== '0000') throw new Error(`searchPayment fixture: ${search.text.slice(0, 300)}`);
    out.answers.searchPayment = search.body;
    // The requestPayment fixture the reference and PostgreSQL alone are compared with: its answer and its row.
    const requested = await call(t.url(), 'POST', '/api/requestPayment', paymentRequest(t, t.requestSeq, `${receiver.base}/callback`));
    if (requested.body?.result_data?.RESULT_CODE !== '0000') throw new Error(`requestPayment fixture: ${requested.text.slice(0, 300)}`);
    out.answers.requestPayment = requested.body;
    await drainJobs(t, 60);

    if (cfg.scenarios.has('ceiling') && !state.ceilingDone) {
      log('ceiling: bare node:http with a body of the searchPayment answer size');
      if (cfg.profileDir) await stopServer();
      out.rows.push(await runCeiling(cfg, search.text, state));
      if (cfg.scenarios.has('floor')) {
        log('floor: Fastify and the security headers with the same body');
        out.rows.push(await runCeiling(cfg, search.text, state, 'floor'));
      }
    }
    if (cfg.profileDir) await stopServer();

    // The hot path's pairs BENCH_ROUNDS times (each reference right before its Sunap scenario), then the rest once.
    const plan: { key: ScenarioKey; round: number }[] = [];
    for (let round = 1; round <= cfg.rounds; round++) for (const key of HOT_PATH) plan.push({ key, round });
    for (const key of SCENARIOS) if (!HOT_PATH.includes(key)) plan.push({ key, round: 1 });
    for (const { key, round } of plan) {
      if (key === 'ceiling' || key === 'floor' || !cfg.scenarios.has(key)) continue;
      if (key === 'reference' || key === 'requestReference') {
        // Right before its Sunap scenario, on the same database and with the same bodies.
        log(`${engine}: ${labelOf(key, cfg)}${cfg.rounds > 1 ? `, round ${round}` : ''}`);
        const r = await runReference(cfg, t, key, database.url, key === 'reference' ? search.text : requested.text, out, state, round);
        out.rows.push(r);
        log(`${engine}: ${r.label}: ${r.status}${r.rps ? ` ${Math.round(r.rps)} req/s p50 ${r.p50?.toFixed(2)} ms p99 ${r.p99?.toFixed(2)} ms` : ''}${r.cpuUs ? ` CPU ${Math.round(r.cpuUs)} µs/req` : ''} load ${r.loadavg?.join(' ')}${r.error ? ` — ${r.error}` : ''}`);
        continue;
      }
      if (key === 'pgInsert') {
        if (engine !== 'postgres') continue;
        log(`${engine}: ${labelOf(key, cfg)}${cfg.rounds > 1 ? `, round ${round}` : ''}`);
        const r = await runPgAlone(cfg, t, database.url, round);
        out.rows.push(r);
        log(`${engine}: ${r.label}: ${r.status}${r.rps ? ` ${Math.round(r.rps)}/s p50 ${r.p50?.toFixed(2)} ms p99 ${r.p99?.toFixed(2)} ms` : ''} load ${r.loadavg?.join(' ')}${r.error ? ` — ${r.error}` : ''}`);
        continue;
      }
      const row: Row = { target: engine, key, label: labelOf(key, cfg), status: 'ok', round, loadavg: loadNow() };
      out.rows.push(row);
      if (INVOICING.has(key) && !t.invoicing) {
        Object.assign(row, { status: 'skipped', note: 'invoicing API not available' });
        log(`${engine}: ${row.label}: skipped: invoicing API not available`);
        continue;
      }
      log(`${engine}: ${row.label}${cfg.rounds > 1 && HOT_PATH.includes(key) ? `, round ${round}` : ''}`);
      let rss: RssSampler | null = null;
      try {
        const s = await startServer(cfg.rounds > 1 && HOT_PATH.includes(key) ? `${key}-${round}` : key);
        rss = new RssSampler(s.pid).start();
        const m = await runScenario(key as Parameters<typeof runScenario>[0], t);
        Object.assign(row, {
          rps: m.load?.rps, p50: m.load?.p50, p99: m.load?.p99, latency: m.load?.percentiles, requests: m.load?.requests,
          statusCodes: m.load?.statusCodes, warmupSeconds: m.load?.warmupSeconds, admitted: m.load?.admitted, completion: m.completion, throughput: m.throughput,
          cpuUs: m.cpuUs, note: m.note,
        });
        if (m.load && state.ceilingRps) row.vsCeiling = m.load.rps / state.ceilingRps;
        if (m.error) Object.assign(row, { status: 'error', error: m.error });
      } catch (err) {
        Object.assign(row, { status: 'error', error: (err as Error).message });
      } finally {
        if (rss) row.peakRssMB = rss.stop() / MB;
      }
      const s = server as Child | null;
      if (s?.exit) {
        Object.assign(row, { status: 'error', error: [row.error, `the server died (code ${s.exit.code}, signal ${s.exit.signal}):\n${s.tail()}`].filter(Boolean).join('; ') });
        server = null;
      }
      // Work a scenario left behind (sends, webhooks) must not run into the next one's numbers.
      if (server && row.status === 'ok') {
        const d = await drainJobs(t, cfg.completionTimeout);
        if (Object.keys(d.left).length) Object.assign(row, { status: 'error', error: `jobs left pending: ${JSON.stringify(d.left)}` });
      }
      const r = row;
      log(`${engine}: ${r.label}: ${r.status}${r.rps ? ` ${Math.round(r.rps)} req/s p50 ${r.p50?.toFixed(2)} ms p99 ${r.p99?.toFixed(2)} ms` : ''}${r.completion ? ` ${r.completion.toFixed(2)} s` : ''}${r.cpuUs ? ` CPU ${Math.round(r.cpuUs)} µs/req` : ''} load ${r.loadavg?.join(' ')} peak RSS ${Math.round(r.peakRssMB ?? 0)} MB${r.error ? ` — ${r.error}` : ''}`);
      if (cfg.profileDir) await stopServer();
    }
  } catch (err) {
    out.errors.push(`${engine}: ${(err as Error).stack ?? err}`);
    log(`${engine}: FAILED: ${(err as Error).message}`);
  } finally {
    await stopServer().catch((e) => out.errors.push(String(e)));
    if (store) await store.close().catch(() => {});
    if (database) await database.drop().catch((e) => out.errors.push(`could not drop the ${engine} database: ${(e as Error).message}`));
    onInterrupt.delete(interrupted);
  }
  return out;
}

async function main(): Promise<number> {
  const cfg = loadBenchConfig();
  mkdirSync(cfg.outDir, { recursive: true });
  if (cfg.profileDir) mkdirSync(cfg.profileDir, { recursive: true });
  // Measure what `npm start` runs: the compiled dist/, built now from the sources being measured.
  // SUNAP_USE_TSX=1 (the test runner's smoke run) or BENCH_NO_BUILD=1 skip this; the servers
  // then run src/ through tsx, or whatever dist/ bin/sunap.js judges up to date.
  let code: string;
  if (process.env.SUNAP_USE_TSX === '1') code = 'src through tsx';
  else if (process.env.BENCH_NO_BUILD === '1') code = 'as bin/sunap.js chose (dist/ if up to date, else src through tsx)';
  else {
    log('compiling src/ to dist/ (npm run build)');
    execFileSync(process.execPath, [join(cfg.root, 'scripts', 'build.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] });
    code = 'dist (compiled)';
  }
  const m = { ...machine(), code };
  const fsyncBefore = fsyncProbe(cfg.root);
  log(`${m.nproc} CPUs (${m.cpu}), ${m.memoryGB} GB, Node ${m.node}; load average ${m.loadavg.join(' ')}; fdatasync p50 ${fsyncBefore.p50Us} µs`);
  log(`duration ${cfg.duration} s, warm-up ${cfg.warmup} s, ${cfg.connections} connections${cfg.smoke ? ', SMOKE mode (small seeds)' : ''}; scenarios ${[...cfg.scenarios].join(', ')}; engines ${cfg.engines.join(', ')}`);

  const errors: string[] = [];
  if (cfg.engines.includes('postgres')) {
    const ok = await postgresAnswers(cfg.pgAdminUrl);
    if (ok !== true) {
      log(`PostgreSQL does not answer at ${cfg.pgAdminUrl} (${ok}); set BENCH_SKIP_POSTGRES=1 to measure SQLite only`);
      return 1;
    }
  }
  const tls = ensureTls(cfg.root);
  const receiver = await new BenchReceiver().start(tls.dir);
  const state: RunState = { ceilingDone: false };
  const rows: Row[] = [];
  const durabilityOf: Record<string, Record<string, string>> = {};
  const answers: Record<string, TargetOutcome['answers']> = {};
  const profiles: string[] = [];
  const started = Date.now();
  try {
    for (const engine of cfg.engines) {
      const o = await runTarget(cfg, engine, receiver, tls.caFile, state);
      rows.push(...o.rows);
      errors.push(...o.errors);
      durabilityOf[engine] = o.durability;
      answers[engine] = o.answers;
      profiles.push(...o.profiles);
    }
  } finally {
    await receiver.close();
  }
  // The ceiling row first, then the floor.
  const rank = (r: Row) => (r.target === 'node:http' ? 0 : r.target === 'fastify' ? 1 : 2);
  rows.sort((a, b) => rank(a) - rank(b));
  relateToReference(rows);
  const checks = checkTargets(rows, cfg);
  const md = [
    hotPathTable(rows, cfg), '', table(rows), '', notes(rows), '', targetTable(checks), '',
    ...Object.entries(durabilityOf).map(([e, d]) => `- ${e} durability: ${Object.entries(d).map(([k, v]) => `${k}=${v}`).join(', ')}`),
  ].join('\n');
  writeFileSync(join(cfg.outDir, 'results.md'), md + '\n');
  writeFileSync(join(cfg.outDir, 'results.json'), JSON.stringify({
    startedAt: new Date(started).toISOString(), seconds: (Date.now() - started) / 1000, machine: m, loadavgAfter: os.loadavg(),
    fsync: { before: fsyncBefore, after: fsyncProbe(cfg.root) },
    config: { ...cfg, scenarios: [...cfg.scenarios] }, rows, targets: checks, durability: durabilityOf, answers, profiles, errors,
  }, null, 2) + '\n');
  process.stdout.write(`\n${md}\n\n`);
  if (profiles.length) process.stdout.write(`CPU profiles, one directory per server process (summarize with node --import tsx bench/profile-summary.ts DIR):\n${profiles.map((p) => `  ${p}`).join('\n')}\n`);
  process.stdout.write(`results: ${join(cfg.outDir, 'results.json')}\n`);
  const failed = rows.filter((r) => r.status === 'error');
  for (const e of errors) process.stderr.write(`[bench] ERROR ${e}\n`);
  for (const r of failed) process.stderr.write(`[bench] ERROR ${r.target} / ${r.label}: ${r.error}\n`);
  return errors.length || failed.length ? 1 : 0;
}

process.exitCode = await main().catch((err) => {
  process.stderr.write(`[bench] ${(err as Error).stack ?? err}\n`);
  return 1;
});
