import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../db/index.js';

/** Prometheus metrics. Gauges that describe stored state are read from the database at scrape time. */
export function createMetrics(db: Kysely<Database>) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'sunap_' });
  const requests = new Counter({
    name: 'sunap_http_requests_total', help: 'HTTP requests by route, status and result code',
    labelNames: ['method', 'route', 'status', 'result_code'] as const, registers: [registry],
  });
  const latency = new Histogram({
    name: 'sunap_http_request_duration_seconds', help: 'HTTP request latency by route and result code',
    labelNames: ['method', 'route', 'result_code'] as const, registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });
  const jobFailures = new Counter({
    name: 'sunap_job_failures_total', help: 'Failed job attempts by kind; final=true when the job was given up',
    labelNames: ['kind', 'final'] as const, registers: [registry],
  });
  /** A gauge read at scrape time: one `select label, count(*) ... group by label`. */
  const countGauge = (name: string, help: string, label: 'state' | 'kind', rows: () => Promise<{ key: string; n: number | string | bigint }[]>) =>
    new Gauge({
      name, help, labelNames: [label], registers: [registry],
      async collect() {
        this.reset();
        for (const r of await rows()) this.set({ [label]: r.key }, Number(r.n));
      },
    });
  countGauge('sunap_payments', 'Payments by state', 'state', () =>
    db.selectFrom('payments').select((eb) => [eb.ref('state').as('key'), eb.fn.countAll<number>().as('n')]).groupBy('state').execute());
  countGauge('sunap_jobs_pending', 'Jobs waiting to run (queue depth) by kind', 'kind', () =>
    db.selectFrom('jobs').select((eb) => [eb.ref('kind').as('key'), eb.fn.countAll<number>().as('n')]).where('status', '=', 'PENDING').groupBy('kind').execute());
  countGauge('sunap_jobs_dead', 'Jobs given up after their last attempt, by kind', 'kind', () =>
    db.selectFrom('jobs').select((eb) => [eb.ref('kind').as('key'), eb.fn.countAll<number>().as('n')]).where('status', '=', 'DEAD').groupBy('kind').execute());
  return { registry, requests, latency, jobFailures };
}
export type Metrics = ReturnType<typeof createMetrics>;
