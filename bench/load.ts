import autocannon, { type Request, type Result } from 'autocannon';
import { writeFileSync } from 'node:fs';
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
  /** Longest warm-up while waiting for every connection to be answered once (default 60 s). */
  maxWarmup?: number;
  /** Seconds the load goes on after the measured window, so its slow requests can finish (default duration/2, between 0.5 and 5). */
  tail?: number;
  /** The server's pid: its CPU time during the measured run is reported per request. */
  serverPid?: number;
  /** Diagnostics: one line per answer of the measured run, "ms-since-start latency-ms". */
  traceFile?: string;
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
  /** How long the warm-up took, and how many connections had been answered when the window opened. */
  warmupSeconds: number;
  admitted: number;
}

/**
 * One autocannon run on the same connections throughout: warm-up, measured window, tail.
 * Only requests *sent* within the window count, for latency, requests/s and server CPU; the
 * tail keeps the load on while the window's slow requests finish, so a long latency is not
 * lost to the end of the run. The window opens after the warm-up and only once every
 * connection has been answered: a saturated Node server accepts about one new connection per
 * event-loop turn (a bare node:http server burning 10 ms per request shows it too), so
 * without this a fresh set of 50 connections measures connection admission under overload,
 * with a few first requests waiting seconds, instead of the steady state. Errors count over
 * the whole run.
 */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
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
  const tail = spec.tail ?? Math.min(5, Math.max(0.5, spec.duration / 2));
  const maxWarmup = Math.max(spec.warmup, spec.maxWarmup ?? 60);
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    // An upper bound: the run is stopped once the window and its tail are over.
    duration: maxWarmup + spec.duration + tail + 5,
    timeout: 30,
    requests: [request],
    verifyBody: (body: string) => {
      const ok = spec.verify(body);
      if (!ok && badExample === null) badExample = body.slice(0, 400);
      return ok;
    },
  });
  const trace: string[] = [];
  const t0 = performance.now();
  const answered = new Set<unknown>();
  let counted = 0;
  let cpu0: number | null = null;
  let cpu1: number | null = null;
  let windowStart = Infinity;
  let windowEnd = Infinity;
  let admittedAtStart = 0;
  const timers: NodeJS.Timeout[] = [];
  // The window opens after the warm-up once every connection has had an answer (a busy Node
  // server accepts about one new connection per event-loop turn, so under load the last ones
  // get in late), or after maxWarmup seconds whatever happened.
  const poll = setInterval(() => {
    const elapsed = (performance.now() - t0) / 1000;
    if (elapsed < spec.warmup || (answered.size < spec.connections && elapsed < maxWarmup)) return;
    clearInterval(poll);
    admittedAtStart = answered.size;
    cpu0 = spec.serverPid ? cpuSeconds(spec.serverPid) : null;
    windowStart = performance.now();
    timers.push(setTimeout(() => {
      cpu1 = spec.serverPid ? cpuSeconds(spec.serverPid) : null;
      windowEnd = performance.now();
    }, spec.duration * 1000));
    timers.push(setTimeout(() => instance.stop(), (spec.duration + tail) * 1000));
  }, 20);
  instance.on('response', (client: unknown, _status: number, _bytes: number, ms: number) => {
    answered.add(client);
    const now = performance.now();
    const sent = now - ms;
    if (sent < windowStart || sent >= windowEnd) return;
    counted++;
    hist.record(Math.max(1, Math.round(ms * 1000)));
    if (spec.traceFile) trace.push(`${(now - windowStart).toFixed(1)} ${ms.toFixed(2)}`);
  });
  const r: Result = await instance;
  clearInterval(poll);
  for (const m of timers) clearTimeout(m);
  const seconds = Number.isFinite(windowEnd - windowStart) ? (windowEnd - windowStart) / 1000 : 0;
  if (spec.traceFile) writeFileSync(spec.traceFile, trace.join('\n') + '\n');
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]));
  return {
    requests: counted,
    seconds,
    rps: seconds > 0 ? counted / seconds : 0,
    p50: hist.count ? hist.percentile(50) / 1000 : 0,
    p99: hist.count ? hist.percentile(99) / 1000 : 0,
    max: hist.count ? hist.max / 1000 : 0,
    percentiles: hist.count ? Object.fromEntries([10, 25, 50, 75, 90, 97.5, 99, 99.9].map((q) => [`p${q}`, hist.percentile(q) / 1000])) : {},
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    mismatches: r.mismatches,
    statusCodes,
    ...(cpu0 !== null && cpu1 !== null && counted > 0 ? { cpuUsPerRequest: ((cpu1 - cpu0) * 1e6) / counted } : {}),
    warmupSeconds: Number.isFinite(windowStart) ? (windowStart - t0) / 1000 : (performance.now() - t0) / 1000,
    admitted: admittedAtStart,
    badExample,
  };
}

/** What made a load run fail, or null: a connection error, non-2xx or unverified answer, nothing measured. */
export function loadProblem(r: LoadResult): string | null {
  const parts: string[] = [];
  const broken = r.errors - r.timeouts;
  if (broken > 0) parts.push(`${broken} connection errors`);
  if (r.non2xx) parts.push(`${r.non2xx} non-2xx answers (${JSON.stringify(r.statusCodes)})`);
  if (r.mismatches) parts.push(`${r.mismatches} answers with a failure code${r.badExample ? `, e.g. ${r.badExample}` : ''}`);
  if (r.requests === 0) parts.push('no request completed in the measured window');
  return parts.length ? parts.join('; ') : null;
}

/** Requests left unanswered for 30 s: overload, reported with the figures rather than as a failure. */
export function loadWarning(r: LoadResult): string | null {
  return r.timeouts ? `${r.timeouts} requests got no answer within 30 s (autocannon timeout)` : null;
}
