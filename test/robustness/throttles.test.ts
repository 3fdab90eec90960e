/**
 * Sign-in throttles under concurrency and behind proxies (docs/security.md, "Sign-in
 * throttling" and "Client addresses"): a burst of simultaneous guesses gets no more password
 * checks than the lockout allows, on one instance or two sharing a database; a spoofed
 * X-Forwarded-For does not move a caller to a fresh per-address budget; forgotten rows are
 * purged by a job.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { THROTTLE_PURGE_JOB } from '../../src/invoicing/index.js';
import { ConfigError, loadConfig } from '../../src/platform/config.js';
import type { App } from '../../src/platform/http.js';
import { forEachEngine, startApp, startSecondInstance, TEST_SECRET_KEY, type TestApp } from '../helpers/app.js';
import { runSunap } from '../helpers/cli.js';
import { newAccount } from '../invoicing/support.js';

async function loginAt(url: string, email: string, password: string, headers: Record<string, string> = {}): Promise<{ status: number; code: number }> {
  const res = await fetch(`${url}/app/v1/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ email, password, loginType: 'EMAIL' }),
  });
  const body = (await res.json()) as { result_code: number };
  return { status: res.status, code: body.result_code };
}

const count = (rs: { code: number }[], code: number) => rs.filter((r) => r.code === code).length;

forEachEngine('sign-in throttles hold under concurrency', (engine) => {
  describe('per email', () => {
    let t: TestApp;
    let other: { app: App; url: string };
    before(async () => {
      // The per-address limit is off here, so only the per-email lockout is at work.
      t = await startApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });
      other = await startSecondInstance(t, { SUNAP_LOGIN_RATE_LIMIT: '0' });
    });
    after(async () => {
      await other?.app.close();
      await t?.close();
    });

    test('after 4 failures, a burst of 30 wrong passwords gets one more check; the right password is then refused', async () => {
      const a = await newAccount(t);
      for (let i = 0; i < 4; i++) assert.equal((await loginAt(t.url, a.email, `wrong-${i}`)).code, -3);
      const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => loginAt(i % 2 ? other.url : t.url, a.email, `guess-${i}`)));
      assert.equal(count(burst, -3), 1, `checked: ${JSON.stringify(burst)}`);
      assert.equal(count(burst, -29), 29);
      for (const r of burst.filter((x) => x.code === -29)) assert.equal(r.status, 429);
      const right = await fetch(`${t.url}/app/v1/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: a.email, password: a.password, loginType: 'EMAIL' }),
      });
      assert.equal(right.status, 429);
      assert.equal(((await right.json()) as { result_code: number }).result_code, -29);
      const retry = Number(right.headers.get('retry-after'));
      assert.ok(retry >= 1 && retry <= 30, `Retry-After ${retry}`);
      const row = await t.app.sunap.database.db.selectFrom('sign_in_throttles').selectAll().where('key', '=', `email:${a.email}`).executeTakeFirstOrThrow();
      assert.equal(Number(row.attempts), 5, 'five checks in all');
    });

    test('/docs describes no per-address limit when SUNAP_LOGIN_RATE_LIMIT is 0', async () => {
      const login = (await t.get('/docs/json')).body.paths['/app/v1/auth/login'].post;
      assert.match(login.description, /lockout that doubles from 30 seconds \(429 \/ -29\)\.$/);
      assert.doesNotMatch(login.description, /per client address/);
    });

    test('a burst of 30 at a fresh email, spread over two instances: exactly 5 checks, the rest 429', async () => {
      const a = await newAccount(t);
      const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => loginAt(i % 2 ? other.url : t.url, a.email, `guess-${i}`)));
      assert.equal(count(burst, -3), 5, JSON.stringify(burst));
      assert.equal(count(burst, -29), 25);
      assert.equal((await loginAt(other.url, a.email, a.password)).code, -29);
      // The lockout passes (30 s after the 5th attempt): the right password signs in and forgets the count.
      await t.post('/sandbox/clock', { advanceSeconds: 31 });
      await other.app.sunap.clock.refresh();
      assert.equal((await loginAt(t.url, a.email, a.password)).code, 0);
      const gone = await t.app.sunap.database.db.selectFrom('sign_in_throttles').select('key').where('key', '=', `email:${a.email}`).executeTakeFirst();
      assert.equal(gone, undefined);
    });

    test('fewer than 5 simultaneous wrong passwords are all checked, and the right one then signs in', async () => {
      const a = await newAccount(t);
      const burst = await Promise.all(Array.from({ length: 4 }, (_, i) => loginAt(t.url, a.email, `guess-${i}`)));
      assert.equal(count(burst, -3), 4);
      assert.equal((await loginAt(t.url, a.email, a.password)).code, 0);
    });
  });

  describe('per address, behind one proxy (SUNAP_TRUST_PROXY=1)', () => {
    let t: TestApp;
    let other: { app: App; url: string };
    const env = { SUNAP_LOGIN_RATE_LIMIT: '8', SUNAP_TRUST_PROXY: '1' };
    before(async () => {
      t = await startApp(engine, env);
      other = await startSecondInstance(t, env);
    });
    after(async () => {
      await other?.app.close();
      await t?.close();
    });

    test('a burst of 20 from one address over many emails and two instances: exactly 8 checked', async () => {
      const from = { 'x-forwarded-for': '198.51.100.20' };
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => loginAt(i % 2 ? other.url : t.url, `nobody-${i}@example.com`, 'guess-123456', from)));
      assert.equal(count(burst, -3), 8, JSON.stringify(burst));
      assert.equal(count(burst, -29), 12);
    });

    test('a spoofed X-Forwarded-For does not change the limit key: only the hop the proxy added counts', async () => {
      const a = await newAccount(t);
      const codes: number[] = [];
      for (let i = 0; i < 9; i++) {
        // The client wrote its own "address" first; the proxy appended the real one.
        codes.push((await loginAt(t.url, `nobody-${i}@example.com`, 'guess-123456', { 'x-forwarded-for': `203.0.113.${i}, 198.51.100.30` })).code);
      }
      assert.deepEqual(codes, [-3, -3, -3, -3, -3, -3, -3, -3, -29]);
      assert.equal((await loginAt(t.url, a.email, a.password, { 'x-forwarded-for': '10.9.9.9, 198.51.100.30' })).code, -29);
      // Another real address has its own budget.
      assert.equal((await loginAt(t.url, a.email, a.password, { 'x-forwarded-for': '10.9.9.9, 198.51.100.31' })).code, 0);
    });
  });

  describe('without a proxy (the default)', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '5' });
    });
    after(async () => t?.close());

    test('/docs names the per-address limit the server applies', async () => {
      const login = (await t.get('/docs/json')).body.paths['/app/v1/auth/login'].post;
      assert.match(login.description, /\(429 \/ -29\)\. At most 5 tries a minute per client address \(429 \/ -29\)\.$/);
    });

    test('X-Forwarded-For is ignored: every spoofed value shares the socket address\'s budget', async () => {
      const codes: number[] = [];
      for (let i = 0; i < 6; i++) codes.push((await loginAt(t.url, `nobody-${i}@example.com`, 'guess-123456', { 'x-forwarded-for': `203.0.113.${i}` })).code);
      assert.deepEqual(codes, [-3, -3, -3, -3, -3, -29]);
    });
  });

  test('the purge job drops rows forgotten for a quarter of an hour and keeps fresh ones; it is scheduled hourly', async () => {
    const t = await startApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });
    try {
      const db = t.app.sunap.database.db;
      assert.equal((await loginAt(t.url, 'old@example.com', 'guess-123456')).code, -3);
      await t.post('/sandbox/clock', { advanceSeconds: 15 * 60 + 1 });
      assert.equal((await loginAt(t.url, 'fresh@example.com', 'guess-123456')).code, -3);
      const purged = await t.app.sunap.auth.purgeThrottles();
      assert.ok(purged >= 1);
      const keys = (await db.selectFrom('sign_in_throttles').select('key').execute()).map((r) => r.key);
      assert.ok(keys.includes('email:fresh@example.com'));
      assert.ok(!keys.includes('email:old@example.com'));
      const jobs = await db.selectFrom('jobs').select(['unique_key', 'status']).where('kind', '=', THROTTLE_PURGE_JOB.kind).execute();
      assert.ok(jobs.length >= 2, `the start-up purge and the next hour's: ${JSON.stringify(jobs)}`);
      assert.equal(new Set(jobs.map((j) => j.unique_key)).size, jobs.length);
    } finally {
      await t.close();
    }
  });
});

test('SUNAP_TRUST_PROXY: true is refused with what to set; hop counts and address lists are taken', () => {
  const base = { SUNAP_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: 'sqlite::memory:' };
  assert.throws(() => loadConfig({ ...base, SUNAP_TRUST_PROXY: 'true' }), (e: Error) => e instanceof ConfigError && /SUNAP_TRUST_PROXY: .*number of proxies.*e\.g\. 1/.test(e.message));
  assert.throws(() => loadConfig({ ...base, SUNAP_TRUST_PROXY: '10.0.0.0/33' }), /SUNAP_TRUST_PROXY/);
  assert.throws(() => loadConfig({ ...base, SUNAP_TRUST_PROXY: 'proxy.internal' }), /SUNAP_TRUST_PROXY/);
  assert.equal(loadConfig({ ...base }).trustProxy, false);
  assert.equal(loadConfig({ ...base, SUNAP_TRUST_PROXY: 'false' }).trustProxy, false);
  assert.equal(loadConfig({ ...base, SUNAP_TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(loadConfig({ ...base, SUNAP_TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,::1' }).trustProxy, ['10.0.0.5', '10.1.0.0/16', '::1']);
});

test('SUNAP_TRUST_PROXY: a list that covers every address (in one range or in pieces) is refused as "true" is; one address short of it is taken', () => {
  const base = { SUNAP_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: 'sqlite::memory:' };
  const refused = (list: string, family: string) => assert.throws(() => loadConfig({ ...base, SUNAP_TRUST_PROXY: list }),
    (e: Error) => e instanceof ConfigError && e.message.startsWith(`SUNAP_TRUST_PROXY: the list covers every ${family} address, so any client could set its own address`)
      && /list only the proxies in front of Sunap \(e\.g\. 10\.0\.0\.5,10\.1\.0\.0\/16\)/.test(e.message), list);
  refused('0.0.0.0/1,128.0.0.0/1', 'IPv4');
  refused('0.0.0.0/0', 'IPv4');
  refused('10.0.0.5, 0.0.0.0/2,64.0.0.0/2,128.0.0.0/2,192.0.0.0/3,224.0.0.0/3', 'IPv4');
  refused('::/0', 'IPv6');
  refused('::/1,8000::/1', 'IPv6');
  // Fastify matches an IPv4 client against IPv4-mapped ranges (::ffff:0:0/96 or narrower) too.
  refused('::ffff:0:0/96', 'IPv4');
  refused('::ffff:0.0.0.0/97,::ffff:128.0.0.0/97', 'IPv4');
  refused('0.0.0.0/1,::ffff:128.0.0.0/97', 'IPv4');
  // One address or one bit short of everything: a (very wide) list of proxies, taken as given.
  for (const list of ['0.0.0.0/1', '0.0.0.0/1,128.0.0.0/2,192.0.0.0/3', '0.0.0.0/1,128.0.0.1/32', '::/1', '::/1,::ffff:0:0/97', '::/1,8000::/2,c000::/3,e000::/4,f000::/5,f800::/6,fc00::/7,fe00::/8,ff00::/9,ff80::/10,ffc0::/11,ffe0::/12,fff0::/13,fff8::/14,fffc::/15,fffe::/16,ffff::/17,ffff:8000::/18', '::ffff:0:0/97', '10.0.0.0/8,::1']) {
    assert.deepEqual(loadConfig({ ...base, SUNAP_TRUST_PROXY: list }).trustProxy, list.split(','), list);
  }
});

test('sunap serve with SUNAP_TRUST_PROXY covering every address exits 2 and says so', async () => {
  const r = await runSunap(['serve'], { DATABASE_URL: 'sqlite::memory:', PORT: '0', SUNAP_TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1' });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /configuration error: SUNAP_TRUST_PROXY: the list covers every IPv4 address/);
});

test('sunap serve with SUNAP_TRUST_PROXY=true exits 2 and says what to set', async () => {
  const r = await runSunap(['serve'], { DATABASE_URL: 'sqlite::memory:', PORT: '0', SUNAP_TRUST_PROXY: 'true' });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /configuration error: SUNAP_TRUST_PROXY: .*set the number of proxies in front of Sunap \(e\.g\. 1\) or their addresses/);
});
