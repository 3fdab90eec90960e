import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { addMember, ConsoleClient, newOwner, ownerClient, textOf } from './support.js';

forEachEngine('console: sign-in, sessions, team and tenants', (engine) => {
  const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });
  const db = () => t.app.sunap.database.db;

  test('pages need a session; the cookie is HttpOnly, SameSite=Lax, scoped to /console; a wrong password says so', async () => {
    const anon = new ConsoleClient(t);
    for (const path of ['/console', '/console/payments', '/console/settings']) {
      const r = await anon.get(path);
      assert.equal(r.status, 303, path);
      assert.equal(r.location, `/console/login?next=${encodeURIComponent(path)}`);
    }
    assert.equal((await t.get('/')).status, 303, 'the service\'s address leads to the console');
    const owner = await newOwner(t);
    const wrong = await anon.post('/console/login', { email: owner.email, password: 'nope nope' }, { from: '/console/login' });
    assert.equal(wrong.status, 401);
    assert.ok(textOf(wrong.text).includes('이메일 또는 비밀번호가 올바르지 않습니다'));
    const ok = await anon.post('/console/login', { email: owner.email.toUpperCase(), password: owner.password, next: '/console/payments' }, { from: '/console/login' });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, '/console/payments');
    const cookie = ok.headers.getSetCookie().find((c) => c.startsWith('sunap_console='))!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Path=\/console/);
    assert.doesNotMatch(cookie, /Secure/, 'no Secure over plain http');
    // Only paths inside the console are followed after signing in.
    const c2 = new ConsoleClient(t);
    const evil = await c2.post('/console/login', { email: owner.email, password: owner.password, next: 'https://evil.example/x' }, { from: '/console/login' });
    assert.equal(evil.location, '/console');
    // Every page carries the strict CSP and no script.
    const page = await anon.get('/console');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/);
    assert.doesNotMatch(page.headers.get('content-security-policy')!, /script-src|unsafe-inline/);
    assert.ok(!/<script/i.test(page.text));
    assert.equal(page.headers.get('cache-control'), 'no-store');
  });

  test('sign-in is throttled per email, as the invoicing API\'s login (one throttle)', async () => {
    const owner = await newOwner(t);
    const c = new ConsoleClient(t);
    for (let i = 0; i < 5; i++) assert.equal((await c.post('/console/login', { email: owner.email, password: 'wrong password' }, { from: '/console/login' })).status, 401);
    const locked = await c.post('/console/login', { email: owner.email, password: owner.password }, { from: '/console/login' });
    assert.equal(locked.status, 429);
    assert.ok(textOf(locked.text).includes('로그인 시도가 너무 많습니다'));
    // The API's login for the same email is locked as well: the same throttle.
    assert.equal((await t.post('/app/v1/auth/login', { email: owner.email, password: owner.password })).status, 429);
  });

  test('a revoked session is signed out: one device, then everywhere; sign out; password change ends every session', async () => {
    const owner = await newOwner(t);
    const a = new ConsoleClient(t);
    const b = new ConsoleClient(t);
    const c = new ConsoleClient(t);
    for (const x of [a, b, c]) await x.signIn(owner.email, owner.password);
    const sessions = await db().selectFrom('console_sessions').select(['id', 'revoked_at']).where('account_id', '=', owner.accountId).execute();
    assert.equal(sessions.length, 3);
    const page = await a.get('/console/account');
    assert.equal((page.text.match(/name="session" value=/g) ?? []).length, 2, 'the two other devices can be signed out');
    const target = [...page.text.matchAll(/name="session" value="([^"]+)"/g)].map((m) => m[1]!);
    // a signs b out: b's next request lands on the sign-in page, its cookie cleared.
    assert.equal((await a.post('/console/account/sessions/revoke', { session: target[0]! }, { from: '/console/account' })).status, 303);
    const results = await Promise.all([b.get('/console'), c.get('/console')]);
    assert.equal(results.filter((r) => r.status === 303).length, 1, 'exactly the revoked one is signed out');
    const out = results.find((r) => r.status === 303)!;
    assert.match(out.location!, /^\/console\/login/);
    assert.ok(out.headers.getSetCookie().some((x) => x.startsWith('sunap_console=;')), 'its cookie is cleared');
    // Sign out everywhere else: the remaining other device is out, this one stays.
    assert.equal((await a.post('/console/account/sessions/revoke-all', {}, { from: '/console/account' })).status, 303);
    assert.equal((await b.get('/console')).status, 303);
    assert.equal((await c.get('/console')).status, 303);
    assert.equal((await a.get('/console')).status, 200);
    // Another account's session cannot be revoked from here (404, unchanged).
    const other = await ownerClient(t);
    const otherSession = await db().selectFrom('console_sessions').select('id').where('account_id', '=', other.owner.accountId).executeTakeFirstOrThrow();
    assert.equal((await a.post('/console/account/sessions/revoke', { session: otherSession.id }, { from: '/console/account' })).status, 404);
    assert.equal((await other.c.get('/console')).status, 200);
    // Password change: refused with a wrong current one; otherwise every session ends, API tokens too.
    const login = await t.post('/app/v1/auth/login', { email: owner.email, password: owner.password });
    const h = { 'x-access-token': login.body.result_data.accessToken };
    assert.equal((await a.post('/console/account/password', { current: 'wrong', next: 'new password 123' }, { from: '/console/account' })).status, 400);
    const changed = await a.post('/console/account/password', { current: owner.password, next: 'new password 123' }, { from: '/console/account' });
    assert.equal(changed.status, 303);
    assert.equal((await a.get('/console')).status, 303);
    assert.notEqual((await t.get('/app/v1/points/me', h)).body.result_code, 0, 'the API token was revoked');
    await a.signIn(owner.email, 'new password 123');
    // Sign out.
    assert.equal((await a.post('/console/logout', {}, { from: '/console' })).status, 303);
    assert.equal((await a.get('/console')).status, 303);
  });

  test('team: invite (link shown once), roles, removal; a team keeps an owner; members work on the team\'s data', async () => {
    const { owner, c } = await ownerClient(t, { points: 500 });
    const manager = await addMember(t, c, 'manager');
    const viewer = await addMember(t, c, 'viewer');
    // The invite link works once.
    const inv = await c.post('/console/team/invite', { email: 'once@example.com', role: 'viewer' }, { from: '/console/team' });
    const token = /\/console\/invite\/([A-Za-z0-9_-]+)/.exec(inv.text)![1]!;
    assert.ok(!(await c.get('/console/team')).text.includes(token), 'the link is not shown again');
    const joiner = new ConsoleClient(t);
    assert.equal((await joiner.post(`/console/invite/${token}`, { password: 'joiner password' }, { from: `/console/invite/${token}` })).status, 303);
    assert.equal((await new ConsoleClient(t).get(`/console/invite/${token}`)).status, 404);
    // An email already in use cannot be invited.
    assert.equal((await c.post('/console/team/invite', { email: manager.email, role: 'viewer' }, { from: '/console/team' })).status, 400);

    // Members see the team's points and the owner's store; a manager has no team page.
    assert.ok(textOf((await viewer.c.get('/console')).text).includes('500P'));
    assert.equal((await manager.c.get('/console/team')).status, 403);
    assert.equal((await manager.c.get('/console/settings')).status, 403);
    assert.equal((await viewer.c.post('/console/templates', { name: 'x', reason: 'x' }, { from: '/console/templates' })).status, 403);
    // A member's API token works on the team's data; a viewer's may only read.
    const apiLogin = async (email: string, password: string) => ({ 'x-access-token': (await t.post('/app/v1/auth/login', { email, password })).body.result_data.accessToken });
    const mh = await apiLogin(manager.email, manager.password);
    assert.equal((await t.get('/app/v1/points/me', mh)).body.result_data.balance, 500);
    assert.equal((await t.post('/app/v1/sales/bill', { reason: 'x', amount: 1000, members: [{ studentName: '가', studentPhone: '01012345678' }] }, mh)).body.result_code, 0);
    assert.equal((await db().selectFrom('invoices').select('account_id').where('account_id', '=', owner.accountId).execute()).length, 1);
    const vh = await apiLogin(viewer.email, viewer.password);
    const refused = await t.post('/app/v1/sales/bill', { reason: 'x', amount: 1000, members: [{ studentName: '가', studentPhone: '01012345678' }] }, vh);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.result_code, -4);
    assert.equal((await t.get('/app/v1/sales/bill', vh)).body.result_data.totalCount, 1);

    // Roles: the last owner stays an owner; removal ends the member's sessions.
    const members = await db().selectFrom('accounts').select(['id', 'email']).where('tenant_id', '=', owner.accountId).execute();
    const idOf = (email: string) => members.find((m) => m.email === email)!.id;
    assert.equal((await c.post(`/console/team/${owner.accountId}/role`, { role: 'viewer' }, { from: '/console/team' })).status, 409);
    assert.equal((await c.post(`/console/team/${idOf(viewer.email)}/role`, { role: 'manager' }, { from: '/console/team' })).status, 303);
    assert.equal((await db().selectFrom('accounts').select('role').where('id', '=', idOf(viewer.email)).executeTakeFirstOrThrow()).role, 'manager');
    assert.equal((await c.post(`/console/team/${idOf(manager.email)}/remove`, {}, { from: '/console/team' })).status, 303);
    assert.equal((await manager.c.get('/console')).status, 303, 'a removed member is signed out');
    assert.equal((await t.get('/app/v1/points/me', mh)).body.result_code === 0, false, 'and its API token is gone');
    assert.equal((await c.post(`/console/team/${owner.accountId}/remove`, {}, { from: '/console/team' })).status, 409);
    // The audit log has it all, with who and from where.
    const audit = textOf((await c.get('/console/settings')).text);
    for (const s of ['멤버 초대', '초대 수락', '역할 변경', '멤버 내보내기', owner.email, '127.0.0.1']) assert.ok(audit.includes(s), `the audit log shows "${s}"`);
  });

  test('another team\'s ids answer 404: templates, members, invites', async () => {
    const a = await ownerClient(t);
    const b = await ownerClient(t);
    const tpl = await t.app.sunap.invoicing.templates.create(b.owner.accountId, { name: 'b', reason: 'b' });
    assert.equal((await a.c.get(`/console/templates/${tpl.id}`)).status, 404);
    assert.equal((await a.c.post(`/console/templates/${tpl.id}`, { name: 'hack', reason: 'hack' }, { from: '/console/templates' })).status, 404);
    assert.equal((await a.c.post(`/console/templates/${tpl.id}/delete`, {}, { from: '/console/templates' })).status, 404);
    assert.equal((await t.app.sunap.invoicing.templates.get(b.owner.accountId, tpl.id)).name, 'b');
    assert.equal((await a.c.post(`/console/team/${b.owner.accountId}/role`, { role: 'viewer' }, { from: '/console/team' })).status, 404);
    assert.equal((await a.c.post(`/console/team/${b.owner.accountId}/remove`, {}, { from: '/console/team' })).status, 404);
    const inv = await b.c.post('/console/team/invite', { email: 'b-invite@example.com', role: 'viewer' }, { from: '/console/team' });
    assert.equal(inv.status, 200);
    const invite = await db().selectFrom('console_invites').select('id').where('tenant_id', '=', b.owner.accountId).executeTakeFirstOrThrow();
    assert.equal((await a.c.post(`/console/team/invites/${invite.id}/revoke`, {}, { from: '/console/team' })).status, 404);
    assert.equal((await db().selectFrom('console_invites').select('revoked_at').where('id', '=', invite.id).executeTakeFirstOrThrow()).revoked_at, null);
    assert.equal((await b.c.get('/console')).status, 200);
  });

  test('settings: the owner edits the store; the business number is checked', async () => {
    const { c } = await ownerClient(t);
    const bad = await c.post('/console/settings/store', { name: '새 이름', ceoName: '박대표', bizRegNum: '123-45-67890', tel: '02-123-4567' }, { from: '/console/settings' });
    assert.equal(bad.status, 400);
    assert.ok(textOf(bad.text).includes('올바른 사업자등록번호가 아닙니다'));
    const good = await c.post('/console/settings/store', { name: '새 피아노 학원', ceoName: '박대표', bizRegNum: '220-81-62517', tel: '02-123-4567' }, { from: '/console/settings' });
    assert.equal(good.status, 303, textOf(good.text).slice(0, 400));
    const s = await db().selectFrom('stores').selectAll().where('code', '=', t.storeCode).executeTakeFirstOrThrow();
    assert.deepEqual([s.name, s.ceo_name, s.biz_reg_num, s.tel], ['새 피아노 학원', '박대표', '2208162517', '021234567']);
    // Put it back for the other tests of this suite.
    await db().updateTable('stores').set({ name: '행복 피아노 학원', ceo_name: '김대표', biz_reg_num: '1234567890', tel: '0212345678' }).where('code', '=', t.storeCode).execute();
  });
});
