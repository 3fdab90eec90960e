// PostgreSQL alone (scenario `pgInsert`): requestPayment's INSERT, the same row (bench/payment-row.ts)
// into the same table with its indexes and foreign keys, sent straight to PostgreSQL by a pg
// pool of Sunap's size (10, SUNAP_PG_POOL_SIZE's default) as a named prepared statement, with as
// many concurrent callers as the bench has connections. No HTTP, no lookup, no Sunap: what the
// database itself commits per second on this machine in this run, which requestPayment on
// PostgreSQL is compared with (BENCHMARKS.md, "The hot path at the stack's own cost").
import { createHistogram } from 'node:perf_hooks';
import pg from 'pg';
import { paymentInsertSql, paymentValues } from './payment-row.js';

export interface PgInsertResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  /** This (client) process's CPU per insert: pg's encoding and parsing, what Sunap's process also pays. */
  clientCpuUs: number;
  errors: number;
  firstError: string | null;
}

export async function runPgInsert(opts: {
  url: string; poolSize: number; concurrency: number; duration: number; warmup: number;
  platformCode: string; storeCode: string; prefix: string; confirmUrl: string;
}): Promise<PgInsertResult> {
  const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize });
  pool.on('error', () => {});
  const text = paymentInsertSql('postgres');
  const hist = createHistogram();
  let n = 0;
  let counted = 0;
  let errors = 0;
  let firstError: string | null = null;
  let stop = false;
  let windowStart = Infinity;
  let windowEnd = Infinity;
  const caller = async () => {
    while (!stop) {
      const seq = opts.prefix + (n++).toString(36);
      const values = paymentValues({
        platformCode: opts.platformCode, storeCode: opts.storeCode, transSeqNo: seq, amount: 128000, mobileNo: '01012345678',
        payUserName: '홍길동', requestReason: '11월 수강료', confirmUrl: opts.confirmUrl, tempValue: 'bench',
      }, Date.now());
      const sent = performance.now();
      try {
        await pool.query({ name: 'bench_payment_insert', text, values });
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
        continue;
      }
      if (sent >= windowStart && sent < windowEnd) {
        counted++;
        hist.record(Math.max(1, Math.round((performance.now() - sent) * 1000)));
      }
    }
  };
  let cpu0 = process.cpuUsage();
  const callers = Array.from({ length: opts.concurrency }, caller);
  await new Promise((r) => setTimeout(r, opts.warmup * 1000));
  windowStart = performance.now();
  cpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, opts.duration * 1000));
  windowEnd = performance.now();
  const cpu = process.cpuUsage(cpu0);
  stop = true;
  await Promise.all(callers);
  await pool.end();
  const seconds = (windowEnd - windowStart) / 1000;
  return {
    requests: counted, seconds, rps: counted / seconds,
    p50: hist.count ? hist.percentile(50) / 1000 : 0, p99: hist.count ? hist.percentile(99) / 1000 : 0,
    clientCpuUs: counted ? (cpu.user + cpu.system) / counted : 0, errors, firstError,
  };
}
