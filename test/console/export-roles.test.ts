import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { addMember, ownerClient, type ConsoleClient } from './support.js';

forEachEngine('console: exports by role', (engine) => {
  const t = withApp(engine);
  const rows = async (c: ConsoleClient, path: string) => {
    const res = await fetch(`${t.url}${path}`, { headers: { cookie: c.cookieHeader() } });
    assert.equal(res.status, 200);
    const all: string[][] = parse(Buffer.from(await res.arrayBuffer()).toString('utf8'), { bom: true });
    return { head: all[0]!, body: all.slice(1) };
  };

  test('a viewer\'s exports mask every customer phone number; a manager\'s carry them whole', async () => {
    const { c } = await ownerClient(t, { points: 100 });
    const body = paymentBody({ MOBILE_NO: '01098765432', PAY_USER_NAME: '내보내기확인' });
    assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
    assert.equal((await c.post('/console/invoices/new', { requestId: 'console-export-role-1', name: '청구확인', phone: '010-5555-1234', guardianPhone: '010-7777-8888', amount: '5000', reason: '수강료' }, { from: '/console/invoices/new' })).status, 303);
    const viewer = await addMember(t, c, 'viewer');
    const manager = await addMember(t, c, 'manager');

    const pay = (r: { head: string[]; body: string[][] }) => r.body.find((x) => x[r.head.indexOf('결제자')] === '내보내기확인')![r.head.indexOf('전화번호')];
    assert.equal(pay(await rows(manager.c, '/console/payments.csv')), '010-9876-5432');
    assert.equal(pay(await rows(viewer.c, '/console/payments.csv')), '010-****-5432');

    const inv = async (cl: ConsoleClient) => {
      const r = await rows(cl, '/console/invoices.csv');
      const row = r.body.find((x) => x[r.head.indexOf('받는 분')] === '청구확인')!;
      return [row[r.head.indexOf('전화번호')], row[r.head.indexOf('보호자 전화번호')]];
    };
    assert.deepEqual(await inv(manager.c), ['010-5555-1234', '010-7777-8888']);
    assert.deepEqual(await inv(viewer.c), ['010-****-1234', '010-****-8888']);
  });
});
