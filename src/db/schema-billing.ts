// Type-only imports of a file that imports nothing: the billing unions.
import type { ReminderStatus, ScheduleRepeat, ScheduleRunStatus, ScheduleStatus } from '../invoicing/invoice-state.js';

/** Billing that runs itself (migration 0013), beside src/db/schema.ts. */

/** A class: a named list of recipients of one team (its tenant account). */
export interface ClassTable {
  id: string;
  account_id: string;
  name: string;
  memo: string | null;
  archived_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A recipient of a class; unique per (class, name, phone). */
export interface ClassMemberTable {
  id: string;
  class_id: string;
  account_id: string;
  name: string;
  phone: string;
  guardian_phone: string | null;
  /** null: the template's amount. */
  amount: number | null;
  /** JSON array of BillItem, or null. */
  items_json: string | null;
  memo: string | null;
  position: number;
  created_at: number;
  updated_at: number;
}

export interface ScheduleTable {
  id: string;
  account_id: string;
  store_code: string;
  class_id: string;
  template_id: string;
  repeat: ScheduleRepeat;
  /** MONTHLY: 1..31 (29-31 fall on the last day of shorter months). */
  day_of_month: number | null;
  /** HH:MM, KST. */
  at_time: string;
  /** ONCE: the moment. */
  once_at: number | null;
  due_days: number | null;
  remind_before_days: number | null;
  remind_after_days: number | null;
  remind_limit: number | null;
  status: ScheduleStatus;
  next_run_at: number | null;
  created_at: number;
  updated_at: number;
}

/** One run of a schedule per period (unique), with what it billed and spent. */
export interface ScheduleRunTable {
  id: string;
  schedule_id: string;
  account_id: string;
  period: string;
  planned_at: number;
  period_ends_at: number;
  status: ScheduleRunStatus;
  recipients: number;
  invoices: number;
  points_needed: number;
  points_spent: number;
  tries: number;
  message: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export interface InvoiceReminderTable {
  id: string;
  invoice_id: number;
  account_id: string;
  seq: number;
  due_at: number;
  status: ReminderStatus;
  send_id: string | null;
  reason: string | null;
  created_at: number;
  updated_at: number;
}
