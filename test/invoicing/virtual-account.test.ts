import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { withReceiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { createOne, newAccount, waitSent } from './support.js';

/**
 * An invoice a parent pays by virtual account (docs/reference.md, "Virtual accounts"): the
 * issue leaves it PENDING, the deposit makes it DONE with bill.paid; an account closed unpaid
 * leaves it payable; a cancel in the processor's dashboard makes it CANCELED with bill.canceled.
 */
forEachEngine('invoices paid by virtual account', (engine) => {
  const rx = withReceiver();
  const t = withApp(engine);

  async function invoice() {
    const a = await newAccount(t, { points: 1000 });
    const id = await createOne(t, a, { webhookUrl: `${rx.url}/hooks`, webhookSecret: 'whsec_va_0123456789' });
    const d = await waitSent(t, a, id);
    return { a, id, seq: d.bill.transSeqNo as string };
  }
  const where = () => ({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode });
  const events = (id: string) => rx.received.filter((r) => r.json?.billId === id).map((r) => r.headers['x-service-event']);

  test('issued: still PENDING and no webhook; deposited: DONE, the deposit\'s bank and time, bill.paid once', async () => {
    const { a, id, seq } = await invoice();
    const r = await t.post(`/sandbox/payments/${seq}/pay`, { ...where(), method: 'VIRTUAL_ACCOUNT' });
    assert.equal(r.body.APPROVE_STATUS, 'STORE_REQUEST');
    const pending = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
    assert.deepEqual([pending.bill.status, pending.payment], ['PENDING', null]);
    assert.deepEqual(events(id), []);
    assert.equal((await t.post(`/sandbox/payments/${seq}/deposit`, where())).body.APPROVE_STATUS, 'APPROVE_COMPLETE');
    const done = await eventually(async () => {
      const d = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
      return d.bill.status === 'DONE' ? d : undefined;
    }, 'the invoice DONE');
    assert.deepEqual([done.payment.payCompany, done.payment.acceptNumber, done.payment.installmentMonth], ['신한은행', '', 0]);
    await eventually(async () => events(id).includes('bill.paid'), 'bill.paid');
    assert.deepEqual(events(id), ['bill.paid']);
  });

  test('a cancel in the processor\'s dashboard: CANCELED with bill.canceled, as a cancel through Sunap', async () => {
    const { a, id, seq } = await invoice();
    assert.equal((await t.post(`/sandbox/payments/${seq}/pay`, { ...where(), method: 'EASY_PAY' })).body.approved, true);
    await eventually(async () => events(id).includes('bill.paid'), 'bill.paid');
    assert.equal((await t.post(`/sandbox/payments/${seq}/dashboard-cancel`, where())).body.APPROVE_STATUS, 'CANCEL_COMPLETE');
    assert.equal((await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.bill.status, 'CANCELED');
    await eventually(async () => events(id).includes('bill.canceled'), 'bill.canceled');
    assert.deepEqual(events(id), ['bill.paid', 'bill.canceled']);
  });

  test('deleting an invoice whose account is open closes the account first; the deposit then finds nothing', async () => {
    const { a, id, seq } = await invoice();
    await t.post(`/sandbox/payments/${seq}/pay`, { ...where(), method: 'VIRTUAL_ACCOUNT' });
    assert.equal((await t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h)).body.result_code, 0);
    const p = await t.app.sunap.database.db.selectFrom('payments').select(['state', 'vbank_account']).where('trans_seqno', '=', seq).executeTakeFirstOrThrow();
    assert.deepEqual(p, { state: 'STORE_DELETE', vbank_account: '' });
    assert.equal((await t.post(`/sandbox/payments/${seq}/deposit`, where())).status, 404);
  });
});
