import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { OperatorError } from '../../src/gateway/merchants.js';
import { createAccount, emailProblem, grantPoints, passwordProblem, setInvoicingEnabled } from '../../src/invoicing/accounts.js';
import * as repo from '../../src/invoicing/repository.js';
import { forEachEngine } from '../helpers/app.js';
import { withDatabase } from '../helpers/db.js';

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
  for (const bad of [`a${at254}`, 'kim@example', 'kim.example.com', '@example.com', 'kim@.com.', 'kim @example.com', 'kim@exa mple.com', 'kim@@example.com', '', 'x kim@example.com y']) {
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
    await h.db.insertInto('platforms').values({ code: 'PACCT', name: 'p', created_at: NOW }).execute();
    await h.db.insertInto('stores').values({ code: 'SACCT', platform_code: 'PACCT', name: 's', ceo_name: 'c', biz_reg_num: '1234567890', tel: '0212345678', cat_enabled: 0, created_at: NOW }).execute();
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
});
