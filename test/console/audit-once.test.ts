/**
 * One audit row per refund (docs/security.md, "Probes of issue 28"): five cancels of one payment
 * (or one invoice) submitted at once from the console refund once and record it once; a
 * repeat after the refund records nothing. Several rounds, both engines.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { eventually } from '../helpers/wait.js';
import { ownerClient } from './support.js';

const ROUNDS = 4;
const AT_ONCE = 5;

forEachEngine('console: one audit row per refund', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;
  const auditRows = (action: string, target: string) => db().selectFrom('audit_log').select('id').where('action', '=', action).where('target', '=', target).execute();

  test(`${AT_ONCE} payment cancels at once, ${ROUNDS} rounds: one refund, one audit row; a later repeat adds none`, async () => {
    const { c } = await ownerClient(t);
    for (let round = 0; round < ROUNDS; round++) {
      const body = paymentBody({});
      assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
      const seq = String(body.TRANS_SEQNO);
      assert.equal((await t.pay(seq)).approved, true);
      const csrf = await c.csrf(`/console/payments/${seq}/cancel`);
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: `동시 취소 ${round}` }, { csrf })));
      // The first refunds; the others either find it done (303) or find it in progress (409): never a 500.
      for (const a of answers) assert.ok(a.status === 303 || a.status === 409, `round ${round}: ${a.status}`);
      assert.ok(answers.some((a) => a.status === 303));
      const p = await db().selectFrom('payments').selectAll().where('trans_seqno', '=', seq).executeTakeFirstOrThrow();
      assert.equal(p.state, 'CANCEL_COMPLETE');
      const cancels = await db().selectFrom('payment_attempts').select('id').where('payment_id', '=', p.id).where('kind', '=', 'CANCEL').where('status', '=', 'CANCELED').execute();
      assert.equal(cancels.length, 1, 'one refund');
      assert.equal((await auditRows('payment.cancel', seq)).length, 1, `round ${round}: one audit row for one refund`);
      assert.equal((await c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: '다시' }, { csrf })).status, 303, 'a repeat answers as done');
      assert.equal((await auditRows('payment.cancel', seq)).length, 1, 'and records nothing more');
    }
  });

  test(`${AT_ONCE} invoice cancels at once, ${ROUNDS} rounds: one refund, one audit row`, async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    for (let round = 0; round < ROUNDS; round++) {
      assert.equal((await c.post('/console/invoices/new', { name: '동시', phone: '01012345678', amount: '5000', reason: `수강료 ${round}` }, { from: '/console/invoices/new' })).status, 303);
      const inv = await db().selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).orderBy('id', 'desc').executeTakeFirstOrThrow();
      const seq = inv.trans_seqno;
      await eventually(async () => (await db().selectFrom('payments').select('id').where('trans_seqno', '=', seq).executeTakeFirst()) !== undefined, 'the payment issued');
      assert.equal((await t.pay(seq)).approved, true);
      await eventually(async () => (await db().selectFrom('invoices').select('status').where('id', '=', inv.id).executeTakeFirstOrThrow()).status === 'DONE', 'DONE');
      const csrf = await c.csrf(`/console/invoices/${inv.unique_id}/cancel`);
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => c.post(`/console/invoices/${inv.unique_id}/cancel`, {}, { csrf })));
      for (const a of answers) assert.ok(a.status === 303 || a.status === 409, `round ${round}: ${a.status}`);
      assert.equal((await db().selectFrom('invoices').select('status').where('id', '=', inv.id).executeTakeFirstOrThrow()).status, 'CANCELED');
      assert.equal((await auditRows('invoice.cancel', inv.unique_id)).length, 1, `round ${round}: one audit row for one refund`);
    }
  });
});
