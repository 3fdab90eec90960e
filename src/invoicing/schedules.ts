import { Type, type Static } from '@sinclair/typebox';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { InvoiceTable, SendTable } from '../db/schema.js';
import { storeLines } from '../gateway/index.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import type { Clock } from '../platform/clock.js';
import { newId, randomToken, sha256Hex } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
import { kstIso, parseKstCompact } from '../platform/kst.js';
import { checker } from '../platform/validation.js';
import * as billing from './billing-repository.js';
import type { ScheduleRow, ScheduleRunRow } from './billing-repository.js';
import { memberView } from './classes.js';
import * as templates from './console-repository.js';
import { newTransSeqNo, queueSends } from './creation.js';
import { dueAfter } from './due.js';
import { planReminders } from './reminders.js';
import type { ScheduleRunStatus } from './invoice-state.js';
import { netItems } from './items.js';
import { reserveCost, type Costs } from './points.js';
import * as repo from './repository.js';
import { nextMonthlyPeriod, ONCE_PERIOD_DAYS, periodEnd, plannedAt } from './schedule-time.js';
import { templateView } from './templates.js';
import { REMINDER_LIMITS, ReminderRule } from './reminder-rule.js';

export { REMINDER_LIMITS, ReminderRule };

/**
 * Schedules (docs/reference.md, section 17): "bill class X with template T on day N of every
 * month at HH:MM KST", or once. Each period is billed at most once, whatever the number of
 * instances, crashes or retries: its run is a row unique per (schedule, period), written in the
 * transaction that writes the invoices, their sends and the points; the invoices' requestIds
 * are derived from the schedule, the period and the member, and unique per account too. A run
 * short of points writes nothing but its WAITING_POINTS row, an audit line and its retry, and
 * is tried again every POINTS_RETRY_MINUTES until its period ends.
 */
export const MAX_SCHEDULES = 100;
/** A run short of points looks again this often (on the service clock) while its period lasts. */
export const POINTS_RETRY_MINUTES = 10;
/** An unexpected failure of a run is tried again after 1 min, 5 min, 30 min. */
export const SCHEDULE_BACKOFF_SECONDS = [60, 300, 1800] as const;
const Time = Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', 'x-reason': 'must be HH:MM (00:00 to 23:59, KST)', examples: ['09:00'] });

export const ScheduleBody = Type.Object({
  classId: Type.String({ minLength: 1, maxLength: 64, examples: ['cls_Q2xhc3NBYmNk'] }),
  templateId: Type.String({ minLength: 1, maxLength: 64, description: 'A template saved in the console: reason, description, amount (for members without their own), channel', examples: ['tpl_VGVtcGxhdGVB'] }),
  repeat: Type.Union([Type.Literal('MONTHLY'), Type.Literal('ONCE')], { description: 'MONTHLY: on dayOfMonth at time every month; ONCE: at `at`' }),
  dayOfMonth: Type.Optional(Type.Integer({ minimum: 1, maximum: 31, 'x-reason': 'must be a day from 1 to 31', description: 'MONTHLY: 29–31 fall on the last day of a shorter month' })),
  time: Type.Optional(Time),
  at: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T([01]\\d|2[0-3]):[0-5]\\d$', 'x-reason': "must be yyyy-MM-dd'T'HH:mm (KST)", description: 'ONCE: the moment, KST', examples: ['2026-12-01T09:00'] })),
  dueDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, 'x-reason': 'must be a whole number of days from 0 to 365', description: "Due N days after sending (absent: the template's)" })),
  reminders: Type.Optional(ReminderRule),
});
export type ScheduleBody = Static<typeof ScheduleBody>;

export interface SchedulePayload {
  scheduleId: string;
  period: string;
}

const check = checker(ScheduleBody);
const validation = (msg: string) => new AppError('VALIDATION', msg);
const notFound = () => new AppError('NOT_FOUND', 'id: no such schedule');
const t = (ms: number | null) => (ms === null ? null : kstIso(Number(ms)));

export function scheduleView(s: ScheduleRow & { class_name?: string | null; template_name?: string | null }) {
  return {
    id: s.id, classId: s.class_id, className: s.class_name ?? null, templateId: s.template_id, templateName: s.template_name ?? null,
    repeat: s.repeat, dayOfMonth: s.day_of_month === null ? null : Number(s.day_of_month), time: s.at_time, at: t(s.once_at),
    dueDays: s.due_days === null ? null : Number(s.due_days),
    reminders: s.remind_limit === null ? null : {
      beforeDays: s.remind_before_days === null ? null : Number(s.remind_before_days), afterDays: s.remind_after_days === null ? null : Number(s.remind_after_days),
      times: Number(s.remind_limit),
    },
    status: s.status, nextRunAt: t(s.next_run_at), createdAt: kstIso(Number(s.created_at)),
  };
}
export type ScheduleView = ReturnType<typeof scheduleView>;

export function runView(r: ScheduleRunRow) {
  return {
    id: r.id, period: r.period, plannedAt: kstIso(Number(r.planned_at)), periodEndsAt: kstIso(Number(r.period_ends_at)), status: r.status,
    recipients: Number(r.recipients), invoices: Number(r.invoices), pointsNeeded: Number(r.points_needed), pointsSpent: Number(r.points_spent),
    tries: Number(r.tries), message: r.message, finishedAt: t(r.finished_at),
  };
}
export type RunView = ReturnType<typeof runView>;

/** One attempt of one period's run; a throw is retried after 1 min, 5 min, 30 min. */
export const SCHEDULE_JOB: JobDefinition<SchedulePayload, ScheduleRunner> = defineJob({
  kind: 'billing.schedule-run',
  backoffSeconds: SCHEDULE_BACKOFF_SECONDS,
  run: ({ scheduleId, period }: SchedulePayload, runner: ScheduleRunner) => runner.run(scheduleId, period),
});

/** The job of a period, due at `at` (`tag` tells a resume's job from the chain's, which is written once). */
async function enqueueRun(trx: Transaction<Database>, s: Pick<ScheduleRow, 'id' | 'store_code'>, period: string, at: number, now: number, tag = ''): Promise<void> {
  await enqueue(trx, SCHEDULE_JOB, { scheduleId: s.id, period }, { runAt: at, uniqueKey: `schedule:${s.id}:${period}${tag}`, now, storeCode: s.store_code });
}

class LostRace extends Error {}

export interface ScheduleDeps {
  clock: Clock;
  costs: Costs;
  log: Logger;
  wake: () => void;
}

export class ScheduleService {
  constructor(private readonly db: Kysely<Database>, private readonly deps: ScheduleDeps) {}

  async list(accountId: string): Promise<ScheduleView[]> {
    return (await billing.listSchedules(this.db, accountId)).map(scheduleView);
  }

  async get(accountId: string, id: string): Promise<{ schedule: ScheduleView; runs: RunView[] }> {
    const s = (await billing.listSchedules(this.db, accountId)).find((x) => x.id === id);
    if (!s) throw notFound();
    return { schedule: scheduleView(s), runs: (await billing.runsOf(this.db, accountId, id, 36)).map(runView) };
  }

  /** One run with the invoices it made (what it sent and what it cost). */
  async run(accountId: string, id: string, runId: string) {
    await this.get(accountId, id);
    const r = (await billing.runsOf(this.db, accountId, id, 1000)).find((x) => x.id === runId);
    if (!r) throw new AppError('NOT_FOUND', 'runId: no such run of this schedule');
    const invoices = await this.db.selectFrom('invoices').select(['unique_id', 'receiver_name', 'amount', 'status', 'send_status', 'due_date'])
      .where('account_id', '=', accountId).where('schedule_run_id', '=', r.id).where('deleted_at', 'is', null).orderBy('id').execute();
    return {
      run: runView(r),
      invoices: invoices.map((i) => ({ uniqueId: i.unique_id, receiverName: i.receiver_name, amount: Number(i.amount), status: i.status, sendStatus: i.send_status, dueDate: i.due_date })),
    };
  }

  /** Runs of the team waiting for points: the console's banner. */
  waiting(accountId: string) {
    return billing.waitingRuns(this.db, accountId);
  }

  async create(accountId: string, storeCode: string, body: unknown): Promise<ScheduleView> {
    const err = check.firstError(body);
    if (err) throw validation(err);
    const b = body as ScheduleBody;
    const now = this.deps.clock.nowMs();
    const cls = await billing.findClass(this.db, accountId, b.classId);
    if (!cls) throw validation(`classId: no class ${b.classId} in this account`);
    if (cls.archived_at !== null) throw validation('classId: the class is archived; bring it back first');
    if (!(await templates.findTemplate(this.db, accountId, b.templateId))) throw validation(`templateId: no template ${b.templateId} in this account`);
    let first: { period: string; at: number };
    let onceAt: number | null = null;
    if (b.repeat === 'MONTHLY') {
      if (b.dayOfMonth === undefined) throw validation('dayOfMonth: is required for MONTHLY');
      if (b.time === undefined) throw validation('time: is required for MONTHLY');
      if (b.at !== undefined) throw validation('at: only for ONCE');
      first = nextMonthlyPeriod(b.dayOfMonth, b.time, now);
    } else {
      if (b.at === undefined) throw validation('at: is required for ONCE');
      if (b.dayOfMonth !== undefined || b.time !== undefined) throw validation('dayOfMonth: only for MONTHLY (ONCE takes at)');
      onceAt = parseKstCompact(`${b.at.replace(/[-T:]/g, '')}00`);
      if (onceAt === null) throw validation("at: must be yyyy-MM-dd'T'HH:mm (KST)");
      if (onceAt < now - 60_000) throw validation('at: must not be in the past');
      first = { period: 'once', at: onceAt };
    }
    const r = b.reminders;
    if (r && r.beforeDays === undefined && r.afterDays === undefined) throw validation('reminders: give beforeDays, afterDays or both');
    const count = (await billing.listSchedules(this.db, accountId)).length;
    if (count >= MAX_SCHEDULES) throw validation(`schedules: at most ${MAX_SCHEDULES} per team`);
    const row: ScheduleRow = {
      id: `sch_${randomToken(9)}`, account_id: accountId, store_code: storeCode, class_id: b.classId, template_id: b.templateId, repeat: b.repeat,
      day_of_month: b.dayOfMonth ?? null, at_time: b.time ?? b.at!.slice(11, 16), once_at: onceAt, due_days: b.dueDays ?? null,
      remind_before_days: r?.beforeDays ?? null, remind_after_days: r?.afterDays ?? null, remind_limit: r?.times ?? null,
      status: 'ACTIVE', next_run_at: first.at, created_at: now, updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      await billing.insertSchedule(trx, row);
      await enqueueRun(trx, row, first.period, first.at, now);
    });
    this.deps.wake();
    return (await this.get(accountId, row.id)).schedule;
  }

  /** Paused: its pending run does nothing; nothing is billed until it is resumed. */
  async pause(accountId: string, id: string): Promise<ScheduleView> {
    const s = await billing.findSchedule(this.db, accountId, id);
    if (!s) throw notFound();
    if (s.status === 'ENDED') throw new AppError('STATE', 'status: the schedule has ended');
    await billing.setScheduleStatus(this.db, accountId, id, ['ACTIVE'], 'PAUSED', this.deps.clock.nowMs(), null);
    return (await this.get(accountId, id)).schedule;
  }

  /**
   * Billing goes on from the next planned moment (a period whose moment passed while paused is
   * not billed late); a one-time schedule not yet billed runs at its moment, or at once if it passed.
   */
  async resume(accountId: string, id: string): Promise<ScheduleView> {
    const s = await billing.findSchedule(this.db, accountId, id);
    if (!s) throw notFound();
    if (s.status === 'ENDED') throw new AppError('STATE', 'status: the schedule has ended');
    if (s.status === 'ACTIVE') return (await this.get(accountId, id)).schedule;
    const now = this.deps.clock.nowMs();
    let next: { period: string; at: number } | null;
    if (s.repeat === 'ONCE') {
      const done = await billing.findRun(this.db, s.id, 'once');
      next = done && done.status !== 'WAITING_POINTS' ? null : { period: 'once', at: Math.max(Number(s.once_at), now) };
    } else {
      next = nextMonthlyPeriod(s.day_of_month!, s.at_time, now);
      const done = await billing.findRun(this.db, s.id, next.period);
      if (done && done.status !== 'WAITING_POINTS') next = nextMonthlyPeriod(s.day_of_month!, s.at_time, next.at + 1);
    }
    await this.db.transaction().execute(async (trx) => {
      if (!next) {
        await billing.setScheduleStatus(trx, accountId, id, ['PAUSED'], 'ENDED', now, null);
        return;
      }
      if (!(await billing.setScheduleStatus(trx, accountId, id, ['PAUSED'], 'ACTIVE', now, next.at))) return;
      await enqueueRun(trx, s, next.period, next.at, now, `:resume:${now}`);
    });
    this.deps.wake();
    return (await this.get(accountId, id)).schedule;
  }
}

/** What the run job does (docs/reference.md, "Schedules"); safe to run twice and concurrently. */
export class ScheduleRunner {
  constructor(private readonly db: Kysely<Database>, private readonly deps: ScheduleDeps & { onRun?: (status: ScheduleRunStatus) => void }) {}

  async run(scheduleId: string, period: string): Promise<void> {
    const s = await billing.scheduleForJob(this.db, scheduleId);
    // Paused or ended: nothing now; a resume writes the next run's job.
    if (!s || s.status !== 'ACTIVE') return;
    const now = this.deps.clock.nowMs();
    const planned = period === 'once' ? Number(s.once_at) : plannedAt(s.day_of_month!, s.at_time, period);
    const ends = periodEnd(s, period);
    // Never before its moment, whatever ran this (an instance whose clock is behind): look again then.
    if (now < planned) {
      await this.db.transaction().execute((trx) => enqueueRun(trx, s, period, planned, now, `:early:${now}`));
      return;
    }
    const existing = await billing.findRun(this.db, s.id, period);
    if (existing && existing.status !== 'WAITING_POINTS') {
      // Done already (a second job of the period): make sure the chain goes on.
      await this.db.transaction().execute((trx) => this.next(trx, s, period, now));
      return;
    }
    const base = { id: existing?.id ?? newId(), schedule_id: s.id, account_id: s.account_id, period, planned_at: planned, period_ends_at: ends, created_at: now, updated_at: now };
    const finish = async (status: ScheduleRunStatus, message: string, extra: Partial<ScheduleRunRow> = {}) => {
      const done = await this.db.transaction().execute(async (trx) => {
        const ok = existing
          ? await billing.settleRun(trx, existing.id, ['WAITING_POINTS'], { status, message, finished_at: now, updated_at: now, ...extra })
          : await billing.insertRun(trx, { ...base, status, recipients: 0, invoices: 0, points_needed: 0, points_spent: 0, tries: 1, message, finished_at: now, ...extra });
        if (ok) await this.next(trx, s, period, now);
        return ok;
      });
      if (done) this.deps.onRun?.(status);
    };
    if (now >= ends) return finish('MISSED', `the period ended before points arrived (${kstIso(ends)})`);

    const cls = await billing.findClass(this.db, s.account_id, s.class_id);
    const tplRow = await templates.findTemplate(this.db, s.account_id, s.template_id);
    if (!cls) return finish('SKIPPED', 'the class no longer exists');
    if (cls.archived_at !== null) return finish('SKIPPED', 'the class is archived');
    if (!tplRow) return finish('SKIPPED', 'the template no longer exists');
    const tpl = templateView(tplRow);
    const members = (await billing.membersOf(this.db, s.account_id, s.class_id)).map(memberView);
    if (members.length === 0) return finish('SKIPPED', 'the class has no members');

    // A member's own amount (and items), or the template's; one without either is left out and named.
    const channel = tpl.sendChannel ?? 'ALIMTALK';
    const cost = reserveCost(channel, this.deps.costs);
    const dueDays = s.due_days ?? tpl.dueDays;
    const due = dueDays === null ? null : dueAfter(dueDays, now);
    const left: string[] = [];
    const rows: Insertable<InvoiceTable>[] = [];
    for (const m of members) {
      const amount = m.amount ?? tpl.amount;
      if (amount === null) {
        left.push(m.name);
        continue;
      }
      const items = m.amount !== null ? (m.items.length ? m.items : null) : (tpl.items.length ? tpl.items : null);
      const lines = items ? netItems(items, amount, 'items') : null;
      if (lines && 'error' in lines) {
        left.push(m.name);
        continue;
      }
      // One invoice per member and period, by its requestId (unique per account): never twice.
      const requestId = `${s.id}-${period}-${m.id}`;
      rows.push({
        unique_id: newId(), account_id: s.account_id, store_code: s.store_code, trans_seqno: newTransSeqNo(), payment_id: null, status: 'PENDING', send_status: 'WAITING',
        deleted_at: null, request_id: requestId, request_hash: sha256Hex(requestId), template_type: 'INDIVIDUAL', receiver_name: m.name, receiver_phone: m.phone,
        guardian_phone: m.guardianPhone, amount, reason: tpl.reason, description: tpl.description, items_json: storeLines(lines ?? []), send_channel: channel,
        webhook_url: null, webhook_secret_sealed: null, bill_template_id: tpl.id, related_subject: null, etc: null, student_birth_date: null, classroom_id: null,
        send_count: 0, first_sent_at: null, last_sent_at: null, done_at: null, canceled_at: null, created_at: now, updated_at: now,
        due_date: due, class_id: s.class_id, schedule_run_id: base.id,
        remind_before_days: s.remind_before_days, remind_after_days: s.remind_after_days, remind_limit: s.remind_limit,
      });
    }
    const leftNote = left.length ? `; left out (no amount): ${left.slice(0, 20).join(', ')}${left.length > 20 ? ` and ${left.length - 20} more` : ''}` : '';
    if (rows.length === 0) return finish('SKIPPED', `no member has an amount and the template has none${leftNote}`);
    const needed = cost * rows.length;

    try {
      await this.db.transaction().execute(async (trx) => {
        // The run's row first: its unique key (a new period) or its compare-and-set (a retry) decides who bills.
        const counts = { recipients: members.length, invoices: rows.length, points_needed: needed, points_spent: needed, message: `billed ${rows.length}${leftNote}`, finished_at: now, updated_at: now };
        const mine = existing
          ? await billing.settleRun(trx, existing.id, ['WAITING_POINTS'], { status: 'SENT', tries: Number(existing.tries) + 1, ...counts })
          : await billing.insertRun(trx, { ...base, status: 'SENT', tries: 1, ...counts });
        if (!mine) throw new LostRace();
        const ids = await repo.insertInvoices(trx, s.account_id, rows);
        const sends: Insertable<SendTable>[] = rows.map((row) => ({
          id: newId(), invoice_id: ids.get(row.unique_id)!, account_id: s.account_id, send_type: 'INITIAL', status: 'WAITING', channel_requested: channel,
          channel_used: null, receiver_phone: row.guardian_phone ?? row.receiver_phone, cost_reserved: cost, cost_settled: null, provider_message_id: null,
          delivery_status: null, error_message: null, sent_at: null, created_at: now,
        }));
        // Throws -21 when the wallet cannot cover everyone: the whole transaction (run row included) goes back.
        await queueSends(trx, s.account_id, sends, now, now);
        await planReminders(trx, rows, ids, now);
        await this.next(trx, s, period, now);
      });
    } catch (err) {
      if (err instanceof LostRace || isUniqueViolation(err)) return;
      if (!(err instanceof AppError) || err.kind !== 'INSUFFICIENT_POINTS') throw err;
      await this.shortOfPoints(s, period, base, existing, { recipients: members.length, needed, ends, now, message: err.message });
      return;
    }
    this.deps.onRun?.('SENT');
    this.deps.wake();
  }

  /** WAITING_POINTS, its audit line (the first time) and the next look, in one transaction. */
  private async shortOfPoints(
    s: ScheduleRow, period: string, base: Omit<ScheduleRunRow, 'status' | 'recipients' | 'invoices' | 'points_needed' | 'points_spent' | 'tries' | 'message' | 'finished_at'>,
    existing: ScheduleRunRow | undefined, x: { recipients: number; needed: number; ends: number; now: number; message: string },
  ): Promise<void> {
    const tries = existing ? Number(existing.tries) + 1 : 1;
    const message = `waiting for points: ${x.message.replace(/^points: /, '')}`;
    const wrote = await this.db.transaction().execute(async (trx) => {
      const ok = existing
        ? await billing.settleRun(trx, existing.id, ['WAITING_POINTS'], { tries, message, points_needed: x.needed, recipients: x.recipients, updated_at: x.now })
        : await billing.insertRun(trx, { ...base, status: 'WAITING_POINTS', recipients: x.recipients, invoices: 0, points_needed: x.needed, points_spent: 0, tries, message, finished_at: null });
      if (!ok) return false;
      if (!existing) {
        await billing.systemAudit(trx, { tenantId: s.account_id, action: 'schedule.points_short', target: s.id, detail: `${period}: ${x.message.replace(/^points: /, '')}`, now: x.now });
      }
      // Look again in a while; at the period's end at the latest (then the run is MISSED and the next period is due).
      const at = Math.min(x.now + POINTS_RETRY_MINUTES * 60_000, x.ends);
      await enqueueRun(trx, s, period, at, x.now, `:retry:${tries}`);
      return true;
    });
    if (wrote && !existing) this.deps.onRun?.('WAITING_POINTS');
    this.deps.log.info({ schedule: s.id, period, tries }, 'schedule run waits for points');
  }

  /** The next period's job (written once: its key), or the end of a one-time schedule; in the run's transaction. */
  private async next(trx: Transaction<Database>, s: ScheduleRow, period: string, now: number): Promise<void> {
    if (s.repeat === 'ONCE') {
      await billing.setScheduleStatus(trx, s.account_id, s.id, ['ACTIVE', 'PAUSED'], 'ENDED', now, null);
      return;
    }
    const next = nextMonthlyPeriod(s.day_of_month!, s.at_time, plannedAt(s.day_of_month!, s.at_time, period) + 1);
    await enqueueRun(trx, s, next.period, next.at, now);
    await billing.setNextRun(trx, s.id, next.at, now);
  }
}

export { ONCE_PERIOD_DAYS };
