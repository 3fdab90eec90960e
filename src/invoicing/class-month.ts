import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { enqueue } from '../jobs/define.js';
import type { Clock } from '../platform/clock.js';
import { newId } from '../platform/crypto.js';
import { kstDate, kstIso, kstMonthRange } from '../platform/kst.js';
import * as billing from './billing-repository.js';
import { reserveCost, type Costs } from './points.js';
import { outsideQuietHours, REMINDER_JOB } from './reminders.js';
import { AppError } from '../platform/errors.js';

/**
 * The month of a class at a glance (docs/reference.md, section 17, "The month of a class"): what
 * its schedules billed in a KST month (by creation), paid, unpaid, overdue, the list of who has
 * not paid, and "remind now": a reminder to each of them at once (quiet hours kept).
 */
export interface UnpaidRow {
  uniqueId: string;
  transSeqNo: string;
  receiverName: string;
  receiverPhone: string;
  guardianPhone: string | null;
  amount: number;
  dueDate: string | null;
  overdue: boolean;
  sendCount: number;
  lastSentAt: string | null;
  sendChannel: string;
}

export interface ClassMonth {
  classId: string;
  className: string;
  month: string;
  billed: { count: number; amount: number };
  paid: { count: number; amount: number };
  unpaid: { count: number; amount: number };
  overdue: { count: number; amount: number };
  canceled: { count: number; amount: number };
  unpaidList: UnpaidRow[];
  /** Points "remind now" would take: one message per unpaid invoice at its channel's price. */
  remindCost: number;
}

export class ClassMonthService {
  constructor(private readonly db: Kysely<Database>, private readonly deps: { clock: Clock; costs: Costs; wake: () => void }) {}

  async month(accountId: string, classId: string, month: string): Promise<ClassMonth> {
    const cls = await billing.findClass(this.db, accountId, classId);
    if (!cls) throw new AppError('NOT_FOUND', 'id: no such class');
    const [from, to] = kstMonthRange(month);
    const rows = await this.db.selectFrom('invoices')
      .select(['unique_id', 'trans_seqno', 'status', 'receiver_name', 'receiver_phone', 'guardian_phone', 'amount', 'due_date', 'send_count', 'last_sent_at', 'send_channel'])
      .where('account_id', '=', accountId).where('class_id', '=', classId).where('deleted_at', 'is', null)
      .where('created_at', '>=', from).where('created_at', '<', to).orderBy('receiver_name').orderBy('id').execute();
    const today = kstDate(this.deps.clock.nowMs());
    const sum = (f: (r: (typeof rows)[number]) => boolean) => {
      const xs = rows.filter(f);
      return { count: xs.length, amount: xs.reduce((s, r) => s + Number(r.amount), 0) };
    };
    const unpaid = rows.filter((r) => r.status === 'PENDING');
    return {
      classId, className: cls.name, month,
      billed: sum(() => true), paid: sum((r) => r.status === 'DONE'), unpaid: sum((r) => r.status === 'PENDING'),
      overdue: sum((r) => r.status === 'PENDING' && r.due_date !== null && r.due_date < today), canceled: sum((r) => r.status === 'CANCELED'),
      unpaidList: unpaid.map((r) => ({
        uniqueId: r.unique_id, transSeqNo: r.trans_seqno, receiverName: r.receiver_name, receiverPhone: r.receiver_phone, guardianPhone: r.guardian_phone,
        amount: Number(r.amount), dueDate: r.due_date, overdue: r.due_date !== null && r.due_date < today, sendCount: Number(r.send_count),
        lastSentAt: r.last_sent_at === null ? null : kstIso(Number(r.last_sent_at)), sendChannel: r.send_channel,
      })),
      remindCost: unpaid.filter((r) => Number(r.send_count) > 0).reduce((s, r) => s + reserveCost(r.send_channel, this.deps.costs), 0),
    };
  }

  /**
   * "Remind now": a reminder to every unpaid invoice of the class's month that was sent before,
   * due now (08:00 when it is night in Korea), each a resend with its points. Reminders beyond a
   * rule's K: the owner asked for these. Answers how many and when.
   */
  async remindNow(accountId: string, classId: string, month: string): Promise<{ reminders: number; at: string }> {
    const m = await this.month(accountId, classId, month);
    const now = this.deps.clock.nowMs();
    const at = outsideQuietHours(now);
    const targets = m.unpaidList.filter((u) => u.sendCount > 0);
    await this.db.transaction().execute(async (trx) => {
      for (const u of targets) {
        const inv = await trx.selectFrom('invoices').select(['id', 'store_code']).where('account_id', '=', accountId).where('unique_id', '=', u.uniqueId).executeTakeFirstOrThrow();
        const last = await trx.selectFrom('invoice_reminders').select((eb) => eb.fn.max('seq').as('seq')).where('invoice_id', '=', inv.id).executeTakeFirst();
        const id = newId();
        await trx.insertInto('invoice_reminders').values({
          id, invoice_id: inv.id, account_id: accountId, seq: Number(last?.seq ?? 0) + 1, due_at: at, status: 'PENDING', send_id: null, reason: 'remind now', created_at: now, updated_at: now,
        }).execute();
        await enqueue(trx, REMINDER_JOB, { reminderId: id }, { runAt: at, uniqueKey: `reminder:${id}`, now, storeCode: inv.store_code });
      }
    });
    this.deps.wake();
    return { reminders: targets.length, at: kstIso(at) };
  }
}
