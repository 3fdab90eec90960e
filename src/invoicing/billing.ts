import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { countRemindersByStatus, countRunsByStatus } from './billing-repository.js';
import { ReminderRunner } from './reminders.js';
import type { SendRunner } from './sends.js';
import { ClassService } from './classes.js';
import { ClassMonthService } from './class-month.js';
import type { ScheduleRunStatus } from './invoice-state.js';
import type { Costs } from './points.js';
import { ScheduleRunner, ScheduleService } from './schedules.js';

/** Billing that runs itself (docs/invoicing.md): classes and schedules; built by createInvoicing. */
export interface Billing {
  classes: ClassService;
  schedules: ScheduleService;
  runner: ScheduleRunner;
  /** Schedule runs by status over every team (sunap_schedule_runs_total). */
  runCounts: () => Promise<{ key: string; n: number }[]>;
  reminders: ReminderRunner;
  /** The service clock (the month view's default month). */
  clock: Clock;
  /** The month of a class at a glance, and "remind now". */
  month: ClassMonthService;
  /** Reminders by status over every team (sunap_reminders_sent_total counts SENT). */
  reminderCounts: () => Promise<{ key: string; n: number }[]>;
}

export function createBilling(db: Kysely<Database>, deps: { clock: Clock; costs: Costs; log: Logger; wake: () => void; sends: SendRunner; onRun?: (s: ScheduleRunStatus) => void }): Billing {
  return {
    classes: new ClassService(db, deps.clock),
    schedules: new ScheduleService(db, deps),
    runner: new ScheduleRunner(db, deps),
    runCounts: () => countRunsByStatus(db),
    reminders: new ReminderRunner(db, { clock: deps.clock, costs: deps.costs, runner: deps.sends, log: deps.log }),
    reminderCounts: () => countRemindersByStatus(db),
    month: new ClassMonthService(db, deps),
    clock: deps.clock,
  };
}
