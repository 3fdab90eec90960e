import { type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { ClassMemberTable, ClassTable, ScheduleRunTable, ScheduleTable } from '../db/schema-billing.js';
import type { ScheduleRunStatus, ScheduleStatus } from './invoice-state.js';

/**
 * SQL of billing that runs itself (migration 0013): classes and their members. Every function
 * takes the team's account id and filters by it: another team's class reads as missing.
 */
type Db = Kysely<Database> | Transaction<Database>;

export type ClassRow = Selectable<ClassTable>;
export type ClassMemberRow = Selectable<ClassMemberTable>;
export type ScheduleRow = Selectable<ScheduleTable>;
export type ScheduleRunRow = Selectable<ScheduleRunTable>;

export async function insertClass(db: Db, row: Insertable<ClassTable>): Promise<void> {
  await db.insertInto('classes').values(row).execute();
}

export async function findClass(db: Db, accountId: string, id: string): Promise<ClassRow | undefined> {
  return db.selectFrom('classes').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

/** The team's classes with their member counts, newest first; archived ones only when asked. */
export async function listClasses(db: Db, accountId: string, opts: { archived: boolean }) {
  return db.selectFrom('classes')
    .select(['classes.id', 'classes.name', 'classes.memo', 'classes.archived_at', 'classes.created_at', 'classes.updated_at'])
    .select((eb) => eb.selectFrom('class_members').select(eb.fn.countAll<number>().as('n')).whereRef('class_members.class_id', '=', 'classes.id').as('members'))
    .where('classes.account_id', '=', accountId)
    .where('classes.archived_at', opts.archived ? 'is not' : 'is', null)
    .orderBy('classes.created_at', 'desc').orderBy('classes.id', 'desc').execute();
}

export async function countClasses(db: Db, accountId: string): Promise<number> {
  const r = await db.selectFrom('classes').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function updateClass(db: Db, accountId: string, id: string, set: Partial<Pick<ClassRow, 'name' | 'memo' | 'archived_at' | 'updated_at'>>): Promise<boolean> {
  const r = await db.updateTable('classes').set(set).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function membersOf(db: Db, accountId: string, classId: string): Promise<ClassMemberRow[]> {
  return db.selectFrom('class_members').selectAll().where('account_id', '=', accountId).where('class_id', '=', classId)
    .orderBy('position').orderBy('id').execute();
}

export async function countMembers(db: Db, accountId: string, classId: string): Promise<number> {
  const r = await db.selectFrom('class_members').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId).where('class_id', '=', classId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The next position at the end of the class's list. */
export async function nextPosition(db: Db, classId: string): Promise<number> {
  const r = await db.selectFrom('class_members').select((eb) => eb.fn.max('position').as('p')).where('class_id', '=', classId).executeTakeFirst();
  return r?.p === null || r?.p === undefined ? 0 : Number(r.p) + 1;
}

export async function insertMembers(db: Db, rows: Insertable<ClassMemberTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('class_members').values(rows.slice(i, i + 200)).execute();
}

export async function deleteMembers(db: Db, accountId: string, classId: string): Promise<void> {
  await db.deleteFrom('class_members').where('account_id', '=', accountId).where('class_id', '=', classId).execute();
}

export async function deleteMember(db: Db, accountId: string, classId: string, memberId: string): Promise<boolean> {
  const r = await db.deleteFrom('class_members').where('account_id', '=', accountId).where('class_id', '=', classId).where('id', '=', memberId).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

export async function touchClass(db: Db, accountId: string, id: string, now: number): Promise<void> {
  await db.updateTable('classes').set({ updated_at: now }).where('account_id', '=', accountId).where('id', '=', id).execute();
}


// ---- schedules and their runs ---------------------------------------------------------------

export async function insertSchedule(db: Db, row: Insertable<ScheduleTable>): Promise<void> {
  await db.insertInto('schedules').values(row).execute();
}

export async function findSchedule(db: Db, accountId: string, id: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom('schedules').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

/** A schedule by id alone: for its own job, which was handed the id by the service. */
export async function scheduleForJob(db: Db, id: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listSchedules(db: Db, accountId: string) {
  return db.selectFrom('schedules')
    .leftJoin('classes', (j) => j.onRef('classes.id', '=', 'schedules.class_id').on('classes.account_id', '=', accountId))
    .leftJoin('bill_templates', (j) => j.onRef('bill_templates.id', '=', 'schedules.template_id').on('bill_templates.account_id', '=', accountId))
    .selectAll('schedules').select(['classes.name as class_name', 'bill_templates.name as template_name'])
    .where('schedules.account_id', '=', accountId).orderBy('schedules.created_at', 'desc').orderBy('schedules.id', 'desc').execute();
}

export async function setScheduleStatus(db: Db, accountId: string, id: string, from: readonly ScheduleStatus[], to: ScheduleStatus, now: number, nextRunAt?: number | null): Promise<boolean> {
  const r = await db.updateTable('schedules').set({ status: to, updated_at: now, ...(nextRunAt !== undefined ? { next_run_at: nextRunAt } : {}) })
    .where('account_id', '=', accountId).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function setNextRun(db: Db, id: string, at: number | null, now: number): Promise<void> {
  await db.updateTable('schedules').set({ next_run_at: at, updated_at: now }).where('id', '=', id).execute();
}

export async function findRun(db: Db, scheduleId: string, period: string): Promise<ScheduleRunRow | undefined> {
  return db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', scheduleId).where('period', '=', period).executeTakeFirst();
}

/** The run's row, once per (schedule, period): false when it exists already (the unique key). */
export async function insertRun(db: Db, row: Insertable<ScheduleRunTable>): Promise<boolean> {
  const r = await db.insertInto('schedule_runs').values(row).onConflict((oc) => oc.columns(['schedule_id', 'period']).doNothing()).returning('id').executeTakeFirst();
  return r !== undefined;
}

/**
 * Moves a run on from WAITING_POINTS (a compare-and-set that also takes its row lock on
 * PostgreSQL): false when another worker settled it first.
 */
export async function settleRun(db: Db, id: string, from: readonly ScheduleRunStatus[], set: Partial<Pick<ScheduleRunRow, 'status' | 'recipients' | 'invoices' | 'points_needed' | 'points_spent' | 'tries' | 'message' | 'finished_at' | 'updated_at'>>): Promise<boolean> {
  const r = await db.updateTable('schedule_runs').set(set).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function runsOf(db: Db, accountId: string, scheduleId: string, limit: number): Promise<ScheduleRunRow[]> {
  return db.selectFrom('schedule_runs').selectAll().where('account_id', '=', accountId).where('schedule_id', '=', scheduleId)
    .orderBy('planned_at', 'desc').limit(limit).execute();
}

/** Runs of the team waiting for points (the console's banner). */
export async function waitingRuns(db: Db, accountId: string) {
  return db.selectFrom('schedule_runs').innerJoin('schedules', 'schedules.id', 'schedule_runs.schedule_id')
    .leftJoin('classes', 'classes.id', 'schedules.class_id')
    .select(['schedule_runs.id', 'schedule_runs.schedule_id', 'schedule_runs.period', 'schedule_runs.points_needed', 'schedule_runs.period_ends_at', 'schedule_runs.message', 'classes.name as class_name'])
    .where('schedule_runs.account_id', '=', accountId).where('schedule_runs.status', '=', 'WAITING_POINTS')
    .orderBy('schedule_runs.created_at').execute();
}

/** Schedule runs by status over every team: sunap_schedule_runs_total. */
export async function countRunsByStatus(db: Db): Promise<{ key: string; n: number }[]> {
  const rows = await db.selectFrom('schedule_runs').select((eb) => [eb.ref('status').as('key'), eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
  return rows.map((r) => ({ key: r.key, n: Number(r.n) }));
}

/** A line of the team's audit log written by the service itself (no member did it), in the caller's transaction. */
export async function systemAudit(db: Db, a: { tenantId: string; action: string; target: string; detail: string; now: number }): Promise<void> {
  await db.insertInto('audit_log').values({
    tenant_id: a.tenantId, actor_id: null, actor_email: 'system', action: a.action, target: a.target.slice(0, 200), detail: a.detail.slice(0, 500), ip: '-', created_at: a.now,
  }).execute();
}

/** Reminders by status over every team: sunap_reminders_sent_total. */
export async function countRemindersByStatus(db: Db): Promise<{ key: string; n: number }[]> {
  const rows = await db.selectFrom('invoice_reminders').select((eb) => [eb.ref('status').as('key'), eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
  return rows.map((r) => ({ key: r.key, n: Number(r.n) }));
}
