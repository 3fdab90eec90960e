import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REMINDER_LIMITS } from '../../src/invoicing/reminder-rule.js';
import { outsideQuietHours, QUIET_HOURS, REMINDER_BACKOFF_SECONDS, REMINDER_BUSY_RETRY_MS, REMINDER_JOB, reminderMoments } from '../../src/invoicing/reminders.js';
import { addDays, kstDate, kstDayStart, kstIso } from '../../src/platform/kst.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { billBody, newAccount, waitSent, type Login } from './support.js';

const H = 3_600_000;
const M = 60_000;
const at = (date: string, hh: number, mm = 0) => kstDayStart(date) + hh * H + mm * M;

test('reminders: the numbers', () => {
  assert.deepEqual(QUIET_HOURS, { start: 21, end: 8 });
  assert.deepEqual(REMINDER_LIMITS, { beforeDays: 30, afterDays: 30, times: 5 });
  assert.deepEqual([...REMINDER_BACKOFF_SECONDS], [60, 300, 1800]);
  assert.equal(REMINDER_JOB.maxAttempts, 4);
  assert.equal(REMINDER_BUSY_RETRY_MS, 5 * M);
});

test('reminders: never between 21:00 and 08:00 KST; moved to 08:00', () => {
  const d = '2026-12-10';
  assert.equal(outsideQuietHours(at(d, 20, 59)), at(d, 20, 59), '20:59 stays');
  assert.equal(outsideQuietHours(at(d, 21, 0)), at('2026-12-11', 8), '21:00 waits for 08:00 the next day');
  assert.equal(outsideQuietHours(at(d, 23, 59)), at('2026-12-11', 8));
  assert.equal(outsideQuietHours(at('2026-12-31', 22, 0)), at('2027-01-01', 8), 'across the year');
  assert.equal(outsideQuietHours(at(d, 0, 0)), at(d, 8), '00:00 waits for 08:00 that day');
  assert.equal(outsideQuietHours(at(d, 7, 59)), at(d, 8), '07:59 waits for 08:00');
  assert.equal(outsideQuietHours(at(d, 8, 0)), at(d, 8, 0), '08:00 stays');
});

test('reminders: N days before, then every M days after, K at most, at the time of day of billing', () => {
  const billed = at('2026-12-01', 10, 30);
  const now = billed;
  const due = '2026-12-10';
  assert.deepEqual(reminderMoments({ before: 3, after: 2, times: 3 }, due, billed, now).map((m) => kstIso(m)), ['2026-12-07T10:30:00', '2026-12-12T10:30:00', '2026-12-14T10:30:00']);
  assert.deepEqual(reminderMoments({ before: 3, after: 2, times: 2 }, due, billed, now).map((m) => kstIso(m)), ['2026-12-07T10:30:00', '2026-12-12T10:30:00'], 'K = 2: two');
  assert.deepEqual(reminderMoments({ before: 3, after: 2, times: 1 }, due, billed, now).map((m) => kstIso(m)), ['2026-12-07T10:30:00']);
  assert.deepEqual(reminderMoments({ before: null, after: 1, times: 2 }, due, billed, now).map((m) => kstIso(m)), ['2026-12-11T10:30:00', '2026-12-12T10:30:00']);
  assert.deepEqual(reminderMoments({ before: 5, after: null, times: 5 }, due, billed, now).map((m) => kstIso(m)), ['2026-12-05T10:30:00'], 'only the one before');
  // "10 days before" a due date 9 days away is already past: left out, the rest stays.
  assert.deepEqual(reminderMoments({ before: 10, after: 1, times: 2 }, due, billed, now).map((m) => kstIso(m)), ['2026-12-11T10:30:00']);
});

forEachEngine('billing: reminders to the unpaid', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const db = () => t.app.sunap.database.db;
  const now = () => t.app.sunap.clock.nowMs();
  const drain = () => t.app.sunap.worker.drain();
  const toMoment = async (ms: number) => {
    const d = ms - now();
    if (d > 0) await t.app.sunap.clock.advance(Math.ceil(d / 1000));
  };
  const messagesTo = async (phone: string) => (await t.get(`/sandbox/messages?phone=${phone}`)).body.messages as any[];
  const reminders = (invoiceId: number) => db().selectFrom('invoice_reminders').selectAll().where('invoice_id', '=', invoiceId).orderBy('seq').execute();
  const login = async (a: Login) => ({ 'x-access-token': (await t.post('/app/v1/auth/login', { email: a.email, password: a.password })).body.result_data.accessToken });
  const balance = async (accountId: string) => Number((await db().selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow()).balance);

  /** An invoice billed at hh:mm KST (the clock moved there first), due in 5 days, with the rule given. */
  async function billAt(hh: number, mm: number, phone: string, rule: Record<string, number>, points = 1000) {
    const today = kstDate(now());
    let moment = at(today, hh, mm);
    if (moment <= now()) moment = at(addDays(today, 1), hh, mm);
    await toMoment(moment);
    const a = await newAccount(t, { points });
    const due = addDays(kstDate(now()), 5);
    const r = await t.post('/app/v1/sales/bill', billBody({ dueDate: due, reminders: rule, members: [{ studentName: '미납', studentPhone: phone }] }), a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    await drain();
    const inv = await db().selectFrom('invoices').selectAll().where('account_id', '=', a.accountId).executeTakeFirstOrThrow();
    await waitSent(t, a, inv.unique_id);
    return { a, inv, due };
  }

  test('two reminders at the right hours as REMINDER resends with the same link; none after paying', async () => {
    const phone = '01066600001';
    const { a, inv, due } = await billAt(10, 30, phone, { beforeDays: 2, afterDays: 1, times: 2 });
    const rows = await reminders(inv.id);
    assert.deepEqual(rows.map((r) => kstIso(Number(r.due_at))), [`${addDays(due, -2)}T10:30:00`, `${addDays(due, 1)}T10:30:00`]);
    const first = await messagesTo(phone);
    assert.equal(first.length, 1);
    const before = await balance(a.accountId);

    // Seconds early: nothing; at its moment: the first reminder, the same link, 10 points.
    await toMoment(Number(rows[0]!.due_at) - 5000);
    await drain();
    assert.equal((await messagesTo(phone)).length, 1);
    await toMoment(Number(rows[0]!.due_at));
    await drain();
    const msgs = await messagesTo(phone);
    assert.equal(msgs.length, 2);
    assert.equal(msgs[0].link, first[0].link, 'the invoice\'s own link');
    assert.equal(await balance(a.accountId), before - 10);
    const h = await login(a);
    const d = (await t.get(`/app/v1/sales/bill/${inv.unique_id}`, h)).body.result_data;
    assert.deepEqual(d.sendHistories.map((s: any) => [s.sendType, s.sendResult]), [['INITIAL', 'SUCCESS'], ['REMINDER', 'SUCCESS']]);
    assert.equal(d.bill.sendCount, 2);
    assert.equal(d.bill.transSeqNo, inv.trans_seqno, 'the same transaction number');

    // Paid before the second: it is skipped, nothing sent, nothing taken.
    assert.equal((await t.pay(inv.trans_seqno)).approved, true);
    await toMoment(Number(rows[1]!.due_at));
    await drain();
    assert.equal((await messagesTo(phone)).length, 2);
    const after = await reminders(inv.id);
    assert.deepEqual(after.map((r) => [r.status, r.reason]), [['SENT', null], ['SKIPPED', 'already paid']]);
    assert.equal(await balance(a.accountId), before - 10);
    const m = await t.get('/metrics');
    assert.match(m.text, /sunap_reminders_sent_total\{status="SENT"\} \d+/);
  });

  test('billed at 22:30: the reminders wait for 08:00 the next morning, not seconds earlier', async () => {
    const phone = '01066600002';
    const { inv, due } = await billAt(22, 30, phone, { beforeDays: 1, times: 1 });
    const [r] = await reminders(inv.id);
    assert.equal(kstIso(Number(r!.due_at)), `${due}T08:00:00`, '22:30 the day before the due date → 08:00 on it');
    await toMoment(Number(r!.due_at) - 5000);
    await drain();
    assert.equal((await messagesTo(phone)).length, 1);
    await toMoment(Number(r!.due_at));
    await drain();
    assert.equal((await messagesTo(phone)).length, 2);
  });

  test('a reminder already claimed by a worker sends nothing once the invoice is paid; cancelled, deleted and short of points are skipped', async () => {
    const phone = '01066600003';
    const { inv } = await billAt(11, 0, phone, { beforeDays: 1, times: 1 });
    const [r] = await reminders(inv.id);
    await toMoment(Number(r!.due_at));
    // The worker claims the reminder's job (its lease taken), and then the customer pays.
    const claimed = await t.app.sunap.worker.claim(50);
    assert.ok(claimed.some((j) => j.kind === 'billing.reminder'), 'claimed');
    assert.equal((await t.pay(inv.trans_seqno)).approved, true);
    await t.app.sunap.invoicing.billing.reminders.run(r!.id);
    assert.equal((await messagesTo(phone)).length, 1, 'no reminder after payment');
    assert.deepEqual((await reminders(inv.id)).map((x) => x.status), ['SKIPPED']);

    const deleted = await billAt(11, 0, '01066600004', { beforeDays: 1, times: 1 });
    await t.request('DELETE', `/app/v1/sales/bill/${deleted.inv.unique_id}`, undefined, await login(deleted.a));
    const [rd] = await reminders(deleted.inv.id);
    await toMoment(Number(rd!.due_at));
    await drain();
    assert.deepEqual((await reminders(deleted.inv.id)).map((x) => [x.status, x.reason]), [['SKIPPED', 'deleted']]);

    const poor = await billAt(11, 0, '01066600005', { beforeDays: 1, times: 1 }, 10);
    const [rp] = await reminders(poor.inv.id);
    await toMoment(Number(rp!.due_at));
    await drain();
    assert.deepEqual((await reminders(poor.inv.id)).map((x) => [x.status, x.reason]), [['SKIPPED', 'insufficient points']]);
    assert.equal((await messagesTo('01066600005')).length, 1);
  });

  test('the rule is checked: it needs a due date and a side; its numbers both ways', async () => {
    const a = await newAccount(t, { points: 1000 });
    const due = addDays(kstDate(now()), 5);
    const cases: [Record<string, unknown>, string][] = [
      [{ reminders: { beforeDays: 1, times: 1 } }, 'reminders: need a due date (dueDate, or a template with "due N days after sending")'],
      [{ dueDate: due, reminders: { times: 1 } }, 'reminders: give beforeDays, afterDays or both'],
      [{ dueDate: due, reminders: { beforeDays: 1, times: 6 } }, 'reminders.times: must be a whole number from 1 to 5'],
      [{ dueDate: due, reminders: { beforeDays: 1, times: 0 } }, 'reminders.times: must be a whole number from 1 to 5'],
      [{ dueDate: due, reminders: { afterDays: 31, times: 1 } }, 'reminders.afterDays: must be a whole number of days from 1 to 30'],
    ];
    for (const [over, msg] of cases) {
      const r = await t.post('/app/v1/sales/bill', billBody(over), a.h);
      assert.equal(r.status, 400, JSON.stringify(over));
      assert.equal(r.body.result_msg, msg);
    }
    const ok = await t.post('/app/v1/sales/bill', billBody({ dueDate: due, reminders: { afterDays: 30, times: 5 } }), a.h);
    assert.equal(ok.body.result_code, 0);
    const inv = await db().selectFrom('invoices').select('id').where('account_id', '=', a.accountId).executeTakeFirstOrThrow();
    assert.equal((await reminders(inv.id)).length, 5, 'K = 5 reminders planned');
  });
});
