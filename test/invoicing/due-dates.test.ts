import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dueAfter, dueDateProblem, dueDateText, isOverdue, MAX_DUE_AHEAD_DAYS, MAX_DUE_DAYS } from '../../src/invoicing/due.js';
import { invoiceVariables } from '../../src/invoicing/items.js';
import { addDays, isCalendarDate, kstDate, kstDayStart } from '../../src/platform/kst.js';
import { clearOfKstMidnight, forEachEngine, withApp } from '../helpers/app.js';
import { ownerClient, textOf } from '../console/support.js';
import { billBody, createOne, newAccount, waitSent } from './support.js';

const DAY = 86_400;

test('due dates: the calendar, today as the earliest and 365 days ahead as the latest', () => {
  assert.equal(MAX_DUE_AHEAD_DAYS, 365);
  assert.equal(MAX_DUE_DAYS, 365);
  // 2026-11-26 10:00 KST.
  const now = kstDayStart('2026-11-26') + 10 * 3_600_000;
  assert.equal(kstDate(now), '2026-11-26');
  assert.equal(dueDateProblem('2026-11-26', now), null);
  assert.equal(dueDateProblem('2026-11-25', now), 'dueDate: must not be before today (2026-11-26, KST)');
  assert.equal(dueDateProblem('2027-11-26', now), null, '365 days ahead');
  assert.equal(dueDateProblem('2027-11-27', now), 'dueDate: must be at most 365 days after today (2027-11-26 at the latest)');
  assert.equal(dueDateProblem('2027-02-29', now), 'dueDate: must be a date as yyyy-MM-dd');
  assert.equal(dueDateProblem('2026-13-01', now), 'dueDate: must be a date as yyyy-MM-dd');
  assert.ok(isCalendarDate('2028-02-29'));
  assert.ok(!isCalendarDate('2026-02-29'));
  // Today in KST starts at 15:00 UTC the day before.
  assert.equal(kstDate(kstDayStart('2026-12-01') - 1), '2026-11-30');
  assert.equal(kstDate(kstDayStart('2026-12-01')), '2026-12-01');
  assert.equal(addDays('2026-12-31', 1), '2027-01-01');
  assert.equal(addDays('2026-03-01', -1), '2026-02-28');
  assert.equal(dueAfter(0, now), '2026-11-26');
  assert.equal(dueAfter(7, now), '2026-12-03');
  assert.equal(dueDateText('2026-12-03'), '2026년 12월 3일');
});

test('due dates: overdue from the day after the due date, while unpaid', () => {
  const due = '2026-12-10';
  const lastMomentOnTime = kstDayStart('2026-12-11') - 1;
  assert.equal(isOverdue({ status: 'PENDING', due_date: due }, lastMomentOnTime), false, 'the due date itself is on time (23:59:59.999)');
  assert.equal(isOverdue({ status: 'PENDING', due_date: due }, lastMomentOnTime + 1), true, 'overdue from 00:00 KST the next day');
  assert.equal(isOverdue({ status: 'DONE', due_date: due }, lastMomentOnTime + 1), false, 'paid is never overdue');
  assert.equal(isOverdue({ status: 'CANCELED', due_date: due }, lastMomentOnTime + 1), false);
  assert.equal(isOverdue({ status: 'PENDING', due_date: null }, lastMomentOnTime + 1), false, 'no due date, never overdue');
});

test('due dates: the message says the due date last in #{청구내용}', () => {
  const base = { businessName: '행복 피아노 학원', receiverName: '홍길동', reason: '12월 수강료', amount: 128000, items: [], description: '10일까지', link: 'https://x' };
  assert.equal(invoiceVariables({ ...base, dueDate: '2026-12-10' })['#{청구내용}'], '10일까지\n\n납부 기한: 2026년 12월 10일');
  assert.equal(invoiceVariables({ ...base, description: null, dueDate: '2026-12-10' })['#{청구내용}'], '납부 기한: 2026년 12월 10일');
  assert.equal(invoiceVariables({ ...base, dueDate: null })['#{청구내용}'], '10일까지');
});

forEachEngine('invoicing: due dates', (engine) => {
  const t = withApp(engine);
  const today = () => kstDate(t.app.sunap.clock.nowMs());

  test('dueDate on creation: listed, in the detail, the message, the public lookup and both pages; refused outside its range', async () => {
    await clearOfKstMidnight(t);
    const a = await newAccount(t, { points: 1000 });
    const due = addDays(today(), 10);
    const id = await createOne(t, a, { dueDate: due, members: [{ studentName: '기한이', studentPhone: '01055501234' }] });
    const d = await waitSent(t, a, id);
    assert.equal(d.bill.dueDate, due);
    assert.equal(d.bill.overdue, false);
    const list = await t.get('/app/v1/sales/bill?size=1', a.h);
    assert.equal(list.body.result_data.bills[0].dueDate, due);
    assert.equal(list.body.result_data.bills[0].overdue, false);

    const msgs = (await t.get('/sandbox/messages?phone=01055501234')).body.messages as any[];
    assert.equal(msgs.length, 1);
    assert.ok(msgs[0].text.includes(`납부 기한: ${dueDateText(due)}`), msgs[0].text);

    const pub = await t.get(`/app/v1/sales/public/bill/${d.bill.transSeqNo}`);
    assert.equal(pub.body.result_data.dueDate, due);
    assert.equal(pub.body.result_data.overdue, false);
    const page = await t.get(`/pay/${d.bill.transSeqNo}`);
    assert.ok(textOf(page.text).includes(`납부 기한 ${dueDateText(due)}`), textOf(page.text));
    const pay = await fetch(pub.body.result_data.paymentUrl);
    assert.ok(textOf(await pay.text()).includes(`납부 기한 ${dueDateText(due)}`), 'the payment page shows it');

    // Today is the earliest, 365 days ahead the latest: both sides of each bound.
    const members = [{ studentName: '경계', studentPhone: '01055505678' }];
    for (const [date, ok] of [[today(), true], [addDays(today(), -1), false], [addDays(today(), 365), true], [addDays(today(), 366), false]] as const) {
      const r = await t.post('/app/v1/sales/bill', billBody({ members, dueDate: date }), a.h);
      assert.equal(r.body.result_code, ok ? 0 : -20, `${date}: ${JSON.stringify(r.body)}`);
      if (!ok) assert.match(r.body.result_msg, /^dueDate: /);
    }
    for (const bad of ['2026-2-1', '20261210', '2026-02-30']) {
      const r = await t.post('/app/v1/sales/bill', billBody({ members, dueDate: bad }), a.h);
      assert.equal(r.status, 400);
      assert.equal(r.body.result_msg, 'dueDate: must be a date as yyyy-MM-dd');
    }
  });

  test('clients that know nothing of due dates work unchanged: no field, or null', async () => {
    const a = await newAccount(t, { points: 1000 });
    const r = await t.post('/app/v1/sales/bill', billBody({ dueDate: null, billTemplateId: null, items: null, etc: null }), a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const list = await t.get('/app/v1/sales/bill', a.h);
    assert.equal(list.body.result_data.bills[0].dueDate, null);
    assert.equal(list.body.result_data.bills[0].overdue, false);
  });

  test('a requestId repeated with another dueDate is other content (-22); with the same, nothing new', async () => {
    const a = await newAccount(t, { points: 1000 });
    const due = addDays(today(), 5);
    const body = billBody({ requestId: 'due-request-0001', dueDate: due });
    assert.equal((await t.post('/app/v1/sales/bill', body, a.h)).body.result_code, 0);
    assert.equal((await t.post('/app/v1/sales/bill', body, a.h)).body.result_code, 0);
    const other = await t.post('/app/v1/sales/bill', { ...body, dueDate: addDays(due, 1) }, a.h);
    assert.equal(other.body.result_code, -22);
    assert.equal((await t.get('/app/v1/sales/bill', a.h)).body.result_data.totalCount, 1);
  });

  test('a template\'s "due N days after sending" gives the due date; a given dueDate wins', async () => {
    await clearOfKstMidnight(t);
    const a = await newAccount(t, { points: 1000 });
    const tpl = await t.app.sunap.invoicing.templates.create(a.accountId, { name: '월 수강료', reason: '수강료', amount: 100_000, dueDays: 7 });
    assert.equal(tpl.dueDays, 7);
    const zero = await t.app.sunap.invoicing.templates.create(a.accountId, { name: '당일', reason: '수강료', amount: 100_000, dueDays: 0 });
    let id = await createOne(t, a, { billTemplateId: tpl.id, reason: undefined, amount: undefined, description: undefined });
    assert.equal((await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.bill.dueDate, addDays(today(), 7));
    id = await createOne(t, a, { billTemplateId: zero.id, reason: undefined, amount: undefined, description: undefined });
    assert.equal((await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.bill.dueDate, today());
    id = await createOne(t, a, { billTemplateId: tpl.id, reason: undefined, amount: undefined, dueDate: addDays(today(), 2) });
    assert.equal((await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data.bill.dueDate, addDays(today(), 2));
    // 0 to 365 days, both sides.
    await assert.rejects(t.app.sunap.invoicing.templates.create(a.accountId, { name: 'x', reason: 'x', dueDays: 366 }), /dueDays: must be a whole number of days from 0 to 365/);
    await assert.rejects(t.app.sunap.invoicing.templates.create(a.accountId, { name: 'x', reason: 'x', dueDays: -1 }), /dueDays: /);
    assert.equal((await t.app.sunap.invoicing.templates.create(a.accountId, { name: 'x', reason: 'x', dueDays: 365 })).dueDays, 365);
  });

  test('overdue: listed and filtered from the day after the due date; paid ones never', async () => {
    await clearOfKstMidnight(t);
    const a = await newAccount(t, { points: 1000 });
    const due = addDays(today(), 1);
    const late = await createOne(t, a, { dueDate: due, members: [{ studentName: '늦음', studentPhone: '01055510001' }] });
    const paid = await createOne(t, a, { dueDate: due, members: [{ studentName: '냄', studentPhone: '01055510002' }] });
    await createOne(t, a, { members: [{ studentName: '기한없음', studentPhone: '01055510003' }] });
    const paidBill = await waitSent(t, a, paid);
    await waitSent(t, a, late);
    assert.equal((await t.pay(paidBill.bill.transSeqNo)).approved, true);
    // Moving the clock a day ages the access token past its hour: sign in again for each look.
    const h = async () => ({ 'x-access-token': (await t.post('/app/v1/auth/login', { email: a.email, password: a.password })).body.result_data.accessToken });
    const filtered = async (overdue: string) => {
      const r = await t.get(`/app/v1/sales/bill?overdue=${overdue}`, await h());
      assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
      return r.body.result_data;
    };

    // On the due date itself (its first and last minute): on time.
    const toDue = kstDayStart(due) - t.app.sunap.clock.nowMs();
    await t.app.sunap.clock.advance(Math.ceil(toDue / 1000) + 1);
    assert.equal((await filtered('true')).totalCount, 0);
    await t.app.sunap.clock.advance(DAY - 120);
    assert.equal(kstDate(t.app.sunap.clock.nowMs()), due);
    assert.equal((await filtered('true')).totalCount, 0);
    assert.equal((await filtered('false')).totalCount, 3);
    // The next day: the unpaid one is overdue.
    await t.app.sunap.clock.advance(120);
    const only = await filtered('true');
    assert.equal(only.totalCount, 1);
    assert.equal(only.bills[0].uniqueId, late);
    assert.equal(only.bills[0].overdue, true);
    const others = await filtered('false');
    assert.equal(others.totalCount, 2);
    assert.ok(others.bills.every((b: any) => b.overdue === false));
    const lateBill = (await t.get(`/app/v1/sales/bill/${late}`, await h())).body.result_data.bill;
    assert.equal(lateBill.overdue, true);
    assert.equal((await t.get(`/app/v1/sales/public/bill/${lateBill.transSeqNo}`)).body.result_data.overdue, true);
    assert.ok(textOf((await t.get(`/pay/${lateBill.transSeqNo}`)).text).includes('기한 지남'));
    const bad = await t.get('/app/v1/sales/bill?overdue=yes', await h());
    assert.equal(bad.status, 400);
    assert.equal(bad.body.result_msg, 'overdue: must be one of true, false');

    // The console: its filter, the list's flag and the detail.
    const { c } = await ownerClientOf(a);
    const page = await c.get('/console/invoices?due=overdue');
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('늦음') && !page.text.includes('기한없음') && !page.text.includes('>냄<'), textOf(page.text));
    assert.ok(textOf(page.text).includes(`${due} 기한 지남`));
    const detail = await c.get(`/console/invoices/${late}`);
    assert.ok(textOf(detail.text).includes(`납부 기한 ${due} 기한 지남`), textOf(detail.text));
  });

  test('console: a due date on the single form, "due N days" on a template', async () => {
    await clearOfKstMidnight(t);
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const due = addDays(today(), 3);
    let r = await c.post('/console/invoices/new', { name: '콘솔', phone: '010-5551-2222', amount: '50000', reason: '교재비', dueDate: due, requestId: 'console-due-000001' }, { from: '/console/invoices/new' });
    assert.equal(r.status, 303, textOf(r.text));
    const row = await t.app.sunap.database.db.selectFrom('invoices').select('due_date').where('account_id', '=', owner.accountId).executeTakeFirstOrThrow();
    assert.equal(row.due_date, due);
    r = await c.post('/console/invoices/new', { name: '콘솔', phone: '010-5551-2223', amount: '50000', reason: '교재비', dueDate: addDays(today(), -1), requestId: 'console-due-000002' }, { from: '/console/invoices/new' });
    assert.equal(r.status, 400);
    assert.ok(textOf(r.text).includes(`납부 기한은 오늘(${today()})이나 그 뒤여야 합니다.`), textOf(r.text));

    r = await c.post('/console/templates', { name: '월 수강료', reason: '수강료', amount: '100000', dueDays: '10' }, { from: '/console/templates/new' });
    assert.equal(r.status, 303);
    const list = await c.get('/console/templates');
    assert.ok(textOf(list.text).includes('발송 후 10일'));
    r = await c.post('/console/templates', { name: '잘못', reason: '수강료', dueDays: '366' }, { from: '/console/templates/new' });
    assert.equal(r.status, 400);
    assert.ok(r.text.includes('<span class="field-error" id="dueDays-error">납부 기한(발송 후 며칠)은 0일에서 365일 사이여야 합니다.</span>'));
  });

  async function ownerClientOf(a: { email: string; password: string }) {
    const { ConsoleClient } = await import('../console/support.js');
    const c = new ConsoleClient(t);
    await c.signIn(a.email, a.password);
    return { c };
  }
});
