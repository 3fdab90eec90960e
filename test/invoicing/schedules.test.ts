import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grantPoints } from '../../src/invoicing/accounts.js';
import { MAX_SCHEDULES, POINTS_RETRY_MINUTES, SCHEDULE_BACKOFF_SECONDS, SCHEDULE_JOB } from '../../src/invoicing/schedules.js';
import { billingDay, daysInMonth, nextMonthlyPeriod, ONCE_PERIOD_DAYS, periodEnd, plannedAt } from '../../src/invoicing/schedule-time.js';
import { kstIso, kstMonth } from '../../src/platform/kst.js';
import { forEachEngine, startSecondInstance, withApp } from '../helpers/app.js';
import { withFailingInserts } from '../helpers/db.js';
import { newAccount, type Login } from './support.js';

const H = 3_600_000;

test('schedules: the numbers', () => {
  assert.equal(POINTS_RETRY_MINUTES, 10);
  assert.deepEqual([...SCHEDULE_BACKOFF_SECONDS], [60, 300, 1800]);
  assert.equal(SCHEDULE_JOB.maxAttempts, 4);
  assert.equal(MAX_SCHEDULES, 100);
  assert.equal(ONCE_PERIOD_DAYS, 7);
});

test('schedules: day 29–31 fall on the last day of a shorter month; 28 never moves', () => {
  assert.equal(daysInMonth(2027, 2), 28);
  assert.equal(daysInMonth(2028, 2), 29);
  for (const [day, month, want] of [
    [28, '2027-02', 28], [29, '2027-02', 28], [30, '2027-02', 28], [31, '2027-02', 28],
    [29, '2028-02', 29], [30, '2028-02', 29], [31, '2028-02', 29],
    [30, '2026-11', 30], [31, '2026-11', 30], [31, '2026-12', 31], [1, '2026-12', 1],
  ] as const) assert.equal(billingDay(day, month), want, `day ${day} in ${month}`);
  // 09:00 KST is 00:00 UTC; 00:00 KST is 15:00 UTC the day before.
  assert.equal(new Date(plannedAt(1, '09:00', '2026-12')).toISOString(), '2026-12-01T00:00:00.000Z');
  assert.equal(new Date(plannedAt(31, '00:00', '2027-02')).toISOString(), '2027-02-27T15:00:00.000Z');
  assert.equal(kstIso(plannedAt(31, '23:59', '2026-11')), '2026-11-30T23:59:00');
});

test('schedules: the next period starts at its moment (inclusive), and ends at the next one', () => {
  const at = plannedAt(1, '09:00', '2026-12');
  assert.deepEqual(nextMonthlyPeriod(1, '09:00', at), { period: '2026-12', at });
  assert.deepEqual(nextMonthlyPeriod(1, '09:00', at - 1), { period: '2026-12', at });
  assert.deepEqual(nextMonthlyPeriod(1, '09:00', at + 1), { period: '2027-01', at: plannedAt(1, '09:00', '2027-01') });
  assert.equal(periodEnd({ day_of_month: 1, at_time: '09:00', once_at: null }, '2026-12'), plannedAt(1, '09:00', '2027-01'));
  assert.equal(periodEnd({ day_of_month: null, at_time: '09:00', once_at: at }, 'once'), at + 7 * 24 * H);
  // December rolls into January of the next year.
  assert.equal(nextMonthlyPeriod(31, '10:00', plannedAt(31, '10:00', '2026-12') + 1).period, '2027-01');
});

forEachEngine('billing: schedules', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const db = () => t.app.sunap.database.db;
  const billing = () => t.app.sunap.invoicing.billing;
  const now = () => t.app.sunap.clock.nowMs();
  const drain = () => t.app.sunap.worker.drain();
  const toMoment = async (ms: number) => {
    const d = ms - now();
    if (d > 0) await t.app.sunap.clock.advance(Math.ceil(d / 1000));
  };
  const login = async (a: Login) => ({ 'x-access-token': (await t.post('/app/v1/auth/login', { email: a.email, password: a.password })).body.result_data.accessToken });

  async function setUp(members: number, opts: { points?: number; amount?: number | null } = {}) {
    const a = await newAccount(t, { points: opts.points ?? 0 });
    const tpl = await t.app.sunap.invoicing.templates.create(a.accountId, { name: '월 수강료', reason: '수강료', ...(opts.amount === null ? {} : { amount: opts.amount ?? 10_000 }), dueDays: 10 });
    const cls = await billing().classes.create(a.accountId, {
      name: '피아노 반', members: Array.from({ length: members }, (_, i) => ({ name: `학생${i}`, phone: `0105${String(i).padStart(3, '0')}1234`.slice(0, 11) })),
    });
    return { a, tpl: tpl.id, cls: cls.class.id };
  }
  const runs = (scheduleId: string) => db().selectFrom('schedule_runs').selectAll().where('schedule_id', '=', scheduleId).orderBy('period').execute();
  const invoicesOf = (accountId: string) => db().selectFrom('invoices').select(['id', 'schedule_run_id', 'request_id', 'due_date', 'class_id', 'created_at']).where('account_id', '=', accountId).execute();
  const balance = async (accountId: string) => Number((await db().selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow()).balance);

  test('a class of 30 billed on day 1 for three months in a row, once each; a second instance and a crash in the middle bill nothing twice', async () => {
    const { a, tpl, cls } = await setUp(30, { points: 900 });
    const s = await billing().schedules.create(a.accountId, t.storeCode, { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: 1, time: '09:00' });
    const first = nextMonthlyPeriod(1, '09:00', now());
    assert.equal(s.nextRunAt, kstIso(first.at));
    const second = await startSecondInstance(t);
    try {
      // Run before its moment (by an instance whose clock is behind): nothing billed, a look at the moment instead.
      await billing().runner.run(s.id, first.period);
      assert.equal((await runs(s.id)).length, 0);
      assert.ok(await db().selectFrom('jobs').select('id').where('unique_key', 'like', `schedule:${s.id}:${first.period}:early:%`).executeTakeFirst(), 'looked at again at the moment');
      // Just before the moment: nothing.
      await toMoment(first.at - 5000);
      await drain();
      assert.equal((await runs(s.id)).length, 0);
      await toMoment(first.at);
      // Month 1: this instance and the second run the period at the same time.
      // The second instance reads the shared sandbox clock first (its worker would, on every poll).
      await (second.app as any).sunap.clock.refresh();
      await Promise.all([billing().runner.run(s.id, first.period), (second.app as any).sunap.invoicing.billing.runner.run(s.id, first.period)]);
      await drain();
      // Month 2: the first attempt dies in the middle (its sends cannot be written): nothing of it stays; the retry bills once.
      const p2 = nextMonthlyPeriod(1, '09:00', first.at + 1);
      await toMoment(p2.at);
      await withFailingInserts(db(), engine, 'sends', async () => {
        await assert.rejects(billing().runner.run(s.id, p2.period), /simulated write failure/);
      });
      assert.equal((await runs(s.id)).length, 1, 'the crashed attempt left no run');
      assert.equal((await invoicesOf(a.accountId)).length, 30, 'nor any invoice');
      await drain();
      // Month 3 by the worker alone.
      const p3 = nextMonthlyPeriod(1, '09:00', p2.at + 1);
      await toMoment(p3.at);
      await drain();
      // Running any period again changes nothing.
      for (const p of [first.period, p2.period, p3.period]) await billing().runner.run(s.id, p);
      await drain();

      const all = await runs(s.id);
      assert.deepEqual(all.map((r) => [r.period, r.status, Number(r.invoices), Number(r.points_spent)]), [
        [first.period, 'SENT', 30, 300], [p2.period, 'SENT', 30, 300], [p3.period, 'SENT', 30, 300],
      ]);
      const inv = await invoicesOf(a.accountId);
      assert.equal(inv.length, 90);
      assert.equal(new Set(inv.map((i) => i.request_id)).size, 90, 'one requestId per member and period');
      for (const r of all) assert.equal(inv.filter((i) => i.schedule_run_id === r.id).length, 30);
      assert.ok(inv.every((i) => i.class_id === cls && i.due_date !== null));
      assert.equal(await balance(a.accountId), 0, 'exactly 900 points spent');
      const sent = await db().selectFrom('sends').select('status').where('account_id', '=', a.accountId).execute();
      assert.equal(sent.length, 90);
      assert.ok(sent.every((x) => x.status === 'SUCCESS'));
      // The schedule waits for month 4.
      const view = await billing().schedules.get(a.accountId, s.id);
      assert.equal(view.schedule.nextRunAt, kstIso(nextMonthlyPeriod(1, '09:00', p3.at + 1).at));
      assert.equal(view.runs.length, 3);
      const detail = await billing().schedules.run(a.accountId, s.id, all[0]!.id);
      assert.equal(detail.invoices.length, 30);
      const m = await t.get('/metrics');
      assert.match(m.text, /sunap_schedule_runs_total\{status="SENT"\} 3/);
    } finally {
      await second.app.close();
    }
  });

  test('short of points: sends nothing, says so, and bills when points arrive, looking every 10 minutes; MISSED when the period ends first', async () => {
    const { a, tpl, cls } = await setUp(30, { points: 100 });
    const s = await billing().schedules.create(a.accountId, t.storeCode, { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: 15, time: '10:30' });
    const p = nextMonthlyPeriod(15, '10:30', now());
    await toMoment(p.at);
    await drain();
    let [r] = await runs(s.id);
    assert.equal(r!.status, 'WAITING_POINTS');
    assert.equal(Number(r!.points_needed), 300);
    assert.match(r!.message!, /needs 300, balance 100/);
    assert.equal((await invoicesOf(a.accountId)).length, 0);
    assert.equal(await balance(a.accountId), 100, 'nothing taken');
    const audit = await db().selectFrom('audit_log').selectAll().where('tenant_id', '=', a.accountId).where('action', '=', 'schedule.points_short').execute();
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.actor_email, 'system');
    assert.deepEqual((await billing().schedules.waiting(a.accountId)).map((w) => w.schedule_id), [s.id]);

    await grantPoints(db(), now(), { email: a.email, amount: 500 });
    // Seconds short of 10 minutes after the first try: not yet; at 10 min: billed.
    const triedAt = Number(r!.updated_at);
    await toMoment(triedAt + POINTS_RETRY_MINUTES * 60_000 - 5000);
    await drain();
    assert.equal((await runs(s.id))[0]!.status, 'WAITING_POINTS');
    await toMoment(triedAt + POINTS_RETRY_MINUTES * 60_000);
    await drain();
    [r] = await runs(s.id);
    assert.equal(r!.status, 'SENT');
    assert.equal(Number(r!.tries), 2);
    assert.equal((await invoicesOf(a.accountId)).length, 30);
    assert.equal(await balance(a.accountId), 300);
    assert.equal((await billing().schedules.waiting(a.accountId)).length, 0);

    // Next month nobody grants anything: still waiting just before the period ends, MISSED at its end, and the month after is due.
    const p2 = nextMonthlyPeriod(15, '10:30', p.at + 1);
    await db().updateTable('wallets').set({ balance: 0 }).where('account_id', '=', a.accountId).execute();
    await db().insertInto('ledger').values({ account_id: a.accountId, delta: -300, kind: 'GRANT', ref: null, memo: 'test: empty the wallet', created_at: now() }).execute();
    await toMoment(p2.at);
    await drain();
    const end = periodEnd({ day_of_month: 15, at_time: '10:30', once_at: null }, p2.period);
    for (let at = p2.at; at < end - POINTS_RETRY_MINUTES * 60_000; at += 24 * H) {
      await toMoment(at);
      await drain();
    }
    await toMoment(end - 5000);
    await drain();
    assert.equal((await runs(s.id))[1]!.status, 'WAITING_POINTS');
    await toMoment(end);
    await drain();
    const after = await runs(s.id);
    assert.equal(after[1]!.status, 'MISSED');
    assert.equal(after[2]?.status, 'WAITING_POINTS', 'the next month was tried at its moment');
    assert.equal((await invoicesOf(a.accountId)).length, 30);
  });

  test('paused: nothing billed; resumed: billing goes on from the next moment', async () => {
    const { a, tpl, cls } = await setUp(2, { points: 1000 });
    const s = await billing().schedules.create(a.accountId, t.storeCode, { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: 20, time: '08:00' });
    const p = nextMonthlyPeriod(20, '08:00', now());
    assert.equal((await billing().schedules.pause(a.accountId, s.id)).status, 'PAUSED');
    await toMoment(p.at);
    await drain();
    assert.equal((await runs(s.id)).length, 0);
    const resumed = await billing().schedules.resume(a.accountId, s.id);
    assert.equal(resumed.status, 'ACTIVE');
    const p2 = nextMonthlyPeriod(20, '08:00', p.at + 1);
    assert.equal(resumed.nextRunAt, kstIso(p2.at), 'the month that passed while paused is not billed late');
    await toMoment(p2.at);
    await drain();
    assert.deepEqual((await runs(s.id)).map((r) => [r.period, r.status]), [[p2.period, 'SENT']]);
  });

  test('once at a given time; an archived class is skipped; members without an amount are named', async () => {
    const { a, tpl, cls } = await setUp(3, { points: 1000, amount: null });
    await billing().classes.addMembers(a.accountId, cls, [{ name: '금액있음', phone: '01077770000', amount: 50_000 }]);
    const at = now() + 2 * H;
    const iso = kstIso(at).slice(0, 16);
    const s = await billing().schedules.create(a.accountId, t.storeCode, { classId: cls, templateId: tpl, repeat: 'ONCE', at: iso });
    await toMoment(at);
    await drain();
    const [r] = await runs(s.id);
    assert.equal(r!.status, 'SENT');
    assert.equal(Number(r!.invoices), 1);
    assert.match(r!.message!, /left out \(no amount\): 학생0, 학생1, 학생2/);
    assert.equal((await billing().schedules.get(a.accountId, s.id)).schedule.status, 'ENDED');

    const s2 = await billing().schedules.create(a.accountId, t.storeCode, { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: 1, time: '09:00' });
    await billing().classes.setArchived(a.accountId, cls, true);
    await toMoment(nextMonthlyPeriod(1, '09:00', now()).at);
    await drain();
    const [skipped] = await runs(s2.id);
    assert.equal(skipped!.status, 'SKIPPED');
    assert.equal(skipped!.message, 'the class is archived');
  });

  test('the API: create with every field checked, list, read, pause and resume; another team sees nothing', async () => {
    const { a, tpl, cls } = await setUp(1, { points: 10 });
    const h = await login(a);
    const ok = { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: 31, time: '23:59', dueDays: 7, reminders: { beforeDays: 3, afterDays: 2, times: 2 } };
    const bad: [Record<string, unknown>, string][] = [
      [{ ...ok, dayOfMonth: 0 }, 'dayOfMonth: must be a day from 1 to 31'],
      [{ ...ok, dayOfMonth: 32 }, 'dayOfMonth: must be a day from 1 to 31'],
      [{ ...ok, time: '24:00' }, 'time: must be HH:MM (00:00 to 23:59, KST)'],
      [{ ...ok, time: undefined }, 'time: is required for MONTHLY'],
      [{ ...ok, classId: 'cls_nope' }, 'classId: no class cls_nope in this account'],
      [{ ...ok, templateId: 'tpl_nope' }, 'templateId: no template tpl_nope in this account'],
      [{ ...ok, repeat: 'ONCE', dayOfMonth: undefined, time: undefined }, 'at: is required for ONCE'],
      [{ ...ok, repeat: 'ONCE', dayOfMonth: undefined, time: undefined, at: kstIso(now() - 2 * H).slice(0, 16) }, 'at: must not be in the past'],
      [{ ...ok, reminders: { times: 2 } }, 'reminders: give beforeDays, afterDays or both'],
      [{ ...ok, reminders: { beforeDays: 31, times: 2 } }, 'reminders.beforeDays: must be a whole number of days from 1 to 30'],
      [{ ...ok, reminders: { afterDays: 1, times: 6 } }, 'reminders.times: must be a whole number from 1 to 5'],
      [{ ...ok, reminders: { afterDays: 1, times: 0 } }, 'reminders.times: must be a whole number from 1 to 5'],
    ];
    for (const [body, msg] of bad) {
      const r = await t.post('/app/v1/schedules', body, h);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.result_msg, msg);
    }
    assert.equal((await t.get('/app/v1/schedules', h)).body.result_data.schedules.length, 0);
    const r = await t.post('/app/v1/schedules', ok, h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const s = r.body.result_data;
    assert.equal(s.className, '피아노 반');
    assert.deepEqual(s.reminders, { beforeDays: 3, afterDays: 2, times: 2 });
    const p = nextMonthlyPeriod(31, '23:59', now());
    assert.equal(s.nextRunAt, kstIso(p.at));
    assert.equal(Number(s.nextRunAt.slice(8, 10)), billingDay(31, kstMonth(p.at)), 'day 31 on the last day of the month');
    assert.equal((await t.post(`/app/v1/schedules/${s.id}/pause`, undefined, h)).body.result_data.status, 'PAUSED');
    assert.equal((await t.post(`/app/v1/schedules/${s.id}/resume`, undefined, h)).body.result_data.status, 'ACTIVE');
    const read = await t.get(`/app/v1/schedules/${s.id}`, h);
    assert.equal(read.body.result_data.schedule.id, s.id);
    assert.deepEqual(read.body.result_data.runs, []);

    const b = await newAccount(t);
    const hb = await login(b);
    assert.equal((await t.get(`/app/v1/schedules/${s.id}`, hb)).status, 404);
    assert.equal((await t.post(`/app/v1/schedules/${s.id}/pause`, undefined, hb)).status, 404);
    assert.equal((await t.post('/app/v1/schedules', ok, hb)).body.result_msg, `classId: no class ${cls} in this account`);
  });

});
