import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics (README, "Operations"). Gauges that describe stored state are read from
 * the database at scrape time; the module that owns the rows registers them (countGauge).
 */
export function createMetrics() {
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
  /** A gauge whose values a query gives at scrape time, one per label value. */
  const countGauge = (name: string, help: string, label: string, rows: () => Promise<{ key: string; n: number }[]>) =>
    new Gauge({
      name, help, labelNames: [label], registers: [registry],
      async collect() {
        this.reset();
        for (const r of await rows()) this.set({ [label]: r.key }, r.n);
      },
    });
  /**
   * A counter of stored events (schedule runs, reminders sent) counted from the database at
   * scrape time: every instance answers the same totals, and a restart loses none.
   */
  const countTotal = (name: string, help: string, label: string, rows: () => Promise<{ key: string; n: number }[]>) =>
    new Counter({
      name, help, labelNames: [label], registers: [registry],
      async collect() {
        this.reset();
        for (const r of await rows()) this.inc({ [label]: r.key }, r.n);
      },
    });
  return { registry, requests, latency, jobFailures, countGauge, countTotal };
}
export type Metrics = ReturnType<typeof createMetrics>;
