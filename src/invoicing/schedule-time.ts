import { kstDayStart, kstMonth } from '../platform/kst.js';

/**
 * When a schedule bills (docs/reference.md, section 17, "Schedules"): a monthly one on day N at
 * HH:MM KST, days 29–31 falling on the last day of a shorter month; a one-time one at its moment.
 * A period is the month (`2026-12`) or `once`; it runs from its planned moment to the next
 * period's (a monthly schedule) or for ONCE_PERIOD_DAYS (a one-time one). A run short of points
 * is tried again until its period ends.
 */

/** A one-time schedule's run may wait for points this long after its moment. */
export const ONCE_PERIOD_DAYS = 7;

const DAY_MS = 86_400_000;

/** Days in a month (1–12). */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The day a monthly schedule bills in a month: day N, or the month's last day when it is shorter. */
export function billingDay(day: number, month: string): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return Math.min(day, daysInMonth(y, m));
}

/** HH:MM → minutes after midnight. */
function minutesOf(time: string): number {
  const [h, mi] = time.split(':').map(Number) as [number, number];
  return h * 60 + mi;
}

/** The moment a monthly schedule bills in `month` (yyyy-MM), as epoch ms. */
export function plannedAt(day: number, time: string, month: string): number {
  const d = billingDay(day, month);
  return kstDayStart(`${month}-${String(d).padStart(2, '0')}`) + minutesOf(time) * 60_000;
}

/** The month after yyyy-MM. */
export function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

/** The first period whose planned moment is at or after `fromMs`. */
export function nextMonthlyPeriod(day: number, time: string, fromMs: number): { period: string; at: number } {
  let month = kstMonth(fromMs);
  // This month's moment may have passed; then next month's (at most two looks).
  for (let i = 0; i < 2; i++) {
    const at = plannedAt(day, time, month);
    if (at >= fromMs) return { period: month, at };
    month = nextMonth(month);
  }
  return { period: month, at: plannedAt(day, time, month) };
}

/** When a period stops taking a run short of points: the next period's moment, or a week after a one-time one. */
export function periodEnd(s: { day_of_month: number | null; at_time: string; once_at: number | null }, period: string): number {
  if (period === 'once') return Number(s.once_at) + ONCE_PERIOD_DAYS * DAY_MS;
  return plannedAt(s.day_of_month!, s.at_time, nextMonth(period));
}
