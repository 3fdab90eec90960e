import type { BenchConfig, Engine, ScenarioKey } from './config.js';
import { CONSOLE_PAIRS } from './console.js';

export interface Row {
  target: Engine | 'node:http' | 'fastify';
  key: ScenarioKey;
  label: string;
  status: 'ok' | 'error' | 'skipped';
  rps?: number;
  p50?: number;
  p99?: number;
  latency?: Record<string, number>;
  requests?: number;
  /** Seconds of warm-up before the window opened, and connections answered by then. */
  warmupSeconds?: number;
  admitted?: number;
  completion?: number;
  throughput?: number;
  peakRssMB?: number;
  /** Server CPU µs per request (or per item for batch/webhooks). */
  cpuUs?: number;
  vsCeiling?: number;
  /** searchPayment's requests/s divided by the same-stack reference's on the same engine (the reference's own row: 1). */
  vsReference?: number;
  /** HTTP status codes over the whole load run (warm-up and tail included). */
  statusCodes?: Record<string, number>;
  note?: string;
  error?: string;
}

export interface TargetCheck {
  target: string;
  goal: string;
  value: string;
  met: boolean | null;
}

const f = (x: number | undefined, d = 0) => (x === undefined || !Number.isFinite(x) ? '–' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
const ms = (x: number | undefined) => (x === undefined ? '–' : x < 10 ? f(x, 2) : x < 100 ? f(x, 1) : f(x, 0));

export function table(rows: Row[]): string {
  const head = ['target', 'scenario', 'req/s', 'p50 ms', 'p99 ms', 'completed in', 'server CPU µs/req', 'peak RSS MB', 'vs ceiling', 'vs reference', 'status'];
  const lines = [
    `| ${head.join(' | ')} |`,
    `|${head.map((h, i) => (i < 2 || i === head.length - 1 ? '---' : '---:')).join('|')}|`,
  ];
  for (const r of rows) {
    const done = r.completion === undefined ? '–' : `${f(r.completion, 2)} s (${f(r.throughput, 0)}/s)`;
    const status = r.status === 'ok' ? 'ok' : r.status === 'skipped' ? `skipped: ${r.note ?? ''}` : `ERROR: ${r.error ?? ''}`;
    lines.push(`| ${[
      r.target, r.label, f(r.rps), ms(r.p50), ms(r.p99), done, f(r.cpuUs, 0), f(r.peakRssMB, 0),
      r.vsCeiling === undefined ? '–' : `${f(r.vsCeiling * 100, 1)}%`, r.vsReference === undefined ? '–' : `${f(r.vsReference * 100, 1)}%`, status.replace(/\|/g, '/').replace(/\n/g, ' '),
    ].join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * Every key of a JSON value as a sorted list of paths ("result_data.TRANS_SEQNO"), to tell
 * whether two answers carry the same fields.
 */
export function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>)
    .flatMap(([k, v]) => [prefix + k, ...keyPaths(v, `${prefix}${k}.`)])
    .sort();
}

/**
 * Sunap's searchPayment against the same-stack reference of its engine, measured in the same
 * run: requests/s ratio in `vsReference`, and the CPU per request of both in the note, since
 * CPU is the steadier of the two on a shared machine.
 */
export function relateToReference(rows: Row[]): void {
  for (const ref of rows.filter((r) => r.key === 'reference' && r.status === 'ok' && r.rps)) {
    ref.vsReference = 1;
    const sunap = rows.find((r) => r.target === ref.target && r.key === 'searchPayment' && r.status === 'ok' && r.rps);
    if (!sunap) continue;
    sunap.vsReference = sunap.rps! / ref.rps!;
    if (sunap.cpuUs && ref.cpuUs) {
      const cpu = `server CPU ${f(sunap.cpuUs)} µs/req against the reference's ${f(ref.cpuUs)} (${f(sunap.cpuUs / ref.cpuUs, 2)}×)`;
      sunap.note = [sunap.note, cpu].filter(Boolean).join('; ');
    }
  }
}

export function notes(rows: Row[]): string {
  return rows.filter((r) => r.note && r.status !== 'skipped').map((r) => `- ${r.target} / ${r.label}: ${r.note}`).join('\n');
}

/** The issue's targets, each stated as met or not met from the rows (null: not measured in this run). */
export function checkTargets(rows: Row[], cfg: BenchConfig): TargetCheck[] {
  const get = (target: string, key: ScenarioKey) => rows.find((r) => r.target === target && r.key === key && r.status === 'ok');
  const out: TargetCheck[] = [];
  const ratio = (target: Engine, key: ScenarioKey, min: number, goal: string) => {
    const r = get(target, key);
    out.push({ target, goal, value: r?.vsCeiling === undefined ? 'not measured' : `${f(r.vsCeiling * 100, 1)}% (${f(r.rps)} req/s)`, met: r?.vsCeiling === undefined ? null : r.vsCeiling >= min });
  };
  // "The hot path at the stack's own speed" (BENCHMARKS.md, "Targets"): searchPayment against the
  // ceiling and against the same-stack reference, requestPayment against the ceiling.
  const atReference = (target: Engine) => {
    const r = get(target, 'searchPayment');
    out.push({
      target, goal: 'searchPayment at or above the same-stack reference',
      value: r?.vsReference === undefined ? 'not measured' : `${f(r.vsReference * 100, 1)}% of the reference's req/s`,
      met: r?.vsReference === undefined ? null : r.vsReference >= 1,
    });
  };
  for (const engine of cfg.engines) {
    if (engine === 'sqlite') {
      ratio('sqlite', 'searchPayment', 0.45, 'searchPayment ≥ 45% of the ceiling');
      atReference('sqlite');
      ratio('sqlite', 'requestPayment', 0.15, 'requestPayment ≥ 15% of the ceiling (synchronous=FULL)');
    } else {
      ratio('postgres', 'searchPayment', 0.3, 'searchPayment ≥ 30% of the ceiling');
      atReference('postgres');
      ratio('postgres', 'requestPayment', 0.12, 'requestPayment ≥ 12% of the ceiling');
    }
    const b = get(engine, 'batch');
    out.push({ target: engine, goal: `batch of ${cfg.batch.toLocaleString('en-US')} all SENT in < 10 s`, value: b?.completion === undefined ? 'not measured' : `${f(b.completion, 2)} s`, met: b?.completion === undefined ? null : b.completion < 10 });
    const w = get(engine, 'webhooks');
    out.push({ target: engine, goal: `${cfg.webhooks.toLocaleString('en-US')} webhooks DELIVERED in < 30 s (one instance)`, value: w?.completion === undefined ? 'not measured' : `${f(w.completion, 2)} s`, met: w?.completion === undefined ? null : w.completion < 30 });
    const s = get(engine, 'listSmall');
    const l = get(engine, 'listLarge');
    out.push({
      target: engine, goal: `list p99 at ${cfg.listLarge.toLocaleString('en-US')} ≤ 2× p99 at ${cfg.listSmall.toLocaleString('en-US')}`,
      value: s?.p99 === undefined || l?.p99 === undefined ? 'not measured' : `${ms(l.p99)} ms vs ${ms(s.p99)} ms (${f(l.p99 / s.p99, 1)}×)`,
      met: s?.p99 === undefined || l?.p99 === undefined ? null : l.p99 <= 2 * s.p99,
    });
    for (const [small, large, what] of CONSOLE_PAIRS) {
      const a = get(engine, small);
      const b = get(engine, large);
      out.push({
        target: engine, goal: `${what} p99 at ${cfg.listLarge.toLocaleString('en-US')} ≤ 2× p99 at ${cfg.listSmall.toLocaleString('en-US')}`,
        value: a?.p99 === undefined || b?.p99 === undefined ? 'not measured' : `${ms(b.p99)} ms vs ${ms(a.p99)} ms (${f(b.p99 / a.p99, 1)}×)`,
        met: a?.p99 === undefined || b?.p99 === undefined ? null : b.p99 <= 2 * a.p99,
      });
    }
    const peaks = rows.filter((r) => r.target === engine && r.peakRssMB !== undefined).map((r) => r.peakRssMB!);
    out.push({ target: engine, goal: 'peak RSS under load < 300 MB', value: peaks.length ? `${f(Math.max(...peaks))} MB` : 'not measured', met: peaks.length ? Math.max(...peaks) < 300 : null });
  }
  return out;
}

export function targetTable(checks: TargetCheck[]): string {
  return [
    '| target | goal | measured | |',
    '|---|---|---|---|',
    ...checks.map((c) => `| ${c.target} | ${c.goal} | ${c.value} | ${c.met === null ? 'not measured' : c.met ? 'met' : '**not met**'} |`),
  ].join('\n');
}
