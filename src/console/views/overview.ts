import type { DeliveryView } from '../../invoicing/index.js';
import { html } from '../../pages/html.js';
import { won } from '../../platform/format.js';
import { salesCalendar, salesChart, type DaySales } from './charts.js';
import { num } from './format.js';

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
  /** Failing deliveries of the last 7 days (isFailing), by kind; the newest few. */
  failing: { callback: number; webhook: number; endpoint: number };
  failingRows: DeliveryView[];
}

function stat(title: string, t: Totals) {
  return html`<div class="stat"><p class="label">${title} 결제</p><p class="value">${won(t.paid)}</p><p class="sub">${num(t.paidCount)}건</p></div>
<div class="stat"><p class="label">${title} 취소</p><p class="value">${won(t.canceled)}</p><p class="sub">${num(t.canceledCount)}건</p></div>
<div class="stat"><p class="label">${title} 순매출</p><p class="value">${won(t.paid - t.canceled)}</p><p class="sub">결제 − 취소</p></div>`;
}

export function overviewBody(v: OverviewView) {
  const failing = v.failing.callback + v.failing.webhook + v.failing.endpoint;
  return html`<h1>개요</h1>
<section aria-labelledby="today-title"><h2 id="today-title">오늘</h2><div class="stats">${stat('오늘', v.today)}</div></section>
<section aria-labelledby="month-title"><h2 id="month-title">${v.monthLabel}</h2><div class="stats">${stat('이번 달', v.month)}</div></section>
<div class="stats">
<div class="stat"><p class="label">발송 포인트</p><p class="value">${num(v.balance)}P</p><p class="sub"><a href="/console/points">충전·내역</a></p></div>
<div class="stat"><p class="label">실패한 전달</p><p class="value">${num(failing)}건</p><p class="sub">최근 7일 · 콜백 ${num(v.failing.callback)} · 웹훅 ${num(v.failing.webhook)} · 엔드포인트 ${num(v.failing.endpoint)}${failing ? html` · <a href="/console/deliveries?status=failed">보기·복구</a>` : ''}</p></div>
</div>
${failing > 0 ? html`<section class="card" aria-labelledby="failing-title"><h2 id="failing-title">전달에 실패한 콜백·웹훅 (최근 7일)</h2>
<ul>${v.failingRows.map((d) => html`<li><a href="/console/deliveries/${d.id}">${d.kind === 'callback' ? '결제 콜백' : d.endpointId ? '엔드포인트 웹훅' : '청구서 웹훅'} ${d.number}</a> · ${d.status === 'failed' ? '재시도 끝남' : `재시도 중 (${num(d.attempts)}회 실패)`}</li>`)}</ul>
<p><a class="btn secondary" href="/console/deliveries?status=failed">실패한 전송 보기·복구</a></p></section>` : ''}
${salesChart(v.days)}
${salesCalendar(v.calendar, v.byDay, v.todayDay)}`;
}
