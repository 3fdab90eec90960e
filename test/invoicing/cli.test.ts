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
});
