import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { checkAccess, CONSOLE_ROUTES, requireConsoleEntries } from '../../src/console/access.js';
import { consoleErrorHandler } from '../../src/console/http.js';
import { ACCESS, ACCESS_RANK, API_ROUTES, can, type AccessLevel } from '../../src/invoicing/index.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { addMember, ConsoleClient, newOwner, ownerClient, textOf } from './support.js';

/**
 * Every route of the running app (method and URL), read from Fastify's own route tree
 * (printRoutes), so a route is in this list because the app serves it, not because a test or
 * the table names it. HEAD is left out: Fastify serves it with the GET.
 */
function servedRoutes(app: { printRoutes(o: { commonPrefix: boolean }): string }): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const url = stack.join('');
    for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD')) out.push(`${method} ${url}`);
  }
  return out;
}

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
    for (const s of ['멤버 초대', '초대 수락', '역할 변경', '팀에서 빼기', owner.email, '127.0.0.1']) assert.ok(audit.includes(s), `the audit log shows "${s}"`);
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

// What each level is, in the order the console's roles are ranked; `anonymous` is nobody signed in.
const WHO = ['anonymous', 'viewer', 'manager', 'owner'] as const;
type Who = (typeof WHO)[number];

/** A route's URL with its parameters filled by ids that name nothing (the role check comes before any lookup). */
const fill = (url: string) => url.replace(/:(\w+)/g, (_, p: string) => (p === 'token' ? 'x'.repeat(43) : p === 'seq' ? 'TNOSUCHPAYMENT0001' : `nosuch-${p}`));
const refusedPage = (r: { status: number; text: string }) => r.status === 403 && textOf(r.text).includes('권한이 없습니다');

forEachEngine('console: one table of action → role, refusing by default', (engine) => {
  const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });

  test('the app serves exactly the routes of CONSOLE_ROUTES, and every entry names an action of the one table', () => {
    const served = servedRoutes(t.app).filter((k) => k.split(' ')[1]!.startsWith('/console'));
    assert.ok(served.length >= 80, `the console's routes were read from the app (${served.length})`);
    assert.deepEqual([...served].sort(), Object.keys(CONSOLE_ROUTES).sort());
    for (const [key, action] of Object.entries(CONSOLE_ROUTES)) assert.ok(Object.hasOwn(ACCESS, action), `${key}: ${action}`);
  });

  test('every console route, GET and POST with a valid CSRF token, as nobody, a viewer, a manager and an owner: allowed or refused exactly as the table says', async () => {
    const { c: ownerC } = await ownerClient(t, { points: 100 });
    const clients: Record<Who, ConsoleClient> = {
      anonymous: new ConsoleClient(t),
      viewer: (await addMember(t, ownerC, 'viewer')).c,
      manager: (await addMember(t, ownerC, 'manager')).c,
      owner: (await addMember(t, ownerC, 'owner')).c,
    };
    // Sign-out ends the session it is sent from: it goes last.
    const routes = servedRoutes(t.app).filter((k) => k.split(' ')[1]!.startsWith('/console')).sort((a, b) => Number(a === 'POST /console/logout') - Number(b === 'POST /console/logout'));
    const seen = new Map<AccessLevel, { allowed: Set<Who>; refused: Set<Who> }>();
    for (const key of routes) {
      const [method, url] = key.split(' ') as [string, string];
      const action = CONSOLE_ROUTES[key]!;
      const level = ACCESS[action].role;
      for (const who of WHO) {
        const c = clients[who];
        const path = fill(url);
        const r = method === 'GET' ? await c.get(path)
          : await c.post(path, {}, { csrf: await c.csrf(who === 'anonymous' ? '/console/login' : '/console/account') });
        const allowed = who === 'anonymous' ? level === 'public' : can({ role: who }, action);
        const label = `${who} ${key} (${action}: ${level}) → ${r.status}`;
        if (allowed) {
          assert.ok(!refusedPage(r) && r.status !== 403, `allowed: ${label} ${textOf(r.text).slice(0, 200)}`);
          assert.ok(r.status < 500, `no 500: ${label} ${textOf(r.text).slice(0, 300)}`);
          if (who === 'anonymous') assert.ok(!(r.status === 303 && r.location?.startsWith('/console/login?')), `public: ${label}`);
        } else if (who === 'anonymous') {
          assert.equal(r.status, 303, label);
          assert.match(r.location!, /^\/console\/login/, label);
        } else {
          assert.ok(refusedPage(r), `refused with the Korean page: ${label} ${textOf(r.text).slice(0, 200)}`);
        }
        const s = seen.get(level) ?? { allowed: new Set(), refused: new Set() };
        s[allowed ? 'allowed' : 'refused'].add(who);
        seen.set(level, s);
      }
    }
    // Both sides of every boundary were crossed: each level has routes, allowed to its role and
    // the ones above it, refused to the ones below.
    const rank = (w: Who) => (w === 'anonymous' ? ACCESS_RANK.public : ACCESS_RANK[w]);
    for (const level of ['public', 'viewer', 'manager', 'owner'] as const) {
      const s = seen.get(level);
      assert.ok(s, `the console has ${level} routes`);
      assert.deepEqual([...s.allowed].sort(), WHO.filter((w) => rank(w) >= ACCESS_RANK[level]).sort(), `${level}: allowed`);
      assert.deepEqual([...s.refused].sort(), WHO.filter((w) => rank(w) < ACCESS_RANK[level]).sort(), `${level}: refused`);
    }
  });

  test('the invoicing API reads the same table: every /app/v1 route, with a viewer\'s, a manager\'s and an owner\'s token, allowed or refused (403 / -4) exactly as it says', async () => {
    const served = servedRoutes(t.app).filter((k) => k.split(' ')[1]!.startsWith('/app/v1/'));
    assert.ok(served.length >= 40, `the API's routes were read from the app (${served.length})`);
    assert.deepEqual([...served].sort(), Object.keys(API_ROUTES).sort());
    const { c: ownerC } = await ownerClient(t, { points: 100 });
    const token = async (role: 'viewer' | 'manager' | 'owner') => {
      const m = await addMember(t, ownerC, role);
      return { 'x-access-token': (await t.post('/app/v1/auth/login', { email: m.email, password: m.password })).body.result_data.accessToken as string };
    };
    const tokens = { viewer: await token('viewer'), manager: await token('manager'), owner: await token('owner') };
    const levels = new Map<AccessLevel, Set<string>>();
    // Signing out revokes the token it is sent with: it goes last.
    for (const key of [...served].sort((a, b) => Number(a === 'POST /app/v1/auth/logout') - Number(b === 'POST /app/v1/auth/logout'))) {
      const [method, url] = key.split(' ') as [string, string];
      const action = API_ROUTES[key]!;
      const level = ACCESS[action].role;
      if (level === 'public') {
        levels.set(level, new Set(['anyone']));
        continue; // no token is asked for (login, refresh, the public lookup): their own suites cover them
      }
      for (const who of ['viewer', 'manager', 'owner'] as const) {
        const r = await t.request(method, fill(url), method === 'GET' || method === 'DELETE' ? undefined : {}, tokens[who]);
        const allowed = can({ role: who }, action);
        const label: string = `${who} ${key} (${action}: ${level}) → ${r.status} ${r.text.slice(0, 200)}`;
        if (allowed) assert.ok(r.status !== 403 && r.body?.result_code !== -4 && r.status < 500, `allowed: ${label}`);
        else {
          assert.equal(r.status, 403, label);
          assert.equal(r.body.result_code, -4, label);
          assert.equal(r.body.result_msg, 'account: a viewer may only read', label);
        }
        const s = levels.get(level) ?? new Set<string>();
        s.add(`${who}:${allowed}`);
        levels.set(level, s);
      }
    }
    // Both sides of the boundary the API has: a viewer refused and a manager allowed.
    assert.deepEqual([...levels.get('manager')!].sort(), ['manager:true', 'owner:true', 'viewer:false']);
    assert.deepEqual([...levels.get('viewer')!].sort(), ['manager:true', 'owner:true', 'viewer:true']);
    assert.equal(levels.get('owner'), undefined, 'no API call needs an owner');
  });

  test('the navigation shows a member only the sections its role may open', async () => {
    const { c } = await ownerClient(t);
    const viewer = await addMember(t, c, 'viewer');
    const manager = await addMember(t, c, 'manager');
    const nav = async (cl: ConsoleClient) => (await cl.get('/console')).text;
    for (const [cl, shown] of [[viewer.c, false], [manager.c, false], [c, true]] as const) {
      const page = await nav(cl);
      assert.equal(page.includes('href="/console/team"'), shown);
      assert.equal(page.includes('href="/console/settings"'), shown);
      assert.ok(page.includes('href="/console/payments"'));
    }
  });

  test('an invite without a role makes a viewer', async () => {
    const { c } = await ownerClient(t);
    const r = await c.post('/console/team/invite', { email: `norole-${Date.now()}@example.com` }, { from: '/console/team' });
    assert.equal(r.status, 200, textOf(r.text).slice(0, 300));
    const email = /norole-\d+@example\.com/.exec(r.text)![0];
    const row = await t.app.sunap.database.db.selectFrom('console_invites').select('role').where('email', '=', email).executeTakeFirstOrThrow();
    assert.equal(row.role, 'viewer');
    // The form offers viewer first-selected too.
    assert.match((await c.get('/console/team')).text, /<option value="viewer" selected>/);
  });
});

test('a console route with no entry: the app does not start, naming the route; a stale entry fails too; HEAD is its GET', async () => {
  const build = async (table: Record<string, keyof typeof ACCESS>, routes: (s: import('fastify').FastifyInstance) => void) => {
    const app = Fastify();
    await app.register(async (s) => {
      requireConsoleEntries(s, table);
      routes(s);
    }, { prefix: '/console' });
    return app;
  };
  const listed = { 'GET /console/payments': 'payments.view', 'POST /console/payments/:seq/cancel': 'payment.cancel' } as const;
  const ok = await build(listed, (s) => {
    s.get('/payments', async () => 'list');
    s.post('/payments/:seq/cancel', async () => 'cancel');
  });
  await ok.ready();
  assert.equal((await ok.inject({ method: 'HEAD', url: '/console/payments' })).statusCode, 200, 'HEAD is served under the GET\'s entry');
  await ok.close();

  const unlisted = await build(listed, (s) => {
    s.get('/payments', async () => 'list');
    s.post('/payments/:seq/cancel', async () => 'cancel');
    s.post('/payments/:seq/refund', async () => 'new');
  }).then((app) => app.ready().then(() => app), (err: Error) => err);
  assert.ok(unlisted instanceof Error, 'the app did not start');
  assert.match(unlisted.message, /console route POST \/console\/payments\/:seq\/refund has no entry in CONSOLE_ROUTES/);

  const stale = await build(listed, (s) => s.get('/payments', async () => 'list'));
  await assert.rejects(async () => { await stale.ready(); }, /names routes that do not exist: POST \/console\/payments\/:seq\/cancel/);
  await stale.close().catch(() => {});
});

test('an /app/v1 route with no entry in API_ROUTES: the app does not start', async () => {
  const { requireEntries } = await import('../../src/invoicing/index.js');
  const app = Fastify();
  requireEntries(app, { 'GET /app/v1/points/me': 'points.view' }, { what: 'invoicing API', tableName: 'API_ROUTES', covers: (url) => url.startsWith('/app/v1/') });
  app.get('/app/v1/points/me', async () => 'ok');
  app.get('/healthz', async () => 'not covered');
  assert.throws(() => app.get('/app/v1/points/history', async () => 'new'), /invoicing API route GET \/app\/v1\/points\/history has no entry in API_ROUTES/);
  await app.close();
});

test('the request check refuses a route without an entry (403, the Korean page), even to an owner', async () => {
  const app = Fastify();
  await app.register(async (s) => {
    s.setErrorHandler(consoleErrorHandler);
    s.addHook('onRequest', async (req) => checkAccess(req));
    s.get('/unlisted', async () => 'open');
    s.get('/listed', { config: { access: { action: 'payments.view', role: 'viewer' } } }, async () => 'open');
  }, { prefix: '/console' });
  // Nobody signed in and no entry: refused. An entry and nobody: refused (the session hook sends them to sign in first).
  const r = await app.inject('/console/unlisted');
  assert.equal(r.statusCode, 403);
  assert.ok(textOf(r.body).includes('권한이 없습니다'));
  assert.ok(!r.body.includes('open'));
  assert.equal((await app.inject('/console/listed')).statusCode, 403);
  await app.close();
});

test('the one table, pinned: each action at its least role; docs/console.md lists every action with that role', async () => {
  const expected: Record<AccessLevel, string[]> = {
    public: ['invite.accept', 'invoice.publicLookup', 'password.reset', 'session.refresh', 'session.signIn'],
    viewer: ['account.manage', 'classes.export', 'classes.view', 'deliveries.view', 'invoices.export', 'invoices.view', 'overview.view', 'payments.export', 'payments.view', 'points.view', 'schedules.view', 'session.signOut', 'templates.view'],
    manager: ['class.edit', 'class.remind', 'classes.export.phones', 'delivery.redeliver', 'endpoint.edit', 'invoice.cancel', 'invoice.delete', 'invoice.resend', 'invoice.send', 'invoices.export.phones', 'payment.cancel', 'payment.delete', 'payments.export.phones', 'points.recharge', 'schedule.edit', 'template.edit'],
    owner: ['settings.processor', 'settings.store', 'settings.view', 'team.invite', 'team.remove', 'team.reset', 'team.role', 'team.view'],
  };
  const actual: Record<string, string[]> = { public: [], viewer: [], manager: [], owner: [] };
  for (const [action, rule] of Object.entries(ACCESS)) actual[rule.role]!.push(action);
  for (const k of Object.keys(actual)) actual[k]!.sort();
  assert.deepEqual(actual, expected);
  // can(): both sides of each boundary.
  assert.equal(can(null, 'session.signIn'), true);
  assert.equal(can(null, 'payments.view'), false);
  assert.equal(can({ role: 'viewer' }, 'payments.view'), true);
  assert.equal(can({ role: 'viewer' }, 'payment.cancel'), false);
  assert.equal(can({ role: 'manager' }, 'payment.cancel'), true);
  assert.equal(can({ role: 'manager' }, 'team.invite'), false);
  assert.equal(can({ role: 'owner' }, 'team.invite'), true);
  const { readFile } = await import('node:fs/promises');
  const doc = await readFile(new URL('../../docs/console.md', import.meta.url), 'utf8');
  const words: Record<AccessLevel, string> = { public: '누구나', viewer: '조회 전용', manager: '관리자', owner: '소유자' };
  for (const [action, rule] of Object.entries(ACCESS)) {
    const row = doc.split('\n').find((l) => l.startsWith('|') && l.includes(`\`${action}\``));
    assert.ok(row, `docs/console.md has a row for ${action}`);
    assert.ok(row.includes(words[rule.role]) && row.includes(rule.ko) && row.includes(rule.en), `${action}: ${row}`);
  }
});
