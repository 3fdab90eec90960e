import type { LedgerLine, LedgerRow, Recharge } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { LEDGER_KIND_LABEL } from '../../pages/labels.js';
import { won } from '../../platform/format.js';
import { note, num, when } from './format.js';
import type { FieldErrors } from '../field-errors.js';
import { inputField, summary } from './form-fields.js';
import { csrfField, tableRegion } from './shell.js';

const signed = (n: number) => `${n > 0 ? '+' : ''}${num(n)}P`;

const invoiceLink = (r: LedgerRow) => r.invoice_unique_id ? html`<a href="/console/invoices/${r.invoice_unique_id}">${r.invoice_receiver} · ${r.invoice_reason}</a>` : '';

/**
 * One line of the ledger: a row alone, or a send's rows as one line ("청구서 30건 발송") whose
 * <details> opens to each invoice and its points.
 */
function ledgerLine(l: LedgerLine): SafeHtml {
  const first = l.rows[0]!;
  const what = l.count === 1 ? invoiceLink(first) : html`<details class="ledger-send"><summary>청구서 ${num(l.count)}건 ${first.memo === 'RESEND' ? '재발송' : '발송'}</summary>
<ul>${l.rows.map((r) => html`<li>${invoiceLink(r) || '청구서'} <span class="num">${signed(Number(r.delta))}</span></li>`)}</ul></details>`;
  return html`<tr><td class="full sub">${when(first.created_at)}</td><td class="start">${LEDGER_KIND_LABEL[first.kind]}</td><td class="num end"><strong>${signed(l.delta)}</strong></td>
<td class="full">${what}</td><td class="wrap full sub">${l.count === 1 ? note(first.memo) : ''}</td></tr>`;
}

export function pointsBody(v: {
  balance: number; costs: { ALIMTALK: number; SMS: number }; lines: LedgerLine[]; nextHref: string | null; firstHref: string | null;
  recharges: Recharge[]; mode: 'card' | 'instant' | 'unavailable'; canRecharge: boolean; csrf: string; limits: { min: number; max: number };
  /** The recharge form as typed, and its problems (kept after a refusal). */ points?: string; errors?: FieldErrors;
}): SafeHtml {
  const e = v.errors ?? {};
  const form = v.canRecharge && v.mode !== 'unavailable' ? html`<form method="post" action="/console/points/recharge" class="card" novalidate>
${csrfField(v.csrf)}
<h2>충전</h2>
${summary(e)}
${inputField({ id: 'points', label: '충전할 포인트', value: v.points ?? '10000', e, attrs: html`inputmode="numeric" required maxlength="15"`, hint: `${num(v.limits.min)}P ~ ${num(v.limits.max)}P, 1P = 1원. ${v.mode === 'card' ? 'Sunap 결제 페이지에서 카드로 결제하면 승인되는 즉시 충전됩니다.' : '샌드박스: 결제 없이 바로 충전됩니다.'}` })}
<button class="btn" type="submit">${v.mode === 'card' ? '카드로 결제하고 충전' : '바로 충전 (샌드박스)'}</button>
</form>` : v.mode === 'unavailable' ? html`<p class="card muted">포인트 충전이 설정되지 않았습니다. 운영자에게 문의해 주세요.</p>` : '';
  return html`<h1>발송 포인트</h1>
<div class="stats">
<div class="stat"><p class="label">잔액</p><p class="value">${num(v.balance)}P</p></div>
<div class="stat"><p class="label">한 통 비용</p><p class="value">알림톡 ${v.costs.ALIMTALK}P</p><p class="sub">문자 ${v.costs.SMS}P</p></div>
</div>
${form}
${v.recharges.length ? html`<section class="card" aria-labelledby="recharges-title"><h2 id="recharges-title">최근 충전</h2>
${tableRegion('최근 충전', html`<table class="list cards"><thead><tr><th scope="col">시각</th><th scope="col" class="num">포인트</th><th scope="col" class="num">결제 금액</th><th scope="col">상태</th></tr></thead>
<tbody>${v.recharges.map((r) => html`<tr><td class="sub">${when(r.created_at)}</td><td class="num"><strong>${num(Number(r.points))}P</strong></td><td class="num sub" data-label="결제">${Number(r.amount) ? won(Number(r.amount)) : '-'}</td>
<td>${r.status === 'CREDITED' ? html`<span class="badge ok">충전됨</span>` : html`<span class="badge warn">결제 대기</span>`}</td></tr>`)}</tbody></table>`)}</section>` : ''}
<section aria-labelledby="ledger-title"><h2 id="ledger-title">포인트 내역</h2>
${v.lines.length === 0 ? html`<p class="card">내역이 없습니다.</p>` : tableRegion('포인트 내역', html`<table class="list cards"><thead><tr><th scope="col">시각</th><th scope="col">종류</th><th scope="col" class="num">변동</th><th scope="col">청구서</th><th scope="col">메모</th></tr></thead>
<tbody>${v.lines.map(ledgerLine)}</tbody></table>`)}
<nav class="pager" aria-label="페이지">${v.firstHref ? html`<a href="${v.firstHref}">처음으로</a>` : ''}${v.nextHref ? html`<a class="link-btn" href="${v.nextHref}" rel="next">다음 페이지</a>` : ''}</nav>
</section>`;
}
