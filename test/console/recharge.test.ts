import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApproveOutcome, CardProcessor } from '../../src/ports/card-processor.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { ledgerMatches } from '../invoicing/support.js';
import { addMember, ownerClient, textOf } from './support.js';

/**
 * A card processor that approves every charge once per idempotency key, as a real one would.
 * The same recharge in live mode, charged through the Toss fake: test/live/recharge.test.ts.
 */
class ApprovingProcessor implements CardProcessor {
  readonly approvals = new Map<string, ApproveOutcome>();
  async approve(req: Parameters<CardProcessor['approve']>[0]): Promise<ApproveOutcome> {
    const seen = this.approvals.get(req.idempotencyKey);
    if (seen) return seen;
    const o: ApproveOutcome = { outcome: 'APPROVED', approvalNumber: String(30_000_000 + this.approvals.size), issuerName: '현대카드', accepterName: '현대카드' };
    this.approvals.set(req.idempotencyKey, o);
    return o;
  }
  async lookup(key: string) {
    return this.approvals.get(key) ?? null;
  }
  async cancel() {
    return { outcome: 'CANCELED' as const };
  }
}

const RECHARGE_STORE = 'SDRECHARGE01';
const card = { number: '9410000000000001', expiryMonth: '12', expiryYear: '35', holderId: '900101', passwordDigits: '12' };

forEachEngine('console: points recharge by card (a recharge store named, the processor injected)', (engine) => {
  const processor = new ApprovingProcessor();
  const t = withApp(engine, { SUNAP_RECHARGE_STORE_CODE: RECHARGE_STORE }, { processor });
  const db = () => t.app.sunap.database.db;

  test('pay on Sunap\'s payment page: credited exactly once, by the approval; never by the browser coming back', async () => {
    // The operator's store that sells points (in a real set-up: `sunap store create`).
    await db().insertInto('stores').values({ code: RECHARGE_STORE, platform_code: t.platformCode, name: 'Sunap 포인트', ceo_name: '', biz_reg_num: '', tel: '', cat_enabled: 1, created_at: Date.now() })
      .onConflict((oc) => oc.column('code').doNothing()).execute();
    // The injected card network takes the card: the store takes cards by Sunap's card form.
    await t.setWay(RECHARGE_STORE, 'key-in');
    const { owner, c } = await ownerClient(t, { points: 100 });
    const r = await c.post('/console/points/recharge', { points: '5,000' }, { from: '/console/points' });
    assert.equal(r.status, 303);
    const link = new URL(r.location!);
    assert.equal(link.pathname, '/checkout', 'to Sunap\'s own payment page');
    const recharge = await db().selectFrom('recharges').selectAll().where('account_id', '=', owner.accountId).executeTakeFirstOrThrow();
    assert.equal(recharge.status, 'PENDING');
    assert.equal(recharge.points, 5000);
    assert.equal(recharge.amount, 5000);
    const payment = await db().selectFrom('payments').selectAll().where('id', '=', recharge.payment_id!).executeTakeFirstOrThrow();
    assert.equal(payment.store_code, RECHARGE_STORE);
    assert.equal(payment.amount, 5000);
    assert.equal(payment.confirm_url, null, 'no callback: the approval itself credits');
    assert.equal((await t.get(r.location!.replace(t.url, ''))).status, 200, 'the payment page opens');

    // The browser comes back (or someone forges the return) before paying: nothing is credited.
    const back = await c.get(`/console/points?recharge=${recharge.id}`);
    assert.ok(textOf(back.text).includes('결제가 끝나면 바로 충전됩니다'));
    assert.equal((await ledgerMatches(t, owner.accountId)).balance, 100);

    const paid = await t.app.sunap.gateway.pay(payment.id, card, '00');
    assert.equal(paid.outcome, 'APPROVED');
    let l = await ledgerMatches(t, owner.accountId);
    assert.deepEqual(l, { balance: 5100, ledger: 5100 });
    assert.equal((await db().selectFrom('recharges').select('status').where('id', '=', recharge.id).executeTakeFirstOrThrow()).status, 'CREDITED');

    // Paying again, the approval seen twice, the return page opened again: still credited once.
    assert.equal((await t.app.sunap.gateway.pay(payment.id, card, '00')).outcome, 'STATE');
    const approved = await db().selectFrom('payments').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow();
    await db().transaction().execute((trx) => t.app.sunap.invoicing.recharges.listener().onApproved!(trx, approved));
    assert.ok(textOf((await c.get(`/console/points?recharge=${recharge.id}`)).text).includes('포인트를 충전했습니다'));
    l = await ledgerMatches(t, owner.accountId);
    assert.deepEqual(l, { balance: 5100, ledger: 5100 });
    const rows = await db().selectFrom('ledger').selectAll().where('account_id', '=', owner.accountId).where('kind', '=', 'RECHARGE').execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.ref, recharge.id);
    assert.ok(textOf((await c.get('/console/points')).text).includes('+5,000P'));
    // The recharge payment is the recharge store's, not the merchant's.
    assert.ok(!(await c.get(`/console/payments?q=${payment.trans_seqno}`)).text.includes(`/console/payments/${payment.trans_seqno}"`));
  });

  test('out of range, or a viewer: refused, nothing started', async () => {
    const { owner, c } = await ownerClient(t);
    assert.equal((await c.post('/console/points/recharge', { points: '999' }, { from: '/console/points' })).status, 400);
    assert.equal((await c.post('/console/points/recharge', { points: '1000001' }, { from: '/console/points' })).status, 400);
    const viewer = await addMember(t, c, 'viewer');
    assert.equal((await viewer.c.post('/console/points/recharge', { points: '5000' }, { from: '/console/points' })).status, 403);
    assert.equal((await db().selectFrom('recharges').select('id').where('account_id', '=', owner.accountId).execute()).length, 0);
  });
});

forEachEngine('console: points recharge in the sandbox without a recharge store', (engine) => {
  const t = withApp(engine);

  test('credited at once, one RECHARGE ledger row; the ledger page links sends to their invoices', async () => {
    const { owner, c } = await ownerClient(t);
    const r = await c.post('/console/points/recharge', { points: '10000' }, { from: '/console/points' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/console/points?notice=credited');
    assert.deepEqual(await ledgerMatches(t, owner.accountId), { balance: 10_000, ledger: 10_000 });
    assert.equal((await c.post('/console/invoices/new', { requestId: 'console-ledger-0001', name: '홍길동', phone: '01012345678', amount: '5000', reason: '수강료' }, { from: '/console/invoices/new' })).status, 303);
    const page = await c.get('/console/points');
    const text = textOf(page.text);
    for (const s of ['9,990P', '충전', '+10,000P', '발송 차감', '-10P', '홍길동 · 수강료']) assert.ok(text.includes(s), `the points page shows "${s}"`);
    assert.match(page.text, /href="\/console\/invoices\/[0-9a-f-]{36}"/);
  });
});
