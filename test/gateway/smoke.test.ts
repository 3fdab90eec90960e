import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engines } from '../helpers/db.js';
import { paymentBody, startApp, type TestApp } from '../helpers/app.js';

for (const engine of engines) {
  describe(`smoke [${engine}]`, () => {
    let t: TestApp;
    before(async () => { t = await startApp(engine); });
    after(async () => t?.close());
    test('create and search', async () => {
      const body = paymentBody();
      const r = await t.gw('requestPayment', body);
      assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
      const s = await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO });
      assert.equal(s.body.result_data.APPROVE_STATUS, 'STORE_REQUEST');
    });
  });
}
