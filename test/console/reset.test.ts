import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESET_TTL_MS } from '../../src/console/index.js';
import { forEachEngine, TEST_SECRET_KEY, withApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { addMember, ConsoleClient, ownerClient, textOf } from './support.js';

forEachEngine('console: getting back in', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;
  const linkOf = (page: string) => /\/console\/reset\/([A-Za-z0-9_-]+)/.exec(page)?.[1];
  const reset = (c: ConsoleClient, token: string, password: string, confirm = password) =>
    // The token of the sign-in page (any page of someone signed out): the reset page may be gone.
    c.post(`/console/reset/${token}`, { password, confirm }, { from: '/console/login' });

  test('a reset link lives one hour', () => {
    assert.equal(RESET_TTL_MS, 3_600_000);
  });

  test('the owner makes a one-time link; the member sets a new password (problems said together), is signed out everywhere, and the link is spent; all on the audit log', async () => {
    const { c } = await ownerClient(t);
    const teacher = await addMember(t, c, 'viewer');
    const members = await t.app.sunap.invoicing.team.members((await db().selectFrom('accounts').select('tenant_id').where('email', '=', teacher.email).executeTakeFirstOrThrow()).tenant_id!);
    const id = members.find((m) => m.email === teacher.email)!.id;
    const made = await c.post(`/console/team/${id}/reset-link`, {}, { from: '/console/team' });
    assert.equal(made.status, 200);
    const token = linkOf(made.text)!;
    assert.ok(token, 'the link is shown');
    assert.ok(textOf(made.text).includes('1시간 동안, 한 번'));
    assert.equal((await db().selectFrom('console_password_resets').select('token_hash').where('account_id', '=', id).executeTakeFirstOrThrow()).token_hash.length, 64, 'only the hash is kept');
    assert.equal((await db().selectFrom('console_password_resets').select('id').where('token_hash', '=', token).execute()).length, 0);

    const anon = new ConsoleClient(t);
    const page = await anon.get(`/console/reset/${token}`);
    assert.equal(page.status, 200);
    assert.ok(textOf(page.text).includes(teacher.email));
    // Too short and not the same twice: both said at once, beside their fields.
    const bad = await reset(anon, token, 'short', 'other');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /id="password-error">비밀번호는 8자 이상이어야 합니다/);
    assert.match(bad.text, /id="confirm-error">두 번 적은 비밀번호가 다릅니다/);
    // An over-long one is said too, never a bare error page.
    const long = await reset(anon, token, 'x'.repeat(5000));
    assert.equal(long.status, 400);
    assert.match(long.text, /id="password-error">비밀번호는 200자까지 적을 수 있습니다/);

    const done = await reset(anon, token, 'a brand new secret');
    assert.equal(done.status, 303);
    assert.equal(done.location, '/console/login?notice=reset');
    // The teacher's session from before is over; the old password no longer works, the new one does.
    assert.equal((await teacher.c.get('/console')).status, 303);
    const old = await anon.post('/console/login', { email: teacher.email, password: teacher.password, next: '/console' }, { from: '/console/login' });
    assert.equal(old.status, 401);
    await new ConsoleClient(t).signIn(teacher.email, 'a brand new secret');
    // Once only.
    assert.equal((await anon.get(`/console/reset/${token}`)).status, 404);
    assert.equal((await reset(anon, token, 'another new secret')).status, 404);
    const audit = textOf((await c.get('/console/settings')).text);
    assert.ok(audit.includes('비밀번호 재설정 링크 만들기') && audit.includes('재설정 링크로 비밀번호 변경'), 'both on the audit log');
  });

  test('the link ends at one hour (59:59 works, 60:00 does not); a newer link revokes the older; only an owner makes them, only for the own team', async () => {
    const { c } = await ownerClient(t);
    const manager = await addMember(t, c, 'manager');
    const tenant = (await db().selectFrom('accounts').select('tenant_id').where('email', '=', manager.email).executeTakeFirstOrThrow()).tenant_id!;
    const id = (await t.app.sunap.invoicing.team.members(tenant)).find((m) => m.email === manager.email)!.id;
    const first = linkOf((await c.post(`/console/team/${id}/reset-link`, {}, { from: '/console/team' })).text)!;
    const second = linkOf((await c.post(`/console/team/${id}/reset-link`, {}, { from: '/console/team' })).text)!;
    const anon = new ConsoleClient(t);
    assert.equal((await anon.get(`/console/reset/${first}`)).status, 404, 'the older link is revoked');
    await t.app.sunap.clock.advance(RESET_TTL_MS / 1000 - 1);
    assert.equal((await anon.get(`/console/reset/${second}`)).status, 200, 'one second before the hour');
    await t.app.sunap.clock.advance(1);
    assert.equal((await anon.get(`/console/reset/${second}`)).status, 404, 'at the hour');
    assert.equal((await reset(anon, second, 'a brand new secret')).status, 404);
    // A manager may not; another team's owner finds no such member.
    assert.equal((await manager.c.post(`/console/team/${id}/reset-link`, {}, { from: '/console' })).status, 403);
    const other = await ownerClient(t);
    assert.equal((await other.c.post(`/console/team/${id}/reset-link`, {}, { from: '/console/team' })).status, 404);
    assert.equal((await other.c.post(`/console/team/${id}/sign-out`, {}, { from: '/console/team' })).status, 404);
  });

  test('the owner signs a member out of every device', async () => {
    const { c } = await ownerClient(t);
    const m = await addMember(t, c, 'viewer');
    const tenant = (await db().selectFrom('accounts').select('tenant_id').where('email', '=', m.email).executeTakeFirstOrThrow()).tenant_id!;
    const id = (await t.app.sunap.invoicing.team.members(tenant)).find((x) => x.email === m.email)!.id;
    assert.equal((await m.c.get('/console')).status, 200);
    const r = await c.post(`/console/team/${id}/sign-out`, {}, { from: '/console/team' });
    assert.equal(r.status, 303);
    assert.equal((await m.c.get('/console')).status, 303, 'signed out');
    assert.equal((await c.get('/console')).status, 200, 'the owner stays signed in');
  });

  test('the sign-in page points to "forgot password" and the owner, not to a command; invites default to viewer', async () => {
    const anon = new ConsoleClient(t);
    const signIn = await anon.get('/console/login');
    assert.ok(!signIn.text.includes('sunap account'), 'no CLI on the sign-in page');
    assert.match(signIn.text, /href="\/console\/forgot">비밀번호를 잊었나요\?/);
    const forgot = textOf((await anon.get('/console/forgot')).text);
    assert.ok(forgot.includes('상점 소유자') && forgot.includes('1시간'));
    const { c } = await ownerClient(t);
    assert.match((await c.get('/console/team')).text, /<option value="viewer" selected>/);
  });

  test('the operator: `sunap account reset-password` prints a one-time link, or sets --password; both on the team\'s audit log', async () => {
    const { c, owner } = await ownerClient(t);
    const { json, fails } = cli(() => t.databaseUrl, TEST_SECRET_KEY, { SUNAP_PUBLIC_URL: t.url });
    const out = await json('account', 'reset-password', '--email', owner.email.toUpperCase());
    assert.equal(out.email, owner.email);
    assert.equal(out.validMinutes, 60);
    assert.ok(out.link.startsWith(`${t.url}/console/reset/`));
    const anon = new ConsoleClient(t);
    const token = linkOf(out.link)!;
    assert.equal((await reset(anon, token, 'operator gave this')).status, 303);
    assert.equal((await c.get('/console')).status, 303, 'the owner\'s sessions ended');
    await new ConsoleClient(t).signIn(owner.email, 'operator gave this');

    const set = await json('account', 'reset-password', '--email', owner.email, '--password', 'set by the operator');
    assert.deepEqual({ ...set, sessionsEnded: typeof set.sessionsEnded }, { email: owner.email, passwordSet: true, sessionsEnded: 'number' });
    const fresh = new ConsoleClient(t);
    await fresh.signIn(owner.email, 'set by the operator');
    assert.ok(textOf((await fresh.get('/console/settings')).text).includes('운영자의 비밀번호 재설정'));
    const short = await fails('account', 'reset-password', '--email', owner.email, '--password', 'short');
    assert.match(short.stderr, /--password/);
    const nobody = await fails('account', 'reset-password', '--email', 'nobody@example.com');
    assert.match(nobody.stderr, /no account nobody@example.com/);
  });
});
