// `npm test`: every suite on SQLite and, when it answers (always under CI=true), on PostgreSQL.
// Prepares what the suites share (a local CA for the HTTPS receiver), then runs node:test via tsx.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import pg from 'pg';
import { ensureTestCa } from './fakes/tls.mjs';

if (Number(process.versions.node.split('.')[0]) < 22) {
  console.error(`npm test needs Node 22 or newer (better-sqlite3 13 crashes on older lines); this is Node ${process.versions.node}. README.md, "Node versions", says how to get one.`);
  process.exit(1);
}

const root = resolve(import.meta.dirname, '..');
const tmp = join(root, '.tmp');
mkdirSync(tmp, { recursive: true });

async function postgresAnswers(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    return err.message;
  } finally {
    await client.end().catch(() => {});
  }
}

const pgUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const pgState = await postgresAnswers(pgUrl);
const env = { ...process.env, TEST_DATABASE_URL: pgUrl };
if (pgState !== true) {
  if (process.env.CI === 'true' || process.env.TEST_DATABASE_URL) {
    console.error(`PostgreSQL at ${pgUrl} does not answer (${pgState}); the PostgreSQL suites must run here. Start it: pg_ctlcluster --skip-systemctl-redirect 15 main start`);
    process.exit(1);
  }
  console.error('\n' + '!'.repeat(78) + `\n!! PostgreSQL does not answer at ${pgUrl}: SKIPPING every PostgreSQL suite.\n!! Only SQLite is tested in this run. Set TEST_DATABASE_URL or start PostgreSQL.\n` + '!'.repeat(78) + '\n');
  env.SUNAP_TEST_SKIP_POSTGRES = '1';
}

// A private CA and a localhost certificate for the HTTPS receiver and the provider fakes; Node
// trusts the CA through NODE_EXTRA_CA_CERTS, which it reads only at start-up, hence here.
const tls = ensureTestCa(join(tmp, 'tls'));
env.NODE_EXTRA_CA_CERTS = join(tls, 'ca.crt');

// Suites that start bin/sunap.js test the sources being edited (through tsx), never a dist/
// left from an earlier build. SUNAP_TEST_DIST=1 tests the compiled dist/ instead, and then it
// must be up to date (CI runs the process suites a second time that way, after npm ci built it).
if (process.env.SUNAP_TEST_DIST === '1') {
  const probe = spawnSync(process.execPath, [join(root, 'bin', 'sunap.js'), '--help'], { encoding: 'utf8', env: { ...process.env, SUNAP_USE_TSX: '' } });
  if (/dist\/ is (older|incomplete)/.test(probe.stderr) || !existsSync(join(root, 'dist', '.built'))) {
    console.error('SUNAP_TEST_DIST=1 but dist/ is missing or older than src/: run `npm run build` first.');
    process.exit(1);
  }
  delete env.SUNAP_USE_TSX;
} else {
  env.SUNAP_USE_TSX = '1';
}
env.SUNAP_TEST_TLS_DIR = tls;

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'helpers' ? [] : find(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}
// A filter matches the path below the repository root (or is a file's own path): matched against
// the absolute path, `npm test -- cli` in a checkout under a directory named cli ran every suite.
const filters = process.argv.slice(2);
const matches = (f, x) => relative(root, f).includes(x) || f === resolve(x);
const files = find(join(root, 'test')).filter((f) => filters.length === 0 || filters.some((x) => matches(f, x))).sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files], { env, stdio: 'inherit', cwd: root });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
