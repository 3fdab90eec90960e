// Mutation testing: `npm run test:mutation` (docs/testing.md, "Mutation testing").
// StrykerJS with a node:test runner of ours (scripts/mutation/node-test-runner.mjs): each file below
// runs as `node --import tsx <file>`, per test, on SQLite only (unless MUTATION_POSTGRES=1), in the environment test/run.mjs gives.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = import.meta.dirname;
const tls = join(root, '.tmp', 'tls');
if (!existsSync(join(tls, 'server.crt'))) {
  // test/run.mjs makes the local CA on its first run; the crypto suite is the quickest way there.
  execFileSync(process.execPath, [join(root, 'test', 'run.mjs'), 'test/platform/crypto.test.ts'], { cwd: root, stdio: 'inherit', env: { ...process.env, SUNAP_TEST_SKIP_POSTGRES: '1' } });
}
// MUTATION_POSTGRES=1 runs the suites on PostgreSQL too (slower; for code only PostgreSQL reaches,
// such as the claim's advisory lock). Each suite makes its own database, so runners do not collide.
if (!process.env.MUTATION_POSTGRES) process.env.SUNAP_TEST_SKIP_POSTGRES = '1';
Object.assign(process.env, {
  NODE_EXTRA_CA_CERTS: join(tls, 'ca.crt'),
  SUNAP_TEST_TLS_DIR: tls,
  SUNAP_USE_TSX: '1',
});
delete process.env.SUNAP_TEST_DIST;
const report = process.env.MUTATION_REPORT || 'mutation';
// Each tested mutant is also appended here as it finishes, so a run stopped early still tells.
process.env.SUNAP_MUTATION_JOURNAL = resolve(root, 'reports', 'mutation', `${report}.journal.jsonl`);
mkdirSync(join(root, 'reports', 'mutation'), { recursive: true });

/**
 * The suites that take part, in the order a mutant runs them: the fast unit suites first (they
 * kill most mutants in milliseconds), then the HTTP suites, the slowest last; every other suite
 * found under test/ after those. Left out: test/reliability/** (kills and restarts whole
 * processes, minutes), test/bench-smoke.test.ts (a benchmark of a separately started server),
 * test/platform/launcher.test.ts (tests bin/ against a scratch dist/, never src/), the Chromium
 * suites (a browser per suite; they drive pages, which are not mutated) and test/live/crash
 * (a server killed and restarted as a child process).
 */
const FIRST = [
  'test/platform/crypto.test.ts',
  'test/gateway/rules.test.ts',
  'test/invoicing/rules.test.ts',
  'test/jobs/claims.test.ts',
  'test/jobs/worker.test.ts',
  'test/jobs/worker-schedule.test.ts',
  'test/jobs/outbound.test.ts',
  'test/jobs/deliveries.test.ts',
  'test/jobs/retention.test.ts',
  'test/ports/sandbox.test.ts',
  'test/ports/provider-http.test.ts',
  'test/ports/http-out.test.ts',
  'test/ports/solapi.test.ts',
  'test/ports/toss.test.ts',
  'test/live/adapters.test.ts',
  'test/gateway/merchants.test.ts',
  'test/gateway/reconcile.test.ts',
  'test/gateway/callback.test.ts',
  'test/gateway/approval.test.ts',
  'test/gateway/recovery.test.ts',
  'test/gateway/api.test.ts',
  'test/gateway/console-repository.test.ts',
  'test/invoicing/repository.test.ts',
  'test/invoicing/accounts.test.ts',
  'test/invoicing/console-repository.test.ts',
  'test/invoicing/team.test.ts',
  'test/invoicing/delivery-log.test.ts',
  'test/invoicing/service.test.ts',
  'test/invoicing/points.test.ts',
  'test/invoicing/delivery-job.test.ts',
  'test/invoicing/send-runner.test.ts',
  'test/invoicing/sends.test.ts',
  'test/invoicing/webhooks.test.ts',
  'test/gateway/flow.test.ts',
];
const LAST = ['test/robustness/bad-input.test.ts', 'test/cli.test.ts', 'test/invoicing/cli.test.ts'];
const EXCLUDED = /^test\/(reliability\/|bench-smoke|platform\/launcher|live\/crash)|browser\.test\.ts$/;
function testFiles(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'helpers' || e.name === 'fakes' ? [] : testFiles(`${dir}/${e.name}`)) : e.name.endsWith('.test.ts') ? [`${dir}/${e.name}`] : []);
}
const found = testFiles('test').filter((f) => !EXCLUDED.test(f));
const ALL_SUITES = [
  ...FIRST.filter((f) => found.includes(f)),
  ...found.filter((f) => !FIRST.includes(f) && !LAST.includes(f)).sort(),
  ...LAST.filter((f) => found.includes(f)),
];
/**
 * MUTATION_SUITES=a,b (paths under test/) runs only those files: a quick run of the unit suites
 * over the rule files, whose score is a lower bound of the full one (docs/testing.md).
 */
const chosen = process.env.MUTATION_SUITES?.split(',').map((f) => f.trim()).filter(Boolean);
for (const f of chosen ?? []) if (!found.includes(f)) throw new Error(`MUTATION_SUITES: ${f} is not a suite that takes part`);
export const SUITES = chosen ?? ALL_SUITES;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  // The rules of money, signing, tenancy, state and retries (docs/testing.md, "Mutation testing").
  mutate: ['src/gateway/**/*.ts', 'src/invoicing/**/*.ts', 'src/jobs/**/*.ts', 'src/ports/**/*.ts', 'src/platform/crypto.ts'],
  testRunner: 'node-test',
  plugins: ['./scripts/mutation/node-test-runner.mjs'],
  nodeTest: {
    // Fastest and most focused first: a mutant runs only the tests that reached it, file by file
    // in this order, and stops at the first failure.
    testFiles: SUITES,
    nodeArgs: ['--import', 'tsx'],
  },
  coverageAnalysis: 'perTest',
  concurrency: 1,
  dryRunTimeoutMinutes: 40,
  timeoutMS: 10000,
  timeoutFactor: 1.5,
  disableTypeChecks: true,
  incremental: false,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  // MUTATION_REPORT=name writes reports/mutation/name.{html,json} (a run of one folder keeps the others').
  htmlReporter: { fileName: `reports/mutation/${report}.html` },
  jsonReporter: { fileName: `reports/mutation/${report}.json` },
  // docs/reference.md stays: the /docs test checks that the sections the descriptions name exist.
  ignorePatterns: ['/.stryker-tmp', '/.tmp', '/dist', '/data', '/coverage', '/docs/*', '!/docs/reference.md', '/BENCHMARKS.md'],
  tempDirName: `.stryker-tmp/${report}`,
  cleanTempDir: true,
};
