import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type DatabaseHandle } from '../src/db/index.js';
import { cli, runSunap, sunapBin } from './helpers/cli.js';
import { forEachEngine } from './helpers/app.js';
import { createTestDatabase } from './helpers/db.js';
import { childEnv, freePort } from './helpers/process.js';
import { eventually } from './helpers/wait.js';

/** The commands against a database, and the exit codes 1 and 2. Help and usage errors: cli-help.test.ts. */

forEachEngine('sunap CLI', (engine) => {
  let url: string;
  let drop: () => Promise<void>;
  before(async () => {
    ({ url, drop } = await createTestDatabase(engine));
  });
  after(async () => drop?.());

  const { sunap, json, fails } = cli(() => url, '22'.repeat(32));

  test('migrate --json lists what it applied, then nothing', async () => {
    const first = await json('migrate');
    assert.deepEqual(Object.keys(first), ['applied']);
    assert.ok(first.applied.includes('0001_gateway'));
    assert.deepEqual(await json('migrate'), { applied: [] });
  });

  test('platform, store and key rotation: --json outputs and the key sealed at rest', async () => {
    const p = await json('platform', 'create', '--name', '학원 플랫폼');
    assert.deepEqual(Object.keys(p), ['platformCode', 'apiKey']);
    assert.match(p.platformCode, /^PC[0-9A-F]{10}$/);
    assert.ok(p.apiKey.length >= 32);
    const s = await json('store', 'create', '--platform-code', p.platformCode, '--name', '행복 피아노', '--ceo-name', '김대표', '--biz-reg-num', '1234567890', '--tel', '0212345678');
    assert.deepEqual(Object.keys(s), ['storeCode']);
    const noCat = await json('store', 'create', '--platform-code', p.platformCode, '--name', '무단말 상점', '--no-cat');
    const r = await json('platform', 'rotate-key', '--platform-code', p.platformCode, '--grace-seconds', '30');
    assert.deepEqual(Object.keys(r), ['platformCode', 'apiKey']);
    assert.equal(r.platformCode, p.platformCode);
    assert.notEqual(r.apiKey, p.apiKey);

    const store: DatabaseHandle = openDatabase(url);
    try {
      const stores = await store.db.selectFrom('stores').select(['code', 'cat_enabled', 'ceo_name']).where('platform_code', '=', p.platformCode).execute();
      assert.deepEqual(stores.map((x) => [x.code, x.cat_enabled]).sort(), [[s.storeCode, 1], [noCat.storeCode, 0]].sort());
      const keys = await store.db.selectFrom('platform_keys').select('key_sealed').where('platform_code', '=', p.platformCode).execute();
      assert.equal(keys.length, 2);
      for (const k of keys) {
        assert.ok(!k.key_sealed.includes(p.apiKey) && !k.key_sealed.includes(r.apiKey), 'API keys are encrypted at rest');
      }
    } finally {
      await store.close();
    }
    if (engine === 'sqlite') {
      const bytes = readFileSync(url.slice('sqlite:'.length)).toString('latin1');
      assert.ok(!bytes.includes(p.apiKey) && !bytes.includes(r.apiKey), 'the database file never holds a plain key');
    }
  });

  test('the human form: key: value lines, the key once with a warning', async () => {
    const out = await sunap('platform', 'create', '--name', 'Plain');
    assert.match(out.stdout, /^platformCode: PC/m);
    assert.match(out.stdout, /^apiKey: /m);
    assert.match(out.stdout, /shown only this once/);
    assert.equal((await sunap('migrate')).stdout, 'applied: (none)\n');
  });

  test('an operation that fails: exit 1, one line on stderr, nothing on stdout', async () => {
    const p = await json('platform', 'create', '--name', 'Failing');
    const cases: [string[], RegExp][] = [
      [['store', 'create', '--platform-code', 'PCNOPE', '--name', 'x'], /^sunap: --platform-code: no platform PCNOPE$/],
      [['platform', 'rotate-key', '--platform-code', 'PCNOPE'], /^sunap: --platform-code: no platform PCNOPE$/],
      [['platform', 'create', '--name', '   '], /^sunap: --name: must not be empty$/],
      [['store', 'create', '--platform-code', p.platformCode, '--name', ' '], /^sunap: --name: must not be empty$/],
    ];
    for (const [args, message] of cases) {
      for (const line of [args, [...args, '--json']]) {
        const e = await fails(...line);
        assert.equal(e.code, 1, `${line.join(' ')}: ${e.stderr}`);
        assert.equal(e.stdout, '', line.join(' '));
        assert.match(e.stderr.replace(/\n$/, ''), message);
      }
    }
  });
});

describe('configuration and start-up errors', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const fresh = () => {
    dirs.push(resolve('.tmp', `cli-${process.pid}-${dirs.length}`));
    return `sqlite:${join(dirs.at(-1)!, 'sunap.db')}`;
  };

  test('a bad environment variable: exit 2, the variable named', async () => {
    const cases: [Record<string, string>, string[], RegExp][] = [
      [{ DATABASE_URL: 'mysql://nope' }, ['migrate', '--json'], /^sunap: configuration error: DATABASE_URL: /],
      [{ DATABASE_URL: 'mysql://nope' }, ['platform', 'create', '--name', 'x'], /^sunap: configuration error: DATABASE_URL: /],
      [{ SUNAP_MODE: 'production' }, ['points', 'grant', '--email', 'a@example.com', '--amount', '1', '--json'], /^sunap: configuration error: SUNAP_MODE: /],
      [{ SUNAP_SECRET_KEY: 'too-short' }, ['platform', 'create', '--name', 'x', '--json'], /^sunap: configuration error: SUNAP_SECRET_KEY: /],
    ];
    for (const [env, args, message] of cases) {
      const r = await runSunap(args, { DATABASE_URL: fresh(), ...env });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.split('\n').length, 2, r.stderr);
      assert.match(r.stderr, message);
    }
  });

  test('a database that does not answer: exit 1, one line', async () => {
    const r = await runSunap(['migrate', '--json'], { DATABASE_URL: 'postgres://sunap@127.0.0.1:1/none' });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^sunap: .*ECONNREFUSED.*\n$/);
  });

  test('sunap serve refuses to start with a bad value, naming it (exit 2)', async () => {
    const r = await runSunap(['serve'], { DATABASE_URL: fresh(), PORT: 'eighty' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /configuration error: PORT: must be a whole number/);
    const level = await runSunap(['serve'], { DATABASE_URL: fresh(), LOG_LEVEL: 'loud' });
    assert.equal(level.code, 2);
    assert.equal(level.stdout, '');
    assert.match(level.stderr, /^sunap: configuration error: LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"\n$/);
  });

  test('a second server on the same SQLite file refuses to start, naming the first; the operator commands still run beside it', async () => {
    const url = fresh();
    const file = url.slice('sqlite:'.length);
    const port = await freePort();
    const env = { DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', SUNAP_SECRET_KEY: '44'.repeat(32), LOG_LEVEL: 'warn' };
    const first = spawn(process.execPath, [sunapBin, 'serve'], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) => first.on('exit', (code) => r(code)));
    try {
      await eventually(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false), 'the first server answers', 30_000, 100);
      const lock = JSON.parse(readFileSync(`${file}.lock`, 'utf8'));
      assert.equal(lock.pid, first.pid);
      const second = await runSunap(['serve'], { ...env, PORT: String(await freePort()) });
      assert.equal(second.code, 1, second.stderr);
      assert.equal(second.stdout, '');
      assert.match(second.stderr, new RegExp(`^sunap: could not start: another Sunap server \\(pid ${first.pid}, .*already serves this SQLite database; lock file .*sunap\\.db\\.lock.*PostgreSQL.*\\n$`));
      // The CLI is meant to run beside the server: it takes no lock.
      const made = await runSunap(['platform', 'create', '--name', 'beside', '--json'], { DATABASE_URL: url, SUNAP_SECRET_KEY: '44'.repeat(32) });
      assert.equal(made.code, 0, made.stderr);
    } finally {
      first.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
    assert.equal(existsSync(`${file}.lock`), false, 'released on shutdown');
    // A lock left by a process that is gone (a crash) is stale: the next server takes it over.
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z' }));
    const again = spawn(process.execPath, [sunapBin, 'serve'], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const againExited = new Promise<number | null>((r) => again.on('exit', (code) => r(code)));
    try {
      await eventually(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false), 'the server over a stale lock answers', 30_000, 100);
      assert.equal(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).pid, again.pid);
    } finally {
      again.kill('SIGTERM');
    }
    assert.equal(await againExited, 0);
  });

  test('sunap serve on a port in use: one line on stderr, exit 1', async () => {
    const port = await freePort();
    const taken = createServer().listen(port, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const r = await runSunap(['serve'], { DATABASE_URL: fresh(), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'fatal' });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^sunap: could not start: .*EADDRINUSE.*\n$/);
    } finally {
      taken.close();
    }
  });
});
