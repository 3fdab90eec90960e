import { sql, type Kysely } from 'kysely';

/**
 * Billing that runs itself (docs/invoicing.md, "Billing that runs itself"): due dates on
 * invoices and templates, classes (named lists of recipients), monthly or one-time schedules
 * with one run per period (a unique key, so any number of instances bill a period once), and
 * reminders to the unpaid (one row per reminder of an invoice, unique per number).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // An invoice's due date (yyyy-MM-dd, KST), the class and run that billed it, and its reminder rule.
  await db.schema.alterTable('invoices').addColumn('due_date', 'text').execute();
  await db.schema.alterTable('invoices').addColumn('class_id', 'text').execute();
  await db.schema.alterTable('invoices').addColumn('schedule_run_id', 'text').execute();
  await db.schema.alterTable('invoices').addColumn('remind_before_days', 'integer').execute();
  await db.schema.alterTable('invoices').addColumn('remind_after_days', 'integer').execute();
  await db.schema.alterTable('invoices').addColumn('remind_limit', 'integer').execute();
  // The overdue filter: an account's unpaid invoices by due date.
  await db.schema.createIndex('invoices_account_due').on('invoices').columns(['account_id', 'status', 'due_date']).execute();
  // The month of a class: its invoices by creation time.
  await db.schema.createIndex('invoices_class_created').on('invoices').columns(['class_id', 'created_at']).execute();

  // "Due N days after sending" on a template.
  await db.schema.alterTable('bill_templates').addColumn('due_days', 'integer').execute();

  await db.schema.createTable('classes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('memo', 'text')
    .addColumn('archived_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('classes_account').on('classes').columns(['account_id', 'created_at']).execute();

  // A recipient of a class; the same person may be in several classes (one row in each).
  await db.schema.createTable('class_members')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('class_id', 'text', (c) => c.notNull().references('classes.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('guardian_phone', 'text')
    .addColumn('amount', 'bigint')
    .addColumn('items_json', 'text')
    .addColumn('memo', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // One person once per class (the CSV rule: name and phone together).
  await db.schema.createIndex('class_members_once').unique().on('class_members').columns(['class_id', 'name', 'phone']).execute();
  await db.schema.createIndex('class_members_class').on('class_members').columns(['class_id', 'position']).execute();

  await db.schema.createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('store_code', 'text', (c) => c.notNull())
    .addColumn('class_id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('repeat', 'text', (c) => c.notNull())
    .addColumn('day_of_month', 'integer')
    .addColumn('at_time', 'text', (c) => c.notNull())
    .addColumn('once_at', 'bigint')
    .addColumn('due_days', 'integer')
    .addColumn('remind_before_days', 'integer')
    .addColumn('remind_after_days', 'integer')
    .addColumn('remind_limit', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('next_run_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('schedules_repeat', sql`repeat in ('MONTHLY','ONCE')`)
    .addCheckConstraint('schedules_status', sql`status in ('ACTIVE','PAUSED','ENDED')`)
    .execute();
  await db.schema.createIndex('schedules_account').on('schedules').columns(['account_id', 'created_at']).execute();

  // One run per schedule and period ('2026-12' for a monthly one, 'once' for a one-time one):
  // the unique key that makes a period billed once across instances, crashes and retries.
  await db.schema.createTable('schedule_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('schedule_id', 'text', (c) => c.notNull().references('schedules.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('planned_at', 'bigint', (c) => c.notNull())
    .addColumn('period_ends_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('recipients', 'integer', (c) => c.notNull())
    .addColumn('invoices', 'integer', (c) => c.notNull())
    .addColumn('points_needed', 'bigint', (c) => c.notNull())
    .addColumn('points_spent', 'bigint', (c) => c.notNull())
    .addColumn('tries', 'integer', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addCheckConstraint('schedule_runs_status', sql`status in ('WAITING_POINTS','SENT','MISSED','SKIPPED')`)
    .execute();
  await db.schema.createIndex('schedule_runs_once').unique().on('schedule_runs').columns(['schedule_id', 'period']).execute();
  await db.schema.createIndex('schedule_runs_account').on('schedule_runs').columns(['account_id', 'status', 'created_at']).execute();

  // Reminders of an unpaid invoice: number 1..K, each once (unique), with the send it made.
  await db.schema.createTable('invoice_reminders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('invoice_id', 'bigint', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('send_id', 'text')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('invoice_reminders_status', sql`status in ('PENDING','SENT','SKIPPED')`)
    .execute();
  await db.schema.createIndex('invoice_reminders_once').unique().on('invoice_reminders').columns(['invoice_id', 'seq']).execute();
  await db.schema.createIndex('invoice_reminders_account').on('invoice_reminders').columns(['account_id', 'status', 'due_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['invoice_reminders', 'schedule_runs', 'schedules', 'class_members', 'classes']) await db.schema.dropTable(t).execute();
  await db.schema.alterTable('bill_templates').dropColumn('due_days').execute();
  await db.schema.dropIndex('invoices_class_created').execute();
  await db.schema.dropIndex('invoices_account_due').execute();
  for (const c of ['remind_limit', 'remind_after_days', 'remind_before_days', 'schedule_run_id', 'class_id', 'due_date']) {
    await db.schema.alterTable('invoices').dropColumn(c).execute();
  }
}
