import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextMonthlyPeriod } from '../../src/invoicing/schedule-time.js';
import { addDays, kstDate, kstDayStart, kstIso } from '../../src/platform/kst.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { addMember, ownerClient, textOf } from './support.js';

const H = 3_600_000;

forEachEngine('console and API: the month of a class', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const billing = () => t.app.sunap.invoicing.billing;
  const now = () => t.app.sunap.clock.nowMs();
  const drain = () => t.app.sunap.worker.drain();
  const toMoment = async (ms: number) => {
    const d = ms - now();
    if (d > 0) await t.app.sunap.clock.advance(Math.ceil(d / 1000));
  };

  test('billed, paid, unpaid, overdue; the unpaid list and its CSV; remind now with its points shown first; at night at 08:00', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const tpl = await t.app.sunap.invoicing.templates.create(owner.accountId, { name: '월 수강료', reason: '수강료', amount: 20_000, dueDays: 3 });
    const cls = (await billing().classes.create(owner.accountId, {
      name: '첼로 반', members: [{ name: '가람', phone: '01088800001' }, { name: '나래', phone: '01088800002', guardianPhone: '01088801111' }, { name: '다솜', phone: '01088800003', amount: 30_000 }],
    })).class.id;
    await billing().schedules.create(owner.accountId, t.storeCode, { classId: cls, templateId: tpl.id, repeat: 'MONTHLY', dayOfMonth: 5, time: '11:00' });
    const p = nextMonthlyPeriod(5, '11:00', now());
    await toMoment(p.at);
    await drain();
    const paid = await t.app.sunap.database.db.selectFrom('invoices').select('trans_seqno').where('account_id', '=', owner.accountId).where('receiver_name', '=', '가람').executeTakeFirstOrThrow();
    assert.equal((await t.pay(paid.trans_seqno)).approved, true);

    let m = await billing().month.month(owner.accountId, cls, p.period);
    assert.deepEqual([m.billed, m.paid, m.unpaid, m.overdue], [{ count: 3, amount: 70_000 }, { count: 1, amount: 20_000 }, { count: 2, amount: 50_000 }, { count: 0, amount: 0 }]);
    assert.equal(m.remindCost, 20, 'two messages at 10 points');
    // The day after the due date (3 days after billing): overdue.
    await toMoment(kstDayStart(addDays(kstDate(p.at), 4)) + 12 * H);
    m = await billing().month.month(owner.accountId, cls, p.period);
    assert.deepEqual(m.overdue, { count: 2, amount: 50_000 });

    // Days went by on the clock: the console session is over; sign in again.
    await c.signIn(owner.email, owner.password);
    const page = textOf((await c.get(`/console/classes/${cls}/month?month=${p.period}`)).text);
    for (const w of ['첼로 반', '청구 3건 70,000원', '결제 완료 1건 20,000원', '미결제 2건 50,000원', '기한 지남 2건 50,000원', '결제하지 않은 분 2명', '나래', '010-8880-1111', '다솜', '지금 안내 보내기 (2명, 20P)']) {
      assert.ok(page.includes(w), `the month shows "${w}": ${page.slice(0, 900)}`);
    }
    assert.ok(!page.includes('가람 '), 'the paid one is not in the unpaid list');

    const csv = await c.get(`/console/classes/${cls}/month.csv?month=${p.period}`);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type')!, /text\/csv/);
    const lines = csv.text.replace(/^\uFEFF/, '').trim().split('\r\n');
    assert.equal(lines.length, 3, 'a header and the two unpaid');
    assert.match(lines[0]!, /^이름,전화번호,보호자 전화번호,금액,납부 기한,기한 지남/);
    assert.ok(lines.some((l) => l.startsWith('나래,010-8880-0002,010-8880-1111,20000,')));
    // Phone numbers whole need a manager or an owner (classes.export.phones): a viewer's export masks them.
    const csvOf = async (cl: typeof c) => (await cl.get(`/console/classes/${cls}/month.csv?month=${p.period}`)).text;
    const viewer = await addMember(t, c, 'viewer');
    const manager = await addMember(t, c, 'manager');
    assert.ok((await csvOf(manager.c)).includes('\r\n나래,010-8880-0002,010-8880-1111,20000,'));
    const masked = await csvOf(viewer.c);
    assert.ok(masked.includes('\r\n나래,010-****-0002,010-****-1111,20000,'), masked);
    assert.ok(!masked.includes('8880-0002') && !masked.includes('8880-1111'));

    // Points first: the confirmation says 20P and the balance; then the reminders go.
    const confirm = textOf((await c.get(`/console/classes/${cls}/month/remind?month=${p.period}`)).text);
    assert.ok(confirm.includes('20P (보유') && confirm.includes('2명에게 보내기 (20P)'), confirm.slice(0, 800));
    // At 12:00 KST: now.
    let r = await c.post(`/console/classes/${cls}/month/remind`, { month: p.period }, { from: `/console/classes/${cls}/month/remind?month=${p.period}` });
    assert.equal(r.status, 303);
    assert.match(r.location!, /notice=reminded$/);
    await drain();
    const sends = await t.app.sunap.database.db.selectFrom('sends').select(['send_type', 'status']).where('account_id', '=', owner.accountId).where('send_type', '=', 'REMINDER').execute();
    assert.deepEqual(sends.map((x) => x.status), ['SUCCESS', 'SUCCESS']);

    // At 22:00 KST the reminders wait for 08:00.
    await toMoment(kstDayStart(kstDate(now())) + 22 * H);
    const night = textOf((await c.get(`/console/classes/${cls}/month/remind?month=${p.period}`)).text);
    assert.ok(night.includes(`${addDays(kstDate(now()), 1)} 08:00 (밤 9시~아침 8시에는 아침 8시에 보냅니다)`), night.slice(0, 800));
    r = await c.post(`/console/classes/${cls}/month/remind`, { month: p.period }, { from: `/console/classes/${cls}/month/remind?month=${p.period}` });
    assert.match(r.location!, /notice=reminded-at-8$/);
    const later = await t.app.sunap.database.db.selectFrom('invoice_reminders').select('due_at').where('account_id', '=', owner.accountId).where('status', '=', 'PENDING').execute();
    assert.equal(later.length, 2);
    assert.ok(later.every((x) => kstIso(Number(x.due_at)) === `${addDays(kstDate(now()), 1)}T08:00:00`));

    // The API answers the same month.
    const h = { 'x-access-token': (await t.post('/app/v1/auth/login', { email: owner.email, password: owner.password })).body.result_data.accessToken };
    const api = await t.get(`/app/v1/classes/${cls}/month?month=${p.period}`, h);
    assert.equal(api.body.result_code, 0, JSON.stringify(api.body));
    assert.deepEqual(api.body.result_data.unpaid, { count: 2, amount: 50_000 });
    assert.deepEqual(api.body.result_data.unpaidList.map((u: any) => u.receiverName).sort(), ['나래', '다솜']);
    const bad = await t.get(`/app/v1/classes/${cls}/month?month=2026-13`, h);
    assert.equal(bad.body.result_msg, 'month: must be yyyy-MM');
    const other = await ownerClient(t);
    assert.equal((await other.c.get(`/console/classes/${cls}/month`)).status, 404);
  });
});
