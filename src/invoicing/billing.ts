import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { countRunsByStatus } from './billing-repository.js';
import { ClassService } from './classes.js';
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
}

export function createBilling(db: Kysely<Database>, deps: { clock: Clock; costs: Costs; log: Logger; wake: () => void; onRun?: (s: ScheduleRunStatus) => void }): Billing {
  return {
    classes: new ClassService(db, deps.clock),
    schedules: new ScheduleService(db, deps),
    runner: new ScheduleRunner(db, deps),
    runCounts: () => countRunsByStatus(db),
  };
}
