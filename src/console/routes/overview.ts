import type { App } from '../../platform/http.js';
import { FAILING_WINDOW_MS } from '../../invoicing/index.js';
import { kstIso, kstMonth, kstMonthRange } from '../../platform/kst.js';
import { renderPage, storeKey, userOf, type ConsoleDeps } from '../http.js';
import { html } from '../../pages/html.js';
import { pointsBanner } from '../views/schedules.js';
import { DAY_MS, type DaySales } from '../views/charts.js';
import { overviewBody, type Totals } from '../views/overview.js';

const KST_MS = 9 * 3_600_000;

function totals(days: DaySales[]): Totals {
  return days.reduce((t, d) => ({ paid: t.paid + d.paid, paidCount: t.paidCount + d.paidCount, canceled: t.canceled + d.canceled, canceledCount: t.canceledCount + d.canceledCount }), { paid: 0, paidCount: 0, canceled: 0, canceledCount: 0 });
}

/** The overview (docs/console.md, "Overview"): today, this month, 30 days, the month's calendar, points, failing deliveries. */
export function overviewRoutes(app: App, deps: ConsoleDeps): void {
  app.get('', { schema: { hide: true } }, async (req, reply) => {
    const user = userOf(req);
    const s = storeKey(user);
    const now = deps.clock.nowMs();
    const todayDay = Math.floor((now + KST_MS) / DAY_MS);
    const month = kstMonth(now);
    const [mFrom, mTo] = kstMonthRange(month);
    // One range covers the last 30 days and the whole month: whichever starts first.
    const from = Math.min(mFrom, (todayDay - 29) * DAY_MS - KST_MS);
    const to = Math.max(mTo, (todayDay + 1) * DAY_MS - KST_MS);
    const sales = await deps.payments.salesByDay(s, from, to);
    const byDay = new Map<number, DaySales>();
    const at = (day: number) => byDay.get(day) ?? (byDay.set(day, { day, paid: 0, paidCount: 0, canceled: 0, canceledCount: 0 }), byDay.get(day)!);
    for (const p of sales.paid) Object.assign(at(p.day), { paid: p.total, paidCount: p.n });
    for (const c of sales.canceled) Object.assign(at(c.day), { canceled: c.total, canceledCount: c.n });
    const days = Array.from({ length: 30 }, (_, i) => byDay.get(todayDay - 29 + i) ?? { day: todayDay - 29 + i, paid: 0, paidCount: 0, canceled: 0, canceledCount: 0 });
    const firstDay = Math.floor((mFrom + KST_MS) / DAY_MS);
    const lastDay = Math.floor((mTo + KST_MS) / DAY_MS);
    const monthDays = [...byDay.values()].filter((d) => d.day >= firstDay && d.day < lastDay);
    const [y, m] = month.split('-').map(Number) as [number, number];
    const body = overviewBody({
      today: totals(byDay.has(todayDay) ? [byDay.get(todayDay)!] : []), month: totals(monthDays), monthLabel: `${y}년 ${m}월`,
      days, calendar: { y, m }, byDay, todayDay,
      balance: await deps.invoicing.invoices.balance(user.tenant.id),
      // The one definition of failing (failed, or retrying after a failure) over the last 7 days:
      // what the deliveries list's "실패" shows and its recovery re-queues.
      failing: await deps.invoicing.deliveries.failing(user.store.code, now - FAILING_WINDOW_MS),
      failingRows: (await deps.invoicing.deliveries.list(user.store.code, { failing: true, since: kstIso(now - FAILING_WINDOW_MS), size: '5' })).deliveries,
    });
    // Schedule runs short of points come first (docs/console.md, "Schedules").
    const waiting = pointsBanner(await deps.invoicing.billing.schedules.waiting(user.tenant.id), await deps.invoicing.invoices.balance(user.tenant.id));
    return renderPage(req, reply, { title: '개요', active: 'overview', body: html`${waiting}${body}` });
  });
}
