/**
 * `sunap doctor` and the live-mode start checks (docs/going-live.md, README.md "Operator CLI"):
 * the real bin against the provider fakes, on both databases.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { migrationStatus, openDatabase } from '../../src/db/index.js';
import { forEachEngine } from '../helpers/app.js';
import { runSunap } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import { FAKE_TOSS_CLIENT_KEY } from '../fakes/toss.js';
import { liveEnv, withFakes } from './support.js';

forEachEngine('sunap doctor and the live start checks', (engine) => {
  const f = withFakes();
  let database: { url: string; drop: () => Promise<void> };
  before(async () => {
    database = await createTestDatabase(engine);
  });
  after(async () => database.drop());
  const env = (over: Record<string, string> = {}) => ({ DATABASE_URL: database.url, ...liveEnv(f), ...over });
  const lines = (stdout: string) => Object.fromEntries(stdout.trim().split('\n').slice(0, -1).map((l) => [l.slice(6, 21).trim(), l.slice(0, 5).trim()]));
  const pending = async () => {
    const db = openDatabase(database.url, { poolSize: 1 });
    try {
      return (await migrationStatus(db.db)).pending.length;
    } finally {
      await db.close();
    }
  };

  test('an unmigrated database fails its line and is left as it was; after sunap migrate every check passes, with one harmless call per provider', async () => {
    const before = { toss: f.toss.requests.length, solapi: f.solapi.requests.length };
    const first = await runSunap(['doctor'], env());
    assert.equal(first.code, 1, first.stdout + first.stderr);
    const l1 = lines(first.stdout);
    assert.equal(l1.database, 'fail');
    assert.equal(l1['text search'], undefined, 'not checked before the database is migrated');
    assert.match(first.stdout, /database +.*(not applied|no such file).*sunap migrate/);
    assert.equal(l1['card processor'], 'ok');
    assert.equal(l1.messaging, 'ok');
    if (engine === 'postgres') assert.ok((await pending()) > 0, 'doctor applied no migration');

    assert.equal((await runSunap(['migrate'], env())).code, 0);
    const r = await runSunap(['doctor'], env());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(lines(r.stdout), {
      configuration: 'ok', database: 'ok', 'text search': 'ok', 'secret key': 'ok', 'card processor': 'ok', messaging: 'ok', 'public URL': 'warn',
    });
    assert.match(r.stdout, engine === 'postgres' ? /^ok {4}text search +pg_trgm [\d.]+: payments and invoices indexed, Korean included$/m : /^ok {4}text search +FTS5 trigram tables for payments and invoices$/m);
    assert.match(r.stdout, /^ok {4}card processor +toss test key at https:\/\/localhost:\d+: the secret key was accepted$/m);
    assert.match(r.stdout, /^ok {4}messaging +solapi at .*: the API key was accepted; sender 0212345678/m);
    assert.match(r.stdout, /^ok {4}database +.*all \d+ migrations applied$/m);
    const toss = f.toss.requests.slice(before.toss);
    const solapi = f.solapi.requests.slice(before.solapi);
    assert.ok(toss.every((x) => x.method === 'GET' && /^\/v1\/payments\/orders\/sunap-doctor-/.test(x.path)), 'Toss: only look-ups');
    assert.ok(solapi.every((x) => x.method === 'GET' && x.path === '/messages/v4/list'), 'Solapi: only lists');
    assert.equal(toss.length, 2);
    assert.equal(solapi.length, 2);

    const json = await runSunap(['doctor', '--json'], env());
    assert.equal(json.code, 0);
    const report = JSON.parse(json.stdout);
    assert.equal(report.ok, true);
    assert.deepEqual(report.checks.map((c: { name: string }) => c.name), ['configuration', 'database', 'text search', 'secret key', 'card processor', 'messaging', 'public URL']);
  });

  test('a wrong key is refused by doctor, on its own line, without printing the key', async () => {
    const r = await runSunap(['doctor'], env({ SUNAP_TOSS_SECRET_KEY: 'test_sk_wrongKey000000000000000', SUNAP_SOLAPI_API_SECRET: 'WRONGSECRET0000000000000000000AB' }));
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^fail {2}card processor +toss test key at .*: the secret key was refused \(UNAUTHORIZED_KEY\); check SUNAP_TOSS_SECRET_KEY$/m);
    assert.match(r.stdout, /^fail {2}messaging +solapi at .*SignatureDoesNotMatch.*check SUNAP_SOLAPI_API_KEY and SUNAP_SOLAPI_API_SECRET/m);
    assert.doesNotMatch(r.stdout + r.stderr, /wrongKey|WRONGSECRET/);
  });

  test('live mode with pieces missing: serve exits 2 naming each one, and doctor says the same on its configuration line', async () => {
    const missing = env({ SUNAP_CARD_PROCESSOR: '', SUNAP_SOLAPI_PFID: '', SUNAP_PUBLIC_URL: 'http://pay.example.com', SUNAP_SECRET_KEY: '' });
    const serve = await runSunap(['serve'], missing, 20_000);
    assert.equal(serve.code, 2, serve.stderr);
    for (const name of ['SUNAP_CARD_PROCESSOR', 'SUNAP_SOLAPI_PFID', 'SUNAP_PUBLIC_URL', 'SUNAP_SECRET_KEY']) assert.match(serve.stderr, new RegExp(`- ${name}: `), name);
    assert.match(serve.stderr, /^sunap: configuration error: 4 problems:/);
    const d = await runSunap(['doctor'], missing);
    assert.equal(d.code, 2);
    assert.match(d.stdout, /^fail {2}configuration +4 problems: - SUNAP_SOLAPI_PFID: required with this provider - SUNAP_CARD_PROCESSOR: /m);
  });

  test('the secret key: all-zero or repeated bytes refused in live mode; a warning in the sandbox', async () => {
    for (const weak of ['00'.repeat(32), 'ab'.repeat(32), '0123456789abcdef'.repeat(4), Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex')]) {
      const r = await runSunap(['serve'], env({ SUNAP_SECRET_KEY: weak }), 20_000);
      assert.equal(r.code, 2, weak);
      assert.match(r.stderr, /SUNAP_SECRET_KEY: too weak for live mode: it (has only \d+ distinct byte values|is a counting sequence)/, weak);
    }
    const sandbox = await runSunap(['doctor'], { DATABASE_URL: database.url, SUNAP_SECRET_KEY: '00'.repeat(32) });
    assert.equal(sandbox.code, 0, sandbox.stdout);
    assert.match(sandbox.stdout, /^warn {2}secret key +SUNAP_SECRET_KEY has only 1 distinct byte values/m);
    assert.match(sandbox.stdout, /^ok {4}card processor +sandbox card network/m);
  });

  test('Toss\'s window (SUNAP_CARD_PROCESSOR=toss): doctor proves the secret key with one look-up at the configured API URL and says the client key is the browser SDK\'s to check; a wrong key fails its line; a missing client key is named', async () => {
    const window = { SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_CLIENT_KEY: FAKE_TOSS_CLIENT_KEY, SUNAP_TOSS_SDK_URL: f.toss.sdkUrl };
    const before = f.toss.requests.length;
    const r = await runSunap(['doctor'], env(window));
    assert.equal(lines(r.stdout)['card processor'], 'ok', r.stdout);
    assert.match(r.stdout, new RegExp(`^ok {4}card processor +toss \\(window\\) test keys at ${f.toss.url}: the secret key was accepted; the client key is checked by the browser's SDK \\(${f.toss.sdkUrl}\\)$`, 'm'));
    const calls = f.toss.requests.slice(before);
    assert.equal(calls.length, 1);
    assert.match(`${calls[0]!.method} ${calls[0]!.path}`, /^GET \/v1\/payments\/orders\/sunap-doctor-[0-9a-f-]{36}$/);
    assert.equal(f.toss.window.orders.size, 0, 'nothing was ordered');

    const wrong = await runSunap(['doctor'], env({ ...window, SUNAP_TOSS_SECRET_KEY: 'test_sk_wrongKey000000000000000' }));
    assert.equal(wrong.code, 1);
    assert.match(wrong.stdout, /^fail {2}card processor +toss \(window\) test keys at .*: the secret key was refused \(UNAUTHORIZED_KEY\); check SUNAP_TOSS_SECRET_KEY$/m);
    assert.doesNotMatch(wrong.stdout + wrong.stderr, /wrongKey/);

    const noClient = await runSunap(['doctor'], env({ ...window, SUNAP_TOSS_CLIENT_KEY: '' }));
    assert.equal(noClient.code, 2);
    assert.match(noClient.stdout, /^fail {2}configuration +SUNAP_TOSS_CLIENT_KEY: required with this provider$/m);
  });

  test('the text search line fails, naming what is missing, when the console search\'s text index is gone, and passes once it is back', async () => {
    const db = openDatabase(database.url, { poolSize: 1 });
    try {
      const hide = engine === 'postgres' ? sql`drop index payments_text_trgm` : sql`alter table payments_text rename to payments_text_hidden`;
      await hide.execute(db.db);
      const r = await runSunap(['doctor'], env());
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stdout, engine === 'postgres'
        ? /^fail {2}text search +pg_trgm is installed but its indexes are missing: .*create extension pg_trgm/m
        : /^fail {2}text search +the FTS5 tables payments_text and invoices_text are missing: run sunap migrate$/m);
      // Put back as docs/console.md ("Search") writes it.
      const back = engine === 'postgres'
        ? sql`create index payments_text_trgm on payments using gin ((coalesce(pay_user_name, '') || chr(31) || coalesce(trans_seqno, '') || chr(31) || coalesce(request_reason, '') || chr(31) || coalesce(approval_number, '') || chr(31) || coalesce(mobile_no, '')) gin_trgm_ops)`
        : sql`alter table payments_text_hidden rename to payments_text`;
      await back.execute(db.db);
      const again = await runSunap(['doctor'], env());
      assert.equal(lines(again.stdout)['text search'], 'ok', again.stdout);
    } finally {
      await db.close();
    }
  });
});
