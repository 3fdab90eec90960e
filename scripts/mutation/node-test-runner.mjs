// A StrykerJS test runner for node:test suites, per test rather than per file.
//
// Stryker's own TAP runner sees a test file as one test, so a mutant that survives runs every file
// that reached it from start to end: days for this project. This runner starts each file as
// `node --import tsx --import ./hook.mjs <file>` (the hook numbers the tests and records which
// mutants each one reaches) and, for a mutant, runs only the tests that reached it, the others
// declared skipped, stopping at the first failure.
//
// Honesty rules, so that a score from here means what it says:
//  - What a file reaches outside its tests (importing modules, a suite's before/after hooks that
//    start and close the app, timers between tests) counts as reached by every test of that file.
//  - Tests of one file share an app and may build on one another. A mutant counts as killed by a
//    selection of a file's tests only after that same selection passed without any mutant (checked
//    once per selection and remembered); if it did not, the whole file runs for that mutant.
//  - A test process that fails outside a test (a hook, an uncaught error, a crash) is a failure of
//    that file, as it would be under `npm test`.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { commonTokens, declareClassPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin';
import { DryRunStatus, TestStatus, toMutantRunResult } from '@stryker-mutator/api/test-runner';

const hookUrl = pathToFileURL(join(import.meta.dirname, 'hook.mjs')).href;
// Only one worker does the initial run; the others, and a worker Stryker restarts after a timeout,
// learn each file's tests from this file in the sandbox (every worker's working directory).
const dryRunFile = '.sunap-mutation-tests.json';
let sequence = 0;

class NodeTestRunner {
  static inject = tokens(commonTokens.options, commonTokens.logger);

  constructor(options, log) {
    this.log = log;
    this.files = options.nodeTest?.testFiles ?? [];
    this.nodeArgs = options.nodeTest?.nodeArgs ?? ['--import', 'tsx'];
    /** file → { ids: test ids in declaration order, ms: test id → ms, overheadMs } */
    this.byFile = new Map();
    /** `${file}:${selection}` → whether that selection passes with no mutant active */
    this.selectionPasses = new Map();
    this.child = undefined;
    // A worker whose Stryker is gone (stopped with Ctrl-C or kill) stops too, with its test process.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) {
        this.kill();
        process.exit(1);
      }
    }, 1000).unref();
  }

  capabilities() {
    return { reloadEnvironment: true };
  }

  async init() {
    if (this.files.length === 0) throw new Error('nodeTest.testFiles is empty');
    for (const f of this.files) if (!existsSync(f)) throw new Error(`nodeTest.testFiles: ${f} does not exist`);
  }

  async dispose() {
    this.kill();
  }

  kill() {
    if (this.child?.pid && this.child.exitCode === null) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {}
    }
  }

  /** Runs one test file; resolves with what the hook wrote, the exit code and a tail of stderr. */
  runFile(file, { dry = false, mutant, select, bail, hitLimit, timeoutMs }) {
    const out = join(tmpdir(), `sunap-mutation-${process.pid}-${sequence++}.json`);
    const env = { ...process.env, SUNAP_MUT_OUT: out, SUNAP_MUT_DRY: dry ? '1' : '', SUNAP_MUT_BAIL: bail ? '1' : '', SUNAP_MUT_SELECT: select ? select.join(',') : '', SUNAP_MUT_HIT_LIMIT: hitLimit ? String(hitLimit) : '' };
    if (mutant !== undefined) env.__STRYKER_ACTIVE_MUTANT__ = mutant;
    else delete env.__STRYKER_ACTIVE_MUTANT__;
    const started = Date.now();
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [...this.nodeArgs, '--import', hookUrl, '--test-reporter=dot', file], { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      this.child = child;
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr = (stderr + d).slice(-4000);
      });
      let timedOut = false;
      const timer = timeoutMs
        ? setTimeout(() => {
            timedOut = true;
            this.kill();
          }, timeoutMs)
        : undefined;
      // 'exit', not 'close': a server the test started may still hold stderr. Whatever the test
      // process left behind in its process group (a bailed-out test's `sunap serve`) ends with it.
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {}
        let report;
        try {
          report = JSON.parse(readFileSync(out, 'utf8'));
        } catch {}
        rmSync(out, { force: true });
        resolve({ report, code: code ?? (signal ? 128 : 1), signal, stderr, timedOut, ms: Date.now() - started });
      });
    });
  }

  async dryRun() {
    const tests = [];
    const perTest = {};
    for (const file of this.files) {
      const r = await this.runFile(file, { dry: true });
      const failed = r.report?.tests.filter((t) => t.status === 'failed') ?? [];
      if (r.code !== 0 || !r.report || failed.length) {
        return { status: DryRunStatus.Error, errorMessage: `${file} does not pass without mutants (exit ${r.code}): ${failed.map((t) => t.name).join(', ')}\n${r.stderr}` };
      }
      const { static: fileWide = {}, perTest: own = {} } = r.report.coverage ?? {};
      const ids = [];
      const ms = new Map();
      let net = 0;
      for (const t of r.report.tests) {
        if (t.status !== 'passed') continue;
        const id = `${file}#${t.index}`;
        ids.push(id);
        ms.set(id, t.ms);
        net += t.ms;
        tests.push({ id, name: `${file} > ${t.name}`, fileName: file, status: TestStatus.Success, timeSpentMs: Math.round(t.ms) });
        const cov = { ...fileWide };
        for (const [m, n] of Object.entries(own[String(t.index)] ?? {})) cov[m] = (cov[m] ?? 0) + n;
        perTest[id] = cov;
      }
      this.byFile.set(file, { ids, ms, overheadMs: Math.max(0, r.ms - net) });
      this.log.debug(`${file}: ${ids.length} tests, ${r.ms} ms`);
    }
    const saved = [...this.byFile].map(([file, f]) => [file, { ids: f.ids, ms: [...f.ms], overheadMs: f.overheadMs }]);
    writeFileSync(dryRunFile + '.part', JSON.stringify(saved));
    renameSync(dryRunFile + '.part', dryRunFile);
    return { status: DryRunStatus.Complete, tests, mutantCoverage: { static: {}, perTest } };
  }

  /** The time a run of these tests of a file may take before it counts as a timeout. */
  budget(file, ids) {
    const f = this.byFile.get(file);
    const net = ids.reduce((n, id) => n + (f.ms.get(id) ?? 0), 0);
    return Math.round(3 * (net + f.overheadMs) + 10_000);
  }

  /** The tests of each file as the initial run found them, whichever worker ran it. */
  known() {
    if (this.byFile.size === 0 && existsSync(dryRunFile)) {
      for (const [file, f] of JSON.parse(readFileSync(dryRunFile, 'utf8'))) this.byFile.set(file, { ids: f.ids, ms: new Map(f.ms), overheadMs: f.overheadMs });
    }
    if (this.byFile.size === 0) throw new Error(`no initial test run to select tests from (${dryRunFile} is missing in ${process.cwd()})`);
    return this.byFile;
  }

  async mutantRun(options) {
    const result = await this.runMutant(options);
    // A journal line per mutant (SUNAP_MUTATION_JOURNAL): what a run that is stopped before its end
    // found so far, for scripts/mutation-summary.mjs.
    const journal = process.env.SUNAP_MUTATION_JOURNAL;
    if (journal) {
      const m = options.activeMutant;
      appendFileSync(journal, JSON.stringify({ id: m.id, fileName: m.fileName, location: m.location, mutatorName: m.mutatorName, replacement: m.replacement, status: result.status, killedBy: result.killedBy, nrOfTests: result.nrOfTests, reason: result.reason ?? result.errorMessage }) + '\n');
    }
    return result;
  }

  async runMutant(options) {
    this.known();
    const wanted = options.testFilter ? new Set(options.testFilter) : undefined;
    const bail = !options.disableBail;
    const results = [];
    for (const file of this.files) {
      const f = this.byFile.get(file);
      if (!f) continue;
      const ids = wanted ? f.ids.filter((id) => wanted.has(id)) : f.ids;
      if (ids.length === 0) continue;
      const whole = ids.length === f.ids.length;
      const select = whole ? undefined : ids.map((id) => Number(id.slice(id.lastIndexOf('#') + 1)));
      let r = await this.runFile(file, { mutant: options.activeMutant.id, select, bail, hitLimit: options.hitLimit, timeoutMs: this.budget(file, ids) });
      let ran = ids;
      if (!r.timedOut && !this.hitLimit(r, options) && this.failedIn(r) && select) {
        // Killed by a selection: believe it only if the selection passes on its own without the mutant.
        const key = `${file}:${select.join(',')}`;
        if (!this.selectionPasses.has(key)) {
          const check = await this.runFile(file, { select, bail: true, timeoutMs: this.budget(file, ids) });
          this.selectionPasses.set(key, !check.timedOut && !this.failedIn(check));
          if (!this.selectionPasses.get(key)) this.log.info(`${file}: tests ${key.split(':')[1]} do not pass on their own; whole file runs for the mutants they reach`);
        }
        if (!this.selectionPasses.get(key)) {
          r = await this.runFile(file, { mutant: options.activeMutant.id, bail, hitLimit: options.hitLimit, timeoutMs: this.budget(file, f.ids) });
          ran = f.ids;
        }
      }
      if (r.timedOut) return toMutantRunResult({ status: DryRunStatus.Timeout, reason: `${file} took longer than ${this.budget(file, ran)} ms` });
      if (this.hitLimit(r, options)) return toMutantRunResult({ status: DryRunStatus.Timeout, reason: `hit limit ${options.hitLimit} reached in ${file}` });
      const byIndex = new Map((r.report?.tests ?? []).map((t) => [`${file}#${t.index}`, t]));
      let failed = false;
      for (const id of ran) {
        const t = byIndex.get(id);
        if (t?.status === 'failed') {
          failed = true;
          results.push({ id, name: id, status: TestStatus.Failed, failureMessage: t.error ?? 'failed', timeSpentMs: Math.round(t.ms) });
        } else if (t?.status === 'passed') {
          results.push({ id, name: id, status: TestStatus.Success, timeSpentMs: Math.round(t.ms) });
        }
      }
      if (!failed && r.code !== 0) {
        // The file failed outside any test (a hook, an uncaught error, a crash): its tests did not pass.
        failed = true;
        results.push({ id: ran[0], name: ran[0], status: TestStatus.Failed, failureMessage: `${file} exited with ${r.signal ?? r.code} outside a test: ${r.stderr.slice(-500)}`, timeSpentMs: r.ms });
      }
      if (failed && bail) break;
    }
    if (results.length === 0) {
      // Never a survivor by default: a mutant for which no test ran is a fault of this runner.
      throw new Error(`mutant ${options.activeMutant.id}: none of its ${options.testFilter?.length ?? 'all'} tests ran (${(options.testFilter ?? []).slice(0, 3).join(', ')})`);
    }
    return toMutantRunResult({ status: DryRunStatus.Complete, tests: results });
  }

  failedIn(r) {
    return r.code !== 0 || !r.report || r.report.tests.some((t) => t.status === 'failed');
  }

  hitLimit(r, options) {
    return options.hitLimit !== undefined && (r.report?.hitCount ?? 0) > options.hitLimit;
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.TestRunner, 'node-test', NodeTestRunner)];

export const strykerValidationSchema = {
  $schema: 'http://json-schema.org/draft-07/schema',
  type: 'object',
  properties: {
    nodeTest: {
      type: 'object',
      properties: {
        testFiles: { type: 'array', items: { type: 'string' } },
        nodeArgs: { type: 'array', items: { type: 'string' } },
      },
      additionalProperties: false,
    },
  },
};
