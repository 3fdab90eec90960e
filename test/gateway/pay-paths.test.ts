/**
 * Every PAY_PATH's cancel rule, on every surface that cancels (docs/reference.md, 4008; issue 28,
 * item 9): a terminal approval (KIOSK, VAN, CARD) is cancelled on its terminal, never through
 * Sunap: the API's CANCEL and DELETE answer 4008 and the console's cancel form is refused, with
 * nothing changed (no attempt, no refund, no audit row); a link (WEB) or saved-card (EPAY)
 * approval is cancelled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PAY_PATHS, TERMINAL_PAY_PATHS } from '../../src/gateway/payment-state.js';
import { forEachEngine, paymentBody, seqNo, withApp } from '../helpers/app.js';
import { ownerClient, textOf } from '../console/support.js';

const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('every PAY_PATH\'s cancel rule', (engine) => {
  const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });
  const db = () => t.app.sunap.database.db;
  const terminal = async (payPath: string) => {
    const trans = seqNo(payPath);
    const r = await t.post('/sandbox/terminal-payments', { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_SEQNO: trans, APPROVAL_AMOUNT: '5000', MOBILE_NO: '01012345678', PAY_PATH: payPath });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return trans;
  };
  const paid = async () => {
    const body = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', body)).RESULT_CODE, '0000');
    assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
    return { trans: body.TRANS_SEQNO as string, amount: String(body.APPROVAL_AMOUNT) };
  };
  const cancel = (trans: string, amount: string, type: 'CANCEL' | 'DELETE' = 'CANCEL') =>
    t.gw('requestPaymentCancel', { TRANS_SEQNO: trans, REQUEST_TYPE: type, APPROVAL_AMOUNT: amount, MOBILE_NO: '01012345678' });
  const paymentRow = (trans: string) => db().selectFrom('payments').selectAll().where('trans_seqno', '=', trans).where('store_code', '=', t.storeCode).executeTakeFirstOrThrow();
  const attempts = async (paymentId: string) => (await db().selectFrom('payment_attempts').select('kind').where('payment_id', '=', paymentId).execute()).map((a) => a.kind);

  test('the paths: WEB and EPAY are the gateway\'s, KIOSK, VAN and CARD a terminal\'s', () => {
    assert.deepEqual([...PAY_PATHS], ['WEB', 'EPAY', 'KIOSK', 'VAN', 'CARD']);
    assert.deepEqual([...TERMINAL_PAY_PATHS], ['KIOSK', 'VAN', 'CARD']);
  });

  for (const payPath of ['KIOSK', 'VAN', 'CARD']) {
    test(`${payPath}: CANCEL and DELETE answer 4008 on the API, the console's cancel form is refused, and nothing changes`, async () => {
      const trans = await terminal(payPath);
      const before = await paymentRow(trans);
      const c1 = rd(await cancel(trans, '5000'));
      assert.deepEqual([c1.RESULT_CODE, c1.RESULT_MSG], ['4008', `TRANS_SEQNO: approved on a terminal (${payPath}); cancel it on that terminal`]);
      assert.equal(rd(await cancel(trans, '5000', 'DELETE')).RESULT_CODE, '4008');

      const { owner, c } = await ownerClient(t);
      const detail = await c.get(`/console/payments/${encodeURIComponent(trans)}`);
      assert.equal(detail.status, 200);
      assert.ok(!detail.text.includes(`/console/payments/${encodeURIComponent(trans)}/cancel`), 'no cancel button');
      const posted = await c.post(`/console/payments/${encodeURIComponent(trans)}/cancel`, { reason: '단말기 결제 취소 시도', confirm: 'yes' }, { from: `/console/payments/${encodeURIComponent(trans)}` });
      assert.equal(posted.status, 400, textOf(posted.text).slice(0, 300));
      assert.match(textOf(posted.text), /단말기에서 승인된 결제는 그 단말기에서 취소해 주세요/);

      const after = await paymentRow(trans);
      assert.equal(after.state, 'APPROVE_COMPLETE');
      assert.equal(after.cancel_at, null);
      assert.deepEqual(await attempts(after.id), await attempts(before.id), 'no cancel attempt');
      const audit = await db().selectFrom('audit_log').select('action').where('tenant_id', '=', owner.accountId).where('action', '=', 'payment.cancel').execute();
      assert.equal(audit.length, 0, 'no audit row for a refused cancel');
    });
  }

  test('WEB and EPAY: cancelled through the API and through the console', async () => {
    const web = await paid();
    const r = rd(await cancel(web.trans, web.amount));
    assert.equal(r.RESULT_CODE, '0000', JSON.stringify(r));
    assert.equal((await paymentRow(web.trans)).state, 'CANCEL_COMPLETE');

    const epay = await paid();
    await db().updateTable('payments').set({ pay_path: 'EPAY' }).where('trans_seqno', '=', epay.trans).where('store_code', '=', t.storeCode).execute();
    assert.equal(rd(await cancel(epay.trans, epay.amount)).RESULT_CODE, '0000');
    assert.equal((await paymentRow(epay.trans)).state, 'CANCEL_COMPLETE');

    const byConsole = await paid();
    await db().updateTable('payments').set({ pay_path: 'EPAY' }).where('trans_seqno', '=', byConsole.trans).where('store_code', '=', t.storeCode).execute();
    const { c } = await ownerClient(t);
    const posted = await c.post(`/console/payments/${encodeURIComponent(byConsole.trans)}/cancel`, { reason: '고객 요청', confirm: 'yes' }, { from: `/console/payments/${encodeURIComponent(byConsole.trans)}` });
    assert.equal(posted.status, 303);
    assert.equal((await paymentRow(byConsole.trans)).state, 'CANCEL_COMPLETE');
  });
});
