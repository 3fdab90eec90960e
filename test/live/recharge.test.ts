import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine } from '../helpers/app.js';
import { ownerClient } from '../console/support.js';
import { ledgerMatches } from '../invoicing/support.js';
import { payOnPage, withFakes, withLiveApp } from './support.js';

const RECHARGE_STORE = 'SDRECHARGELV';

/**
 * Buying send points in live mode: the merchant pays on Sunap's own payment page, the card is
 * charged at the provider (the Toss fake), and the points arrive exactly once, with the approval.
 */
forEachEngine('live: points recharge charged through Toss', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f, () => ({ SUNAP_RECHARGE_STORE_CODE: RECHARGE_STORE }));

  test('one charge at Toss, the points credited once; a declined card credits nothing', async () => {
    const db = t.app.sunap.database.db;
    await db.insertInto('stores').values({ code: RECHARGE_STORE, platform_code: t.platformCode, name: 'Sunap 포인트', ceo_name: '', biz_reg_num: '', tel: '', cat_enabled: 1, created_at: Date.now() })
      .onConflict((oc) => oc.column('code').doNothing()).execute();
    const { owner, c } = await ownerClient(t, { points: 100 });

    const declined = await c.post('/console/points/recharge', { points: '3000' }, { from: '/console/points' });
    assert.equal(declined.status, 303);
    const refused = await payOnPage(t, declined.location!, '4000000000009995');
    assert.equal(refused.status, 200, 'the form again, with the decline');
    assert.deepEqual(await ledgerMatches(t, owner.accountId), { balance: 100, ledger: 100 });

    const r = await c.post('/console/points/recharge', { points: '5000' }, { from: '/console/points' });
    assert.equal(r.status, 303);
    const chargesBefore = f.toss.payments.size;
    const paid = await payOnPage(t, r.location!, '4242424242424242');
    assert.equal(paid.status, 303, paid.text);
    assert.equal(f.toss.payments.size, chargesBefore + 1, 'one charge at the provider');
    const recharge = await db.selectFrom('recharges').selectAll().where('account_id', '=', owner.accountId).where('points', '=', 5000).executeTakeFirstOrThrow();
    assert.equal(recharge.status, 'CREDITED');
    const charge = [...f.toss.payments.values()].at(-1)!;
    assert.equal(charge.totalAmount, 5000);
    assert.deepEqual(await ledgerMatches(t, owner.accountId), { balance: 5100, ledger: 5100 });

    // The page posted twice, or the return opened again: no second charge, no second credit.
    assert.equal((await payOnPage(t, r.location!, '4242424242424242')).status, 303);
    await c.get(`/console/points?recharge=${recharge.id}`);
    assert.equal(f.toss.payments.size, chargesBefore + 1);
    assert.deepEqual(await ledgerMatches(t, owner.accountId), { balance: 5100, ledger: 5100 });
    const rows = await db.selectFrom('ledger').select('ref').where('account_id', '=', owner.accountId).where('kind', '=', 'RECHARGE').execute();
    assert.deepEqual(rows.map((x) => x.ref), [recharge.id]);
  });
});
