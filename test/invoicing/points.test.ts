import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Transaction } from 'kysely';
import type { Database } from '../../src/db/index.js';
import { createStore } from '../../src/gateway/index.js';
import { newTransSeqNo } from '../../src/invoicing/creation.js';
import { creditRecharge, grant, refund } from '../../src/invoicing/points.js';
import { RECHARGE_LIMITS, RechargeService } from '../../src/invoicing/recharge.js';
import { AppError } from '../../src/platform/errors.js';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { captureLog } from '../helpers/log.js';
import { accountRow, newAccount } from './support.js';

/**
 * Send points at their edges, on the database: a refund and a recharge credit land once however
 * often they are asked, a grant is recorded as one, and a recharge's amount limits and modes.
 */
forEachEngine('send points and recharges', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;
  const balance = async (accountId: string) => Number((await db().selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow()).balance);
  const ledger = (accountId: string) => db().selectFrom('ledger').select(['kind', 'delta', 'ref', 'memo']).where('account_id', '=', accountId).orderBy('id').execute();
  const inTrx = <T>(fn: (trx: Transaction<Database>) => Promise<T>) => db().transaction().execute(fn);

  test('a send\'s refund is credited once, however often it is settled; nothing for 0 or less', async () => {
    const a = await newAccount(t);
    const send = { id: newId(), account_id: a.accountId };
    const now = t.app.sunap.clock.nowMs();
    await inTrx((trx) => refund(trx, send, 20, 'ALIMTALK carried it', now));
    await inTrx((trx) => refund(trx, send, 20, 'ALIMTALK carried it', now));
    await inTrx((trx) => refund(trx, { id: newId(), account_id: a.accountId }, 0, 'zero', now));
    await inTrx((trx) => refund(trx, { id: newId(), account_id: a.accountId }, -5, 'negative', now));
    assert.equal(await balance(a.accountId), 20);
    assert.deepEqual((await ledger(a.accountId)).map((l) => [l.kind, Number(l.delta), l.ref, l.memo]), [['REFUND', 20, send.id, 'ALIMTALK carried it']]);
  });

  test('a recharge is credited once per recharge id; another recharge credits again', async () => {
    const a = await newAccount(t);
    const now = t.app.sunap.clock.nowMs();
    const [r1, r2] = [newId(), newId()];
    await inTrx((trx) => creditRecharge(trx, a.accountId, 5000, r1, '카드 충전', now));
    await inTrx((trx) => creditRecharge(trx, a.accountId, 5000, r1, '카드 충전', now));
    assert.equal(await balance(a.accountId), 5000);
    await inTrx((trx) => creditRecharge(trx, a.accountId, 1000, r2, '카드 충전', now));
    assert.equal(await balance(a.accountId), 6000);
    assert.deepEqual((await ledger(a.accountId)).map((l) => [l.kind, Number(l.delta), l.ref]), [['RECHARGE', 5000, r1], ['RECHARGE', 1000, r2]]);
  });

  test('a grant is one GRANT row and the balance together, and answers the new balance', async () => {
    const a = await newAccount(t);
    const now = t.app.sunap.clock.nowMs();
    assert.equal(await inTrx((trx) => grant(trx, a.accountId, 300, 'welcome', now)), 300);
    assert.equal(await inTrx((trx) => grant(trx, a.accountId, 200, null, now)), 500);
    assert.deepEqual((await ledger(a.accountId)).map((l) => [l.kind, Number(l.delta), l.ref, l.memo]), [['GRANT', 300, null, 'welcome'], ['GRANT', 200, null, null]]);
  });

  /**
   * A recharge service as the app makes one, in the mode asked for. Its return URL is Sunap's own,
   * here plain http (as behind a TLS-terminating proxy), which a merchant's URL could not be.
   */
  const service = (over: { storeCode: string | null; sandbox: boolean }) => new RechargeService(db(), {
    gateway: t.app.sunap.gateway, clock: t.app.sunap.clock, log: t.app.sunap.log, returnUrl: (id) => `http://sunap.example/console/points?recharge=${id}`, ...over,
  });
  const account = async () => {
    const a = await newAccount(t);
    return { a, row: await accountRow(t, a) };
  };

  test('recharge modes: a recharge store named means card, in the sandbox too; without one the sandbox credits at once and live cannot recharge', async () => {
    assert.equal(service({ storeCode: t.storeCode, sandbox: true }).mode(), 'card');
    assert.equal(service({ storeCode: t.storeCode, sandbox: false }).mode(), 'card');
    assert.equal(service({ storeCode: null, sandbox: true }).mode(), 'instant');
    assert.equal(service({ storeCode: null, sandbox: false }).mode(), 'unavailable');
    const { a, row } = await account();
    await assert.rejects(service({ storeCode: null, sandbox: false }).start(row, 5000), (e) => e instanceof AppError && e.kind === 'STATE'
      && e.message === 'points: recharging is not set up; the operator names the store that sells points (SUNAP_RECHARGE_STORE_CODE)');
    assert.equal(await balance(a.accountId), 0);
    assert.deepEqual(await db().selectFrom('recharges').select('id').where('account_id', '=', a.accountId).execute(), [], 'nothing started');
  });

  test(`a recharge buys from ${RECHARGE_LIMITS.min} to ${RECHARGE_LIMITS.max} points: both ends accepted, one point beyond either refused`, async () => {
    const instant = service({ storeCode: null, sandbox: true });
    const { a, row } = await account();
    const refused = (e: unknown) => e instanceof AppError && e.kind === 'VALIDATION' && e.message === 'points: must be a whole number from 1000 to 1000000';
    for (const points of [RECHARGE_LIMITS.min - 1, RECHARGE_LIMITS.max + 1, 1000.5, Number.NaN]) await assert.rejects(instant.start(row, points), refused, String(points));
    assert.equal(await balance(a.accountId), 0);
    for (const points of [RECHARGE_LIMITS.min, RECHARGE_LIMITS.max]) assert.equal((await instant.start(row, points)).kind, 'CREDITED');
    assert.equal(await balance(a.accountId), RECHARGE_LIMITS.min + RECHARGE_LIMITS.max);
    assert.deepEqual((await ledger(a.accountId)).map((l) => l.memo), ['샌드박스 충전', '샌드박스 충전']);
  });

  test('a card recharge is a payment in the recharge store, for the merchant, at one won a point; a recharge store that is gone is an operator\'s error', async () => {
    // The merchant's store, as its tel is often written: with dashes.
    const { storeCode } = await createStore(db(), t.app.sunap.clock.nowMs(), { platformCode: t.platformCode, name: '한빛 수학학원', tel: '02-1234-5678' });
    const a = await newAccount(t, { storeCode });
    const row = await accountRow(t, a);
    const card = await service({ storeCode: t.storeCode, sandbox: true }).start(row, 12_000);
    assert.equal(card.kind, 'PAY');
    assert.deepEqual([card.recharge.points, card.recharge.amount, card.recharge.store_code, card.recharge.status], [12_000, 12_000, t.storeCode, 'PENDING']);
    const p = await db().selectFrom('payments').selectAll().where('id', '=', card.recharge.payment_id!).executeTakeFirstOrThrow();
    assert.equal(p.store_code, t.storeCode, 'paid to the store that sells points');
    assert.match(p.trans_seqno, /^RCH[0-9A-Z]+$/);
    assert.equal(p.trans_seqno.length, newTransSeqNo().length, 'the invoice number\'s form, RCH in place of INV');
    assert.deepEqual([Number(p.amount), p.mobile_no, p.pay_user_name, p.request_reason], [12_000, '0212345678', '한빛 수학학원', '발송 포인트 12,000P 충전']);
    assert.deepEqual([p.return_url, p.return_display_yn, p.order_type], [`http://sunap.example/console/points?recharge=${card.recharge.id}`, 'Y', 'SHOP']);
    await assert.rejects(service({ storeCode: 'NO_SUCH_STORE', sandbox: true }).start(row, 12_000), /SUNAP_RECHARGE_STORE_CODE names no store \(NO_SUCH_STORE\)/);
  });

  test('the approval credits a card recharge once, at the approval\'s time and with its number; a payment that is not a recharge credits nothing', async () => {
    const { a, row } = await account();
    const logged = captureLog();
    const T = Date.UTC(2026, 10, 23, 1, 0, 0);
    const rs = new RechargeService(db(), {
      gateway: t.app.sunap.gateway, clock: { nowMs: () => T + 5000, now: () => new Date(T + 5000) }, log: logged.log,
      returnUrl: (id) => `http://sunap.example/console/points?recharge=${id}`, storeCode: t.storeCode, sandbox: false,
    });
    const started = await rs.start(row, 3000);
    const p = await db().selectFrom('payments').selectAll().where('id', '=', started.recharge.payment_id!).executeTakeFirstOrThrow();
    const approved = { ...p, state: 'APPROVE_COMPLETE' as const, approval_at: T, approval_number: '30001234' };
    const onApproved = rs.listener().onApproved!;
    await db().transaction().execute((trx) => onApproved(trx, approved));
    await db().transaction().execute((trx) => onApproved(trx, approved));
    await db().transaction().execute((trx) => onApproved(trx, { ...approved, id: newId() }));
    await db().transaction().execute((trx) => onApproved(trx, { ...approved, store_code: 'OTHER_STORE' }));
    assert.equal(await balance(a.accountId), 3000);
    assert.deepEqual(logged.msgs('points recharge credited').map((l) => [l.recharge, l.points]), [[started.recharge.id, 3000]], 'logged once');
    const r = await db().selectFrom('recharges').select(['status', 'credited_at']).where('id', '=', started.recharge.id).executeTakeFirstOrThrow();
    assert.deepEqual([r.status, Number(r.credited_at)], ['CREDITED', T]);
    assert.deepEqual((await db().selectFrom('ledger').select(['kind', 'delta', 'ref', 'memo', 'created_at']).where('account_id', '=', a.accountId).execute())
      .map((l) => [l.kind, Number(l.delta), l.ref, l.memo, Number(l.created_at)]), [['RECHARGE', 3000, started.recharge.id, '카드 충전 (승인번호 30001234)', T]]);
  });
});
