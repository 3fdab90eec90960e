import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { AuthService, createAccount } from '../../src/invoicing/accounts.js';
import * as repo from '../../src/invoicing/repository.js';
import { hasRole, isRole, TeamService } from '../../src/invoicing/team.js';
import { verifyPassword } from '../../src/platform/crypto.js';
import { AppError } from '../../src/platform/errors.js';
import { forEachEngine } from '../helpers/app.js';
import { insertStores, withDatabase, withFailingInserts } from '../helpers/db.js';

/**
 * A store's team (docs/console.md, "Team") on the database itself: roles and their ranks, a
 * member joining, a role changed, a member removed, a password changed; each refusal on both
 * sides. The console's team pages reach the same service through forms.
 */
const NOW = Date.UTC(2026, 10, 23, 4);
/** The team's clock runs a second after the owners were made, as it would. */
const LATER = NOW + 1_000;
const clock = { nowMs: () => LATER, now: () => new Date(LATER) };
const app = (kind: AppError['kind'], message: string) => (e: unknown) => e instanceof AppError && e.kind === kind && e.message === message;

test('roles rank viewer < manager < owner; only those three are roles', () => {
  const grid = (['viewer', 'manager', 'owner'] as const).map((has) => (['viewer', 'manager', 'owner'] as const).map((needed) => hasRole({ role: has }, needed)));
  assert.deepEqual(grid, [[true, false, false], [true, true, false], [true, true, true]]);
  for (const r of ['viewer', 'manager', 'owner']) assert.equal(isRole(r), true);
  for (const r of ['admin', 'Owner', '', 2, null, undefined]) assert.equal(isRole(r), false, String(r));
});

forEachEngine('team', (engine) => {
  const h = withDatabase(engine);
  let n = 0;
  before(async () => {
    await insertStores(h.db, 'PTEAM', ['STEAM'], NOW);
  });
  async function owner() {
    const a = await createAccount(h.db, NOW, { email: `owner-${n++}@example.com`, password: 'owner-password', storeCode: 'STEAM' });
    return (await repo.findAccountById(h.db, a.accountId))!;
  }

  test('a member joins the tenant\'s team with its role; its email is checked, normalised and unique in any case', async () => {
    const team = new TeamService(h.db, clock, new AuthService(h.db, clock, { perAddressPerMinute: 0 }));
    const tenant = await owner();
    await assert.rejects(team.addMember(tenant, { email: 'not-an-email', password: 'member-password', role: 'viewer' }), app('VALIDATION', 'email: must be an email address'));
    await assert.rejects(team.addMember(tenant, { email: 'short@example.com', password: '1234567', role: 'viewer' }), app('VALIDATION', 'password: must be at least 8 characters'));
    const m = await team.addMember(tenant, { email: ' Member-A@Example.com ', password: 'member-password', role: 'manager' });
    assert.deepEqual(
      { email: m.email, store: m.store_code, tenant: m.tenant_id, role: m.role, enabled: m.invoicing_enabled, created: m.created_at },
      { email: 'member-a@example.com', store: 'STEAM', tenant: tenant.id, role: 'manager', enabled: 1, created: LATER },
    );
    assert.deepEqual(await repo.findAccountById(h.db, m.id), m);
    assert.equal(await verifyPassword('member-password', m.password_hash), true);
    await assert.rejects(team.addMember(tenant, { email: 'MEMBER-A@example.com', password: 'member-password', role: 'viewer' }), app('VALIDATION', 'email: an account with member-a@example.com already exists'));
    assert.equal(await team.emailTaken(' member-a@EXAMPLE.com'), true);
    assert.equal(await team.emailTaken('member-b@example.com'), false);
    assert.deepEqual((await team.members(tenant.id)).map((a) => a.id), [tenant.id, m.id]);
    assert.equal((await team.tenantOf(m))?.id, tenant.id);
    assert.equal(await team.tenantOf(tenant), tenant, 'the first owner is its own team');
    assert.equal((await team.account(m.id))?.email, 'member-a@example.com');
    // Any other failure of the insert is not "already exists": it surfaces as it is.
    await assert.rejects(withFailingInserts(h.db, engine, 'accounts', () => team.addMember(tenant, { email: 'member-c@example.com', password: 'member-password', role: 'viewer' })),
      (e) => !(e instanceof AppError) && /simulated write failure/.test(String(e)));
    assert.equal(await team.emailTaken('member-c@example.com'), false);
  });

  test('a role changes within the team only; the last owner cannot stop being one, a second owner can', async () => {
    const team = new TeamService(h.db, clock, new AuthService(h.db, clock, { perAddressPerMinute: 0 }));
    const tenant = await owner();
    const other = await owner();
    const m = await team.addMember(tenant, { email: `m-${n++}@example.com`, password: 'member-password', role: 'viewer' });
    const LAST = 'role: the team needs at least one owner; make someone else an owner first';
    await assert.rejects(team.setRole(other.id, m.id, 'owner'), app('NOT_FOUND', 'member: no such member of this team'));
    await assert.rejects(team.setRole(tenant.id, tenant.id, 'manager'), app('STATE', LAST));
    assert.equal((await team.setRole(tenant.id, tenant.id, 'owner')).role, 'owner', 'an owner staying owner');
    assert.equal((await team.setRole(tenant.id, m.id, 'manager')).role, 'manager', 'a member who is not an owner, with one owner in the team');
    assert.deepEqual((await team.setRole(tenant.id, m.id, 'owner')).role, 'owner');
    assert.equal((await repo.findAccountById(h.db, m.id))?.role, 'owner');
    assert.equal((await team.setRole(tenant.id, tenant.id, 'viewer')).role, 'viewer', 'with another owner');
    await assert.rejects(team.setRole(tenant.id, m.id, 'manager'), app('STATE', LAST));
    assert.equal((await repo.findAccountById(h.db, m.id))?.role, 'owner');
  });

  test('a member is removed; the team\'s first account and another team\'s member are not', async () => {
    const team = new TeamService(h.db, clock, new AuthService(h.db, clock, { perAddressPerMinute: 0 }));
    const tenant = await owner();
    const other = await owner();
    const m = await team.addMember(tenant, { email: `m-${n++}@example.com`, password: 'member-password', role: 'viewer' });
    await assert.rejects(team.remove(other.id, m.id), app('NOT_FOUND', 'member: no such member of this team'));
    await assert.rejects(team.remove(tenant.id, tenant.id), app('STATE', 'member: the team\'s first account holds its invoices and points; it cannot be removed'));
    assert.equal((await team.remove(tenant.id, m.id)).id, m.id);
    assert.equal(await repo.findAccountById(h.db, m.id), undefined);
    assert.ok(await repo.findAccountById(h.db, tenant.id));
  });

  test('removing the last owner (the first account made a manager) is refused; with another owner it is not', async () => {
    const team = new TeamService(h.db, clock, new AuthService(h.db, clock, { perAddressPerMinute: 0 }));
    const tenant = await owner();
    const a = await team.addMember(tenant, { email: `o-${n++}@example.com`, password: 'member-password', role: 'owner' });
    await team.setRole(tenant.id, tenant.id, 'manager');
    await assert.rejects(team.remove(tenant.id, a.id), app('STATE', 'role: the team needs at least one owner; make someone else an owner first'));
    assert.ok(await repo.findAccountById(h.db, a.id));
    const b = await team.addMember(tenant, { email: `o-${n++}@example.com`, password: 'member-password', role: 'owner' });
    assert.equal((await team.remove(tenant.id, a.id)).id, a.id);
    assert.equal((await repo.findAccountById(h.db, b.id))?.role, 'owner');
  });

  const RACE_ROUNDS = 20;
  test(`the last-owner rule holds under races, ${RACE_ROUNDS} rounds: two owners demoting each other at once, or removing each other while demoting, leave exactly one owner`, async () => {
    const team = new TeamService(h.db, clock, new AuthService(h.db, clock, { perAddressPerMinute: 0 }));
    const owners = async (tenantId: string) => (await h.db.selectFrom('accounts').select('id').where('tenant_id', '=', tenantId).where('role', '=', 'owner').execute()).length;
    const outcomes = { demoteDemote: 0, demoteRemove: 0 };
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const tenant = await owner();
      const b = await team.addMember(tenant, { email: `race-${n++}@example.com`, password: 'member-password', role: 'owner' });
      // Each demotes the other at the same moment: one wins, the other is refused (STATE).
      const r = await Promise.allSettled([team.setRole(tenant.id, b.id, 'viewer'), team.setRole(tenant.id, tenant.id, 'viewer')]);
      assert.equal(r.filter((x) => x.status === 'fulfilled').length, 1, `round ${round}: ${JSON.stringify(r.map((x) => x.status))}`);
      const refused = r.find((x) => x.status === 'rejected') as PromiseRejectedResult;
      assert.ok(refused.reason instanceof AppError && refused.reason.kind === 'STATE', String(refused.reason));
      assert.equal(await owners(tenant.id), 1, `round ${round}: one owner left`);
      outcomes.demoteDemote++;
      // Another team: the first account a manager, owners B and C; B is removed while C is demoted.
      const t2 = await owner();
      const [ob, oc] = [
        await team.addMember(t2, { email: `race-${n++}@example.com`, password: 'member-password', role: 'owner' }),
        await team.addMember(t2, { email: `race-${n++}@example.com`, password: 'member-password', role: 'owner' }),
      ];
      await team.setRole(t2.id, t2.id, 'manager');
      const r2 = await Promise.allSettled([team.remove(t2.id, ob.id), team.setRole(t2.id, oc.id, 'viewer')]);
      assert.equal(r2.filter((x) => x.status === 'fulfilled').length, 1, `round ${round}: ${JSON.stringify(r2.map((x) => x.status))}`);
      assert.equal(await owners(t2.id), 1, `round ${round}: remove vs demote left one owner`);
      outcomes.demoteRemove++;
    }
    assert.deepEqual(outcomes, { demoteDemote: RACE_ROUNDS, demoteRemove: RACE_ROUNDS });
  });

  test('a password change needs the current password and a new one of 8 to 200 characters; it revokes the account\'s API tokens', async () => {
    const team = new TeamService(h.db, clock, new AuthService(h.db, clock, { perAddressPerMinute: 0 }));
    const a = await owner();
    await repo.insertTokens(h.db, [{ id: `tok-${n++}`, account_id: a.id, family_id: 'f', kind: 'ACCESS', token_hash: `hash-${n++}`, expires_at: NOW + 1000, rotated_at: null, revoked_at: null, created_at: NOW }]);
    await assert.rejects(team.changePassword(a, 'wrong-password', 'new-password'), app('VALIDATION', 'current: is not your current password'));
    await assert.rejects(team.changePassword(a, 'owner-password', '1234567'), app('VALIDATION', 'next: must be at least 8 characters'));
    const unchanged = await repo.findAccountById(h.db, a.id);
    assert.equal(unchanged?.password_hash, a.password_hash);
    await team.changePassword(a, 'owner-password', 'new-password');
    const changed = (await repo.findAccountById(h.db, a.id))!;
    assert.equal(await verifyPassword('new-password', changed.password_hash), true);
    const tokens = await h.db.selectFrom('auth_tokens').select('revoked_at').where('account_id', '=', a.id).execute();
    assert.deepEqual(tokens.map((t) => Number(t.revoked_at)), [LATER]);
  });
});
