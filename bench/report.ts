import type { BenchConfig, Engine, ScenarioKey } from './config.js';
import { CONSOLE_PAIRS } from './console.js';

export interface Row {
  target: Engine | 'node:http' | 'fastify';
  key: ScenarioKey;
  label: string;
  status: 'ok' | 'error' | 'skipped';
  /** Which round of the hot path's pairs (BENCH_ROUNDS); 1 for everything else. */
  round?: number;
  /** The machine's load average (1, 5, 15 min) when the scenario started. */
  loadavg?: number[];
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
 * Each Sunap scenario against its same-stack reference of the same engine and round (searchPayment
 * against `reference`, requestPayment against `requestReference`): requests/s ratio in
 * `vsReference`, and the CPU per request of both in the note, since CPU is the steadier of the two
 * on a shared machine.
 */
export function relateToReference(rows: Row[]): void {
  for (const [refKey, key] of [['reference', 'searchPayment'], ['requestReference', 'requestPayment']] as const) {
    for (const ref of rows.filter((r) => r.key === refKey && r.status === 'ok' && r.rps)) {
      ref.vsReference = 1;
      const sunap = rows.find((r) => r.target === ref.target && r.key === key && r.round === ref.round && r.status === 'ok' && r.rps);
      if (!sunap) continue;
      sunap.vsReference = sunap.rps! / ref.rps!;
      if (sunap.cpuUs && ref.cpuUs) {
        const cpu = `server CPU ${f(sunap.cpuUs)} µs/req against the reference's ${f(ref.cpuUs)} (${f(sunap.cpuUs / ref.cpuUs, 2)}×)`;
        sunap.note = [sunap.note, cpu].filter(Boolean).join('; ');
      }
    }
  }
}

/** One of the issue's ratios: how it is formed from two rows of the same engine and round, and its target. */
interface HotPathRatio {
  engine: Engine;
  what: string;
  sunap: ScenarioKey;
  base: ScenarioKey;
  /** CPU µs/req of Sunap ÷ the base's (lower is better), or req/s of Sunap ÷ the base's (higher is better). */
  measure: 'cpu' | 'rps';
  target: number;
  moonshot: number;
}

/** The targets of "The hot path at the stack's own cost" (BENCHMARKS.md). */
export const HOT_PATH_RATIOS: readonly HotPathRatio[] = [
  { engine: 'sqlite', what: 'searchPayment: server CPU µs/req ÷ the reference\'s', sunap: 'searchPayment', base: 'reference', measure: 'cpu', target: 1.2, moonshot: 1.0 },
  { engine: 'postgres', what: 'searchPayment: server CPU µs/req ÷ the reference\'s', sunap: 'searchPayment', base: 'reference', measure: 'cpu', target: 1.2, moonshot: 1.0 },
  { engine: 'sqlite', what: 'requestPayment (synchronous=FULL, group commit): server CPU µs/req ÷ the reference\'s', sunap: 'requestPayment', base: 'requestReference', measure: 'cpu', target: 1.3, moonshot: 1.1 },
  { engine: 'postgres', what: 'requestPayment: req/s ÷ PostgreSQL alone\'s INSERTs/s', sunap: 'requestPayment', base: 'pgInsert', measure: 'rps', target: 0.4, moonshot: 0.6 },
];

export interface HotPathOutcome {
  ratio: HotPathRatio;
  /** Per round: the ratio and the two figures it came from, with the load average at the Sunap scenario's start. */
  rounds: { round: number; value: number; sunap: number; base: number; loadavg?: number[] }[];
  median?: number;
  /** Largest minus smallest of the rounds' ratios. */
  spread?: number;
  met: boolean | null;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function hotPathOutcomes(rows: Row[], cfg: BenchConfig): HotPathOutcome[] {
  return HOT_PATH_RATIOS.filter((r) => cfg.engines.includes(r.engine) && cfg.scenarios.has(r.sunap) && cfg.scenarios.has(r.base)).map((ratio) => {
    const rounds: HotPathOutcome['rounds'] = [];
    for (const sunap of rows.filter((r) => r.target === ratio.engine && r.key === ratio.sunap && r.status === 'ok')) {
      const base = rows.find((r) => r.target === ratio.engine && r.key === ratio.base && r.round === sunap.round && r.status === 'ok');
      const pick = (r: Row | undefined) => (ratio.measure === 'cpu' ? r?.cpuUs : r?.rps);
      const a = pick(sunap);
      const b = pick(base);
      if (a && b) rounds.push({ round: sunap.round ?? 1, value: a / b, sunap: a, base: b, loadavg: sunap.loadavg });
    }
    if (!rounds.length) return { ratio, rounds, met: null };
    const values = rounds.map((r) => r.value);
    const m = median(values);
    return { ratio, rounds, median: m, spread: Math.max(...values) - Math.min(...values), met: ratio.measure === 'cpu' ? m <= ratio.target : m >= ratio.target };
  });
}

/**
 * The issue's table: each ratio per round (with the two figures and the load average), the
 * median of the rounds and their spread, against the target.
 */
export function hotPathTable(rows: Row[], cfg: BenchConfig): string {
  const outcomes = hotPathOutcomes(rows, cfg);
  if (!outcomes.length) return '';
  const n = Math.max(...outcomes.map((o) => o.rounds.length), 1);
  const unit = (o: HotPathOutcome) => (o.ratio.measure === 'cpu' ? 'µs' : '/s');
  const head = ['engine', 'ratio', ...Array.from({ length: n }, (_, i) => `round ${i + 1} (Sunap / base, load 1 min)`), 'median', 'spread', 'target (moonshot)', ''];
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 || i === head.length - 1 ? '---' : '---:')).join('|')}|`,
    ...outcomes.map((o) => `| ${[
      o.ratio.engine, o.ratio.what,
      ...Array.from({ length: n }, (_, i) => {
        const r = o.rounds[i];
        return r ? `${f(r.value, 2)} (${f(r.sunap)} / ${f(r.base)} ${unit(o)}, ${r.loadavg?.[0]?.toFixed(2) ?? '?'})` : '–';
      }),
      o.median === undefined ? '–' : `**${f(o.median, 2)}**`, o.spread === undefined ? '–' : f(o.spread, 2),
      `${o.ratio.measure === 'cpu' ? '≤' : '≥'} ${f(o.ratio.target, 1)} (${f(o.ratio.moonshot, 1)})`,
      o.met === null ? 'not measured' : o.met ? 'met' : '**not met**',
    ].join(' | ')} |`),
  ].join('\n');
}

export function notes(rows: Row[]): string {
  return rows.filter((r) => r.note && r.status !== 'skipped').map((r) => `- ${r.target} / ${r.label}: ${r.note}`).join('\n');
}

/** The issue's targets, each stated as met or not met from the rows (null: not measured in this run). */
export function checkTargets(rows: Row[], cfg: BenchConfig): TargetCheck[] {
  const get = (target: string, key: ScenarioKey) => rows.find((r) => r.target === target && r.key === key && r.status === 'ok');
  const out: TargetCheck[] = [];
  // "The hot path at the stack's own cost": the medians of hotPathTable; the ceiling and the
  // floor are reported for context only.
  for (const o of hotPathOutcomes(rows, cfg)) {
    out.push({
      target: o.ratio.engine, goal: `${o.ratio.what} ${o.ratio.measure === 'cpu' ? '≤' : '≥'} ${o.ratio.target} (median of ${o.rounds.length} round${o.rounds.length === 1 ? '' : 's'})`,
      value: o.median === undefined ? 'not measured' : `${f(o.median, 2)} (spread ${f(o.spread, 2)})`, met: o.met,
    });
  }
  for (const engine of cfg.engines) {
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
