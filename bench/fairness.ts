// Fairness of the job queue (src/jobs/README.md, "Fairness"): one store has 500 callbacks to an
// endpoint that never answers; another store creates an invoice (with a webhookUrl), which must
// still be sent, paid and its webhook delivered at once. Runs the real app in this process on a
// fresh database per engine, with the per-store limit on (SUNAP_JOB_STORE_CONCURRENCY, default 4)
// and, for comparison, off (a limit above SUNAP_JOB_CONCURRENCY: every slot can go to one store).
//   node --import tsx bench/fairness.ts      (BENCH_ENGINES, BENCH_HANGING=500, BENCH_FAIRNESS_CAP_S=30)
// Not part of `npm run bench`; the figures it prints are in BENCHMARKS.md, "Fairness".
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { createPlatform, createStore } from '../src/gateway/merchants.js';
import { apiSign } from '../src/platform/crypto.js';
import { kstCompact } from '../src/platform/kst.js';
import { loadConfig } from '../src/platform/config.js';
import { loadBenchConfig } from './config.js';
import { createDatabase, postgresAnswers, seedAccount } from './database.js';
import { call, sleep } from './http.js';
import { freePort } from './processes.js';
import { BenchReceiver, ensureTls } from './receiver.js';

const cfg = loadBenchConfig();
const { dir: tlsDir, caFile } = ensureTls(cfg.root);
// The app's outbound HTTPS must trust the bench CA, which Node reads only at start: run again with it.
if (process.env.NODE_EXTRA_CA_CERTS !== caFile) {
  try {
    execFileSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile } });
    process.exit(0);
  } catch (err) {
    process.exit((err as { status?: number }).status ?? 1);
  }
}

const HANGING = Number(process.env.BENCH_HANGING ?? 500);
const CAP_S = Number(process.env.BENCH_FAIRNESS_CAP_S ?? 30);
const log = (m: string) => process.stderr.write(`[fairness] ${m}\n`);

/** An HTTPS endpoint that reads each request and never answers (until closed). */
async function hangingReceiver(): Promise<{ base: string; received: () => number; close: () => Promise<void> }> {
  let n = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer({ key: readFileSync(join(tlsDir, 'server.key')), cert: readFileSync(join(tlsDir, 'server.crt')) }, (req) => {
    n++;
    req.resume();
  });
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    base: `https://127.0.0.1:${port}`, received: () => n,
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

async function waitFor<T>(what: string, capS: number, fn: () => Promise<T | null | undefined | false>): Promise<{ ms: number; value: T | null }> {
  const t0 = performance.now();
  for (;;) {
    const v = await fn();
    if (v) return { ms: performance.now() - t0, value: v };
    if (performance.now() - t0 > capS * 1000) { log(`${what}: not within ${capS} s`); return { ms: Infinity, value: null }; }
    await sleep(10);
  }
}

async function scenario(engine: 'sqlite' | 'postgres', perStore: number): Promise<Record<string, number | string>> {
  const database = await createDatabase(engine, cfg.root, cfg.pgAdminUrl);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    DATABASE_URL: database.url, PORT: String(port), SUNAP_SECRET_KEY: '5b'.repeat(32), SUNAP_PUBLIC_URL: base,
    SUNAP_JOB_STORE_CONCURRENCY: String(perStore), SUNAP_JOB_POLL_MS: '500',
  });
  const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
  const hang = await hangingReceiver();
  const rx = await new BenchReceiver().start(tlsDir);
  try {
    await app.listen({ port, host: '127.0.0.1' });
    const db = app.sunap.database.db;
    const now = Date.now();
    const { platformCode, apiKey } = await createPlatform(db, app.sunap.box, now, { name: '벤치 플랫폼' });
    const slow = (await createStore(db, now, { platformCode, name: '느린 상점' })).storeCode;
    const other = (await createStore(db, now, { platformCode, name: '다른 상점' })).storeCode;

    // Store "slow": HANGING approved payments whose CONFIRM_URL never answers.
    const t0 = performance.now();
    for (let i = 0; i < HANGING; i += 20) {
      await Promise.all(Array.from({ length: Math.min(20, HANGING - i) }, async (_, k) => {
        const seq = `H${i + k}x${Date.now().toString(36)}`;
        const TRANS_AT = kstCompact(app.sunap.clock.nowMs());
        const body = {
          PLATFORM_CODE: platformCode, STORE_CODE: slow, TRANS_SEQNO: seq, TRANS_AT, API_SIGN: apiSign(seq, platformCode, slow, TRANS_AT, apiKey),
          APPROVAL_AMOUNT: '10000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동', REQUEST_REASON: '수강료', CONFIRM_URL: `${hang.base}/callback`,
        };
        const r = await call(base, 'POST', '/api/requestPayment', body);
        if (r.body?.result_data?.RESULT_CODE !== '0000') throw new Error(`requestPayment: ${r.text.slice(0, 200)}`);
        const p = await call(base, 'POST', `/sandbox/payments/${seq}/pay`, { PLATFORM_CODE: platformCode, STORE_CODE: slow });
        if (!p.body?.approved) throw new Error(`pay: ${p.text.slice(0, 200)}`);
      }));
    }
    log(`${engine} perStore=${perStore}: ${HANGING} hanging callbacks queued in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const busy = Math.min(perStore, config.jobConcurrency);
    await waitFor('the slow store\'s callbacks hanging', 30, async () => hang.received() >= busy);
    await sleep(300);

    // Store "other": one invoice with a webhookUrl, sent; then paid; its webhook delivered.
    const acc = await seedAccount(app.sunap.database, other, 'fair', 10_000);
    const login = await call(base, 'POST', '/app/v1/auth/login', { email: acc.email, password: acc.password, loginType: 'EMAIL' });
    const h = { 'x-access-token': login.body.result_data.accessToken as string };
    const c0 = performance.now();
    const created = await call(base, 'POST', '/app/v1/sales/bill', {
      reason: '11월 수강료', amount: 128000, webhookUrl: `${rx.base}/hook`, members: [{ studentName: '김학생', studentPhone: '01098765432' }],
    }, h);
    if (created.body?.result_code !== 0) throw new Error(`create: ${created.text.slice(0, 200)}`);
    const list = await call(base, 'GET', '/app/v1/sales/bill?size=1', undefined, h);
    const bill = list.body.result_data.bills[0] as { uniqueId: string; transSeqNo: string };
    const sent = await waitFor('the other store\'s invoice SENT', CAP_S, async () => {
      const d = await call(base, 'GET', `/app/v1/sales/bill/${bill.uniqueId}`, undefined, h);
      return d.body?.result_data?.bill?.sendStatus === 'SENT';
    });
    const sentMs = (performance.now() - c0);
    // Never sent within the cap: there is no payment to make yet.
    if (!Number.isFinite(sent.ms)) return { engine, perStore, hanging: HANGING, sentMs: `> ${CAP_S * 1000}`, webhookMs: 'not reached' };
    const p0 = performance.now();
    const pay = await call(base, 'POST', `/sandbox/payments/${bill.transSeqNo}/pay`, { PLATFORM_CODE: platformCode, STORE_CODE: other });
    if (!pay.body?.approved) throw new Error(`pay: ${pay.text.slice(0, 200)}`);
    const delivered = await waitFor('the other store\'s webhook delivered', CAP_S, async () => rx.hooks >= 1);
    const deliveredMs = performance.now() - p0;
    return {
      engine, perStore, hanging: HANGING, sentMs: Math.round(sentMs),
      webhookMs: Number.isFinite(delivered.ms) ? Math.round(deliveredMs) : `> ${CAP_S * 1000}`,
    };
  } finally {
    await hang.close();
    await app.close();
    await rx.close();
    await database.drop();
  }
}

const rows: Record<string, number | string>[] = [];
const engines = cfg.engines.filter((e) => e === 'sqlite' || e === 'postgres');
for (const engine of engines) {
  if (engine === 'postgres') {
    const ok = await postgresAnswers(cfg.pgAdminUrl);
    if (ok !== true) { log(`PostgreSQL skipped: ${ok}`); continue; }
  }
  for (const perStore of [4, 1000]) {
    const r = await scenario(engine, perStore);
    log(JSON.stringify(r));
    rows.push(r);
  }
}
process.stdout.write('| engine | per-store limit | hanging callbacks of store A | store B invoice created → SENT | store B paid → webhook delivered |\n|---|---|---|---|---|\n');
for (const r of rows) process.stdout.write(`| ${r.engine} | ${r.perStore === 1000 ? 'off' : r.perStore} | ${r.hanging} | ${r.sentMs} ms | ${r.webhookMs}${typeof r.webhookMs === 'number' ? ' ms' : ''} |\n`);
