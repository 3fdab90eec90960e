import { html, type SafeHtml } from '../../pages/html.js';
import { num } from './format.js';

/** One day of sales: KST day number (days since the epoch), paid and cancelled amounts and counts. */
export interface DaySales {
  day: number;
  paid: number;
  paidCount: number;
  canceled: number;
  canceledCount: number;
}

const DAY_MS = 86_400_000;

function dateOf(day: number): { y: number; m: number; d: number; dow: number } {
  const dt = new Date(day * DAY_MS);
  return { y: dt.getUTCFullYear(), m: dt.getUTCMonth() + 1, d: dt.getUTCDate(), dow: dt.getUTCDay() };
}

/** A compact won amount for a chart label: 1,234,000 → 123.4만. */
function short(n: number): string {
  if (Math.abs(n) >= 100_000_000) return `${(n / 100_000_000).toFixed(1)}억`;
  if (Math.abs(n) >= 10_000) return `${Math.round(n / 1000) / 10}만`;
  return num(n);
}

/**
 * The 30-day chart: one bar per day (paid up, cancelled down), drawn as SVG on the server with
 * presentation attributes only (no inline style, so the strict CSP holds). Its words (the
 * scale, the days, the legend) are HTML beside the drawing, not text inside it, so they keep
 * their size (at least 12 px) when the drawing shrinks to a phone. Every day's numbers are one
 * tap away in a table under "일별 금액" (no hover needed), for touch and for screen readers.
 */
export function salesChart(days: DaySales[]): SafeHtml {
  const W = 600;
  const H = 160;
  const max = Math.max(1, ...days.map((d) => Math.max(d.paid, d.canceled)));
  const mid = H * 0.75;
  const up = mid - 4;
  const down = H - mid;
  const bw = W / days.length;
  const bars = days.map((d, i) => {
    const x = i * bw + 1;
    const hp = Math.round((d.paid / max) * up);
    const hc = Math.round((d.canceled / max) * down);
    return html`<rect class="bar" x="${x.toFixed(1)}" y="${mid - hp}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${hp}"/>${hc > 0 ? html`<rect class="bar cancel" x="${x.toFixed(1)}" y="${mid}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${hc}"/>` : ''}`;
  });
  const label = (d: DaySales) => {
    const { m, d: dd } = dateOf(d.day);
    return `${m}/${dd}`;
  };
  return html`<figure class="chart card" aria-labelledby="chart-title">
<h2 id="chart-title">최근 30일 매출</h2>
<ul class="legend"><li><span class="swatch paid" aria-hidden="true"></span>결제 (위)</li><li><span class="swatch cancel" aria-hidden="true"></span>취소 (아래)</li><li class="muted">가장 큰 날 ${short(max)}원</li></ul>
<svg viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-labelledby="chart-desc"><desc id="chart-desc">최근 30일 일별 결제 금액(파란 막대)과 취소 금액(빨간 막대). 최대 ${num(max)}원. 날짜별 금액은 아래 표에 있습니다.</desc>
<line class="grid" x1="0" y1="${mid}" x2="${W}" y2="${mid}"/>
${bars}
</svg>
<ol class="chart-days" aria-hidden="true">${days.map((d, i) => html`<li>${(days.length - 1 - i) % 7 === 0 ? label(d) : ''}</li>`)}</ol>
<details class="chart-table"><summary>일별 금액</summary>
${html`<div class="table-wrap" role="region" aria-label="일별 금액 표" tabindex="0"><table class="list"><thead><tr><th scope="col">날짜</th><th scope="col" class="num">결제</th><th scope="col" class="num">취소</th></tr></thead>
<tbody>${[...days].reverse().map((d) => html`<tr><td>${label(d)}</td><td class="num">${num(d.paid)}원 <span class="muted">${d.paidCount}건</span></td><td class="num">${d.canceled ? html`${num(d.canceled)}원 <span class="muted">${d.canceledCount}건</span>` : '0원'}</td></tr>`)}</tbody></table></div>`}
</details>
</figure>`;
}

/**
 * A month calendar of daily net sales (Toss's 상점관리자 home shows one): a table, a week per
 * row, each day with its net amount and counts. `today` is marked.
 */
export function salesCalendar(month: { y: number; m: number }, byDay: Map<number, DaySales>, today: number): SafeHtml {
  const first = Math.floor(Date.UTC(month.y, month.m - 1, 1) / DAY_MS);
  const last = Math.floor(Date.UTC(month.y, month.m, 1) / DAY_MS) - 1;
  const cells: SafeHtml[] = [];
  for (let i = 0; i < dateOf(first).dow; i++) cells.push(html`<td class="empty"></td>`);
  for (let day = first; day <= last; day++) {
    const s = byDay.get(day);
    const net = s ? s.paid - s.canceled : 0;
    cells.push(html`<td${day === today ? html` class="today" aria-current="date"` : ''}><span class="day">${dateOf(day).d}</span>${s ? html`<span class="net">${short(net)}</span><span class="count">${s.paidCount}건${s.canceledCount ? html` · 취소 ${s.canceledCount}` : ''}</span>` : ''}</td>`);
  }
  while (cells.length % 7) cells.push(html`<td class="empty"></td>`);
  const rows: SafeHtml[] = [];
  for (let i = 0; i < cells.length; i += 7) rows.push(html`<tr>${cells.slice(i, i + 7)}</tr>`);
  return html`<section class="card" aria-labelledby="calendar-title">
<h2 id="calendar-title">${month.y}년 ${month.m}월 매출 달력</h2>
<table class="calendar"><caption class="muted">날짜별 순매출(결제 − 취소)과 결제 건수</caption>
<thead><tr>${['일', '월', '화', '수', '목', '금', '토'].map((d) => html`<th scope="col">${d}</th>`)}</tr></thead>
<tbody>${rows}</tbody></table>
</section>`;
}

export { dateOf, DAY_MS };
