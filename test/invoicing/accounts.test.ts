import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { OperatorError } from '../../src/gateway/merchants.js';
import { ACCESS_TTL_SECONDS, AuthService, createAccount, emailProblem, grantPoints, passwordProblem, REFRESH_TTL_SECONDS, setInvoicingEnabled } from '../../src/invoicing/accounts.js';
import { AppError } from '../../src/platform/errors.js';
import { sha256Hex } from '../../src/platform/crypto.js';
import * as repo from '../../src/invoicing/repository.js';
import { forEachEngine } from '../helpers/app.js';
import { afterEachRead, insertStores, withDatabase } from '../helpers/db.js';

/**
 * The operator's account actions (`sunap account create|enable|disable`, `sunap points grant`)
 * on the database itself, each refusal on both sides of its limit. The CLI suites run the same
 * code in a child process; here each rule is one call.
 */
const NOW = Date.UTC(2026, 10, 23, 2, 0, 0);
const refused = (message: string) => (e: unknown) => e instanceof OperatorError && e.message === message;

test('an email: a local part, an @ and a dotted domain without spaces, at most 254 characters', () => {
  const at254 = `${'a'.repeat(254 - '@example.com'.length)}@example.com`;
  assert.equal(at254.length, 254);
  for (const ok of ['kim@example.com', 'a@b.co', at254, '김@예시.한국']) assert.equal(emailProblem(ok), null, ok);
  for (const bad of [`a${at254}`, 'kim@example', 'kim.example.com', '@example.com', 'kim@.com.', 'kim @example.com', 'kim@exa mple.com', 'kim@@example.com', '', 'x kim@example.com y', 'kim@example.com x', 'kim@example.com\n']) {
    assert.equal(emailProblem(bad), 'email: must be an email address', JSON.stringify(bad));
  }
  assert.equal(emailProblem('nope', 'invite.email'), 'invite.email: must be an email address');
});

test('a password: 8 to 200 characters', () => {
  assert.equal(passwordProblem('1234567'), 'password: must be at least 8 characters');
  assert.equal(passwordProblem('12345678'), null);
  assert.equal(passwordProblem('x'.repeat(200)), null);
  assert.equal(passwordProblem('x'.repeat(201)), 'password: must be at most 200 characters');
  assert.equal(passwordProblem('short', 'next'), 'next: must be at least 8 characters');
});

forEachEngine('operator account actions', (engine) => {
  const h = withDatabase(engine);

  before(async () => {
    await insertStores(h.db, 'PACCT', ['SACCT'], NOW);
  });
  const accounts = async () => Number((await h.db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  test('an account: its email trimmed and lowercased, the first owner of its own team, with an empty wallet; invoicing on unless turned off', async () => {
    const a = await createAccount(h.db, NOW, { email: '  Kim@Example.COM ', password: 'change-me-123', storeCode: 'SACCT' });
    assert.deepEqual({ email: a.email, storeCode: a.storeCode }, { email: 'kim@example.com', storeCode: 'SACCT' });
    const row = await repo.findAccountById(h.db, a.accountId);
    assert.deepEqual(
      { email: row?.email, store: row?.store_code, enabled: row?.invoicing_enabled, role: row?.role, tenant: row?.tenant_id, created: Number(row?.created_at) },
      { email: 'kim@example.com', store: 'SACCT', enabled: 1, role: 'owner', tenant: a.accountId, created: NOW },
    );
    assert.notEqual(row?.password_hash, 'change-me-123');
    assert.equal(await repo.balance(h.db, a.accountId), 0);
    assert.ok(await h.db.selectFrom('wallets').select('account_id').where('account_id', '=', a.accountId).executeTakeFirst(), 'the wallet row exists');

    const off = await createAccount(h.db, NOW, { email: 'off@example.com', password: 'change-me-123', storeCode: 'SACCT', invoicingEnabled: false });
    assert.equal((await repo.findAccountById(h.db, off.accountId))?.invoicing_enabled, 0);
    const on = await createAccount(h.db, NOW, { email: 'on@example.com', password: 'change-me-123', storeCode: 'SACCT', invoicingEnabled: true });
    assert.equal((await repo.findAccountById(h.db, on.accountId))?.invoicing_enabled, 1);
  });

  test('refused, with nothing written: a bad email, a password of 7 or 201 characters, an unknown store, an email taken in any case', async () => {
    await createAccount(h.db, NOW, { email: 'taken@example.com', password: 'change-me-123', storeCode: 'SACCT' });
    const n = await accounts();
    const base = { email: 'new@example.com', password: 'change-me-123', storeCode: 'SACCT' };
    await assert.rejects(createAccount(h.db, NOW, { ...base, email: 'not-an-email' }), refused('--email: must be an email address'));
    await assert.rejects(createAccount(h.db, NOW, { ...base, password: '1234567' }), refused('--password: must be at least 8 characters'));
    await assert.rejects(createAccount(h.db, NOW, { ...base, password: 'x'.repeat(201) }), refused('--password: must be at most 200 characters'));
    await assert.rejects(createAccount(h.db, NOW, { ...base, storeCode: 'SNONE' }), refused('--store-code: no store SNONE'));
    await assert.rejects(createAccount(h.db, NOW, { ...base, email: 'TAKEN@example.com' }), refused('--email: an account with taken@example.com already exists'));
    assert.equal(await accounts(), n);
    const ok = await createAccount(h.db, NOW, { ...base, password: '12345678' });
    assert.equal(ok.email, 'new@example.com');
    await createAccount(h.db, NOW, { ...base, email: 'long@example.com', password: 'x'.repeat(200) });
    assert.equal(await accounts(), n + 2);
  });

  test('invoicing switched by email (any case); an unknown email is refused by name', async () => {
    const a = await createAccount(h.db, NOW, { email: 'switch@example.com', password: 'change-me-123', storeCode: 'SACCT' });
    assert.deepEqual(await setInvoicingEnabled(h.db, { email: ' SWITCH@example.com', enabled: false }), { email: 'switch@example.com', invoicingEnabled: false });
    assert.equal((await repo.findAccountById(h.db, a.accountId))?.invoicing_enabled, 0);
    assert.deepEqual(await setInvoicingEnabled(h.db, { email: 'switch@example.com', enabled: true }), { email: 'switch@example.com', invoicingEnabled: true });
    assert.equal((await repo.findAccountById(h.db, a.accountId))?.invoicing_enabled, 1);
    await assert.rejects(setInvoicingEnabled(h.db, { email: 'Nobody@example.com', enabled: true }), refused('--email: no account nobody@example.com'));
  });

  test('points granted: a whole number from 1 to 1,000,000,000, to the team\'s wallet, with its ledger row and memo', async () => {
    const owner = await createAccount(h.db, NOW, { email: 'grant@example.com', password: 'change-me-123', storeCode: 'SACCT' });
    for (const amount of [0, -1, 1.5, 1_000_000_001, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      await assert.rejects(grantPoints(h.db, NOW, { email: 'grant@example.com', amount }), refused('--amount: must be a whole number from 1 to 1000000000'), String(amount));
    }
    await assert.rejects(grantPoints(h.db, NOW, { email: 'ghost@example.com', amount: 5 }), refused('--email: no account ghost@example.com'));
    assert.equal(await repo.balance(h.db, owner.accountId), 0);

    assert.deepEqual(await grantPoints(h.db, NOW, { email: 'GRANT@example.com', amount: 1, memo: '첫 충전' }), { balance: 1 });
    assert.deepEqual(await grantPoints(h.db, NOW, { email: 'grant@example.com', amount: 1_000_000_000 }), { balance: 1_000_000_001 });
    const ledger = await h.db.selectFrom('ledger').select(['delta', 'kind', 'memo', 'created_at']).where('account_id', '=', owner.accountId).orderBy('id').execute();
    assert.deepEqual(ledger.map((r) => [Number(r.delta), r.kind, r.memo, Number(r.created_at)]), [[1, 'GRANT', '첫 충전', NOW], [1_000_000_000, 'GRANT', null, NOW]]);

    // A member of the owner's team: its email grants to the team's wallet.
    const memberId = 'member-of-grant';
    await h.db.insertInto('accounts').values({ id: memberId, email: 'member@example.com', password_hash: 'x', store_code: 'SACCT', invoicing_enabled: 1, created_at: NOW, role: 'manager', tenant_id: owner.accountId }).execute();
    assert.deepEqual(await grantPoints(h.db, NOW, { email: 'member@example.com', amount: 9 }), { balance: 1_000_000_010 });
    assert.equal(await repo.balance(h.db, owner.accountId), 1_000_000_010);
    assert.equal(await repo.balance(h.db, memberId), 0);
  });

  // ---- sign-in and tokens (AuthService) on a clock the test moves ----------------------------
  let clockMs = NOW;
  const clock = { nowMs: () => clockMs, now: () => new Date(clockMs) };
  const app = (kind: AppError['kind'], message: string | RegExp) => (e: unknown) =>
    e instanceof AppError && e.kind === kind && (typeof message === 'string' ? e.message === message : message.test(e.message));
  const WRONG = 'email, password: wrong email or password';
  const OFF = 'account: may not use invoicing';
  let n = 0;
  async function account(o: { enabled?: boolean } = {}) {
    const email = `auth-${n++}@example.com`;
    const a = await createAccount(h.db, NOW, { email, password: 'right-password', storeCode: 'SACCT', invoicingEnabled: o.enabled ?? true });
    return { ...a, email };
  }
  const tokenRow = (token: string) => h.db.selectFrom('auth_tokens').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirstOrThrow();

  test('login: a wrong password or an unknown email is -3 in the same words; invoicing off is -4; the pair expires in an hour and thirty days', async () => {
    clockMs = NOW;
    const auth = new AuthService(h.db, clock);
    const a = await account();
    await assert.rejects(auth.login(a.email, 'wrong-password'), app('BAD_CREDENTIALS', WRONG));
    await assert.rejects(auth.login('nobody@example.com', 'right-password'), app('BAD_CREDENTIALS', WRONG));
    const off = await account({ enabled: false });
    await assert.rejects(auth.login(off.email, 'right-password'), app('FORBIDDEN', OFF));
    const pair = await auth.login(` ${a.email.toUpperCase()}`, 'right-password');
    assert.match(pair.accessToken, /^sat_/);
    assert.match(pair.refreshToken, /^srt_/);
    assert.equal(pair.accessTokenExpiresIn, ACCESS_TTL_SECONDS);
    const [access, refresh] = [await tokenRow(pair.accessToken), await tokenRow(pair.refreshToken)];
    assert.deepEqual([access.kind, Number(access.expires_at), refresh.kind, Number(refresh.expires_at)], ['ACCESS', NOW + 3_600_000, 'REFRESH', NOW + REFRESH_TTL_SECONDS * 1000]);
    assert.equal(access.family_id, refresh.family_id);
  });

  test('the per-address limit counts every attempt from one address in a minute, and says when the minute ends; without an address or a limit, none', async () => {
    clockMs = NOW + 1_000_000;
    const auth = new AuthService(h.db, clock, { perAddressPerMinute: 2 });
    const a = await account();
    const from = `198.51.100.${n++}`;
    await assert.rejects(auth.checkPassword(a.email, 'wrong-password', from), app('BAD_CREDENTIALS', WRONG));
    await auth.checkPassword(a.email, 'right-password', from);
    clockMs += 30_500;
    await assert.rejects(auth.checkPassword(a.email, 'right-password', from), app('TOO_MANY', 'too many sign-in attempts from this address; try again in 30 seconds'));
    clockMs += 29_499;
    await assert.rejects(auth.checkPassword(a.email, 'right-password', from), app('TOO_MANY', 'too many sign-in attempts from this address; try again in 1 seconds'));
    clockMs += 1;
    await auth.checkPassword(a.email, 'right-password', from);
    for (let i = 0; i < 3; i++) await auth.checkPassword(a.email, 'right-password');
    const unlimited = new AuthService(h.db, clock, { perAddressPerMinute: 0 });
    for (let i = 0; i < 3; i++) await unlimited.checkPassword(a.email, 'right-password', from);
  });

  test('the per-email lockout: five free failures, then 30 s; the right password after it forgets the failures', async () => {
    clockMs = NOW + 2_000_000;
    const auth = new AuthService(h.db, clock);
    const a = await account();
    for (let i = 0; i < 5; i++) await assert.rejects(auth.checkPassword(a.email, 'wrong-password'), app('BAD_CREDENTIALS', WRONG));
    clockMs += 10_000;
    await assert.rejects(auth.checkPassword(a.email, 'right-password'), app('TOO_MANY', 'too many failed logins; try again in 20 seconds'));
    clockMs += 20_000;
    await auth.checkPassword(a.email, 'right-password');
    const key = `email:${a.email}`;
    assert.equal(await h.db.selectFrom('sign_in_throttles').select('key').where('key', '=', key).executeTakeFirst(), undefined);
  });

  test('the throttle purge is scheduled once an hour under its hour\'s key', async () => {
    const auth = new AuthService(h.db, clock);
    const at = Date.UTC(2026, 10, 25, 7, 30);
    await auth.schedulePurge(at);
    await auth.schedulePurge(at + 60_000);
    const jobs = await h.db.selectFrom('jobs').select(['payload', 'run_at', 'unique_key']).where('kind', '=', 'invoicing.throttle-purge').where('run_at', '>=', at).execute();
    const hour = Math.floor(at / 3_600_000);
    assert.deepEqual(jobs.map((j) => [JSON.parse(j.payload), Number(j.run_at), j.unique_key]), [[{ hour }, at, `invoicing.throttle-purge:${hour}`]]);
  });

  test('authenticate: missing is -1/401, unknown or too long -1, expired at its last millisecond -2, invoicing off -4; a header given twice uses the first', async () => {
    clockMs = NOW;
    const auth = new AuthService(h.db, clock);
    const a = await account();
    const pair = await auth.login(a.email, 'right-password');
    const MISSING = 'x-access-token: missing; log in and send the access token';
    const UNKNOWN = 'x-access-token: unknown, revoked or replaced access token; refresh it or log in again';
    for (const header of [undefined, '', 42, []]) await assert.rejects(auth.authenticate(header), app('TOKEN_MISSING', MISSING), JSON.stringify(header));
    await assert.rejects(auth.authenticate('sat_unknown'), app('TOKEN_UNKNOWN', UNKNOWN));
    await assert.rejects(auth.authenticate('x'.repeat(201)), app('TOKEN_UNKNOWN', UNKNOWN));
    const got = await auth.authenticate([pair.accessToken, 'sat_other']);
    assert.deepEqual([got.member.id, got.tenant.id], [a.accountId, a.accountId]);
    clockMs = NOW + 3_600_000 - 1;
    await auth.authenticate(pair.accessToken);
    clockMs = NOW + 3_600_000;
    await assert.rejects(auth.authenticate(pair.accessToken), app('TOKEN_EXPIRED', 'x-access-token: expired; refresh it'));
    clockMs = NOW;
    await setInvoicingEnabled(h.db, { email: a.email, enabled: false });
    await assert.rejects(auth.authenticate(pair.accessToken), app('FORBIDDEN', OFF));
  });

  test('a member works on its team\'s account; a team whose account has invoicing off is -4 for every member', async () => {
    clockMs = NOW;
    const auth = new AuthService(h.db, clock);
    const owner = await account();
    const memberId = `member-${n++}`;
    await h.db.insertInto('accounts').values({ id: memberId, email: `${memberId}@example.com`, password_hash: 'x', store_code: 'SACCT', invoicing_enabled: 1, created_at: NOW, role: 'viewer', tenant_id: owner.accountId }).execute();
    const member = (await repo.findAccountById(h.db, memberId))!;
    assert.equal((await auth.tenant(member)).id, owner.accountId);
    const self = (await repo.findAccountById(h.db, owner.accountId))!;
    assert.equal(await auth.tenant(self), self, 'the first owner is its own team');
    await setInvoicingEnabled(h.db, { email: owner.email, enabled: false });
    await assert.rejects(auth.tenant(member), app('FORBIDDEN', OFF));
    await assert.rejects(auth.tenant({ ...member, tenant_id: 'no-such-account' }), app('FORBIDDEN', OFF));
  });

  test('refresh: once; a reuse revokes the whole login; expired at its last millisecond; invoicing off is -4', async () => {
    clockMs = NOW;
    const auth = new AuthService(h.db, clock);
    const REFUSED = 'refreshToken: unknown, expired or already used';
    const a = await account();
    await assert.rejects(auth.refresh('srt_unknown'), app('BAD_CREDENTIALS', REFUSED));
    const first = await auth.login(a.email, 'right-password');
    const second = await auth.refresh(first.refreshToken);
    assert.notEqual(second.accessToken, first.accessToken);
    assert.equal((await tokenRow(second.refreshToken)).family_id, (await tokenRow(first.refreshToken)).family_id);
    await auth.authenticate(second.accessToken);
    await assert.rejects(auth.refresh(first.refreshToken), app('BAD_CREDENTIALS', REFUSED), 'reused');
    await assert.rejects(auth.authenticate(second.accessToken), app('TOKEN_UNKNOWN', /revoked/), 'the reuse revoked the family');
    await assert.rejects(auth.refresh(second.refreshToken), app('BAD_CREDENTIALS', REFUSED), 'revoked');

    const third = await auth.login(a.email, 'right-password');
    clockMs = NOW + REFRESH_TTL_SECONDS * 1000;
    await assert.rejects(auth.refresh(third.refreshToken), app('BAD_CREDENTIALS', REFUSED), 'expired');
    clockMs -= 1;
    await setInvoicingEnabled(h.db, { email: a.email, enabled: false });
    await assert.rejects(auth.refresh(third.refreshToken), app('FORBIDDEN', OFF));
    await setInvoicingEnabled(h.db, { email: a.email, enabled: true });
    await auth.refresh(third.refreshToken);
  });

  test('refresh: a used refresh token presented after its own expiry still revokes the login it leaked from', async () => {
    clockMs = NOW;
    const auth = new AuthService(h.db, clock);
    const a = await account();
    const first = await auth.login(a.email, 'right-password');
    clockMs = NOW + 1_000;
    const second = await auth.refresh(first.refreshToken);
    clockMs = NOW + REFRESH_TTL_SECONDS * 1000;
    await assert.rejects(auth.refresh(first.refreshToken), app('BAD_CREDENTIALS', 'refreshToken: unknown, expired or already used'));
    await assert.rejects(auth.refresh(second.refreshToken), app('BAD_CREDENTIALS', 'refreshToken: unknown, expired or already used'), 'the login is revoked');
  });

  test('refresh: another use of the same token committed between the read and the rotation is a reuse, and revokes the login', async () => {
    clockMs = NOW;
    const plain = new AuthService(h.db, clock);
    const a = await account();
    const pair = await plain.login(a.email, 'right-password');
    const hash = sha256Hex(pair.refreshToken);
    let done = false;
    const racing = afterEachRead(h.db, async (rows) => {
      const r = rows[0] as { token_hash?: string } | undefined;
      if (done || r?.token_hash !== hash) return;
      done = true;
      await h.db.updateTable('auth_tokens').set({ rotated_at: NOW }).where('token_hash', '=', hash).execute();
    });
    await assert.rejects(new AuthService(racing, clock).refresh(pair.refreshToken), app('BAD_CREDENTIALS', 'refreshToken: unknown, expired or already used'));
    assert.equal(done, true);
    await assert.rejects(plain.authenticate(pair.accessToken), app('TOKEN_UNKNOWN', /revoked/));
  });

  test('logout revokes the login of the access token given (the first of two); anything else is ignored', async () => {
    clockMs = NOW;
    const auth = new AuthService(h.db, clock);
    const a = await account();
    const keep = await auth.login(a.email, 'right-password');
    const pair = await auth.login(a.email, 'right-password');
    for (const header of [undefined, '', 42, 'sat_unknown', 'x'.repeat(201)]) await auth.logout(header);
    await auth.authenticate(pair.accessToken);
    await auth.logout([pair.accessToken, keep.accessToken]);
    await assert.rejects(auth.authenticate(pair.accessToken), app('TOKEN_UNKNOWN', /revoked/));
    await assert.rejects(auth.refresh(pair.refreshToken), app('BAD_CREDENTIALS', 'refreshToken: unknown, expired or already used'));
    await auth.authenticate(keep.accessToken);
  });
});
