import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { ProcessorEventOutcome, ProcessorEventTable } from '../db/schema.js';
import { isUniqueViolation } from '../platform/errors.js';

/** The SQL of the processors' notices (`processor_events`), once per (processor, event key). */
type Db = Kysely<Database> | Transaction<Database>;
export type ProcessorEventRow = Selectable<ProcessorEventTable>;

/** Records a notice as RECEIVED; the row already there when the same notice came before. */
export async function recordEvent(db: Db, row: Omit<ProcessorEventRow, 'outcome' | 'detail' | 'updated_at'>): Promise<{ fresh: true } | { fresh: false; existing: ProcessorEventRow }> {
  try {
    await db.insertInto('processor_events').values({ ...row, outcome: 'RECEIVED', detail: '', updated_at: row.received_at }).execute();
    return { fresh: true };
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    const existing = await db.selectFrom('processor_events').selectAll().where('processor', '=', row.processor).where('event_key', '=', row.event_key).executeTakeFirstOrThrow();
    return { fresh: false, existing };
  }
}

export async function finishEvent(db: Db, id: string, set: { outcome: ProcessorEventOutcome; detail: string; payment_id?: string | null; now: number }): Promise<void> {
  await db.updateTable('processor_events').set({ outcome: set.outcome, detail: set.detail.slice(0, 500), updated_at: set.now, ...(set.payment_id !== undefined ? { payment_id: set.payment_id } : {}) })
    .where('id', '=', id).execute();
}

/** A payment's notices, oldest first (the console's timeline). */
export async function eventsOfPayment(db: Db, paymentId: string): Promise<ProcessorEventRow[]> {
  return db.selectFrom('processor_events').selectAll().where('payment_id', '=', paymentId).orderBy('received_at').orderBy('id').execute();
}
