import autocannon, { type Request, type Result } from 'autocannon';
import { createHistogram } from 'node:perf_hooks';
import { cpuSeconds } from './processes.js';

/** One measured autocannon run after a warm-up, with latencies kept at microsecond resolution. */
export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** A fixed body, or one built per request (setupRequest). */
  body?: string;
  makeBody?: () => string;
  /** A 2xx answer that fails this is an error too (gateway errors answer HTTP 200). */
  verify: (body: string) => boolean;
  connections: number;
  duration: number;
  warmup: number;
  /** The server's pid: its CPU time during the measured run is reported per request. */
  serverPid?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  /** More of the latency distribution (ms), for the JSON results. */
  percentiles: Record<string, number>;
  errors: number;
  timeouts: number;
  non2xx: number;
  mismatches: number;
  statusCodes: Record<string, number>;
  /** Server CPU time (user + system) per completed request, in microseconds: robust to other load on the machine. */
  cpuUsPerRequest?: number;
  /** The first answer that failed `verify` (truncated), to say what went wrong. */
  badExample: string | null;
}

async function once(spec: LoadSpec, duration: number, record: boolean): Promise<LoadResult> {
  const hist = createHistogram();
  let badExample: string | null = null;
  const request: Request = { method: spec.method, path: spec.path, headers: { ...(spec.body || spec.makeBody ? { 'content-type': 'application/json' } : {}), ...spec.headers } };
  if (spec.body !== undefined) request.body = spec.body;
  if (spec.makeBody) {
    const make = spec.makeBody;
    request.setupRequest = (req) => {
      req.body = make();
      return req;
    };
  }
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    duration,
    timeout: 30,
    requests: [request],
    verifyBody: (body: string) => {
      const ok = spec.verify(body);
      if (!ok && badExample === null) badExample = body.slice(0, 400);
      return ok;
    },
  });
  if (record) {
    instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
      hist.record(Math.max(1, Math.round(ms * 1000)));
    });
  }
  const cpu0 = record && spec.serverPid ? cpuSeconds(spec.serverPid) : null;
  const r: Result = await instance;
  const cpu1 = record && spec.serverPid ? cpuSeconds(spec.serverPid) : null;
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]));
  const requests = r.requests.total;
  return {
    requests,
    seconds: r.duration,
    rps: r.duration > 0 ? requests / r.duration : 0,
    p50: hist.count ? hist.percentile(50) / 1000 : r.latency.p50,
    p99: hist.count ? hist.percentile(99) / 1000 : r.latency.p99,
    max: hist.count ? hist.max / 1000 : r.latency.max,
    percentiles: hist.count ? Object.fromEntries([10, 25, 50, 75, 90, 97.5, 99, 99.9].map((q) => [`p${q}`, hist.percentile(q) / 1000])) : {},
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    mismatches: r.mismatches,
    statusCodes,
    ...(cpu0 !== null && cpu1 !== null && r.requests.total > 0 ? { cpuUsPerRequest: ((cpu1 - cpu0) * 1e6) / r.requests.total } : {}),
    badExample,
  };
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.warmup > 0) await once(spec, spec.warmup, false);
  return once(spec, spec.duration, true);
}

/** What made a load run fail, or null: any transport error, non-2xx or unverified answer. */
export function loadProblem(r: LoadResult): string | null {
  const parts: string[] = [];
  if (r.errors) parts.push(`${r.errors} connection errors`);
  if (r.timeouts) parts.push(`${r.timeouts} timeouts`);
  if (r.non2xx) parts.push(`${r.non2xx} non-2xx answers (${JSON.stringify(r.statusCodes)})`);
  if (r.mismatches) parts.push(`${r.mismatches} answers with a failure code${r.badExample ? `, e.g. ${r.badExample}` : ''}`);
  if (r.requests === 0) parts.push('no request completed');
  return parts.length ? parts.join('; ') : null;
}
