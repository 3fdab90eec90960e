import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount, setInvoicingEnabled } from '../../src/invoicing/accounts.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { newAccount } from './support.js';

forEachEngine('invoicing auth', (engine) => {
  const t = withApp(engine);

  const login = (email: string, password: string) => t.post('/app/v1/auth/login', { email, password, loginType: 'EMAIL' });
  const me = (token?: string) => t.get('/app/v1/points/me', token === undefined ? {} : { 'x-access-token': token });

  test('login answers a token pair; the access token opens the API', async () => {
    const a = await newAccount(t);
    const r = await login(a.email, a.password);
    assert.equal(r.status, 200);
    assert.equal(r.body.result_code, 0);
    const d = r.body.result_data;
    assert.equal(d.accessTokenExpiresIn, 3600);
    assert.match(d.accessToken, /^\S{32,}$/);
    assert.notEqual(d.accessToken, d.refreshToken);
    const p = await me(d.accessToken);
    assert.equal(p.status, 200);
    assert.deepEqual(p.body.result_data, { balance: 0, costs: { ALIMTALK: 10, SMS: 30 } });
    // Stored as hashes only.
    const rows = await t.app.sunap.database.db.selectFrom('auth_tokens').select('token_hash').execute();
    assert.ok(rows.length >= 2);
    assert.ok(rows.every((x) => x.token_hash !== d.accessToken && x.token_hash !== d.refreshToken && /^[0-9a-f]{64}$/.test(x.token_hash)));
    // Email is case-insensitive.
    assert.equal((await login(a.email.toUpperCase(), a.password)).body.result_code, 0);
  });

  test('wrong password or unknown email: 401 / -3; bad body: 400 / -20', async () => {
    const a = await newAccount(t);
    const wrong = await login(a.email, 'not the password');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.result_code, -3);
    assert.equal(wrong.body.result_data, null);
    const unknown = await login('nobody@example.com', 'whatever123');
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.result_code, -3);
    const bad = await t.post('/app/v1/auth/login', { email: a.email });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.result_code, -20);
    assert.equal(bad.body.result_msg, 'password: is required');
  });

  test('missing token: 401 / -1; present but unknown: 200 / -1 (the public clients renew on a 2xx -1)', async () => {
    const none = await me();
    assert.equal(none.status, 401);
    assert.equal(none.body.result_code, -1);
    assert.equal(none.body.result_data, null);
    const empty = await me('');
    assert.equal(empty.status, 401);
    assert.equal(empty.body.result_code, -1);
    const unknown = await me('sat_not-a-real-token');
    assert.equal(unknown.status, 200);
    assert.deepEqual(unknown.body, { result_code: -1, result_msg: unknown.body.result_msg, result_data: null });
    assert.match(unknown.body.result_msg, /^x-access-token: /);
    const long = await me('x'.repeat(500));
    assert.equal(long.status, 200);
    assert.equal(long.body.result_code, -1);
    // Authentication comes before validation: no token, bad body → still -1.
    const create = await t.post('/app/v1/sales/bill', { nonsense: true });
    assert.equal(create.status, 401);
    assert.equal(create.body.result_code, -1);
    const createUnknown = await t.post('/app/v1/sales/bill', { nonsense: true }, { 'x-access-token': 'sat_not-a-real-token' });
    assert.equal(createUnknown.status, 200);
    assert.equal(createUnknown.body.result_code, -1);
  });

  test('refresh rotates: the new pair works, the old refresh token does not', async () => {
    const a = await newAccount(t);
    const r1 = await t.post('/app/v1/auth/refresh', { refreshToken: a.refreshToken });
    assert.equal(r1.body.result_code, 0, JSON.stringify(r1.body));
    const p1 = r1.body.result_data;
    assert.equal(p1.accessTokenExpiresIn, 3600);
    assert.notEqual(p1.refreshToken, a.refreshToken);
    assert.equal((await me(p1.accessToken)).body.result_code, 0);
    const r2 = await t.post('/app/v1/auth/refresh', { refreshToken: p1.refreshToken });
    assert.equal(r2.body.result_code, 0);
    assert.equal((await t.post('/app/v1/auth/refresh', { refreshToken: 'srt_unknown' })).body.result_code, -3);
  });

  test('reusing a rotated refresh token revokes the whole family, access tokens too', async () => {
    const a = await newAccount(t);
    const other = await newAccount(t); // another login family of another account stays valid
    const r1 = await t.post('/app/v1/auth/refresh', { refreshToken: a.refreshToken });
    const p1 = r1.body.result_data;
    const reuse = await t.post('/app/v1/auth/refresh', { refreshToken: a.refreshToken });
    assert.equal(reuse.status, 401);
    assert.equal(reuse.body.result_code, -3);
    // Everything issued from that login is dead now: revoked tokens answer 200 / -1.
    const revoked = await me(p1.accessToken);
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.result_code, -1);
    assert.equal((await me(a.token)).body.result_code, -1);
    assert.equal((await t.post('/app/v1/auth/refresh', { refreshToken: p1.refreshToken })).body.result_code, -3);
    assert.equal((await me(other.token)).body.result_code, 0);
    // A fresh login still works.
    assert.equal((await login(a.email, a.password)).body.result_code, 0);
  });

  test('SDK-style nulls on the public routes read as absent: loginType null signs in; a loginType of another value is refused naming it', async () => {
    const a = await newAccount(t);
    const ok = await t.post('/app/v1/auth/login', { email: a.email, password: a.password, loginType: null });
    assert.equal(ok.body.result_code, 0, JSON.stringify(ok.body));
    const other = await t.post('/app/v1/auth/login', { email: a.email, password: a.password, loginType: 'PHONE' });
    assert.deepEqual([other.status, other.body.result_code], [400, -20]);
    assert.match(other.body.result_msg, /^loginType: /);
    const fresh = await t.post('/app/v1/auth/refresh', { refreshToken: ok.body.result_data.refreshToken });
    assert.equal(fresh.body.result_code, 0);
  });

  test('a viewer reads but changes nothing: 403 / -4 naming the account', async () => {
    const a = await newAccount(t, { points: 1000 });
    await t.app.sunap.database.db.updateTable('accounts').set({ role: 'viewer' }).where('id', '=', a.accountId).execute();
    const bill = { reason: '수강료', amount: 1000, members: [{ studentName: '홍길동', studentPhone: '01012345678' }] };
    const refused = await t.post('/app/v1/sales/bill', bill, a.h);
    assert.deepEqual([refused.status, refused.body], [403, { result_code: -4, result_msg: 'account: a viewer may only read', result_data: null }]);
    assert.equal((await t.get('/app/v1/sales/bill', a.h)).body.result_data.totalCount, 0, 'nothing was created');
    assert.equal((await me(a.token)).body.result_data.balance, 1000, 'no points reserved');
    await t.app.sunap.database.db.updateTable('accounts').set({ role: 'manager' }).where('id', '=', a.accountId).execute();
    assert.equal((await t.post('/app/v1/sales/bill', bill, a.h)).body.result_code, 0, 'a manager creates');
  });

  test('an account that may not use invoicing: 403 / -4', async () => {
    const db = t.app.sunap.database.db;
    const email = `disabled-${engine}@example.com`;
    await createAccount(db, t.app.sunap.clock.nowMs(), { email, password: 'password-123', storeCode: t.storeCode, invoicingEnabled: false });
    const r = await login(email, 'password-123');
    assert.equal(r.status, 403);
    assert.equal(r.body.result_code, -4);
    // Disabled after a token was issued: the token stops working.
    const a = await newAccount(t);
    await setInvoicingEnabled(db, { email: a.email, enabled: false });
    const p = await me(a.token);
    assert.equal(p.status, 403);
    assert.equal(p.body.result_code, -4);
    assert.equal((await t.post('/app/v1/auth/refresh', { refreshToken: a.refreshToken })).body.result_code, -4);
  });

  test('failed logins are slowed down: after 5 failures, 429 / -29 until the lockout passes', async () => {
    const a = await newAccount(t);
    for (let i = 0; i < 5; i++) assert.equal((await login(a.email, `wrong-${i}`)).body.result_code, -3);
    const locked = await login(a.email, a.password);
    assert.equal(locked.status, 429);
    assert.equal(locked.body.result_code, -29);
    assert.match(locked.body.result_msg, /try again in \d+ seconds/);
    // Other emails are not affected.
    const b = await newAccount(t);
    assert.equal((await login(b.email, b.password)).body.result_code, 0);
    await t.post('/sandbox/clock', { advanceSeconds: 31 });
    const ok = await login(a.email, a.password);
    assert.equal(ok.body.result_code, 0, JSON.stringify(ok.body));
    // Success forgets the failures.
    assert.equal((await login(a.email, 'wrong-again')).body.result_code, -3);
    assert.equal((await login(a.email, a.password)).body.result_code, 0);
  });

  test('an access token expires after one hour: 200 / -2; refresh gives a working one', async () => {
    const a = await newAccount(t);
    await t.post('/sandbox/clock', { advanceSeconds: 3599 });
    assert.equal((await me(a.token)).body.result_code, 0, 'still valid one second before the hour');
    await t.post('/sandbox/clock', { advanceSeconds: 2 });
    const r = await me(a.token);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { result_code: -2, result_msg: r.body.result_msg, result_data: null });
    const fresh = await t.post('/app/v1/auth/refresh', { refreshToken: a.refreshToken });
    assert.equal(fresh.body.result_code, 0);
    assert.equal((await me(fresh.body.result_data.accessToken)).body.result_code, 0);
  });
});
