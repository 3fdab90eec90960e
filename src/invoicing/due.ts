import { addDays, isCalendarDate, kstDate } from '../platform/kst.js';
import type { Invoice } from './repository.js';

/**
 * Due dates (docs/invoicing.md, "Due dates"): an invoice may carry one (yyyy-MM-dd, KST), given
 * as `dueDate` or by its template's "due N days after sending". The due date itself is still on
 * time; the invoice is overdue from the next day while it is unpaid.
 */

/** A due date may lie at most this many days after today (KST). */
export const MAX_DUE_AHEAD_DAYS = 365;
/** A template's "due N days after sending": N from 0 (the day of sending) to this. */
export const MAX_DUE_DAYS = 365;

/** Why a given dueDate is refused (`dueDate: ...`), or null. Today (KST) is the earliest. */
export function dueDateProblem(date: string, nowMs: number): string | null {
  if (!isCalendarDate(date)) return 'dueDate: must be a date as yyyy-MM-dd';
  const today = kstDate(nowMs);
  if (date < today) return `dueDate: must not be before today (${today}, KST)`;
  const last = addDays(today, MAX_DUE_AHEAD_DAYS);
  if (date > last) return `dueDate: must be at most ${MAX_DUE_AHEAD_DAYS} days after today (${last} at the latest)`;
  return null;
}

/** The due date of "due N days after sending", sending now. */
export function dueAfter(days: number, nowMs: number): string {
  return addDays(kstDate(nowMs), days);
}

/** Unpaid past its due date: PENDING and the due date before today (KST). */
export function isOverdue(inv: Pick<Invoice, 'status' | 'due_date'>, nowMs: number): boolean {
  return inv.status === 'PENDING' && inv.due_date !== null && inv.due_date < kstDate(nowMs);
}

/** "2026-12-10" → "2026년 12월 10일" (the message and the pages). */
export function dueDateText(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  return `${y}년 ${m}월 ${d}일`;
}
