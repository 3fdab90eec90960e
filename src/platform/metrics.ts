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
  new Gauge({
    name: 'sunap_payments', help: 'Payments by state', labelNames: ['state'] as const, registers: [registry],
    async collect() {
      this.reset();
      const rows = await db.selectFrom('payments').select('state').select((eb) => eb.fn.countAll<number>().as('n')).groupBy('state').execute();
      for (const r of rows) this.set({ state: r.state }, Number(r.n));
    },
  });
  new Gauge({
    name: 'sunap_jobs_pending', help: 'Jobs waiting to run (queue depth) by kind', labelNames: ['kind'] as const, registers: [registry],
    async collect() {
      this.reset();
      const rows = await db.selectFrom('jobs').select('kind').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'PENDING').groupBy('kind').execute();
      for (const r of rows) this.set({ kind: r.kind }, Number(r.n));
    },
  });
  new Gauge({
    name: 'sunap_jobs_dead', help: 'Jobs given up after their last attempt, by kind', labelNames: ['kind'] as const, registers: [registry],
    async collect() {
      this.reset();
      const rows = await db.selectFrom('jobs').select('kind').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'DEAD').groupBy('kind').execute();
      for (const r of rows) this.set({ kind: r.kind }, Number(r.n));
    },
  });
  return { registry, requests, latency, jobFailures };
}
export type Metrics = ReturnType<typeof createMetrics>;
