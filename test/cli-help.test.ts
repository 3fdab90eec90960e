import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, sunapBin } from './helpers/cli.js';
import { childEnv, freePort } from './helpers/process.js';

/**
 * What `sunap` does before it touches any database: help, --version, usage errors (exit 64).
 * DATABASE_URL points into a directory that does not exist and no SUNAP_SECRET_KEY is given, so
 * loading the configuration alone would create it (the sandbox key is written beside the database).
 */
const parent = resolve('.tmp', `cli-help-${process.pid}`);
const dataDir = join(parent, 'never-created');
mkdirSync(parent, { recursive: true });
after(() => rmSync(parent, { recursive: true, force: true }));
const { outcome } = cli(() => `sqlite:${join(dataDir, 'sunap.db')}`);

/** Independent of the command table: the commands as README.md ("Operator CLI") documents them. */
const COMMANDS: Record<string, { options: string[]; json: string[] }> = {
  serve: { options: [], json: [] },
  doctor: { options: [], json: ['ok', 'checks'] },
  migrate: { options: [], json: ['applied'] },
  'platform create': { options: ['--name'], json: ['platformCode', 'apiKey'] },
  'platform rotate-key': { options: ['--platform-code', '--grace-seconds'], json: ['platformCode', 'apiKey'] },
  'store create': { options: ['--platform-code', '--name', '--ceo-name', '--biz-reg-num', '--tel', '--no-cat'], json: ['storeCode'] },
  'store show': { options: ['--store-code'], json: ['storeCode', 'processor', 'way', 'methods', 'source', 'keys', 'secretsSet'] },
  'store set-processor': {
    options: ['--store-code', '--processor', '--way', '--methods', '--client-key', '--secret-key', '--api-secret', '--store-id', '--channel-key', '--webhook-secret'], json: [],
  },
  'store reset-processor': { options: ['--store-code'], json: [] },
  'account create': { options: ['--email', '--password', '--store-code'], json: ['accountId', 'email', 'storeCode'] },
  'account enable': { options: ['--email'], json: ['email', 'invoicingEnabled'] },
  'account disable': { options: ['--email'], json: ['email', 'invoicingEnabled'] },
  'account set-role': { options: ['--email', '--role'], json: ['email', 'role', 'storeCode', 'owners'] },
  'points grant': { options: ['--email', '--amount', '--memo'], json: ['balance'] },
};
const words = (name: string) => name.split(' ');

function assertNothingCreated() {
  assert.ok(!existsSync(dataDir), 'no database, data directory or key was created');
}

describe('sunap help and --version', () => {
  test('sunap --help, -h and help: every command, the common variables and the exit codes; nothing else happens', async () => {
    const [long, short, word] = await Promise.all([outcome('--help'), outcome('-h'), outcome('help')]);
    assert.deepEqual({ ...long, stdout: '' }, { code: 0, signal: null, stdout: '', stderr: '' });
    assert.deepEqual(short, long);
    assert.deepEqual(word, long);
    const text = long.stdout;
    for (const name of Object.keys(COMMANDS)) assert.match(text, new RegExp(`^  ${name}  +\\S`, 'm'), name);
    for (const v of ['DATABASE_URL', 'SUNAP_MODE', 'SUNAP_SECRET_KEY', 'PORT', 'HOST', 'LOG_LEVEL']) assert.ok(text.includes(v), v);
    for (const code of [0, 1, 2, 64]) assert.match(text, new RegExp(`^  ${code} +\\S`, 'm'), `exit code ${code}`);
    assertNothingCreated();
  });

  test('every command\'s --help: usage, each of its options and no other, the environment, what --json prints', async () => {
    await Promise.all(Object.entries(COMMANDS).map(async ([name, spec]) => {
      const r = await outcome(...words(name), '--help');
      assert.deepEqual({ ...r, stdout: '' }, { code: 0, signal: null, stdout: '', stderr: '' }, name);
      const text = r.stdout;
      assert.match(text, new RegExp(`^usage: sunap ${name} `), name);
      const listed = [...text.matchAll(/^ {2}(?:-h, )?(--[a-z-]+)/gm)].map((m) => m[1]);
      assert.deepEqual(listed.sort(), [...spec.options, '--json', '--help'].sort(), `${name}: the options its help lists`);
      assert.match(text, /^environment:\n {2}DATABASE_URL /m, name);
      if (name === 'serve') for (const v of ['PORT', 'HOST', 'LOG_LEVEL']) assert.match(text, new RegExp(`^ {2}${v} `, 'm'), v);
      assert.match(text, /^--json prints: /m, name);
      for (const key of spec.json) assert.ok(text.includes(`"${key}"`), `${name} --help names the JSON key ${key}`);
      assert.match(text, /^ {2}64 +usage error/m, name);
    }));
    assertNothingCreated();
  });

  test('-h and sunap help <command> are --help; it wins over the rest of the line, even a malformed one', async () => {
    const help = await outcome('store', 'create', '--help');
    assert.match(help.stdout, /^usage: sunap store create /);
    for (const args of [['store', 'create', '-h'], ['help', 'store', 'create'], ['store', 'create', '--bogus', 'extra', '--tel', '-h', '--json']]) {
      assert.deepEqual(await outcome(...args), help, args.join(' '));
    }
    assertNothingCreated();
  });

  test('a group (sunap platform --help, sunap help platform) lists its commands', async () => {
    for (const args of [['platform', '--help'], ['help', 'platform']]) {
      const r = await outcome(...args);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^ {2}platform create +\S/m);
      assert.match(r.stdout, /^ {2}platform rotate-key +\S/m);
    }
    assertNothingCreated();
  });

  test('--version and -V print the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) assert.deepEqual(await outcome(flag), { code: 0, signal: null, stdout: `${version}\n`, stderr: '' });
  });

  test('migrate --help opens no database and loads no configuration', async () => {
    const r = await outcome('migrate', '--help');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^usage: sunap migrate /);
    assertNothingCreated();
    // The same command without --help does create it: the check above can fail.
    assert.equal((await outcome('migrate', '--json')).code, 0);
    assert.ok(existsSync(join(dataDir, 'sunap.db')));
    rmSync(dataDir, { recursive: true });
  });

  test('serve --help prints the help and ends at once, binding nothing', async () => {
    const port = await freePort();
    const started = Date.now();
    const child = spawn(process.execPath, [sunapBin, 'serve', '--help'], {
      env: childEnv({ DATABASE_URL: `sqlite:${join(dataDir, 'sunap.db')}`, PORT: String(port), HOST: '127.0.0.1' }),
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
    clearTimeout(timer);
    assert.equal(code, 0, `serve --help exited by itself, with 0 (after ${Date.now() - started} ms)`);
    assert.match(stdout, /^usage: sunap serve /);
    await new Promise<void>((done, fail) => {
      const s = createServer().once('error', fail).listen(port, '127.0.0.1', () => s.close(() => done()));
    });
    assertNothingCreated();
  });
});

describe('usage errors: exit 64, one line on stderr naming the problem and the help to run, nothing on stdout', { concurrency: 2 }, () => {
  const cases: [args: string[], problem: RegExp, hint: string][] = [
    [[], /no command given/, 'sunap --help'],
    [['nonsense'], /unknown command "nonsense"/, 'sunap --help'],
    [['--json', 'migrate'], /unknown option --json/, 'sunap --help'],
    [['help', 'nonsense'], /unknown command "nonsense"/, 'sunap --help'],
    [['--version', 'now'], /unexpected argument "now"/, 'sunap --help'],
    [['platform'], /"platform" needs a command: platform create, platform rotate-key/, 'sunap platform --help'],
    [['platform', 'destroy'], /unknown command "platform destroy"/, 'sunap platform --help'],
    [['platform', 'create'], /--name: is required/, 'sunap platform create --help'],
    [['platform', 'create', '--name', ''], /--name: is required/, 'sunap platform create --help'],
    [['platform', 'create', '--name'], /--name: needs a value/, 'sunap platform create --help'],
    [['platform', 'create', '--name', 'x', '--bogus'], /unknown option --bogus/, 'sunap platform create --help'],
    [['platform', 'create', '--name', 'x', '-q'], /unknown option -q/, 'sunap platform create --help'],
    [['platform', 'create', '--name', 'x', 'extra'], /unexpected argument "extra"/, 'sunap platform create --help'],
    [['platform', 'create', '--name', 'x', '--', '--name'], /unexpected argument "--name"/, 'sunap platform create --help'],
    [['platform', 'create', '--name', 'a', '--name', 'b'], /--name: given more than once/, 'sunap platform create --help'],
    [['platform', 'create', '--name', 'x', '--json=yes'], /--json: takes no value/, 'sunap platform create --help'],
    [['platform', 'rotate-key', '--platform-code', 'PCX', '--grace-seconds', 'abc'], /--grace-seconds: must be a whole number/, 'sunap platform rotate-key --help'],
    [['platform', 'rotate-key', '--platform-code', 'PCX', '--grace-seconds', '1.5'], /--grace-seconds: must be a whole number/, 'sunap platform rotate-key --help'],
    [['platform', 'rotate-key', '--grace-seconds', '30'], /--platform-code: is required/, 'sunap platform rotate-key --help'],
    [['store', 'create', '--platform-code', 'PCX', '--name', 'x', '--no-cat=false'], /--no-cat: takes no value/, 'sunap store create --help'],
    [['account', 'create', '--email', 'x@example.com', '--store-code', 'SDX'], /--password: is required/, 'sunap account create --help'],
    [['account', 'enable'], /--email: is required/, 'sunap account enable --help'],
    [['account', 'disable', '--email', 'a@example.com', 'b@example.com'], /unexpected argument "b@example.com"/, 'sunap account disable --help'],
    [['points', 'grant', '--email', 'x@example.com', '--amount', 'ten'], /--amount: must be a whole number from 1 to 1000000000, got "ten"/, 'sunap points grant --help'],
    [['points', 'grant', '--email', 'x@example.com', '--amount', '-5'], /--amount: needs a value, got the option-like "-5"/, 'sunap points grant --help'],
    [['points', 'grant', '--email', 'x@example.com', '--amount=-5'], /--amount: must be a whole number from 1 to 1000000000, got "-5"/, 'sunap points grant --help'],
    [['points', 'grant', '--email', 'x@example.com', '--amount', '0'], /--amount: must be a whole number/, 'sunap points grant --help'],
    [['points', 'grant', '--email', 'x@example.com', '--amount', '1000000001'], /--amount: must be a whole number/, 'sunap points grant --help'],
    [['serve', '--port', '8080'], /unknown option --port/, 'sunap serve --help'],
    [['migrate', 'now'], /unexpected argument "now"/, 'sunap migrate --help'],
  ];
  for (const [args, problem, hint] of cases) {
    test(`sunap ${args.join(' ')}`.trimEnd(), async () => {
      // With --json where it is a command's line: a usage error is never JSON, stdout stays empty.
      const command = args.length > 1 && !['help', '--version', '--json'].includes(args[0]!) && !args.includes('--');
      const r = await outcome(...args, ...(command ? ['--json'] : []));
      assert.equal(r.code, 64, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.split('\n').length, 2, `exactly one line: ${JSON.stringify(r.stderr)}`);
      assert.match(r.stderr, /^sunap: /);
      assert.match(r.stderr, problem);
      assert.ok(r.stderr.endsWith(`; run "${hint}"\n`), r.stderr);
    });
  }
  after(assertNothingCreated);
});
