import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { ClassService } from './classes.js';

/** Billing that runs itself (docs/invoicing.md): classes; built by createInvoicing. */
export interface Billing {
  classes: ClassService;
}

export function createBilling(db: Kysely<Database>, deps: { clock: Clock }): Billing {
  return { classes: new ClassService(db, deps.clock) };
}
