import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clearOfKstMidnight, forEachEngine, paymentBody, seqNo, withApp } from '../helpers/app.js';
import { ConsoleClient, newOwner, textOf } from './support.js';

forEachEngine('console: overview', (engine) => {
  const t = withApp(engine);

  test('today\'s and this month\'s paid, cancelled and net; the chart and the calendar; points; failing callbacks', async () => {
    await clearOfKstMidnight(t);
    const store = await t.addStore();
    const owner = await newOwner(t, { storeCode: store, points: 1234 });
    const c = new ConsoleClient(t);
    await c.signIn(owner.email, owner.password);
    const amounts = [10_000, 20_000, 30_000];
    const seqs: string[] = [];
    for (const a of amounts) {
      const seq = seqNo('OV');
      seqs.push(seq);
      // A callback target that refuses the connection: a failing delivery.
      await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, STORE_CODE: store, APPROVAL_AMOUNT: String(a), CONFIRM_URL: 'https://127.0.0.1:9/cb' }));
      assert.equal((await t.pay(seq, undefined, store)).approved, true);
    }
    // Cancel the 20,000 one through the API.
    const cancel = await t.gw('requestPaymentCancel', { TRANS_SEQNO: seqs[1], STORE_CODE: store, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '20000', MOBILE_NO: '01012345678' });
    assert.equal(cancel.body.result_data.RESULT_CODE, '0000', JSON.stringify(cancel.body));
    const failing = async () => (await t.app.sunap.database.db.selectFrom('outbound_attempts').select('id').where('target', '=', 'CALLBACK').where('error', 'is not', null).execute()).length;
    for (let i = 0; i < 200 && (await failing()) < 3; i++) await new Promise((r) => setTimeout(r, 50));
    const text = textOf((await c.get('/console')).text);
    assert.ok(text.includes('오늘 결제 60,000원 3건'), text.slice(0, 800));
    assert.ok(text.includes('오늘 취소 20,000원 1건'));
    assert.ok(text.includes('오늘 순매출 40,000원'));
    assert.ok(text.includes('이번 달 결제 60,000원 3건'));
    assert.ok(text.includes('1,234P'));
    assert.ok(text.includes('실패한 전달 3건'), 'three callbacks failing');
    for (const seq of seqs) assert.ok(text.includes(seq), 'each failing payment is listed');
    // The calendar's today cell and the chart's day table (a tap away, no hover) carry the numbers.
    const page = (await c.get('/console')).text;
    assert.match(page, /<td class="today" aria-current="date"><span class="day">\d+<\/span><span class="net">4만<\/span><span class="count">3건 · 취소 1<\/span>/);
    assert.match(page, /<td class="num">60,000원 <span class="muted">3건<\/span><\/td><td class="num">20,000원 <span class="muted">1건<\/span><\/td>/);
  });
});
