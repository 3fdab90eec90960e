import type { DatabaseHandle } from '../src/db/index.js';
import { kstCompact } from '../src/platform/kst.js';
import { apiSign } from '../src/platform/crypto.js';
import type { BenchConfig, Engine, ScenarioKey } from './config.js';
import {
  benchPhone, failedAttempts, pendingJobs, recordPaidEvents, sendStatusCounts, webhookCounts, type BenchAccount,
} from './database.js';
import { call, sleep } from './http.js';
import { loadProblem, loadWarning, runLoad, type LoadResult } from './load.js';
import { cpuSeconds } from './processes.js';
import { CONSOLE_LISTS, searchTerm, type ConsoleListKey } from './console.js';
import type { BenchReceiver } from './receiver.js';

/** What a scenario needs from its target: a running Sunap, its database, and the fixtures. */
export interface Target {
  cfg: BenchConfig;
  engine: Engine;
  /** Base URL and pid of the Sunap process currently serving. */
  url: () => string;
  pid: () => number;
  store: DatabaseHandle;
  receiver: BenchReceiver;
  platformCode: string;
  apiKey: string;
  storeCode: string;
  tag: string;
  invoicing: boolean;
  accounts: Record<'create' | 'batchWarm' | 'batch' | 'listSmall' | 'listLarge' | 'webhooks', BenchAccount & { token: string }>;
  /** A paid payment for searchPayment. */
  searchSeq: string;
  /** An unpaid payment made by requestPayment, whose row and answer the references are compared with. */
  requestSeq: string;
  /** Invoice id ranges (paid, with a webhook URL) for the warm-up and the measured webhook run. */
  hooks: { warm: [number, number]; main: [number, number] };
  /** Signed-in console owners (their Cookie headers) of the small and the large store. */
  console: { small: string; large: string };
}

export interface Measured {
  label: string;
  load?: LoadResult;
  /** Seconds until every bill was SENT / every webhook DELIVERED. */
  completion?: number;
  /** Items per second for the completion scenarios. */
  throughput?: number;
  /** Server CPU time per request (load) or per item (completion scenarios), in microseconds. */
  cpuUs?: number;
  note?: string;
  error?: string;
}

export const GW_OK = '"RESULT_CODE":"0000"';
const APP_OK = '"result_code":0,';

export function signedSearch(t: Target): string {
  const at = kstCompact(Date.now());
  return JSON.stringify({
    TRANS_SEQNO: t.searchSeq, PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_AT: at,
    API_SIGN: apiSign(t.searchSeq, t.platformCode, t.storeCode, at, t.apiKey),
  });
}

export function paymentRequest(t: Target, seq: string, confirmUrl: string): string {
  const at = kstCompact(Date.now());
  return JSON.stringify({
    TRANS_SEQNO: seq, PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_AT: at,
    APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동', REQUEST_REASON: '11월 수강료',
    CONFIRM_URL: confirmUrl, TEMP_VALUE: 'bench', API_SIGN: apiSign(seq, t.platformCode, t.storeCode, at, t.apiKey),
  });
}

function billBody(n: number, offset = 0): Record<string, unknown> {
  return {
    reason: '11월 수강료',
    description: '매월 10일까지 납부 부탁드립니다',
    amount: 128000,
    members: Array.from({ length: n }, (_, i) => ({ studentName: `학생${offset + i}`, studentPhone: benchPhone(offset + i) })),
  };
}

const loadOf = (t: Target, key: ScenarioKey) => ({
  connections: t.cfg.connections, duration: t.cfg.duration, warmup: t.cfg.warmup, serverPid: t.pid(),
  ...(process.env.BENCH_LATENCY_TRACE ? { traceFile: `${t.cfg.outDir}/${t.engine}-${key}-latency.txt` } : {}),
});

function fromLoad(label: string, load: LoadResult, note?: string, connections?: number): Measured {
  const problem = loadProblem(load);
  const warning = loadWarning(load);
  const admission = load.warmupSeconds > 10 || (connections !== undefined && load.admitted < connections)
    ? `warm-up took ${load.warmupSeconds.toFixed(0)} s until ${load.admitted}${connections ? ` of ${connections}` : ''} connections had been answered`
    : undefined;
  return { label, load, note: [note, admission, warning].filter(Boolean).join('; ') || undefined, cpuUs: load.cpuUsPerRequest, ...(problem ? { error: problem } : {}) };
}

const cpuNow = (t: Target) => cpuSeconds(t.pid()) ?? NaN;

/** Waits until no job is left to run; what remains after the timeout is an error. */
export async function drainJobs(t: Target, timeoutS: number): Promise<{ seconds: number; left: Record<string, number> }> {
  const t0 = Date.now();
  for (;;) {
    const left = await pendingJobs(t.store.db);
    const n = Object.values(left).reduce((a, b) => a + b, 0);
    if (n === 0 || Date.now() - t0 > timeoutS * 1000) return { seconds: (Date.now() - t0) / 1000, left };
    await sleep(200);
  }
}

/** Polls the list API (size 100) until all n invoices of the account are SENT; a FAILED one is an error. */
async function waitAllSent(t: Target, token: string, n: number, timeoutS: number): Promise<number> {
  const t0 = performance.now();
  const pages = Math.ceil(n / 100);
  const done = new Set<number>();
  for (;;) {
    for (let p = 1; p <= pages; p++) {
      if (done.has(p)) continue;
      const r = await call(t.url(), 'GET', `/app/v1/sales/bill?page=${p}&size=100`, undefined, { 'x-access-token': token });
      if (r.status !== 200 || r.body?.result_code !== 0) throw new Error(`list page ${p} answered ${r.status}: ${r.text.slice(0, 300)}`);
      const d = r.body.result_data as { totalCount: number; bills: { sendStatus: string; uniqueId: string }[] };
      if (d.totalCount !== n) throw new Error(`the account lists ${d.totalCount} invoices, expected ${n}`);
      const failed = d.bills.find((b) => b.sendStatus === 'FAILED');
      if (failed) throw new Error(`invoice ${failed.uniqueId} is FAILED`);
      const want = p < pages ? 100 : n - 100 * (pages - 1);
      if (d.bills.length === want && d.bills.every((b) => b.sendStatus === 'SENT')) done.add(p);
    }
    const elapsed = (performance.now() - t0) / 1000;
    if (done.size === pages) return elapsed;
    if (elapsed > timeoutS) throw new Error(`after ${timeoutS} s, ${pages - done.size} of ${pages} list pages still have unsent invoices`);
    await sleep(100);
  }
}

async function postBatch(t: Target, token: string, n: number, offset: number): Promise<number> {
  const r = await call(t.url(), 'POST', '/app/v1/sales/bill', billBody(n, offset), { 'x-access-token': token });
  if (r.status !== 200 || r.body?.result_code !== 0) throw new Error(`POST /app/v1/sales/bill (${n} members) answered ${r.status}: ${r.text.slice(0, 300)}`);
  return r.ms;
}

async function waitDelivered(t: Target, range: [number, number], timeoutS: number, since: number): Promise<number> {
  const n = range[1] - range[0] + 1;
  const acc = t.accounts.webhooks.accountId;
  for (;;) {
    const c = await webhookCounts(t.store.db, acc, range[0], range[1]);
    if (c.ABANDONED) throw new Error(`${c.ABANDONED} webhook events ABANDONED`);
    if ((c.DELIVERED ?? 0) === n) return Date.now();
    const failed = await failedAttempts(t.store.db, since);
    if (failed.n) throw new Error(`${failed.n} failed delivery attempts (they retry after 60 s), e.g. ${failed.example}`);
    if (Date.now() - since > timeoutS * 1000) throw new Error(`after ${timeoutS} s only ${c.DELIVERED ?? 0} of ${n} webhook events are DELIVERED (${JSON.stringify(c)})`);
    await sleep(100);
  }
}

export const INVOICING: ReadonlySet<ScenarioKey> = new Set(['createInvoice', 'batch', 'listSmall', 'listLarge', 'webhooks', ...Object.keys(CONSOLE_LISTS) as ConsoleListKey[]]);

const isConsoleList = (key: ScenarioKey): key is ConsoleListKey => key in CONSOLE_LISTS;

export function labelOf(key: ScenarioKey, cfg: BenchConfig): string {
  const n = (x: number) => x.toLocaleString('en-US');
  switch (key) {
    case 'ceiling': return 'ceiling (bare node:http)';
    case 'floor': return 'floor (Fastify + security headers, no work)';
    case 'reference': return 'same-stack reference (searchPayment)';
    case 'searchPayment': return 'searchPayment';
    case 'requestReference': return 'same-stack reference (requestPayment)';
    case 'requestPayment': return 'requestPayment';
    case 'pgInsert': return 'PostgreSQL alone: the payment INSERT';
    case 'createInvoice': return 'invoice create, 1 recipient';
    case 'batch': return `batch of ${n(cfg.batch)} until all SENT`;
    case 'listSmall': return `list p1/100 at ${n(cfg.listSmall)} invoices`;
    case 'listLarge': return `list p1/100 at ${n(cfg.listLarge)} invoices`;
    case 'webhooks': return `${n(cfg.webhooks)} webhooks until DELIVERED`;
    default: {
      const c = CONSOLE_LISTS[key];
      return `console ${c.what} ${c.search ? `search (${c.search})` : 'list p1/50'} at ${n(c.size === 'small' ? cfg.listSmall : cfg.listLarge)}`;
    }
  }
}

/** One console list page under load: the page of the owner of the small or the large store. */
async function consoleList(key: ConsoleListKey, t: Target): Promise<Measured> {
  const c = CONSOLE_LISTS[key];
  const n = c.size === 'small' ? t.cfg.listSmall : t.cfg.listLarge;
  const q = c.search ? `?q=${encodeURIComponent(searchTerm(c.search, n))}` : '';
  const load = await runLoad({
    url: t.url(), method: 'GET', path: `/console/${c.what}${q}`, headers: { cookie: c.size === 'small' ? t.console.small : t.console.large },
    // A full page (50 rows, or all of a smaller seed) and its header row, or at least the one row a search finds.
    verify: (b) => b.includes('</html>') && (b.match(/<tr>/g) ?? []).length >= (c.search ? 2 : Math.min(50, n) + 1), ...loadOf(t, key),
  });
  return fromLoad(labelOf(key, t.cfg), load, undefined, t.cfg.connections);
}

/** Runs one Sunap scenario against the target's current server. */
let requestSeq = 0;

export async function runScenario(key: Exclude<ScenarioKey, 'ceiling' | 'floor' | 'reference' | 'requestReference' | 'pgInsert'>, t: Target): Promise<Measured> {
  if (isConsoleList(key)) return consoleList(key, t);
  const label = labelOf(key, t.cfg);
  const cfg = t.cfg;
  switch (key) {
    case 'searchPayment': {
      const load = await runLoad({ url: t.url(), method: 'POST', path: '/api/searchPayment', body: signedSearch(t), verify: (b) => b.includes(GW_OK), ...loadOf(t, key) });
      return fromLoad(label, load, undefined, cfg.connections);
    }
    case 'requestPayment': {
      // One sequence over every round of the run: a TRANS_SEQNO is never sent twice.
      let n = 0;
      const prefix = `B${t.tag}R`;
      const confirm = `${t.receiver.base}/callback`;
      const load = await runLoad({
        url: t.url(), method: 'POST', path: '/api/requestPayment', makeBody: () => (n++, paymentRequest(t, prefix + (requestSeq++).toString(36), confirm)),
        verify: (b) => b.includes(GW_OK), ...loadOf(t, key),
      });
      return fromLoad(label, load, `${n.toLocaleString('en-US')} payments created (warm-up included)`, cfg.connections);
    }
    case 'createInvoice': {
      const a = t.accounts.create;
      const body = JSON.stringify(billBody(1));
      const load = await runLoad({
        url: t.url(), method: 'POST', path: '/app/v1/sales/bill', body, headers: { 'x-access-token': a.token },
        verify: (b) => b.includes(APP_OK), ...loadOf(t, key),
      });
      const drained = await drainJobs(t, cfg.completionTimeout);
      const counts = await sendStatusCounts(t.store.db, a.accountId);
      const total = Object.values(counts).reduce((x, y) => x + y, 0);
      const note = `${total.toLocaleString('en-US')} invoices (warm-up included); their sends finished ${drained.seconds.toFixed(1)} s after the load`;
      const m = fromLoad(label, load, note, cfg.connections);
      const left = Object.values(drained.left).reduce((x, y) => x + y, 0);
      if (left) m.error = [m.error, `${left} jobs still pending ${cfg.completionTimeout} s after the load: ${JSON.stringify(drained.left)}`].filter(Boolean).join('; ');
      if (counts.FAILED) m.error = [m.error, `${counts.FAILED} invoices FAILED to send`].filter(Boolean).join('; ');
      return m;
    }
    case 'batch': {
      const warmN = Math.min(20, cfg.batch);
      await postBatch(t, t.accounts.batchWarm.token, warmN, 500_000);
      await waitAllSent(t, t.accounts.batchWarm.token, warmN, cfg.completionTimeout);
      await drainJobs(t, cfg.completionTimeout);
      const cpu0 = cpuNow(t);
      const t0 = performance.now();
      const acceptMs = await postBatch(t, t.accounts.batch.token, cfg.batch, 0);
      await waitAllSent(t, t.accounts.batch.token, cfg.batch, cfg.completionTimeout);
      const seconds = (performance.now() - t0) / 1000;
      return {
        label, completion: seconds, throughput: cfg.batch / seconds, cpuUs: ((cpuNow(t) - cpu0) * 1e6) / cfg.batch,
        note: `request accepted in ${Math.round(acceptMs)} ms; time from sending the request until the list API showed every bill SENT (polled every 100 ms)`,
      };
    }
    case 'listSmall':
    case 'listLarge': {
      const a = key === 'listSmall' ? t.accounts.listSmall : t.accounts.listLarge;
      const n = key === 'listSmall' ? cfg.listSmall : cfg.listLarge;
      const load = await runLoad({
        url: t.url(), method: 'GET', path: '/app/v1/sales/bill?page=1&size=100', headers: { 'x-access-token': a.token },
        verify: (b) => b.includes(APP_OK) && b.includes(`"totalCount":${n}`), ...loadOf(t, key),
      });
      return fromLoad(label, load, undefined, cfg.connections);
    }
    case 'webhooks': {
      const warmStart = Date.now();
      const warmCommit = await recordPaidEvents(t.store.db, t.accounts.webhooks.accountId, t.hooks.warm[0], t.hooks.warm[1]);
      await waitDelivered(t, t.hooks.warm, cfg.completionTimeout, Math.min(warmStart, warmCommit));
      await drainJobs(t, cfg.completionTimeout);
      t.receiver.reset();
      const before = Date.now();
      const cpu0 = cpuNow(t);
      const committed = await recordPaidEvents(t.store.db, t.accounts.webhooks.accountId, t.hooks.main[0], t.hooks.main[1]);
      const done = await waitDelivered(t, t.hooks.main, cfg.completionTimeout, before);
      const seconds = (done - committed) / 1000;
      const n = t.hooks.main[1] - t.hooks.main[0] + 1;
      const m: Measured = {
        label, completion: seconds, throughput: n / seconds, cpuUs: ((cpuNow(t) - cpu0) * 1e6) / n,
        note: `events written in one transaction in ${((committed - before) / 1000).toFixed(1)} s (not counted); timed from its commit until all DELIVERED; receiver got ${t.receiver.hooks.toLocaleString('en-US')} signed POSTs over TLS`,
      };
      if (t.receiver.unsigned) m.error = `${t.receiver.unsigned} webhooks arrived without X-Service-Signature`;
      else if (t.receiver.deliveries.size < n) m.error = `the receiver saw ${t.receiver.deliveries.size} distinct deliveries, expected at least ${n}`;
      return m;
    }
  }
}
