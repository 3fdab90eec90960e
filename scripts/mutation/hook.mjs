// Loaded (--import) into every test process that scripts/mutation/node-test-runner.mjs starts.
// It numbers the file's tests in the order they are declared, records which mutants each test
// reaches (Stryker's instrumented code counts into globalThis.__stryker__ under currentTestId),
// runs only the selected tests when asked (the others are declared skipped), stops at the first
// failure when asked (bail), and writes what happened to SUNAP_MUT_OUT when the process exits.
import { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const nodeTest = require('node:test');
const env = process.env;
const out = env.SUNAP_MUT_OUT;
const dry = env.SUNAP_MUT_DRY === '1';
const bail = env.SUNAP_MUT_BAIL === '1';
const select = env.SUNAP_MUT_SELECT ? new Set(env.SUNAP_MUT_SELECT.split(',').map(Number)) : null;

const ns = (globalThis.__stryker__ ??= {});
if (env.SUNAP_MUT_HIT_LIMIT) {
  ns.hitLimit = Number(env.SUNAP_MUT_HIT_LIMIT);
  ns.hitCount = 0;
}

/** @type {{ index: number, name: string, status: 'passed'|'failed'|'skipped', ms: number, error?: string }[]} */
const tests = [];
const suites = [];
let written = false;

function finish() {
  if (written || !out) return;
  written = true;
  const coverage = dry ? ns.mutantCoverage ?? { static: {}, perTest: {} } : undefined;
  writeFileSync(out, JSON.stringify({ tests, coverage, hitCount: ns.hitCount }));
}
process.on('exit', finish);

// The runner may be killed (its own timeout, Stryker's): a test process whose parent is gone stops.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 1000).unref();

/** node:test's (name?, options?, fn?) in any order of omission. */
function parse(args) {
  let [name, options, fn] = args;
  if (typeof name === 'function') [name, options, fn] = [name.name || '<anonymous>', {}, name];
  else if (typeof options === 'function') [options, fn] = [{}, options];
  return { name: String(name ?? '<anonymous>'), options: options ?? {}, fn };
}

function wrapTest(original) {
  return function test(...args) {
    const { name, options, fn } = parse(args);
    const index = tests.length;
    const record = { index, name: [...suites, name].join(' > '), status: 'skipped', ms: 0 };
    tests.push(record);
    if (typeof fn !== 'function' || options.skip || options.todo) return original.call(this, name, options, fn);
    if (select && !select.has(index)) return original.call(this, name, { ...options, skip: 'not selected for this mutant' }, fn);
    return original.call(this, name, options, async function (...a) {
      ns.currentTestId = String(index);
      const started = performance.now();
      try {
        const r = await fn.apply(this, a);
        record.status = 'passed';
        return r;
      } catch (err) {
        record.status = 'failed';
        record.error = String(err?.stack ?? err).slice(0, 1500);
        if (bail) {
          record.ms = performance.now() - started;
          finish();
          process.exit(1);
        }
        throw err;
      } finally {
        record.ms = performance.now() - started;
        ns.currentTestId = undefined;
      }
    });
  };
}

function wrapSuite(original) {
  return function describe(...args) {
    const { name, options, fn } = parse(args);
    if (typeof fn !== 'function') return original.call(this, name, options, fn);
    return original.call(this, name, options, function (...a) {
      // What a suite's hooks reach (starting and closing the app) counts for the whole file.
      nodeTest.before(() => {
        ns.currentTestId = undefined;
      });
      nodeTest.after(() => {
        ns.currentTestId = undefined;
      });
      suites.push(name);
      try {
        return fn.apply(this, a);
      } finally {
        suites.pop();
      }
    });
  };
}

for (const key of ['test', 'it']) {
  const wrapped = Object.assign(wrapTest(nodeTest[key]), nodeTest[key]);
  nodeTest[key] = wrapped;
}
for (const key of ['describe', 'suite']) {
  if (nodeTest[key]) nodeTest[key] = Object.assign(wrapSuite(nodeTest[key]), nodeTest[key]);
}
syncBuiltinESMExports();
