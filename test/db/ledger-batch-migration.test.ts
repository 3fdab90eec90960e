import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Migrator } from 'kysely';
import { migrate, openDatabase } from '../../src/db/index.js';
import { migrations } from '../../src/db/migrations/index.js';
import { InvoicingConsole } from '../../src/invoicing/console.js';
import { createTestDatabase, engines } from '../helpers/db.js';

/**
 * Migration 0018 on a database that already has a ledger: RESERVE rows written before send
 * batches existed are grouped by what one send shared (millisecond and memo); other rows get no
 * batch and stay lines of their own; invoices get a tax-free amount of 0.
 */
for (const engine of engines) {
  describe(`ledger batch migration [${engine}]`, () => {
    test('0018 gives old RESERVE rows a batch per millisecond and memo, leaves other kinds alone, and the lines still add up', async () => {
      const database = await createTestDatabase(engine);
      const store = openDatabase(database.url);
      try {
        const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0018'));
        assert.equal(Object.keys(before).includes('0018_send_batches_tax_free'), false);
        const old = await new Migrator({ db: store.db, provider: { getMigrations: async () => before }, allowUnorderedMigrations: true }).migrateToLatest();
        assert.equal(old.error, undefined);
        const { db } = store;
        const T = Date.UTC(2026, 10, 23, 3);
        await db.insertInto('platforms').values({ code: 'PMIG', name: 'p', created_at: T }).execute();
        await db.insertInto('stores').values({ code: 'SMIG', platform_code: 'PMIG', name: 's', ceo_name: 'c', biz_reg_num: '1234567890', tel: '0212345678', cat_enabled: 0, created_at: T }).execute();
        await db.insertInto('accounts').values({ id: 'mig', email: 'mig@example.com', password_hash: 'x', store_code: 'SMIG', invoicing_enabled: 1, created_at: T }).execute();
        const row = (kind: 'RESERVE' | 'REFUND' | 'GRANT', ref: string | null, delta: number, memo: string, at: number) =>
          ({ account_id: 'mig', delta, kind, ref, memo, created_at: at });
        await db.insertInto('ledger').values([
          row('GRANT', null, 1000, 'g', T),
          ...[0, 1, 2].map((i) => row('RESERVE', `a${i}`, -10, 'INITIAL', T + 5)),
          row('RESERVE', 'b0', -10, 'INITIAL', T + 6),
          row('RESERVE', 'c0', -10, 'RESEND', T + 6),
          row('REFUND', 'a1', 10, 'FAILED', T + 7),
        ]).execute();

        await migrate(db);
        const batches = await db.selectFrom('ledger').select(['ref', 'kind', 'batch']).orderBy('id').execute();
        assert.deepEqual(batches.map((b) => b.batch), [
          null, `legacy:${T + 5}:INITIAL`, `legacy:${T + 5}:INITIAL`, `legacy:${T + 5}:INITIAL`, `legacy:${T + 6}:INITIAL`, `legacy:${T + 6}:RESEND`, null,
        ]);
        const page = await new InvoicingConsole(db).ledger('mig', undefined, 50);
        assert.deepEqual(page.lines.map((l) => [l.rows[0]!.kind, l.count, l.delta]), [['REFUND', 1, 10], ['RESERVE', 1, -10], ['RESERVE', 1, -10], ['RESERVE', 3, -30], ['GRANT', 1, 1000]]);
        assert.equal(page.lines.reduce((s, l) => s + l.delta, 0), 1000 - 50 + 10);
      } finally {
        await store.close();
        await database.drop();
      }
    });
  });
}
