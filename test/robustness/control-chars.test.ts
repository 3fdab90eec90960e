/**
 * Display text without control characters on every surface (docs/security.md, "Probes of issue
 * 28"): names, reasons and other text people read are refused with a control character (C0, DEL,
 * C1, the line and paragraph separators), the field named as `FIELD: reason`; multi-line text
 * (INFO_MESSAGE, description) keeps its line breaks and refuses the rest. Each field on both
 * sides of the rule: the same text without the character is taken. The gateway and invoicing
 * APIs and the console's forms; nothing refused is stored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controlProblem } from '../../src/platform/validation.js';
import { forEachEngine, paymentBody, seqNo, withApp } from '../helpers/app.js';
import { ownerClient, textOf } from '../console/support.js';
import { billBody, newAccount } from '../invoicing/support.js';

const LINE = 'must not contain control characters (line breaks, tabs and the like)';
const LINES = 'must not contain control characters other than line breaks';
/** One of each kind the rule names. */
const CONTROLS = ['\n', '\r', '\t', '\u0000'.replace('\u0000', '\u0007'), '\u001b', '\u007f', '\u0085', '\u009f', '\u2028', '\u2029'];

test('controlProblem: every control character refused in a line; a multi-line text keeps \\n and \\r only; other text as it is', () => {
  for (const c of CONTROLS) assert.equal(controlProblem(`a${c}b`), LINE, JSON.stringify(c));
  for (const c of CONTROLS) assert.equal(controlProblem(`a${c}b`, 'lines'), c === '\n' || c === '\r' ? null : LINES, JSON.stringify(c));
  for (const ok of ['홍길동', '11월 수강료 (2/3)', 'a b', ' ', '', '=1+1', '😀', '\u00a0', '\u200b']) assert.equal(controlProblem(ok), null, JSON.stringify(ok));
});

forEachEngine('control characters in display text', (engine) => {
  const t = withApp(engine);

  test('gateway: PAY_USER_NAME, REQUEST_REASON, ITEMS[].name, CANCEL_REASON refuse each control character (4002 naming the field); INFO_MESSAGE keeps line breaks', async () => {
    const refused = async (over: Record<string, unknown>, field: string, reason = LINE) => {
      const seq = seqNo();
      const r = await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, ...over }));
      assert.equal(r.body.result_data.RESULT_CODE, '4002', `${field}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.result_data.RESULT_MSG, `${field}: ${reason}`);
      assert.equal(await t.app.sunap.database.db.selectFrom('payments').select('id').where('trans_seqno', '=', seq).executeTakeFirst(), undefined, 'nothing stored');
    };
    for (const c of CONTROLS) {
      await refused({ PAY_USER_NAME: `홍${c}=1+1` }, 'PAY_USER_NAME');
      await refused({ REQUEST_REASON: `수강료${c}` }, 'REQUEST_REASON');
    }
    const item = (name: string) => ({ ORDER_TYPE: 'SHOP', APPROVAL_AMOUNT: '1000', ITEMS: [{ name, unitPrice: 1000, qty: 1 }] });
    assert.equal((await t.gw('requestPayment', paymentBody(item('교재')))).body.result_data.RESULT_CODE, '0000', 'the item as such is taken');
    await refused(item('교\n재'), 'ITEMS[0].name');
    await refused({ INFO_MESSAGE: '안내\t문구' }, 'INFO_MESSAGE', LINES);
    const multi = await t.gw('requestPayment', paymentBody({ INFO_MESSAGE: '첫 줄\n둘째 줄\r\n셋째 줄' }));
    assert.equal(multi.body.result_data.RESULT_CODE, '0000', 'line breaks in INFO_MESSAGE are kept');
    // The other side: the same text without the character is taken.
    const body = paymentBody({ PAY_USER_NAME: '홍 =1+1', REQUEST_REASON: '수강료 (11월)' });
    assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
    assert.equal((await t.pay(String(body.TRANS_SEQNO))).approved, true);
    const cancel = await t.gw('requestPaymentCancel', { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678', CANCEL_REASON: '고객\n요청' });
    assert.equal(cancel.body.result_data.RESULT_CODE, '4002');
    assert.equal(cancel.body.result_data.RESULT_MSG, `CANCEL_REASON: ${LINE}`);
    const state = await t.app.sunap.database.db.selectFrom('payments').select('state').where('trans_seqno', '=', String(body.TRANS_SEQNO)).executeTakeFirstOrThrow();
    assert.equal(state.state, 'APPROVE_COMPLETE', 'the refused cancel changed nothing');
  });

  test('invoicing: reason, studentName, items[].name, relatedSubject refuse control characters (400 -20 naming the field); description keeps line breaks', async () => {
    const a = await newAccount(t, { points: 10_000 });
    const refused = async (over: Record<string, unknown>, field: string, reason = LINE) => {
      const r = await t.post('/app/v1/sales/bill', billBody(over), a.h);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.deepEqual([r.body.result_code, r.body.result_msg], [-20, `${field}: ${reason}`]);
    };
    for (const c of CONTROLS) {
      await refused({ reason: `수강료${c}=1+1` }, 'reason');
      await refused({ members: [{ studentName: `홍${c}길동`, studentPhone: '01012345678' }] }, 'members[0].studentName');
    }
    await refused({ items: [{ name: '교\r재', price: 128000 }] }, 'items[0].name');
    await refused({ relatedSubject: '과목\t1' }, 'relatedSubject');
    await refused({ description: '안내\u0007' }, 'description', LINES);
    const before = (await t.get('/app/v1/sales/bill', a.h)).body.result_data.totalCount;
    assert.equal(before, 0, 'nothing refused was stored');
    assert.equal((await t.post('/app/v1/sales/bill', billBody({ description: '첫 줄\n둘째 줄', reason: '수강료 =1+1' }), a.h)).body.result_code, 0, 'the other side: taken');
  });

  test('console: the cancel reason, the store name and the single invoice form refuse control characters with the field named; nothing changes', async () => {
    const { c, owner } = await ownerClient(t, { points: 1000 });
    const body = paymentBody({});
    await t.gw('requestPayment', body);
    const seq = String(body.TRANS_SEQNO);
    assert.equal((await t.pay(seq)).approved, true);
    const cancel = await c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: '환불\n=1+1' }, { from: `/console/payments/${seq}/cancel` });
    assert.equal(cancel.status, 400);
    assert.ok(cancel.text.includes('<span class="field-error" id="reason-error">취소 사유에는 줄바꿈이나 탭 같은 제어 문자를 쓸 수 없습니다.</span>'));
    assert.equal((await t.app.sunap.database.db.selectFrom('payments').select('state').where('trans_seqno', '=', seq).executeTakeFirstOrThrow()).state, 'APPROVE_COMPLETE');
    const store = await c.post('/console/settings/store', { name: '행복\t학원', ceoName: '', bizRegNum: '', tel: '' }, { from: '/console/settings' });
    assert.equal(store.status, 400);
    assert.ok(store.text.includes('<span class="field-error" id="name-error">상점 이름에는 줄바꿈이나 탭 같은 제어 문자를 쓸 수 없습니다.</span>'));
    const inv = await c.post('/console/invoices/new', { name: '홍\u0007길동', phone: '01012345678', amount: '5000', reason: '수강료' }, { from: '/console/invoices/new' });
    assert.equal(inv.status, 400);
    // The single form names its own field in Korean (받는 분 이름).
    assert.ok(textOf(inv.text).includes('이름이(가) 올바르지 않습니다.'), textOf(inv.text).slice(0, 400));
    assert.equal((await t.app.sunap.database.db.selectFrom('invoices').select('id').where('account_id', '=', owner.accountId).execute()).length, 0);
  });
});
