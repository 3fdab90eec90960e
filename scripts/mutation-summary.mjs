// Sums up StrykerJS JSON reports (reports/mutation/*.json) per file: mutants, killed, survived,
// timeout, no coverage and score, plus every surviving mutant with its place and its change.
//
//   node scripts/mutation-summary.mjs [report.json ...] [--json out.json] [--merged out.json]
//
// With several reports (one per folder run) the files are put together; a mutant in more than one
// report is taken from the last. A journal (<name>.journal.jsonl, written as mutants finish) may
// stand for, or follow, the report of a run that was stopped before its end. --json writes the machine-readable summary (docs/mutation-baseline.json);
// --merged writes the reports as one Stryker report, usable as its incremental file. The markdown
// table goes to standard output.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i === -1) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const jsonOut = opt('--json');
const mergedOut = opt('--merged');
const inputs = args.length ? args : [join(root, 'reports', 'mutation', 'mutation.json')];

const merged = { schemaVersion: '2', thresholds: { high: 90, low: 80, break: null }, files: {}, testFiles: {}, projectRoot: root };
const key = (m) => [m.location.start.line, m.location.start.column, m.location.end.line, m.location.end.column, m.mutatorName, m.replacement].join(':');
const STATUS = { killed: 'Killed', survived: 'Survived', timeout: 'Timeout', error: 'RuntimeError' };
for (const input of inputs) {
  if (!existsSync(input)) throw new Error(`${input}: no such report (run npm run test:mutation first)`);
  if (input.endsWith('.jsonl')) {
    // A journal (reports/mutation/<name>.journal.jsonl): the mutants a run tested, line by line,
    // also when the run was stopped before its end. It has no untested and no uncovered mutants.
    for (const line of readFileSync(input, 'utf8').split('\n').filter(Boolean)) {
      const j = JSON.parse(line);
      const name = j.fileName.slice(j.fileName.lastIndexOf('/src/') + 1);
      const f = (merged.files[name] ??= { language: 'typescript', source: readFileSync(join(root, name), 'utf8'), mutants: [] });
      // Stryker's own positions count from 0; its reports, and this summary, from 1.
      const at1 = (p) => ({ line: p.line + 1, column: p.column + 1 });
      const location = { start: at1(j.location.start), end: at1(j.location.end) };
      const m = { id: j.id, mutatorName: j.mutatorName, replacement: j.replacement, location, status: STATUS[j.status] ?? 'RuntimeError', killedBy: j.killedBy, statusReason: j.reason, testsCompleted: j.nrOfTests };
      const at = f.mutants.findIndex((x) => key(x) === key(m));
      if (at === -1) f.mutants.push(m);
      else f.mutants[at] = m;
    }
    continue;
  }
  const r = JSON.parse(readFileSync(input, 'utf8'));
  for (const [name, f] of Object.entries(r.files)) {
    const into = (merged.files[name] ??= { ...f, mutants: [] });
    for (const m of f.mutants) {
      const at = into.mutants.findIndex((x) => key(x) === key(m));
      if (at === -1) into.mutants.push(m);
      else into.mutants[at] = m;
    }
  }
  Object.assign(merged.testFiles, r.testFiles ?? {});
  if (r.thresholds) merged.thresholds = r.thresholds;
  if (r.framework) merged.framework = r.framework;
}

/** The original text a mutant replaces (locations are 1-based lines and columns). */
function original(source, { start, end }) {
  const lines = source.split('\n');
  if (start.line === end.line) return lines[start.line - 1].slice(start.column - 1, end.column - 1);
  const text = [lines[start.line - 1].slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1].slice(0, end.column - 1)].join('\n');
  return text;
}
const short = (s, n = 120) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? one.slice(0, n - 1) + '…' : one;
};

const STATUSES = ['Killed', 'Survived', 'Timeout', 'NoCoverage', 'RuntimeError', 'CompileError', 'Ignored', 'Pending'];
const rows = [];
const survivors = [];
for (const name of Object.keys(merged.files).sort()) {
  const f = merged.files[name];
  const c = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  for (const m of f.mutants) {
    c[m.status] = (c[m.status] ?? 0) + 1;
    if (m.status === 'Survived' || m.status === 'NoCoverage') {
      survivors.push({
        file: name,
        line: m.location.start.line,
        column: m.location.start.column,
        mutator: m.mutatorName,
        status: m.status,
        original: short(original(f.source, m.location)),
        replacement: short(m.replacement ?? ''),
        coveredBy: m.status === 'Survived' ? (m.coveredBy ?? []).map((id) => testName(id)).filter(Boolean) : [],
        id: m.id,
      });
    }
  }
  rows.push({ file: name, ...c });
}
function testName(id) {
  for (const [file, tf] of Object.entries(merged.testFiles)) {
    const t = tf.tests?.find((x) => x.id === id);
    if (t) return t.name ?? file;
  }
  return id;
}
const score = (r) => {
  const detected = r.Killed + r.Timeout;
  const valid = detected + r.Survived + r.NoCoverage;
  return valid === 0 ? null : (100 * detected) / valid;
};
const total = Object.fromEntries(STATUSES.map((s) => [s, rows.reduce((n, r) => n + r[s], 0)]));
const fmt = (x) => (x === null ? '–' : x.toFixed(2));

const lines = [
  '| file | mutants | killed | survived | timeout | no coverage | errors | score % |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => `| ${r.file} | ${r.Killed + r.Survived + r.Timeout + r.NoCoverage + r.RuntimeError + r.CompileError} | ${r.Killed} | ${r.Survived} | ${r.Timeout} | ${r.NoCoverage} | ${r.RuntimeError + r.CompileError} | ${fmt(score(r))} |`),
  `| **total** | **${total.Killed + total.Survived + total.Timeout + total.NoCoverage + total.RuntimeError + total.CompileError}** | **${total.Killed}** | **${total.Survived}** | **${total.Timeout}** | **${total.NoCoverage}** | **${total.RuntimeError + total.CompileError}** | **${fmt(score(total))}** |`,
];
console.log(lines.join('\n'));

if (jsonOut) {
  mkdirSync(dirname(resolve(jsonOut)), { recursive: true });
  const out = {
    score: score(total),
    scoreDefinition: '(killed + timeout) / (killed + timeout + survived + no coverage), in %',
    totals: total,
    files: rows.map((r) => ({ ...r, score: score(r) })),
    survivors,
  };
  writeFileSync(resolve(jsonOut), JSON.stringify(out, null, 1) + '\n');
}
if (mergedOut) {
  mkdirSync(dirname(resolve(mergedOut)), { recursive: true });
  writeFileSync(resolve(mergedOut), JSON.stringify(merged));
}
