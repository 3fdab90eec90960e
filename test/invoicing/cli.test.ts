import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/db/index.js';
import { cli } from '../helpers/cli.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

forEachEngine('sunap account and points', (engine) => {
  let url: string;
  let drop: () => Promise<void>;
  let storeCode: string;
  const { json, fails } = cli(() => url, '33'.repeat(32));
  before(async () => {
    ({ url, drop } = await createTestDatabase(engine));
    const p = await json('platform', 'create', '--name', '플랫폼');
    storeCode = (await json('store', 'create', '--platform-code', p.platformCode, '--name', '행복 피아노 학원')).storeCode;
  });
  after(async () => drop?.());

  test('account create and points grant: --json outputs, balance equals the ledger', async () => {
    const a = await json('account', 'create', '--email', 'Owner@Example.com', '--password', 'change-me-123', '--store-code', storeCode);
    assert.deepEqual(Object.keys(a), ['accountId', 'email', 'storeCode']);
    assert.equal(a.email, 'owner@example.com');
    assert.equal(a.storeCode, storeCode);
    assert.deepEqual(await json('points', 'grant', '--email', 'owner@example.com', '--amount', '1000', '--memo', '첫 충전'), { balance: 1000 });
    assert.deepEqual(await json('points', 'grant', '--email', 'OWNER@example.com', '--amount', '5'), { balance: 1005 });
    const store = openDatabase(url);
    try {
      const acc = await store.db.selectFrom('accounts').selectAll().where('id', '=', a.accountId).executeTakeFirstOrThrow();
      assert.ok(acc.password_hash.startsWith('scrypt$') && !acc.password_hash.includes('change-me-123'));
      assert.equal(acc.invoicing_enabled, 1);
      const ledger = await store.db.selectFrom('ledger').selectAll().where('account_id', '=', a.accountId).execute();
      assert.deepEqual(ledger.map((l) => [l.kind, Number(l.delta), l.memo]), [['GRANT', 1000, '첫 충전'], ['GRANT', 5, null]]);
    } finally {
      await store.close();
    }
    assert.deepEqual(await json('account', 'disable', '--email', 'owner@example.com'), { email: 'owner@example.com', invoicingEnabled: false });
    assert.deepEqual(await json('account', 'enable', '--email', 'owner@example.com'), { email: 'owner@example.com', invoicingEnabled: true });
  });

  test('errors: exit 1 when the operation fails, 64 for a wrong command line; one line on stderr, nothing on stdout', async () => {
    await json('account', 'create', '--email', 'taken@example.com', '--password', 'change-me-123', '--store-code', storeCode);
    const cases: [string[], number, RegExp][] = [
      [['account', 'create', '--email', 'taken@example.com', '--password', 'change-me-123', '--store-code', storeCode], 1, /already exists/],
      [['account', 'create', '--email', 'new@example.com', '--password', 'change-me-123', '--store-code', 'SDNOPE'], 1, /--store-code: no store/],
      [['account', 'create', '--email', 'not-an-email', '--password', 'change-me-123', '--store-code', storeCode], 1, /--email/],
      [['account', 'create', '--email', 'short@example.com', '--password', 'short', '--store-code', storeCode], 1, /--password: must be at least 8/],
      [['account', 'disable', '--email', 'nobody@example.com'], 1, /--email: no account nobody@example.com/],
      [['points', 'grant', '--email', 'nobody@example.com', '--amount', '10'], 1, /no account/],
      [['account', 'create', '--email', 'x@example.com', '--store-code', storeCode], 64, /--password: is required; run "sunap account create --help"/],
      [['account', 'enable', '--email', 'taken@example.com', '--bogus'], 64, /unknown option --bogus; run "sunap account enable --help"/],
      [['points', 'grant', '--email', 'taken@example.com', '--amount', '0'], 64, /--amount: .*; run "sunap points grant --help"/],
      [['points', 'grant', '--email', 'taken@example.com', '--amount', 'ten'], 64, /--amount: .*; run "sunap points grant --help"/],
      [['points', 'grant', '--email', 'taken@example.com', '--amount', '-5'], 64, /--amount: .*; run "sunap points grant --help"/],
    ];
    for (const [args, code, pattern] of cases) {
      const err = await fails(...args, '--json');
      assert.equal(err.code, code, `${args.join(' ')}: ${err.stderr}`);
      assert.equal(err.stdout, '');
      assert.equal(err.stderr.trim().split('\n').length, 1, err.stderr);
      assert.match(err.stderr, pattern);
    }
    assert.deepEqual(await json('points', 'grant', '--email', 'taken@example.com', '--amount', '1'), { balance: 1 }, 'none of them granted anything');
  });

  test('account set-role: an operator gives a team that lost its owners an owner again; the last owner stays one; roles are checked with a "did you mean"', async () => {
    const first = await json('account', 'create', '--email', 'team-first@example.com', '--password', 'change-me-123', '--store-code', storeCode);
    const store = openDatabase(url);
    try {
      const now = Date.now();
      await store.db.insertInto('accounts').values({
        id: 'member-of-team-first', email: 'team-member@example.com', password_hash: 'x', store_code: storeCode, invoicing_enabled: 1, created_at: now, role: 'viewer', tenant_id: first.accountId,
      }).execute();
      const roles = async () => Object.fromEntries((await store.db.selectFrom('accounts').select(['email', 'role']).where('tenant_id', '=', first.accountId).execute()).map((r) => [r.email, r.role]));
      assert.deepEqual(await json('account', 'set-role', '--email', 'Team-Member@example.com', '--role', 'owner'), { email: 'team-member@example.com', role: 'owner', storeCode, owners: 2 });
      assert.deepEqual(await json('account', 'set-role', '--email', 'team-first@example.com', '--role', 'manager'), { email: 'team-first@example.com', role: 'manager', storeCode, owners: 1 });
      // The last owner stays one (exit 1, nothing changes), and says how to go on.
      const last = await fails('account', 'set-role', '--email', 'team-member@example.com', '--role', 'viewer');
      assert.equal(last.code, 1);
      assert.match(last.stderr, /--role: team-member@example\.com is the team's last owner; make another member an owner first \(sunap account set-role --email OTHER --role owner\)/);
      assert.deepEqual(await roles(), { 'team-first@example.com': 'manager', 'team-member@example.com': 'owner' });
      // A team left with no owner (as a race could leave it before the rule was atomic): the operator gives one back.
      await store.db.updateTable('accounts').set({ role: 'viewer' }).where('tenant_id', '=', first.accountId).execute();
      assert.deepEqual(await json('account', 'set-role', '--email', 'team-first@example.com', '--role', 'owner'), { email: 'team-first@example.com', role: 'owner', storeCode, owners: 1 });
      assert.deepEqual(await roles(), { 'team-first@example.com': 'owner', 'team-member@example.com': 'viewer' });
      // Usage errors (64) name the nearest role; an unknown email is exit 1.
      const cases: [string[], number, RegExp][] = [
        [['--email', 'team-first@example.com', '--role', 'Owner'], 64, /^sunap: --role: must be owner, manager or viewer, got "Owner" \(did you mean owner\?\); run "sunap account set-role --help"/],
        [['--email', 'team-first@example.com', '--role', 'manger'], 64, /got "manger" \(did you mean manager\?\)/],
        [['--email', 'team-first@example.com', '--role', 'admin'], 64, /--role: must be owner, manager or viewer, got "admin"; run/],
        [['--email', 'team-first@example.com'], 64, /--role: is required/],
        [['--email', 'nobody@example.com', '--role', 'owner'], 1, /--email: no account nobody@example\.com/],
      ];
      for (const [args, code, pattern] of cases) {
        const err = await fails('account', 'set-role', ...args);
        assert.equal(err.code, code, `${args.join(' ')}: ${err.stderr}`);
        assert.equal(err.stdout, '');
        assert.match(err.stderr.trim(), pattern);
      }
      assert.deepEqual(await roles(), { 'team-first@example.com': 'owner', 'team-member@example.com': 'viewer' }, 'no refused command changed a role');
    } finally {
      await store.close();
    }
  });
});
