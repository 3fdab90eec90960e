import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { InvoiceReminderTable } from '../db/schema-billing.js';
import type { InvoiceTable, SendTable } from '../db/schema.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import type { Clock } from '../platform/clock.js';
import { newId } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import { addDays, kstDate, kstDayStart, kstIso } from '../platform/kst.js';
import { reserve, reserveCost, type Costs } from './points.js';
import * as repo from './repository.js';
import { SEND_JOB, type SendRunner } from './sends.js';

/**
 * Reminders to the unpaid (docs/reference.md, section 17, "Reminders"): an invoice with a due
 * date and a rule {beforeDays N, afterDays M, times K} is sent again N days before its due date,
 * then M, 2M, ... days after it, K times at most, at the time of day it was first billed, never
 * between 21:00 and 08:00 KST (moved to 08:00). A reminder is a resend: the same link and
 * transaction number, the invoice's channel, points per message, and only while the invoice is
 * unpaid (never after payment, cancel or deletion). Each is a row unique per (invoice, number),
 * so it happens once, and a job of the queue.
 */

/** Quiet hours, KST: a reminder due from 21:00 waits for 08:00 the next morning; one due before 08:00 for 08:00 that day. */
export const QUIET_HOURS = { start: 21, end: 8 } as const;
/** An unexpected failure of a reminder is tried again after 1 min, 5 min, 30 min. */
export const REMINDER_BACKOFF_SECONDS = [60, 300, 1800] as const;
/** A reminder that finds a send of its invoice still in progress looks again this much later. */
export const REMINDER_BUSY_RETRY_MS = 5 * 60_000;

const HOUR = 3_600_000;
const KST = 9 * HOUR;

/** The moment itself outside quiet hours; otherwise 08:00 KST (the next day from 21:00, the same day before 08:00). */
export function outsideQuietHours(ms: number): number {
  const hour = Math.floor(((ms + KST) % 86_400_000) / HOUR);
  if (hour >= QUIET_HOURS.start) return kstDayStart(addDays(kstDate(ms), 1)) + QUIET_HOURS.end * HOUR;
  if (hour < QUIET_HOURS.end) return kstDayStart(kstDate(ms)) + QUIET_HOURS.end * HOUR;
  return ms;
}

/**
 * The moments of an invoice's reminders (before quiet hours): N days before the due date, then
 * every M days after it, K in all, each at the minute of the day of `billedAt`. Moments not after
 * `now` are left out (a due date too close for "N days before"), without giving their place away.
 */
export function reminderMoments(rule: { before: number | null; after: number | null; times: number }, dueDate: string, billedAt: number, now: number): number[] {
  // The minute of billing (its seconds dropped): reminders come at 10:30, not 10:30:07.
  const timeOfDay = Math.floor(((billedAt + KST) % 86_400_000) / 60_000) * 60_000;
  const at = (date: string) => kstDayStart(date) + timeOfDay;
  const out: number[] = [];
  if (rule.before !== null) out.push(at(addDays(dueDate, -rule.before)));
  for (let i = 1; rule.after !== null && out.length < rule.times; i++) out.push(at(addDays(dueDate, i * rule.after)));
  return out.slice(0, rule.times).filter((m) => outsideQuietHours(m) > now);
}

export interface ReminderPayload {
  reminderId: string;
}

export const REMINDER_JOB: JobDefinition<ReminderPayload, ReminderRunner> = defineJob({
  kind: 'billing.reminder',
  backoffSeconds: REMINDER_BACKOFF_SECONDS,
  run: ({ reminderId }: ReminderPayload, runner: ReminderRunner) => runner.run(reminderId),
});

/**
 * The reminders of new invoices with a rule and a due date, with their jobs, in the caller's
 * transaction (the creation's or the schedule run's).
 */
export async function planReminders(trx: Transaction<Database>, rows: Insertable<InvoiceTable>[], ids: Map<string, number>, now: number): Promise<void> {
  const reminders: Insertable<InvoiceReminderTable>[] = [];
  for (const r of rows) {
    if (!r.due_date || !r.remind_limit) continue;
    const moments = reminderMoments({ before: r.remind_before_days ?? null, after: r.remind_after_days ?? null, times: Number(r.remind_limit) }, r.due_date, now, now);
    moments.forEach((m, i) => reminders.push({
      id: newId(), invoice_id: ids.get(r.unique_id)!, account_id: r.account_id, seq: i + 1, due_at: outsideQuietHours(m), status: 'PENDING',
      send_id: null, reason: null, created_at: now, updated_at: now,
    }));
  }
  if (reminders.length === 0) return;
  for (let i = 0; i < reminders.length; i += 300) await trx.insertInto('invoice_reminders').values(reminders.slice(i, i + 300)).execute();
  const store = new Map(rows.map((r) => [ids.get(r.unique_id)!, r.store_code]));
  for (const r of reminders) {
    await enqueue(trx, REMINDER_JOB, { reminderId: r.id }, { runAt: r.due_at, uniqueKey: `reminder:${r.id}`, now, storeCode: store.get(r.invoice_id) });
  }
}

export interface ReminderDeps {
  clock: Clock;
  costs: Costs;
  runner: SendRunner;
  log: Logger;
}

/** One reminder's run: a resend of kind REMINDER, once, and only while the invoice is unpaid. */
export class ReminderRunner {
  constructor(private readonly db: Kysely<Database>, private readonly deps: ReminderDeps) {}

  async run(reminderId: string): Promise<void> {
    const r = await this.db.selectFrom('invoice_reminders').selectAll().where('id', '=', reminderId).executeTakeFirst();
    if (!r || r.status !== 'PENDING') return;
    const now = this.deps.clock.nowMs();
    // The clock may have been moved into the night since it was planned: wait for the morning.
    const allowed = outsideQuietHours(now);
    if (allowed > now) {
      await this.db.transaction().execute(async (trx) => {
        await trx.updateTable('invoice_reminders').set({ due_at: allowed, updated_at: now }).where('id', '=', r.id).where('status', '=', 'PENDING').execute();
        await enqueue(trx, REMINDER_JOB, { reminderId: r.id }, { runAt: allowed, uniqueKey: `reminder:${r.id}:${allowed}`, now });
      });
      return;
    }
    const sendId = newId();
    const outcome = await this.db.transaction().execute(async (trx) => {
      const skip = async (reason: string) => {
        await trx.updateTable('invoice_reminders').set({ status: 'SKIPPED', reason, updated_at: now }).where('id', '=', r.id).where('status', '=', 'PENDING').execute();
        return 'skipped' as const;
      };
      const inv = await repo.findInvoice(trx, r.account_id, Number(r.invoice_id), { withDeleted: true });
      if (!inv || inv.deleted_at !== null) return skip('deleted');
      if (inv.status === 'DONE') return skip('already paid');
      if (inv.status === 'CANCELED') return skip('cancelled');
      // The invoice's row lock (PostgreSQL) while it is still PENDING: a payment waits for this transaction, or this one sees it paid.
      if (!(await repo.touchPending(trx, r.account_id, inv.id, now))) return skip('no longer payable');
      if (Number(inv.send_count) === 0) return skip('not sent yet');
      if (await repo.hasOpenSend(trx, r.account_id, inv.id)) return 'busy' as const;
      const claimed = await trx.updateTable('invoice_reminders').set({ status: 'SENT', send_id: sendId, updated_at: now })
        .where('id', '=', r.id).where('status', '=', 'PENDING').executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) return 'skipped' as const;
      const send: Insertable<SendTable> = {
        id: sendId, invoice_id: inv.id, account_id: r.account_id, send_type: 'REMINDER', status: 'WAITING', channel_requested: inv.send_channel,
        channel_used: null, receiver_phone: inv.guardian_phone ?? inv.receiver_phone, cost_reserved: reserveCost(inv.send_channel, this.deps.costs),
        cost_settled: null, provider_message_id: null, delivery_status: null, error_message: null, sent_at: null, created_at: now,
      };
      // Points per message, or none: -21 rolls the claim back, and the reminder is skipped below.
      await repo.insertSends(trx, [send]);
      await reserve(trx, r.account_id, [send], now);
      await enqueue(trx, SEND_JOB, { sendId }, { runAt: now + 60_000, uniqueKey: `send:${sendId}`, now });
      return 'sent' as const;
    }).catch(async (err: unknown) => {
      if (!(err instanceof AppError) || err.kind !== 'INSUFFICIENT_POINTS') throw err;
      await this.db.updateTable('invoice_reminders').set({ status: 'SKIPPED', reason: 'insufficient points', updated_at: now }).where('id', '=', r.id).where('status', '=', 'PENDING').execute();
      return 'skipped' as const;
    });
    if (outcome === 'busy') {
      // A send of this invoice is on its way; look again shortly (a failed attempt of this job would do it later).
      await this.db.transaction().execute((trx) => enqueue(trx, REMINDER_JOB, { reminderId: r.id }, { runAt: now + REMINDER_BUSY_RETRY_MS, uniqueKey: `reminder:${r.id}:busy:${now}`, now }));
      return;
    }
    if (outcome !== 'sent') return;
    try {
      // At once, as a resend does; its send job (due a minute later) completes it if this process dies.
      await this.deps.runner.run(sendId);
    } catch (err) {
      this.deps.log.warn({ send: sendId, err: (err as Error).message }, 'inline reminder send did not finish');
    }
  }
}

/** A reminder as the API and console show it. */
export function reminderView(r: { seq: number; due_at: number; status: string; reason: string | null }) {
  return { seq: Number(r.seq), dueAt: kstIso(Number(r.due_at)), status: r.status, reason: r.reason };
}
