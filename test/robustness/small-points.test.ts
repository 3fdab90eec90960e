/**
 * The smaller findings (docs/security.md, "Attacks tried"): no-store on JSON answers that carry
 * a token or a payment link, invoice numbers and invite tokens kept out of request logs,
 * private database and key files, weak keys, signing an API session out, /metrics behind a
 * bearer token.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { acquireServerLock } from '../../src/db/server-lock.js';
import { loadConfig } from '../../src/platform/config.js';
import { redactUrl } from '../../src/platform/logging.js';
import { forEachEngine, paymentBody, seqNo, startApp, TEST_SECRET_KEY, type TestApp } from '../helpers/app.js';
import { sunapBin } from '../helpers/cli.js';
import { childEnv, freePort } from '../helpers/process.js';
import { eventually } from '../helpers/wait.js';
import { addMember, ownerClient } from '../console/support.js';
import { billBody, newAccount, waitSent } from '../invoicing/support.js';

forEachEngine('the smaller findings', (engine) => {
  describe('answers and logs', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(engine);
    });
    after(async () => t?.close());

    test('every JSON answer carrying a token or a payment link says Cache-Control: no-store; pages keep theirs', async () => {
      const a = await newAccount(t, { points: 1000 });
      const login = await t.post('/app/v1/auth/login', { email: a.email, password: a.password, loginType: 'EMAIL' });
      const refresh = await t.post('/app/v1/auth/refresh', { refreshToken: login.body.result_data.refreshToken });
      const pay = await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seqNo('NOSTORE') }));
      assert.equal((await t.post('/app/v1/sales/bill', billBody(), a.h)).body.result_code, 0);
      const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
      const d = await waitSent(t, a, id);
      const detail = await t.get(`/app/v1/sales/bill/${id}`, a.h);
      const lookup = await t.get(`/app/v1/sales/public/bill/${d.bill.transSeqNo}`);
      const messages = await t.get('/sandbox/messages');
      const refused = await t.post('/app/v1/auth/login', { email: a.email, password: 'wrong-password', loginType: 'EMAIL' });
      for (const [name, r] of Object.entries({ login, refresh, pay, detail, lookup, messages, refused }) as [string, { status: number; headers: Headers }][]) {
        assert.equal(r.status === 200 || name === 'refused', true, `${name}: ${r.status}`);
        assert.equal(r.headers.get('cache-control'), 'no-store', name);
      }
      assert.ok(lookup.body.result_data.paymentUrl, 'the lookup carries a payment link');
    });

    test('request logs keep neither invoice numbers nor invite tokens', async () => {
      const a = await newAccount(t, { points: 1000 });
      assert.equal((await t.post('/app/v1/sales/bill', billBody(), a.h)).body.result_code, 0);
      const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
      const inv = (await waitSent(t, a, id)).bill.transSeqNo as string;
      assert.match(inv, /^INV/);
      const from = t.logs.length;
      assert.equal((await t.get(`/pay/${inv}`)).status, 200);
      assert.equal((await t.get(`/app/v1/sales/public/bill/${inv}`)).status, 200);
      const { c } = await ownerClient(t);
      const member = await addMember(t, c, 'viewer');
      assert.ok(member.email);
      const lines = t.logs.slice(from).join('');
      assert.ok(!lines.includes(inv.slice(3)), 'no invoice number in the logs');
      assert.match(lines, /\/pay\/INV\[redacted\]/, 'the page request is still logged, without its number');
      assert.ok(!/\/console\/invite\/(?!\[redacted\])[A-Za-z0-9_-]{8,}/.test(lines), 'no invite token in the logs');
    });

    test('POST /app/v1/auth/logout revokes the access token and its refresh token; other logins stay', async () => {
      const a = await newAccount(t);
      const second = (await t.post('/app/v1/auth/login', { email: a.email, password: a.password, loginType: 'EMAIL' })).body.result_data;
      const out = await t.post('/app/v1/auth/logout', undefined, a.h);
      assert.deepEqual(out.body, { result_code: 0, result_msg: out.body.result_msg, result_data: null });
      assert.equal((await t.get('/app/v1/points/me', a.h)).body.result_code, -1);
      const r = await t.post('/app/v1/auth/refresh', { refreshToken: a.refreshToken });
      assert.equal(r.status, 401);
      assert.equal(r.body.result_code, -3);
      assert.equal((await t.get('/app/v1/points/me', { 'x-access-token': second.accessToken })).body.result_code, 0, 'another login is not signed out');
      assert.equal((await t.post('/app/v1/auth/logout', undefined)).status, 401, 'without a token: 401 / -1');
    });
  });

  describe('/metrics with SUNAP_METRICS_TOKEN', () => {
    let t: TestApp;
    const token = 'scrape-token-3f9a1c77e2b4';
    before(async () => {
      t = await startApp(engine, { SUNAP_METRICS_TOKEN: token }, { runJobs: false });
    });
    after(async () => t?.close());

    test('answers 401 without the bearer token or with another, the metrics with it', async () => {
      const none = await t.get('/metrics');
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate')!, /^Bearer/);
      assert.equal((await t.get('/metrics', { authorization: `Bearer ${token}x` })).status, 401);
      assert.equal((await t.get('/metrics', { authorization: token })).status, 401);
      const ok = await t.get('/metrics', { authorization: `Bearer ${token}` });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /sunap_http_requests_total/);
    });
  });

  test('without SUNAP_METRICS_TOKEN /metrics stays open (a port kept off the network)', async () => {
    const t = await startApp(engine, {}, { runJobs: false });
    try {
      assert.equal((await t.get('/metrics')).status, 200);
    } finally {
      await t.close();
    }
  });
});

test('the SQLite database, its WAL and the sandbox key file are created 0600, in a 0700 directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sunap-modes-'));
  const old = process.umask(0o022);
  try {
    const data = join(dir, 'data');
    const config = loadConfig({ DATABASE_URL: `sqlite:${join(data, 'sunap.db')}`, PORT: '0' });
    const app = await buildApp(config, { runJobs: false });
    await app.ready();
    try {
      for (const f of ['sunap.db', 'sunap.db-wal', 'secret.key']) {
        assert.equal(statSync(join(data, f)).mode & 0o777, 0o600, f);
      }
      assert.equal(statSync(data).mode & 0o777, 0o700);
    } finally {
      await app.close();
    }
  } finally {
    process.umask(old);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sunap serve with SUNAP_SECRET_KEY set (no key file to write): the data folder is created 0700, the database 0600', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sunap-modes-'));
  try {
    const data = join(dir, 'data', 'nested');
    const port = await freePort();
    const child = spawn(process.execPath, [sunapBin, 'serve'], {
      env: childEnv({ DATABASE_URL: `sqlite:${join(data, 'sunap.db')}`, PORT: String(port), SUNAP_SECRET_KEY: TEST_SECRET_KEY }), stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status === 200, 'the server answering', 30_000);
      assert.equal(statSync(data).mode & 0o777, 0o700, 'the data folder');
      assert.equal(statSync(join(dir, 'data')).mode & 0o777, 0o700, 'a folder created on the way');
      assert.equal(statSync(join(data, 'sunap.db')).mode & 0o777, 0o600);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the server lock creates its folder 0700 whatever the umask leaves', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sunap-modes-'));
  const old = process.umask(0o022);
  try {
    const lock = acquireServerLock(join(dir, 'data', 'sunap.db'));
    lock.release();
    assert.equal(statSync(join(dir, 'data')).mode & 0o777, 0o700);
  } finally {
    process.umask(old);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('weak secret keys: refused in live mode, a warning in sandbox', () => {
  const zero = '00'.repeat(32);
  assert.throws(() => loadConfig({ SUNAP_MODE: 'live', SUNAP_SECRET_KEY: zero, SUNAP_PUBLIC_URL: 'https://pay.example.com' }), /SUNAP_SECRET_KEY: too weak for live mode/);
  const sandbox = loadConfig({ SUNAP_SECRET_KEY: zero, DATABASE_URL: 'sqlite::memory:' });
  assert.ok(sandbox.warnings.some((w) => /SUNAP_SECRET_KEY .*live mode would refuse it/.test(w)));
});

test('SUNAP_METRICS_TOKEN: a short one is refused; live mode without one is warned', () => {
  assert.throws(() => loadConfig({ SUNAP_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: 'sqlite::memory:', SUNAP_METRICS_TOKEN: 'short' }), /SUNAP_METRICS_TOKEN: must be 16 to 200 characters/);
  assert.equal(loadConfig({ SUNAP_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: 'sqlite::memory:', SUNAP_METRICS_TOKEN: 'a'.repeat(16) }).metricsToken, 'a'.repeat(16));
});

test('redactUrl: numbers, lookups and invite tokens blanked, the rest kept', () => {
  assert.equal(redactUrl('/pay/INVABCDEF234567?x=1'), '/pay/INV[redacted]');
  assert.equal(redactUrl('/app/v1/sales/public/bill/ANYTHING'), '/app/v1/sales/public/bill/[redacted]');
  assert.equal(redactUrl('/console/invite/tok_123'), '/console/invite/[redacted]');
  assert.equal(redactUrl('/api/searchPayment'), '/api/searchPayment');
});
