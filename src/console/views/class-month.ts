import type { ClassMonth } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { won } from '../../platform/format.js';
import { num, phone } from './format.js';
import { csrfField, tableRegion } from './shell.js';

/** The month of a class at a glance (docs/console.md, "The month of a class"). */

const stat = (label: string, t: { count: number; amount: number }, tone = '') =>
  html`<div class="stat${tone ? ` ${tone}` : ''}"><p class="label">${label}</p><p class="value">${num(t.count)}건</p><p class="sub">${won(t.amount)}</p></div>`;

export function classMonthPage(v: { m: ClassMonth; prev: string; next: string; canEdit: boolean; csrf: string; balance: number }): SafeHtml {
  const m = v.m;
  const [y, mo] = m.month.split('-').map(Number);
  const base = `/console/classes/${m.classId}/month`;
  const remindable = m.unpaidList.filter((u) => u.sendCount > 0).length;
  return html`<p><a href="/console/classes/${m.classId}">← ${m.className}</a></p>
<h1>${m.className} · ${y}년 ${mo}월</h1>
<nav class="pager" aria-label="달"><a href="${base}?month=${v.prev}">← 지난달</a><a href="${base}?month=${v.next}">다음 달 →</a></nav>
<div class="stats">${stat('청구', m.billed)}${stat('결제 완료', m.paid, 'ok')}${stat('미결제', m.unpaid)}${stat('기한 지남', m.overdue, m.overdue.count ? 'bad' : '')}</div>
<section class="card" aria-labelledby="unpaid-title"><h2 id="unpaid-title">결제하지 않은 분 ${num(m.unpaid.count)}명</h2>
${m.unpaidList.length === 0 ? html`<p class="muted">${m.billed.count === 0 ? '이 달에 보낸 청구서가 없습니다.' : '모두 결제했습니다.'}</p>` : html`
<div class="actions">${v.canEdit && remindable > 0 ? html`<a class="btn inline" href="${base}/remind?month=${m.month}">지금 안내 보내기 (${num(remindable)}명, ${num(m.remindCost)}P)</a>` : ''}
<a class="link-btn" href="/console/classes/${m.classId}/month.csv?month=${m.month}">미결제 CSV 내보내기</a></div>
${tableRegion('결제하지 않은 분', html`<table class="list cards"><thead><tr><th scope="col">이름</th><th scope="col">전화번호</th><th scope="col" class="num">금액</th><th scope="col">납부 기한</th><th scope="col" class="num">보낸 횟수</th><th scope="col">마지막 발송</th></tr></thead>
<tbody>${m.unpaidList.map((u) => html`<tr><td class="start"><strong><a href="/console/invoices/${u.uniqueId}">${u.receiverName}</a></strong></td><td class="start sub">${phone(u.guardianPhone ?? u.receiverPhone)}</td><td class="num end"><strong>${won(u.amount)}</strong></td>
<td class="end" data-label="기한">${u.dueDate ?? '-'}${u.overdue ? html` <span class="badge bad">기한 지남</span>` : ''}</td><td class="num start sub" data-label="보냄">${num(u.sendCount)}회</td><td class="end sub" data-label="마지막">${u.lastSentAt ? u.lastSentAt.replace('T', ' ').slice(0, 16) : '-'}</td></tr>`)}</tbody></table>`)}`}
</section>
<p class="muted">보유 포인트 ${num(v.balance)}P · 취소 ${num(m.canceled.count)}건</p>`;
}

/** The confirmation of "remind now": who, how many points, when. */
export function remindConfirm(v: { m: ClassMonth; csrf: string; balance: number; at: string; night: boolean }): SafeHtml {
  const m = v.m;
  const targets = m.unpaidList.filter((u) => u.sendCount > 0);
  const short = m.remindCost > v.balance;
  return html`<p><a href="/console/classes/${m.classId}/month?month=${m.month}">← ${m.className} · ${m.month}</a></p>
<h1>미결제 안내 보내기</h1>
<section class="card"><dl class="facts"><dt>받는 분</dt><dd>${num(targets.length)}명 (${targets.slice(0, 10).map((u) => u.receiverName).join(', ')}${targets.length > 10 ? ` 외 ${num(targets.length - 10)}명` : ''})</dd>
<dt>포인트</dt><dd>${num(m.remindCost)}P (보유 ${num(v.balance)}P)</dd><dt>보내는 시각</dt><dd>${v.night ? `${v.at.replace('T', ' ').slice(0, 16)} (밤 9시~아침 8시에는 아침 8시에 보냅니다)` : '지금'}</dd></dl>
<p class="notice">같은 결제 링크로 다시 보냅니다. 그 사이 결제한 분께는 보내지 않습니다.</p></section>
${short ? html`<div class="alert" role="alert"><p>포인트가 부족합니다. <a href="/console/points">충전한 뒤</a> 보내 주세요.</p></div>` : html`<form method="post" action="/console/classes/${m.classId}/month/remind">${csrfField(v.csrf)}<input type="hidden" name="month" value="${m.month}"><button class="btn" type="submit">${num(targets.length)}명에게 보내기 (${num(m.remindCost)}P)</button></form>`}`;
}
