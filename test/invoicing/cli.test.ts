import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/db/index.js';
import { cli } from '../helpers/cli.js';
import { createTestDatabase, engines } from '../helpers/db.js';

for (const engine of engines) {
  describe(`sunap account and points [${engine}]`, () => {
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
      const store = openStore(url);
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

    test('errors: non-zero exit, one line on stderr, nothing on stdout', async () => {
      await json('account', 'create', '--email', 'taken@example.com', '--password', 'change-me-123', '--store-code', storeCode);
      const cases: [string[], RegExp][] = [
        [['account', 'create', '--email', 'taken@example.com', '--password', 'change-me-123', '--store-code', storeCode], /already exists/],
        [['account', 'create', '--email', 'new@example.com', '--password', 'change-me-123', '--store-code', 'SDNOPE'], /--store-code: no store/],
        [['account', 'create', '--email', 'not-an-email', '--password', 'change-me-123', '--store-code', storeCode], /--email/],
        [['account', 'create', '--email', 'short@example.com', '--password', 'short', '--store-code', storeCode], /--password: must be at least 8/],
        [['account', 'create', '--email', 'x@example.com', '--store-code', storeCode], /--password: is required/],
        [['points', 'grant', '--email', 'nobody@example.com', '--amount', '10'], /no account/],
        [['points', 'grant', '--email', 'taken@example.com', '--amount', '0'], /--amount/],
        [['points', 'grant', '--email', 'taken@example.com', '--amount', 'ten'], /--amount/],
      ];
      for (const [args, pattern] of cases) {
        const err = await fails(...args, '--json');
        assert.notEqual(err.code, 0);
        assert.equal(err.stdout, '');
        assert.equal(err.stderr.trim().split('\n').length, 1, err.stderr);
        assert.match(err.stderr, pattern);
      }
    });
  });
}
