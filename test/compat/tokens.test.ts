import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { newAccount } from '../invoicing/support.js';
import { TokenClient } from './support.js';

/**
 * Token expiry and renewal as the public clients do it (decisions §9): the stricter client renews
 * only when a 2xx answer carries result_code -1 or -2, so an expired or replaced token must be
 * answered HTTP 200 with that code; a call without a token stays 401 -1.
 */
forEachEngine('compat: access tokens', (engine) => {
  const t = withApp(engine);

  const clientFor = async () => {
    const a = await newAccount(t, { points: 1000 });
    const c = new TokenClient(t, a.email, a.password);
    await c.login();
    return c;
  };

  test('an hour later the token answers 200 / -2; the client refreshes on it and the call goes through', async () => {
    const c = await clientFor();
    assert.equal((await c.call('GET', '/app/v1/points/me')).body.result_code, 0);
    const old = c.accessToken;
    // One second short of the hour: still valid, no renewal.
    await t.post('/sandbox/clock', { advanceSeconds: 3599 });
    assert.equal((await c.call('GET', '/app/v1/points/me')).body.result_code, 0);
    assert.deepEqual(c.trail, ['login', '200/0', '200/0']);
    await t.post('/sandbox/clock', { advanceSeconds: 2 });
    const r = await c.call('GET', '/app/v1/points/me');
    assert.equal(r.status, 200);
    assert.equal(r.body.result_code, 0);
    assert.deepEqual(c.trail.slice(3), ['200/-2', 'refresh', '200/0']);
    assert.notEqual(c.accessToken, old);
    // A write call renews the same way.
    await t.post('/sandbox/clock', { advanceSeconds: 3601 });
    const created = await c.call('POST', '/app/v1/sales/bill', { reason: '수강료', amount: 1000, members: [{ studentName: '홍길동', studentPhone: '01012345678' }] });
    assert.equal(created.status, 200);
    assert.equal(created.body.result_code, 0, created.body.result_msg);
    assert.deepEqual(c.trail.slice(-3), ['200/-2', 'refresh', '200/0']);
  });

  test('a token replaced by a refresh-token reuse (revoked) answers 200 / -1; the client logs in again', async () => {
    const c = await clientFor();
    const stale = c.refreshToken;
    // Someone else used the refresh token first, then it is presented again: the family is revoked.
    assert.equal((await t.post('/app/v1/auth/refresh', { refreshToken: stale })).body.result_code, 0);
    const reuse = await t.post('/app/v1/auth/refresh', { refreshToken: stale });
    assert.equal(reuse.status, 401, 'refresh failures stay 401 / -3');
    assert.equal(reuse.body.result_code, -3);
    const r = await c.call('GET', '/app/v1/points/me');
    assert.equal(r.body.result_code, 0);
    // -1 on a 2xx → refresh (refused: 401 -3) → login → the call again.
    assert.deepEqual(c.trail.slice(1), ['200/-1', 'refresh', 'login', '200/0']);
  });

  test('an unknown token answers 200 / -1; no token at all stays 401 / -1; a bad login stays 401 / -3', async () => {
    const unknown = await t.get('/app/v1/sales/bill', { 'x-access-token': 'sat_never-issued' });
    assert.equal(unknown.status, 200);
    assert.deepEqual(unknown.body, { result_code: -1, result_msg: unknown.body.result_msg, result_data: null });
    const none = await t.get('/app/v1/sales/bill');
    assert.equal(none.status, 401);
    assert.deepEqual(none.body, { result_code: -1, result_msg: none.body.result_msg, result_data: null });
    const a = await newAccount(t);
    const bad = await t.post('/app/v1/auth/login', { email: a.email, password: 'not it', loginType: 'EMAIL' });
    assert.equal(bad.status, 401);
    assert.equal(bad.body.result_code, -3);
  });
});
