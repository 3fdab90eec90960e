import { html } from '../../pages/html.js';
import { won } from '../../platform/format.js';
import { salesCalendar, salesChart, type DaySales } from './charts.js';
import { num, when } from './format.js';

export interface Totals {
  paid: number;
  paidCount: number;
  canceled: number;
  canceledCount: number;
}

export interface OverviewView {
  today: Totals;
  month: Totals;
  monthLabel: string;
  days: DaySales[];
  calendar: { y: number; m: number };
  byDay: Map<number, DaySales>;
  todayDay: number;
  balance: number;
  callbacks: { count: number; rows: { trans_seqno: string; approval_at: number | null; pay_user_name: string; amount: number }[] };
  webhooks: { retrying: number; abandoned: number };
}

function stat(title: string, t: Totals) {
  return html`<div class="stat"><p class="label">${title} 결제</p><p class="value">${won(t.paid)}</p><p class="sub">${num(t.paidCount)}건</p></div>
<div class="stat"><p class="label">${title} 취소</p><p class="value">${won(t.canceled)}</p><p class="sub">${num(t.canceledCount)}건</p></div>
<div class="stat"><p class="label">${title} 순매출</p><p class="value">${won(t.paid - t.canceled)}</p><p class="sub">결제 − 취소</p></div>`;
}

export function overviewBody(v: OverviewView) {
  const failing = v.callbacks.count + v.webhooks.retrying + v.webhooks.abandoned;
  return html`<h1>개요</h1>
<section aria-labelledby="today-title"><h2 id="today-title">오늘</h2><div class="stats">${stat('오늘', v.today)}</div></section>
<section aria-labelledby="month-title"><h2 id="month-title">${v.monthLabel}</h2><div class="stats">${stat('이번 달', v.month)}</div></section>
<div class="stats">
<div class="stat"><p class="label">발송 포인트</p><p class="value">${num(v.balance)}P</p><p class="sub"><a href="/console/points">충전·내역</a></p></div>
<div class="stat"><p class="label">실패한 전달</p><p class="value">${num(failing)}건</p><p class="sub">콜백 ${num(v.callbacks.count)} · 웹훅 재시도 ${num(v.webhooks.retrying)} · 포기 ${num(v.webhooks.abandoned)}</p></div>
</div>
${v.callbacks.count > 0 ? html`<section class="card" aria-labelledby="failing-title"><h2 id="failing-title">전달에 실패한 결제 콜백 (최근 7일)</h2>
<ul>${v.callbacks.rows.map((r) => html`<li><a href="/console/payments/${encodeURIComponent(r.trans_seqno)}">${r.trans_seqno}</a> · ${r.pay_user_name} · ${won(Number(r.amount))} · ${when(r.approval_at)}</li>`)}</ul></section>` : ''}
${salesChart(v.days)}
${salesCalendar(v.calendar, v.byDay, v.todayDay)}`;
}
