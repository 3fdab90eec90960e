import { INVOICE_SEND_STATUSES, INVOICE_STATUSES, type InvoiceListRow, type InvoiceSendStatus, type InvoiceStatus } from '../../invoicing/index.js';
import { PARTIAL_WINDOW } from '../../db/search.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { INVOICE_SEND_STATUS_LABEL, INVOICE_STATUS_LABEL, SEND_CHANNEL_LABEL, WEBHOOK_STATUS_LABEL } from '../../pages/labels.js';
import { won } from '../../platform/format.js';
import { csrfField, tableRegion } from './shell.js';
import { EVENT_LABEL } from './deliveries.js';
import { CHANNEL_LABEL, DELIVERY_LABEL, num, phone, problemWords, when, whenSeconds } from './format.js';

const STATUS_TONE: Record<InvoiceStatus, string> = { PENDING: 'warn', DONE: 'ok', CANCELED: '' };
const SEND_TONE: Record<InvoiceSendStatus, string> = { WAITING: 'warn', SENT: 'ok', FAILED: 'bad' };

export const invoiceBadge = (s: InvoiceStatus) => html`<span class="badge ${STATUS_TONE[s]}">${INVOICE_STATUS_LABEL[s]}</span>`;
export const sendBadge = (s: InvoiceSendStatus) => html`<span class="badge ${SEND_TONE[s]}">${INVOICE_SEND_STATUS_LABEL[s]}</span>`;

/** The due date, flagged when the invoice is unpaid past it (the due date itself is on time). */
export function dueCell(r: { status: InvoiceStatus; due_date: string | null }, today: string): SafeHtml | string {
  if (!r.due_date) return '-';
  return r.status === 'PENDING' && r.due_date < today ? html`${r.due_date} <span class="badge bad">기한 지남</span>` : r.due_date;
}

export interface InvoiceQuery {
  q?: string;
  status?: string;
  sendStatus?: string;
  month?: string;
  /** 'overdue': only the unpaid past their due date. */
  due?: string;
}

const option = (value: string, label: string, current: string | undefined) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;

export function invoiceList(v: { query: InvoiceQuery; rows: InvoiceListRow[]; today: string; nextHref: string | null; firstHref: string | null; exportHref: string; canCreate: boolean }): SafeHtml {
  const q = v.query;
  const active = [q.status, q.sendStatus, q.due, q.month].filter(Boolean).length;
  const rows = v.rows.map((r) => html`<tr>
<td><a href="/console/invoices/${r.unique_id}">${r.receiver_name}</a></td>
<td class="num"><strong>${won(Number(r.amount))}</strong></td>
<td>${invoiceBadge(r.status)}</td>
<td class="sub">${when(r.created_at)}</td>
<td class="sub">${phone(r.receiver_phone)}${r.guardian_phone ? html`<br><span class="muted">보호자 ${phone(r.guardian_phone)}</span>` : ''}</td>
<td class="sub">${sendBadge(r.send_status)} <span class="muted">${Number(r.send_count)}회</span></td>
<td class="wrap sub">${r.reason}</td>
<td class="sub">${dueCell(r, v.today)}</td>
<td class="more">${when(r.done_at)}</td>
</tr>`);
  return html`<h1>청구서</h1>
${v.canCreate ? html`<div class="actions"><a class="btn inline" href="/console/invoices/new">청구서 보내기</a><a class="btn inline secondary" href="/console/invoices/bulk">CSV로 여러 명에게 보내기</a></div>` : ''}
<form class="card" method="get" action="/console/invoices" role="search" aria-label="청구서 검색">
<div class="filters"><div class="field"><label for="q">검색</label><input id="q" name="q" type="search" value="${q.q ?? ''}" maxlength="64" aria-describedby="q-hint"><span class="hint" id="q-hint">전화번호 뒤 4자리, 이름 끝 2자(영희), 이름·전화번호·청구 사유·거래번호·requestId의 일부(3자 이상은 전체에서, 2자는 최근 ${num(PARTIAL_WINDOW)}건에서)로 찾을 수 있습니다</span></div>
<div class="field"><button class="btn inline" type="submit">검색</button></div></div>
<details class="filter-fold"${active ? html` open` : ''}><summary>필터: 결제·발송 상태·기한·월${active ? ` (${active}개 적용 중)` : ''}</summary>
<div class="filters">
<div class="field"><label for="status">결제 상태</label><select id="status" name="status">${option('', '전체', q.status)}${INVOICE_STATUSES.map((s) => option(s, INVOICE_STATUS_LABEL[s], q.status))}</select></div>
<div class="field"><label for="sendStatus">발송 상태</label><select id="sendStatus" name="sendStatus">${option('', '전체', q.sendStatus)}${INVOICE_SEND_STATUSES.map((s) => option(s, INVOICE_SEND_STATUS_LABEL[s], q.sendStatus))}</select></div>
<div class="field"><label for="due">납부 기한</label><select id="due" name="due">${option('', '전체', q.due)}${option('overdue', '기한 지남 (미결제)', q.due)}</select></div>
<div class="field"><label for="month">청구 월</label><input id="month" name="month" type="month" value="${q.month ?? ''}"></div>
<div class="field"><button class="btn inline secondary" type="submit">필터 적용</button></div>
</div></details>
</form>
<div class="actions"><a class="link-btn" href="${v.exportHref}">CSV 내보내기 (검색 결과 전체)</a></div>
${v.rows.length === 0 ? html`<p class="card">조건에 맞는 청구서가 없습니다.</p>` : tableRegion('청구서 목록', html`<table class="list cards"><caption>최신 청구 순</caption>
<thead><tr><th scope="col">받는 분</th><th scope="col" class="num">금액</th><th scope="col">결제</th><th scope="col">청구 시각</th><th scope="col">전화번호</th><th scope="col">발송</th><th scope="col">청구 사유</th><th scope="col">납부 기한</th><th scope="col">결제 시각</th></tr></thead>
<tbody>${rows}</tbody></table>`)}
<nav class="pager" aria-label="페이지">${v.firstHref ? html`<a href="${v.firstHref}">처음으로</a>` : ''}${v.nextHref ? html`<a class="link-btn" href="${v.nextHref}" rel="next">다음 페이지</a>` : ''}</nav>`;
}

/** The detail as the invoicing API answers it (InvoiceService.detail), plus the webhook deliveries. */
export interface InvoiceDetailView {
  bill: {
    uniqueId: string; transSeqNo: string; status: InvoiceStatus; sendStatus: InvoiceSendStatus; receiver: { name: string; phone: string };
    guardianPhone: string | null; amount: number; reason: string; description: string | null; sendChannel: keyof typeof SEND_CHANNEL_LABEL;
    createDateTime: string; doneDateTime: string | null; canceledDateTime: string | null; sendCount: number; requestId: string | null;
    billTemplateId: string | null; webhookUrl: string | null; dueDate: string | null; overdue: boolean;
    items: { name: string; price: number; qty: number; amount: number }[];
    taxFreeAmount: number;
  };
  payment: { acceptNumber: string; payCompany: string; installmentMonth: number; paymentDateTime: string; cancelDateTime: string | null } | null;
  sendHistories: { sendType: string; sendResult: string; sendChannel: string; sentAt: string | null; receiverPhone: string; errorMessage: string | null; deliveryStatus: string | null }[];
}

export interface DeliveryView {
  id: number;
  event: string;
  url: string;
  status: keyof typeof WEBHOOK_STATUS_LABEL;
  attempts: { attempt_no: number; status_code: number | null; error: string | null; duration_ms: number; created_at: number }[];
}

/** REMINDER: a reminder to the unpaid (a resend made by its schedule or by "remind now"). */
const SEND_TYPE_LABEL: Record<string, string> = { INITIAL: '최초', RESEND: '재발송', REMINDER: '독촉(REMINDER)' };
const SEND_RESULT: Record<string, string> = { SUCCESS: '성공', FAILED: '실패', WAITING: '진행 중' };
const t = (s: string | null) => (s ? s.replace('T', ' ') : '-');

/** The invoice's 과세 구분: all taxed, all tax-free, or the tax-free part of the amount. */
export function taxLabel(amount: number, taxFree: number): string {
  if (taxFree <= 0) return '과세 (부가세 포함)';
  if (taxFree >= amount) return '전액 면세';
  return `일부 면세: 면세 ${won(taxFree)}, 과세 ${won(amount - taxFree)}`;
}

export function invoiceDetail(v: { d: InvoiceDetailView; deliveries: DeliveryView[]; canAct: boolean; csrf: string; paymentHref: string | null; publicHref: string }): SafeHtml {
  const b = v.d.bill;
  const id = b.uniqueId;
  const actions = v.canAct ? html`<div class="actions">
${b.status === 'PENDING' && b.sendCount > 0 ? html`<form method="post" action="/console/invoices/${id}/resend">${csrfField(v.csrf)}<button class="btn inline" type="submit">다시 보내기</button></form>` : ''}
${b.status === 'DONE' ? html`<a class="btn inline danger" href="/console/invoices/${id}/cancel">청구 취소(환불)…</a>` : ''}
${b.status === 'PENDING' ? html`<a class="btn inline secondary" href="/console/invoices/${id}/delete">삭제…</a>` : ''}
</div>` : '';
  return html`<p><a href="/console/invoices">← 청구서 목록</a></p>
<h1>${b.receiver.name}님 · ${b.reason}</h1>
<p>${invoiceBadge(b.status)} ${sendBadge(b.sendStatus)}</p>
${actions}
<div class="grid2">
<section class="card" aria-labelledby="bill-title"><h2 id="bill-title">청구 정보</h2>
<dl class="facts">
<dt>금액</dt><dd>${won(b.amount)}</dd>
<dt>과세 구분</dt><dd>${taxLabel(b.amount, b.taxFreeAmount)}</dd>
<dt>받는 분</dt><dd>${b.receiver.name} (${phone(b.receiver.phone)})</dd>
${b.guardianPhone ? html`<dt>보호자</dt><dd>${phone(b.guardianPhone)}</dd>` : ''}
<dt>발송 방법</dt><dd>${SEND_CHANNEL_LABEL[b.sendChannel]}</dd>
<dt>청구 시각</dt><dd>${t(b.createDateTime)}</dd>
<dt>납부 기한</dt><dd>${b.dueDate ?? '없음'}${b.overdue ? html` <span class="badge bad">기한 지남</span>` : ''}</dd>
<dt>결제 시각</dt><dd>${t(b.doneDateTime)}</dd>
<dt>취소 시각</dt><dd>${t(b.canceledDateTime)}</dd>
<dt>거래번호</dt><dd>${v.paymentHref ? html`<a href="${v.paymentHref}">${b.transSeqNo}</a>` : b.transSeqNo}</dd>
${b.requestId ? html`<dt>requestId</dt><dd>${b.requestId}</dd>` : ''}
${b.billTemplateId ? html`<dt>템플릿</dt><dd>${b.billTemplateId}</dd>` : ''}
<dt>청구서 페이지</dt><dd><a href="${v.publicHref}">고객 화면 보기</a></dd>
</dl>
${b.description ? html`<p class="info">${b.description}</p>` : ''}
${b.items.length ? html`<table class="items"><caption>청구 항목</caption><thead><tr><th scope="col">항목</th><th scope="col" class="num">단가</th><th scope="col" class="num">수량</th><th scope="col" class="num">금액</th></tr></thead>
<tbody>${b.items.map((it) => html`<tr><td>${it.name}</td><td class="num">${won(it.price)}</td><td class="num">${it.qty}</td><td class="num">${won(it.amount)}</td></tr>`)}</tbody></table>` : ''}
</section>
<section class="card" aria-labelledby="pay-title"><h2 id="pay-title">결제</h2>
${v.d.payment ? html`<dl class="facts"><dt>카드사</dt><dd>${v.d.payment.payCompany}</dd><dt>승인번호</dt><dd>${v.d.payment.acceptNumber}</dd>
<dt>할부</dt><dd>${v.d.payment.installmentMonth ? `${v.d.payment.installmentMonth}개월` : '일시불'}</dd><dt>결제 시각</dt><dd>${v.d.payment.paymentDateTime}</dd>
${v.d.payment.cancelDateTime ? html`<dt>취소 시각</dt><dd>${v.d.payment.cancelDateTime}</dd>` : ''}</dl>` : html`<p class="muted">아직 결제되지 않았습니다.</p>`}
</section>
</div>
<section class="card" aria-labelledby="sends-title"><h2 id="sends-title">발송 기록</h2>
${v.d.sendHistories.length === 0 ? html`<p class="muted">없음</p>` : tableRegion('발송 기록', html`<table class="list cards"><thead><tr><th scope="col">종류</th><th scope="col">결과</th><th scope="col">방법</th><th scope="col">받는 번호</th><th scope="col">발송 시각</th><th scope="col">전달</th><th scope="col">오류</th></tr></thead>
<tbody>${v.d.sendHistories.map((s) => html`<tr><td><strong>${SEND_TYPE_LABEL[s.sendType] ?? s.sendType}</strong></td><td>${SEND_RESULT[s.sendResult] ?? s.sendResult}</td><td class="sub">${CHANNEL_LABEL[s.sendChannel] ?? s.sendChannel}</td><td class="sub">${phone(s.receiverPhone)}</td><td class="sub">${t(s.sentAt)}</td><td class="sub" data-label="전달">${s.deliveryStatus ? DELIVERY_LABEL[s.deliveryStatus] ?? s.deliveryStatus : '-'}</td><td class="wrap full">${s.errorMessage ? html`<details><summary>${problemWords(s.errorMessage)}</summary><code>${s.errorMessage}</code></details>` : ''}</td></tr>`)}</tbody></table>`)}
</section>
<section class="card" aria-labelledby="hooks-title"><h2 id="hooks-title">웹훅 전달</h2>
${b.webhookUrl ? html`<p class="muted">받는 주소: ${b.webhookUrl}</p>` : html`<p class="muted">이 청구서에는 웹훅 주소가 없습니다.</p>`}
${v.deliveries.map((e) => html`<h3>${EVENT_LABEL[e.event] ?? e.event} · <span class="badge ${e.status === 'DELIVERED' ? 'ok' : e.status === 'ABANDONED' ? 'bad' : 'warn'}">${WEBHOOK_STATUS_LABEL[e.status]}</span></h3>
${tableRegion(`웹훅 ${EVENT_LABEL[e.event] ?? e.event} 시도`, html`<table class="list cards"><thead><tr><th scope="col">회차</th><th scope="col">시각</th><th scope="col">응답</th><th scope="col" class="num">소요</th><th scope="col">오류</th></tr></thead>
<tbody>${e.attempts.map((a) => html`<tr><td data-label="회차">${a.attempt_no}</td><td class="sub">${whenSeconds(a.created_at)}</td><td data-label="HTTP">${a.status_code ?? '-'}</td><td class="num sub">${a.duration_ms}ms</td><td class="wrap full">${a.error ? html`${problemWords(a.error)} <details><summary>자세히</summary><code>${a.error}</code></details>` : ''}</td></tr>`)}</tbody></table>`)}`)}
</section>`;
}

export function invoiceConfirm(v: { d: InvoiceDetailView; action: 'cancel' | 'delete'; csrf: string }): SafeHtml {
  const b = v.d.bill;
  const cancel = v.action === 'cancel';
  return html`<p><a href="/console/invoices/${b.uniqueId}">← 청구서로 돌아가기</a></p>
<h1>${cancel ? '청구 취소(환불)' : '청구서 삭제'}</h1>
<section class="card"><dl class="facts"><dt>받는 분</dt><dd>${b.receiver.name}</dd><dt>청구 사유</dt><dd>${b.reason}</dd><dt>금액</dt><dd>${won(b.amount)}</dd></dl>
<p class="notice">${cancel ? '결제가 전액 취소되고 카드사를 통해 환불됩니다. 되돌릴 수 없습니다.' : '결제 링크가 더 이상 결제되지 않고 청구서가 목록에서 사라집니다.'}</p></section>
<form method="post" action="/console/invoices/${b.uniqueId}/${v.action}">${csrfField(v.csrf)}<button class="btn danger" type="submit">${cancel ? '청구 취소하기' : '삭제하기'}</button></form>`;
}
