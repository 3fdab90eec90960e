import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kstCompact } from '../../src/platform/kst.js';
import type { CardProcessor } from '../../src/ports/card-processor.js';
import { SandboxCardProcessor } from '../../src/ports/sandbox-card-processor.js';
import { forEachEngine, paymentBody, seqNo, startApp, withApp } from '../helpers/app.js';

const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('gateway API', (engine) => {
  const t = withApp(engine);

  async function created(over: Record<string, unknown> = {}) {
    const body = paymentBody(over);
    const r = await t.gw('requestPayment', body);
    assert.equal(rd(r).RESULT_CODE, '0000', JSON.stringify(r.body));
    return body as { TRANS_SEQNO: string; APPROVAL_AMOUNT: string; MOBILE_NO: string };
  }
  async function paid(over: Record<string, unknown> = {}, card?: string) {
    const b = await created(over);
    const p = await t.pay(b.TRANS_SEQNO, card);
    assert.equal(p.approved, true, JSON.stringify(p));
    return b;
  }
  const cancel = (b: { TRANS_SEQNO: string; APPROVAL_AMOUNT: string }, over: Record<string, unknown> = {}) =>
    t.gw('requestPaymentCancel', { TRANS_SEQNO: b.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: b.APPROVAL_AMOUNT, MOBILE_NO: '01012345678', ...over });

  test('0000: requestPayment answers the envelope and a REDIRECT_URL with tid and token', async () => {
    const r = await t.gw('requestPayment', paymentBody());
    assert.equal(r.status, 200);
    assert.equal(r.body.result_code, 0);
    assert.equal(rd(r).RESULT_CODE, '0000');
    assert.equal(rd(r).RESULT_MSG, '정상 처리되었습니다');
    const u = new URL(rd(r).REDIRECT_URL);
    assert.equal(u.origin + u.pathname, `${t.url}/checkout`);
    assert.ok(u.searchParams.get('tid'));
    assert.ok(u.searchParams.get('token'));
  });

  test('requestPayment keeps what was sent, and the documented defaults for what was not', async () => {
    const full = paymentBody({ USER_ID: 'member-42', TEMP_VALUE: 'order-9', orderType: 'SHOP', RETURN_DISPLAY_YN: 'N' });
    assert.equal(rd(await t.gw('requestPayment', full)).RESULT_CODE, '0000');
    const a = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, full.TRANS_SEQNO as string))!;
    assert.deepEqual([a.user_id, a.temp_value, a.order_type, a.return_display_yn], ['member-42', 'order-9', 'SHOP', 'N']);
    const bare = paymentBody();
    assert.equal(rd(await t.gw('requestPayment', bare)).RESULT_CODE, '0000');
    const b = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, bare.TRANS_SEQNO as string))!;
    assert.deepEqual([b.user_id, b.temp_value, b.order_type, b.return_url, b.items_json], [null, null, 'BILL', null, null]);
  });

  test('searchPayment before approval: requested amount, null datetimes, zero cancel', async () => {
    const b = await created({ APPROVAL_AMOUNT: '11000' });
    const r = rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO }));
    assert.equal(r.RESULT_CODE, '0000');
    assert.equal(r.APPROVE_STATUS, 'STORE_REQUEST');
    assert.equal(r.APPROVAL_AMOUNT, 11000);
    assert.equal(r.SUPPLY_AMOUNT, 10000);
    assert.equal(r.TAX_CHARGE, 1000);
    assert.equal(r.APPROVAL_DATETIME, null);
    assert.equal(r.APPROVAL_CANCEL_DATETIME, null);
    assert.equal(r.CANCEL_AMOUNT, 0);
    assert.equal(r.CANCEL_REASON, '');
    assert.deepEqual([r.APPROVAL_NUMBER, r.INSTALLMENT_MONTH, r.ISSUER_NAME, r.ACCEPTER_NAME, r.METHOD_NAME], ['', '', '', '', ''], 'nothing of a card yet');
    assert.equal(r.STORE_NAME, '행복 피아노 학원');
    assert.equal(r.CEO_NAME, '김대표');
    assert.equal(r.BIZ_REG_NUM, '1234567890');
    assert.equal(r.STORE_TEL_NUM, '0212345678');
    assert.equal(r.PAY_PATH, 'WEB');
  });

  test('full state machine: approve, cancel, cancel again is 0000 (idempotent)', async () => {
    const b = await paid();
    const s1 = rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO }));
    assert.equal(s1.APPROVE_STATUS, 'APPROVE_COMPLETE');
    assert.match(s1.APPROVAL_DATETIME, /^\d{14}$/);
    assert.match(s1.APPROVAL_NUMBER, /^\d{8}$/);
    assert.equal(s1.INSTALLMENT_MONTH, '00');
    assert.equal(s1.ISSUER_NAME, '신한카드');
    assert.equal(s1.METHOD_NAME, '신용카드');
    const c1 = rd(await cancel(b, { CANCEL_REASON: '고객 요청' }));
    assert.equal(s1.RESULT_MSG, '정상 처리되었습니다');
    assert.deepEqual(c1, { RESULT_CODE: '0000', RESULT_MSG: '정상 처리되었습니다', TRANS_SEQNO: b.TRANS_SEQNO, MOBILE_NO: '01012345678', APPROVAL_AMOUNT: 128000, TEMP_VALUE: null });
    const s2 = rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO }));
    assert.equal(s2.APPROVE_STATUS, 'CANCEL_COMPLETE');
    assert.equal(s2.CANCEL_AMOUNT, 128000);
    assert.equal(s2.CANCEL_REASON, '고객 요청');
    assert.match(s2.APPROVAL_CANCEL_DATETIME, /^\d{14}$/);
    assert.equal(rd(await cancel(b)).RESULT_CODE, '0000');
  });

  test('DELETE closes an unpaid payment; again answers 0000 with only code and message', async () => {
    const b = await created();
    const d = { TRANS_SEQNO: b.TRANS_SEQNO, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: b.APPROVAL_AMOUNT, MOBILE_NO: b.MOBILE_NO };
    const r1 = rd(await t.gw('requestPaymentCancel', d));
    assert.deepEqual(Object.keys(r1).sort(), ['RESULT_CODE', 'RESULT_MSG']);
    assert.equal(r1.RESULT_CODE, '0000');
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).APPROVE_STATUS, 'STORE_DELETE');
    assert.equal(rd(await t.gw('requestPaymentCancel', d)).RESULT_CODE, '0000');
    const p = await t.pay(b.TRANS_SEQNO);
    assert.equal(p.approved, false, 'a deleted payment cannot be paid');
  });

  test('3001: wrong signature, wrong key, TRANS_AT outside the window', async () => {
    const b = paymentBody();
    const wrong = await t.gw('requestPayment', { ...b, API_SIGN: 'a'.repeat(64) });
    assert.equal(rd(wrong).RESULT_CODE, '3001');
    assert.match(rd(wrong).RESULT_MSG, /^API_SIGN: /);
    assert.equal(rd(await t.gw('requestPayment', b, 'not-the-key')).RESULT_CODE, '3001');
    const old = kstCompact(Date.now() - 3600_000);
    const late = await t.gw('requestPayment', { ...b, TRANS_AT: old });
    assert.equal(rd(late).RESULT_CODE, '3001');
    assert.match(rd(late).RESULT_MSG, /^TRANS_AT: /);
    // Nothing was created by any of them.
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).RESULT_CODE, '4003');
  });

  test('3001, never an error, for a platform left with no key it may sign with', async () => {
    const other = await t.addPlatform();
    const b = paymentBody({ PLATFORM_CODE: other.platformCode, STORE_CODE: other.storeCode });
    assert.equal(rd(await t.gw('requestPayment', b, other.apiKey)).RESULT_CODE, '0000');
    // Every key retired (an operator's mistake, or a restore that lost the current key).
    await t.app.sunap.database.db.updateTable('platform_keys').set({ retired_at: 1 }).where('platform_code', '=', other.platformCode).execute();
    const r = await t.gw('searchPayment', { PLATFORM_CODE: other.platformCode, STORE_CODE: other.storeCode, TRANS_SEQNO: b.TRANS_SEQNO }, other.apiKey);
    assert.equal(r.status, 200);
    assert.equal(rd(r).RESULT_CODE, '3001');
  });

  test('API_SIGN in upper-case hex is accepted', async () => {
    const b = paymentBody();
    const transAt = kstCompact(Date.now());
    const { apiSign } = await import('../../src/platform/crypto.js');
    const sign = apiSign(b.TRANS_SEQNO as string, t.platformCode, t.storeCode, transAt, t.apiKey).toUpperCase();
    assert.equal(rd(await t.gw('requestPayment', { ...b, TRANS_AT: transAt, API_SIGN: sign })).RESULT_CODE, '0000');
  });

  test('4001: the same TRANS_SEQNO twice', async () => {
    const b = await created();
    const r = rd(await t.gw('requestPayment', { ...paymentBody(), TRANS_SEQNO: b.TRANS_SEQNO }));
    assert.equal(r.RESULT_CODE, '4001');
    assert.match(r.RESULT_MSG, /^TRANS_SEQNO: /);
  });

  test('4002: a body that is not a JSON object is HTTP 400, result_code -1', async () => {
    for (const raw of ['[1,2]', '"text"', '42', 'null']) {
      const r = await t.post('/api/requestPayment', raw);
      assert.equal(r.status, 400, raw);
      assert.equal(r.body.result_code, -1);
      assert.equal(rd(r).RESULT_CODE, '4002');
      assert.match(rd(r).RESULT_MSG, /^body: /);
    }
    const bad = await t.post('/api/searchPayment', '{"TRANS_SEQNO":');
    assert.equal(bad.status, 400);
    assert.equal(rd(bad).RESULT_CODE, '4002');
    assert.match(rd(bad).RESULT_MSG, /^body: /);
  });

  // Each validation rule: the field named first in RESULT_MSG, code 4002, nothing created.
  const createRules: [string, Record<string, unknown>, string][] = [
    ['TRANS_SEQNO missing', { TRANS_SEQNO: undefined }, 'TRANS_SEQNO'],
    ['TRANS_SEQNO too long', { TRANS_SEQNO: 'X'.repeat(65) }, 'TRANS_SEQNO'],
    ['TRANS_AT not 14 digits', { TRANS_AT: '2026081912' }, 'TRANS_AT'],
    ['TRANS_AT not a real time', { TRANS_AT: '20261345120000' }, 'TRANS_AT'],
    ['API_SIGN not hex', { API_SIGN: 'z'.repeat(64) }, 'API_SIGN'],
    ['API_SIGN missing', { API_SIGN: undefined }, 'API_SIGN'],
    ['PLATFORM_CODE missing', { PLATFORM_CODE: undefined }, 'PLATFORM_CODE'],
    ['STORE_CODE missing', { STORE_CODE: undefined }, 'STORE_CODE'],
    ['APPROVAL_AMOUNT as a number', { APPROVAL_AMOUNT: 128000 }, 'APPROVAL_AMOUNT'],
    ['APPROVAL_AMOUNT 13 digits', { APPROVAL_AMOUNT: '1234567890123' }, 'APPROVAL_AMOUNT'],
    ['APPROVAL_AMOUNT zero', { APPROVAL_AMOUNT: '0' }, 'APPROVAL_AMOUNT'],
    ['APPROVAL_AMOUNT with letters', { APPROVAL_AMOUNT: '12a' }, 'APPROVAL_AMOUNT'],
    ['MOBILE_NO 9 digits', { MOBILE_NO: '010123456' }, 'MOBILE_NO'],
    ['MOBILE_NO with dashes', { MOBILE_NO: '010-1234-5678' }, 'MOBILE_NO'],
    ['PAY_USER_NAME missing', { PAY_USER_NAME: undefined }, 'PAY_USER_NAME'],
    ['REQUEST_REASON missing', { REQUEST_REASON: undefined }, 'REQUEST_REASON'],
    ['CONFIRM_URL missing', { CONFIRM_URL: undefined }, 'CONFIRM_URL'],
    ['CONFIRM_URL not https', { CONFIRM_URL: 'http://merchant.example/cb' }, 'CONFIRM_URL'],
    ['RETURN_DISPLAY_YN other', { RETURN_DISPLAY_YN: 'X' }, 'RETURN_DISPLAY_YN'],
    ['RETURN_URL javascript:', { RETURN_URL: 'javascript:alert(1)' }, 'RETURN_URL'],
    ['RETURN_URL relative', { RETURN_URL: '/orders/1' }, 'RETURN_URL'],
    ['RETURN_URL over 100', { RETURN_URL: 'https://m.example/' + 'a'.repeat(90) }, 'RETURN_URL'],
    ['RETURN_URL needed for Y', { RETURN_DISPLAY_YN: 'Y' }, 'RETURN_URL'],
    ['orderType other', { orderType: 'GIFT' }, 'orderType'],
    ['ITEMS not an array', { ITEMS: {} }, 'ITEMS'],
    ['ITEMS name over 20', { APPROVAL_AMOUNT: '2000', ITEMS: [{ name: 'a', unitPrice: 1000 }, { name: 'b'.repeat(21), unitPrice: 1000 }] }, 'ITEMS[1].name'],
    ['ITEMS unitPrice as text', { APPROVAL_AMOUNT: '1000', ITEMS: [{ name: 'a', unitPrice: '1000' }] }, 'ITEMS[0].unitPrice'],
    ['ITEMS publisher over 60', { APPROVAL_AMOUNT: '1000', ITEMS: [{ name: 'a', unitPrice: 1000, publisher: 'p'.repeat(61) }] }, 'ITEMS[0].publisher'],
    ['ITEMS imageUrl over 500', { APPROVAL_AMOUNT: '1000', ITEMS: [{ name: 'a', unitPrice: 1000, imageUrl: 'https://i/' + 'p'.repeat(500) }] }, 'ITEMS[0].imageUrl'],
    ['ITEMS discount above line', { APPROVAL_AMOUNT: '1000', ITEMS: [{ name: 'a', unitPrice: 1000, discountAmount: 2000 }] }, 'ITEMS[0].discountAmount'],
    ['ITEMS sum differs', { APPROVAL_AMOUNT: '5000', ITEMS: [{ name: 'a', unitPrice: 1000 }] }, 'APPROVAL_AMOUNT'],
  ];
  for (const [name, over, field] of createRules) {
    test(`4002 requestPayment: ${name} → ${field}`, async () => {
      // An undefined member is left out of the JSON, and t.gw does not fill it in.
      const body = { ...paymentBody(), ...over };
      const r = await t.gw('requestPayment', body);
      assert.equal(r.status, 200);
      assert.equal(rd(r).RESULT_CODE, '4002', JSON.stringify(rd(r)));
      assert.ok(rd(r).RESULT_MSG.startsWith(`${field}: `), rd(r).RESULT_MSG);
      if (typeof body.TRANS_SEQNO === 'string' && body.TRANS_SEQNO.length <= 64) {
        assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).RESULT_CODE, '4003', 'nothing created');
      }
    });
  }

  const cancelRules: [string, Record<string, unknown>, string][] = [
    ['REQUEST_TYPE other', { REQUEST_TYPE: 'REFUND' }, 'REQUEST_TYPE'],
    ['REQUEST_TYPE missing', { REQUEST_TYPE: undefined }, 'REQUEST_TYPE'],
    ['APPROVAL_AMOUNT missing', { APPROVAL_AMOUNT: undefined }, 'APPROVAL_AMOUNT'],
    ['MOBILE_NO 8 digits', { MOBILE_NO: '01012345' }, 'MOBILE_NO'],
  ];
  for (const [name, over, field] of cancelRules) {
    test(`4002 requestPaymentCancel: ${name} → ${field}`, async () => {
      const b = await paid();
      const body: Record<string, unknown> = { TRANS_SEQNO: b.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: b.APPROVAL_AMOUNT, MOBILE_NO: '010123456', ...over };
      for (const [k, v] of Object.entries(over)) if (v === undefined) delete body[k];
      const r = rd(await t.gw('requestPaymentCancel', body));
      assert.equal(r.RESULT_CODE, '4002');
      assert.ok(r.RESULT_MSG.startsWith(`${field}: `), r.RESULT_MSG);
      assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).APPROVE_STATUS, 'APPROVE_COMPLETE');
    });
  }

  // Each limit of requestPayment on both sides: the value at the limit is accepted, one past it is
  // refused with the field and the words that say how to fix it (docs/reference.md, "Limits").
  const item = (over: Record<string, unknown> = {}) => ({ name: '수강료', unitPrice: 1000, ...over });
  const createEdges: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    ['PAY_USER_NAME up to 50', { PAY_USER_NAME: '가'.repeat(50) }, { PAY_USER_NAME: '가'.repeat(51) }, 'PAY_USER_NAME: must be at most 50 characters'],
    ['PAY_USER_NAME not empty', { PAY_USER_NAME: '가' }, { PAY_USER_NAME: '' }, 'PAY_USER_NAME: must not be empty'],
    ['REQUEST_REASON up to 100', { REQUEST_REASON: '가'.repeat(100) }, { REQUEST_REASON: '가'.repeat(101) }, 'REQUEST_REASON: must be at most 100 characters'],
    ['REQUEST_REASON not empty', { REQUEST_REASON: '가' }, { REQUEST_REASON: '' }, 'REQUEST_REASON: must not be empty'],
    ['INFO_MESSAGE up to 500', { INFO_MESSAGE: '가'.repeat(500) }, { INFO_MESSAGE: '가'.repeat(501) }, 'INFO_MESSAGE: must be at most 500 characters'],
    ['TEMP_VALUE up to 500', { TEMP_VALUE: 't'.repeat(500) }, { TEMP_VALUE: 't'.repeat(501) }, 'TEMP_VALUE: must be at most 500 characters'],
    ['USER_ID up to 100', { USER_ID: 'u'.repeat(100) }, { USER_ID: 'u'.repeat(101) }, 'USER_ID: must be at most 100 characters'],
    ['CONFIRM_URL not empty', { CONFIRM_URL: 'https://a.kr/' }, { CONFIRM_URL: '' }, 'CONFIRM_URL: must not be empty'],
    ['MOBILE_NO from 10 digits', { MOBILE_NO: '0101234567' }, { MOBILE_NO: '010123456' }, 'MOBILE_NO: must be 10 to 11 digits'],
    ['APPROVAL_AMOUNT digits only', { APPROVAL_AMOUNT: '1000' }, { APPROVAL_AMOUNT: '1000원' }, 'APPROVAL_AMOUNT: must be a string of 1 to 12 digits'],
    ['TRANS_AT 14 digits', {}, { TRANS_AT: '2026112214300' }, 'TRANS_AT: must be 14 digits, yyyyMMddHHmmss in KST'],
    ['API_SIGN hex', {}, { API_SIGN: 'g'.repeat(64) }, 'API_SIGN: must be 64 hex characters'],
    ['PLATFORM_CODE not empty', {}, { PLATFORM_CODE: '' }, 'PLATFORM_CODE: must not be empty'],
    ['PLATFORM_CODE up to 64', {}, { PLATFORM_CODE: 'P'.repeat(65) }, 'PLATFORM_CODE: must be at most 64 characters'],
    ['STORE_CODE not empty', {}, { STORE_CODE: '' }, 'STORE_CODE: must not be empty'],
    ['STORE_CODE up to 64', {}, { STORE_CODE: 'S'.repeat(65) }, 'STORE_CODE: must be at most 64 characters'],
    ['orderType BILL or SHOP', { orderType: 'BILL' }, { orderType: 'bill' }, 'orderType: '],
    ['ITEMS up to 100 lines', { APPROVAL_AMOUNT: '100000', ITEMS: Array.from({ length: 100 }, () => item()) },
      { APPROVAL_AMOUNT: '101000', ITEMS: Array.from({ length: 101 }, () => item()) }, 'ITEMS: must have at most 100 entries'],
    ['ITEMS unitPrice from 0', { APPROVAL_AMOUNT: '1000', ITEMS: [item(), item({ unitPrice: 0 })] },
      { APPROVAL_AMOUNT: '1000', ITEMS: [item(), item({ unitPrice: -1 })] }, 'ITEMS[1].unitPrice: must be at least 0'],
    ['ITEMS unitPrice up to 999999999999', { APPROVAL_AMOUNT: '999999999999', ITEMS: [item({ unitPrice: 999_999_999_999 })] },
      { APPROVAL_AMOUNT: '999999999999', ITEMS: [item({ unitPrice: 1_000_000_000_000 })] }, 'ITEMS[0].unitPrice: must be at most 999999999999'],
    ['ITEMS qty from 1', { APPROVAL_AMOUNT: '1000', ITEMS: [item({ qty: 1 })] }, { APPROVAL_AMOUNT: '1000', ITEMS: [item({ qty: 0 })] }, 'ITEMS[0].qty: must be at least 1'],
    ['ITEMS qty up to 1000000', { APPROVAL_AMOUNT: '1000000', ITEMS: [item({ unitPrice: 1, qty: 1_000_000 })] },
      { APPROVAL_AMOUNT: '1000001', ITEMS: [item({ unitPrice: 1, qty: 1_000_001 })] }, 'ITEMS[0].qty: must be at most 1000000'],
    ['ITEMS discountAmount from 0, AMOUNT named', { APPROVAL_AMOUNT: '900', ITEMS: [item({ discountAmount: 100, discountUnit: 'AMOUNT' })] },
      { APPROVAL_AMOUNT: '1000', ITEMS: [item({ discountAmount: -1 })] }, 'ITEMS[0].discountAmount: must be at least 0'],
    ['ITEMS discountUnit AMOUNT or RATE', { APPROVAL_AMOUNT: '900', ITEMS: [item({ discountAmount: 10, discountUnit: 'RATE' })] },
      { APPROVAL_AMOUNT: '900', ITEMS: [item({ discountAmount: 10, discountUnit: 'PERCENT' })] }, 'ITEMS[0].discountUnit: '],
    ['ITEMS taxType TAX_ON named', { APPROVAL_AMOUNT: '1000', ITEMS: [item({ taxType: 'TAX_ON' })] },
      { APPROVAL_AMOUNT: '1000', ITEMS: [item({ taxType: 'VAT' })] }, 'ITEMS[0].taxType: '],
    ['ITEMS vatRateBps up to 10000', { APPROVAL_AMOUNT: '1000', ITEMS: [item({ vatRateBps: 10_000 })] },
      { APPROVAL_AMOUNT: '1000', ITEMS: [item({ vatRateBps: 10_001 })] }, 'ITEMS[0].vatRateBps: must be at most 10000'],
    ['ITEMS vatRateBps from 0', { APPROVAL_AMOUNT: '1000', ITEMS: [item({ vatRateBps: 0 })] },
      { APPROVAL_AMOUNT: '1000', ITEMS: [item({ vatRateBps: -1 })] }, 'ITEMS[0].vatRateBps: must be at least 0'],
  ];
  for (const [name, accepted, refused, msg] of createEdges) {
    test(`requestPayment's limit, both sides: ${name}`, async () => {
      const ok = paymentBody(accepted);
      assert.equal(rd(await t.gw('requestPayment', ok)).RESULT_CODE, '0000', `accepted: ${JSON.stringify(accepted).slice(0, 120)}`);
      const bad = paymentBody(refused);
      const r = rd(await t.gw('requestPayment', bad));
      assert.equal(r.RESULT_CODE, '4002', JSON.stringify(r));
      if (msg.endsWith(': ')) assert.ok(r.RESULT_MSG.startsWith(msg), r.RESULT_MSG);
      else assert.equal(r.RESULT_MSG, msg);
      assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: bad.TRANS_SEQNO })).RESULT_CODE, '4003', 'nothing created');
    });
  }

  test('codes of 64 characters pass the field rules and are looked up (4005), not refused as malformed', async () => {
    for (const over of [{ PLATFORM_CODE: 'P'.repeat(64) }, { STORE_CODE: 'S'.repeat(64) }]) {
      assert.equal(rd(await t.gw('requestPayment', paymentBody(over))).RESULT_CODE, '4005', JSON.stringify(over).slice(0, 40));
    }
  });

  test("requestPaymentCancel's own limits, both sides: the amount's and phone's words, CANCEL_REASON up to 100", async () => {
    const b = await paid();
    const refusals: [Record<string, unknown>, string][] = [
      [{ APPROVAL_AMOUNT: '128,000' }, 'APPROVAL_AMOUNT: must be a string of 1 to 12 digits'],
      [{ MOBILE_NO: '01012345' }, 'MOBILE_NO: must be 9 to 11 digits'],
      [{ CANCEL_REASON: '가'.repeat(101) }, 'CANCEL_REASON: must be at most 100 characters'],
    ];
    for (const [over, msg] of refusals) {
      const r = rd(await cancel(b, over));
      assert.deepEqual([r.RESULT_CODE, r.RESULT_MSG], ['4002', msg]);
    }
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).APPROVE_STATUS, 'APPROVE_COMPLETE');
    assert.equal(rd(await cancel(b, { CANCEL_REASON: '가'.repeat(100) })).RESULT_CODE, '0000');
    const after = rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO }));
    assert.deepEqual([after.APPROVE_STATUS, after.CANCEL_REASON], ['CANCEL_COMPLETE', '가'.repeat(100)]);
  });

  test('MOBILE_NO of 9 digits is accepted on cancel (9–11)', async () => {
    const b = await paid();
    assert.equal(rd(await cancel(b, { MOBILE_NO: '021234567' })).RESULT_CODE, '0000');
  });

  test('unknown fields are ignored and optional nulls are absent', async () => {
    const r = await t.gw('requestPayment', { ...paymentBody(), SOMETHING_NEW: 1, INFO_MESSAGE: null, TEMP_VALUE: null, ITEMS: null });
    assert.equal(rd(r).RESULT_CODE, '0000');
  });

  test('4003: unknown TRANS_SEQNO, and another store of the same platform does not see it', async () => {
    const none = rd(await t.gw('searchPayment', { TRANS_SEQNO: seqNo('NONE') }));
    assert.deepEqual([none.RESULT_CODE, none.RESULT_MSG], ['4003', 'TRANS_SEQNO: no such transaction']);
    const b = await created();
    const other = await t.addStore();
    const r = rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO, STORE_CODE: other }));
    assert.equal(r.RESULT_CODE, '4003');
  });

  test('4004: cancel of an unknown payment, and a failing card cancel leaves CANCEL_FAIL', async () => {
    const none = rd(await cancel({ TRANS_SEQNO: seqNo('NONE'), APPROVAL_AMOUNT: '1000' }));
    assert.deepEqual([none.RESULT_CODE, none.RESULT_MSG], ['4004', 'TRANS_SEQNO: no such transaction']);
    const b = await paid({}, '4000000000000259');
    const r = rd(await cancel(b));
    assert.equal(r.RESULT_CODE, '4004');
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).APPROVE_STATUS, 'CANCEL_FAIL');
    // A later CANCEL retries the card cancel (this card always fails).
    assert.equal(rd(await cancel(b)).RESULT_CODE, '4004');
    const attempts = await t.app.sunap.database.db.selectFrom('payment_attempts').innerJoin('payments', 'payments.id', 'payment_attempts.payment_id')
      .select('payment_attempts.status').where('payments.trans_seqno', '=', b.TRANS_SEQNO).where('kind', '=', 'CANCEL').execute();
    assert.deepEqual(attempts.map((a) => a.status), ['FAILED', 'FAILED']);
  });

  test('4005: unknown platform, unknown store, a store of another platform', async () => {
    const other = await t.addPlatform();
    for (const pair of [{ PLATFORM_CODE: 'PCNOPE' }, { STORE_CODE: 'SDNOPE' }, { STORE_CODE: other.storeCode }]) {
      for (const op of ['requestPayment', 'searchPayment', 'requestPaymentCancel'] as const) {
        const r = rd(await t.gw(op, { ...paymentBody(), REQUEST_TYPE: 'CANCEL', ...pair }));
        assert.equal(r.RESULT_CODE, '4005', `${op} ${JSON.stringify(pair)}`);
        assert.equal(r.RESULT_MSG, 'PLATFORM_CODE, STORE_CODE: unknown platform or store, or the store is not of this platform');
      }
    }
  });

  test('tenant isolation: another platform cannot see or cancel this platform\'s payment', async () => {
    const b = await paid();
    const other = await t.addPlatform();
    const asOther = { PLATFORM_CODE: other.platformCode, STORE_CODE: other.storeCode };
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO, ...asOther }, other.apiKey)).RESULT_CODE, '4003');
    assert.equal(rd(await cancel(b, asOther)).RESULT_CODE, '3001', 'signed with the wrong key');
    const r = await t.gw('requestPaymentCancel', { TRANS_SEQNO: b.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: b.APPROVAL_AMOUNT, MOBILE_NO: '01012345678', ...asOther }, other.apiKey);
    assert.equal(rd(r).RESULT_CODE, '4004');
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).APPROVE_STATUS, 'APPROVE_COMPLETE');
    // The same TRANS_SEQNO is free in another platform's store.
    const again = await t.gw('requestPayment', { ...paymentBody(), TRANS_SEQNO: b.TRANS_SEQNO, ...asOther }, other.apiKey);
    assert.equal(rd(again).RESULT_CODE, '0000');
  });

  test('4006: a store without CAT information cannot cancel', async () => {
    const noCat = await t.addStore({ cat: false });
    const b = await created({ STORE_CODE: noCat });
    assert.equal((await t.pay(b.TRANS_SEQNO, undefined, noCat)).approved, true);
    const r = rd(await cancel(b, { STORE_CODE: noCat }));
    assert.equal(r.RESULT_CODE, '4006');
  });

  test('4007: a partial or different cancel amount is refused; DELETE needs the requested amount', async () => {
    const b = await paid();
    const r = rd(await cancel(b, { APPROVAL_AMOUNT: '1000' }));
    assert.equal(r.RESULT_CODE, '4007');
    assert.match(r.RESULT_MSG, /^APPROVAL_AMOUNT: /);
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO })).APPROVE_STATUS, 'APPROVE_COMPLETE');
    const u = await created();
    const d = rd(await t.gw('requestPaymentCancel', { TRANS_SEQNO: u.TRANS_SEQNO, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: '1', MOBILE_NO: u.MOBILE_NO }));
    assert.equal(d.RESULT_CODE, '4007');
  });

  test('sandbox terminal payments: recorded approved with an 8-digit approval number and the sandbox card; an unknown store is refused', async () => {
    const numbers: string[] = [];
    for (const payPath of ['VAN', 'CARD']) {
      const trans = seqNo(payPath);
      const r = await t.post('/sandbox/terminal-payments', { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_SEQNO: trans, APPROVAL_AMOUNT: '7000', MOBILE_NO: '01012345678', PAY_PATH: payPath });
      assert.deepEqual(r.body, { TRANS_SEQNO: trans, APPROVE_STATUS: 'APPROVE_COMPLETE', PAY_PATH: payPath, APPROVAL_AMOUNT: 7000 });
      const s = rd(await t.gw('searchPayment', { TRANS_SEQNO: trans }));
      assert.match(s.APPROVAL_NUMBER, /^[1-9]\d{7}$/);
      numbers.push(s.APPROVAL_NUMBER);
      assert.deepEqual([s.INSTALLMENT_MONTH, s.ISSUER_NAME, s.ACCEPTER_NAME, s.METHOD_NAME], ['00', '신한카드', '신한카드', '신용카드']);
      const p = (await t.app.sunap.gateway.findByStore(t.platformCode, t.storeCode, trans))!;
      assert.deepEqual([p.request_reason, p.pay_user_name], [`${payPath} 결제`, '']);
    }
    assert.notEqual(numbers[0], numbers[1], 'each approval gets its own number');
    const other = await t.addPlatform();
    const r = await t.post('/sandbox/terminal-payments', { PLATFORM_CODE: t.platformCode, STORE_CODE: other.storeCode, TRANS_SEQNO: seqNo('VAN'), APPROVAL_AMOUNT: '7000', MOBILE_NO: '01012345678', PAY_PATH: 'VAN' });
    assert.equal(r.status, 404);
    assert.equal(r.body.result_msg, 'PLATFORM_CODE, STORE_CODE: unknown platform or store, or the store is not of this platform');
  });

  test('4008: a terminal payment is cancelled on its terminal', async () => {
    const trans = seqNo('KIOSK');
    const r = await t.post('/sandbox/terminal-payments', { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_SEQNO: trans, APPROVAL_AMOUNT: '5000', MOBILE_NO: '01012345678', PAY_PATH: 'KIOSK' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const s = rd(await t.gw('searchPayment', { TRANS_SEQNO: trans }));
    assert.equal(s.APPROVE_STATUS, 'APPROVE_COMPLETE');
    assert.equal(s.PAY_PATH, 'KIOSK');
    const refused = rd(await cancel({ TRANS_SEQNO: trans, APPROVAL_AMOUNT: '5000' }));
    assert.deepEqual([refused.RESULT_CODE, refused.RESULT_MSG], ['4008', 'TRANS_SEQNO: approved on a terminal (KIOSK); cancel it on that terminal']);
  });

  test('4009: CANCEL of an unpaid or deleted payment, DELETE of a paid one', async () => {
    const u = await created();
    assert.equal(rd(await cancel(u)).RESULT_CODE, '4009');
    const p = await paid();
    const d = rd(await t.gw('requestPaymentCancel', { TRANS_SEQNO: p.TRANS_SEQNO, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: p.APPROVAL_AMOUNT, MOBILE_NO: p.MOBILE_NO }));
    assert.equal(d.RESULT_CODE, '4009');
    await t.gw('requestPaymentCancel', { TRANS_SEQNO: u.TRANS_SEQNO, REQUEST_TYPE: 'DELETE', APPROVAL_AMOUNT: u.APPROVAL_AMOUNT, MOBILE_NO: u.MOBILE_NO });
    assert.equal(rd(await cancel(u)).RESULT_CODE, '4009');
  });

  test('5001: CONFIRM_URL longer than 100 characters; exactly 100 is accepted', async () => {
    const at100 = 'https://merchant.example/' + 'c'.repeat(75);
    assert.equal(at100.length, 100);
    assert.equal(rd(await t.gw('requestPayment', paymentBody({ CONFIRM_URL: at100 }))).RESULT_CODE, '0000');
    const r = rd(await t.gw('requestPayment', paymentBody({ CONFIRM_URL: at100 + 'c' })));
    assert.equal(r.RESULT_CODE, '5001');
    assert.equal(r.RESULT_MSG, 'CONFIRM_URL: must be at most 100 characters');
  });

  test('ITEMS: VAT per TAX_ON line, tax-free total, RATE discounts floored', async () => {
    const ITEMS = [
      { name: '교재', unitPrice: 10000, qty: 3, discountAmount: 10, discountUnit: 'RATE' }, // 27,000 → VAT 2,455
      { name: '수강료', unitPrice: 100000, taxType: 'TAX_FREE' }, // 100,000 tax-free
      { name: '배송비', unitPrice: 3000, discountAmount: 500 }, // 2,500 → VAT 227
      { name: '3.3% 할인', unitPrice: 999, discountAmount: 33, discountUnit: 'RATE', vatRateBps: 500 }, // 999 − floor(329.67)=670 → VAT round(670·500/10500)=32
    ];
    const b = await created({ APPROVAL_AMOUNT: '130170', ITEMS, orderType: 'SHOP' });
    const r = rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO }));
    assert.equal(r.TAX_CHARGE, 2455 + 227 + 32);
    assert.equal(r.SUPPLY_AMOUNT, (27000 - 2455) + (2500 - 227) + (670 - 32));
    assert.equal(r.SUPPLY_AMOUNT + r.TAX_CHARGE + 100000, 130170);
  });

  test('9999: an internal failure is HTTP 500 and changes nothing', async () => {
    const broken: CardProcessor = {
      approve: (req) => new SandboxCardProcessor().approve(req),
      lookup: async () => null,
      cancel: async () => { throw new Error('processor connection reset (secret detail)'); },
    };
    const t2 = await startApp(engine, {}, { processor: broken });
    try {
      const body = paymentBody();
      assert.equal(rd(await t2.gw('requestPayment', body)).RESULT_CODE, '0000');
      assert.equal((await t2.pay(body.TRANS_SEQNO as string)).approved, true);
      const r = await t2.gw('requestPaymentCancel', { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: body.APPROVAL_AMOUNT, MOBILE_NO: body.MOBILE_NO });
      assert.equal(r.status, 500);
      assert.equal(rd(r).RESULT_CODE, '9999');
      assert.doesNotMatch(JSON.stringify(r.body), /secret detail/);
      assert.equal(rd(await t2.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO })).APPROVE_STATUS, 'APPROVE_COMPLETE');
    } finally {
      await t2.close();
    }
  });

  test('key rotation: the old key signs during its grace, then 3001', async () => {
    const { rotateKey } = await import('../../src/gateway/merchants.js');
    const other = await t.addPlatform();
    const sign = (key: string) => t.gw('searchPayment', { TRANS_SEQNO: 'X1', PLATFORM_CODE: other.platformCode, STORE_CODE: other.storeCode }, key);
    const k2 = (await rotateKey(t.app.sunap.database.db, t.app.sunap.box, t.app.sunap.clock.nowMs(), { platformCode: other.platformCode, graceSeconds: 60 })).apiKey;
    assert.equal(rd(await sign(other.apiKey)).RESULT_CODE, '4003', 'old key inside grace');
    assert.equal(rd(await sign(k2)).RESULT_CODE, '4003');
    const k3 = (await rotateKey(t.app.sunap.database.db, t.app.sunap.box, t.app.sunap.clock.nowMs(), { platformCode: other.platformCode, graceSeconds: 0 })).apiKey;
    assert.equal(rd(await sign(other.apiKey)).RESULT_CODE, '3001', 'a second rotation ends the grace of the key before it');
    assert.equal(rd(await sign(k2)).RESULT_CODE, '3001', 'grace 0: refused at once');
    assert.equal(rd(await sign(k3)).RESULT_CODE, '4003');
  });
});

forEachEngine('gateway API with the TRANS_AT window turned off', (engine) => {
  const t = withApp(engine, { SUNAP_SIGN_MAX_SKEW_SECONDS: '0' });

  test('SUNAP_SIGN_MAX_SKEW_SECONDS=0: a TRANS_AT a day away is accepted; the signature is still checked', async () => {
    const b = paymentBody();
    const dayOld = kstCompact(Date.now() - 86_400_000);
    assert.equal(rd(await t.gw('requestPayment', { ...b, TRANS_AT: dayOld })).RESULT_CODE, '0000');
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO, TRANS_AT: kstCompact(Date.now() + 86_400_000) })).RESULT_CODE, '0000');
    assert.equal(rd(await t.gw('searchPayment', { TRANS_SEQNO: b.TRANS_SEQNO, TRANS_AT: dayOld }, 'not-the-key')).RESULT_CODE, '3001');
  });
});
