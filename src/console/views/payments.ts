import { isTerminalPayPath, maskedCard, ORDER_TYPES, PAY_PATHS, PAYMENT_STATES, type Payment, type PaymentListRow, type TimelineEntry } from '../../gateway/index.js';
import { PARTIAL_WINDOW } from '../../db/search.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { PAYMENT_STATE_LABEL } from '../../pages/labels.js';
import { won } from '../../platform/format.js';
import type { FieldErrors } from '../field-errors.js';
import { describedBy, inputField, problem, summary } from './form-fields.js';
import { csrfField, tableRegion } from './shell.js';
import { num, phone, problemWords, when, whenSeconds } from './format.js';

/** Badge tone of each payment state. */
const TONE: Record<Payment['state'], '' | 'ok' | 'warn' | 'bad'> = {
  STORE_REQUEST: 'warn', APPROVE_COMPLETE: 'ok', CANCEL_COMPLETE: '', CANCEL_FAIL: 'bad', STORE_DELETE: '',
};
export const PAY_PATH_LABEL: Record<Payment['pay_path'], string> = { WEB: '결제 링크', EPAY: '간편결제', KIOSK: '키오스크', VAN: 'VAN 단말기', CARD: '카드 단말기' };
export const ORDER_TYPE_LABEL: Record<Payment['order_type'], string> = { BILL: '청구', SHOP: '쇼핑' };

export function stateBadge(state: Payment['state']): SafeHtml {
  return html`<span class="badge ${TONE[state]}">${PAYMENT_STATE_LABEL[state]}</span>`;
}

export interface PaymentQuery {
  q?: string;
  state?: string;
  from?: string;
  to?: string;
  payPath?: string;
  orderType?: string;
}

const option = (value: string, label: string, current: string | undefined) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;

/**
 * The filter form: one search box always in view, the other filters folded behind one control
 * (open when one of them is in use), so on a phone the list starts right under the search box.
 * A GET, so a filtered list is a link.
 */
export function paymentFilters(q: PaymentQuery): SafeHtml {
  const active = [q.state, q.from, q.to, q.payPath, q.orderType].filter(Boolean).length;
  return html`<form class="card" method="get" action="/console/payments" role="search" aria-label="결제 검색">
<div class="filters"><div class="field"><label for="q">검색</label><input id="q" name="q" type="search" value="${q.q ?? ''}" maxlength="64" aria-describedby="q-hint"><span class="hint" id="q-hint">전화번호 뒤 4자리, 카드 끝 4자리, 이름 끝 2자(영희), 이름·전화번호·거래번호·승인번호·결제 사유의 일부(3자 이상은 전체에서, 2자는 최근 ${num(PARTIAL_WINDOW)}건에서)로 찾을 수 있습니다</span></div>
<div class="field"><button class="btn inline" type="submit">검색</button></div></div>
<details class="filter-fold"${active ? html` open` : ''}><summary>필터: 상태·기간·결제 경로${active ? ` (${active}개 적용 중)` : ''}</summary>
<div class="filters">
<div class="field"><label for="state">상태</label><select id="state" name="state">${option('', '전체', q.state)}${PAYMENT_STATES.map((s) => option(s, PAYMENT_STATE_LABEL[s], q.state))}</select></div>
<div class="field"><label for="from">요청일 부터</label><input id="from" name="from" type="date" value="${q.from ?? ''}"></div>
<div class="field"><label for="to">까지</label><input id="to" name="to" type="date" value="${q.to ?? ''}"></div>
<div class="field"><label for="payPath">결제 경로</label><select id="payPath" name="payPath">${option('', '전체', q.payPath)}${PAY_PATHS.map((p) => option(p, PAY_PATH_LABEL[p], q.payPath))}</select></div>
<div class="field"><label for="orderType">주문 유형</label><select id="orderType" name="orderType">${option('', '전체', q.orderType)}${ORDER_TYPES.map((o) => option(o, ORDER_TYPE_LABEL[o], q.orderType))}</select></div>
<div class="field"><button class="btn inline secondary" type="submit">필터 적용</button></div>
</div></details>
</form>`;
}

/**
 * The list: on a phone each payment is a stacked row (table.cards) with who paid, how much, its
 * state and when in view, the number and phone under them; the rest is on the detail page.
 */
export function paymentList(v: { query: PaymentQuery; rows: PaymentListRow[]; nextHref: string | null; exportHref: string; firstHref: string | null }): SafeHtml {
  const rows = v.rows.map((p) => html`<tr>
<td><a href="/console/payments/${encodeURIComponent(p.trans_seqno)}">${p.pay_user_name || '(이름 없음)'}</a></td>
<td class="num"><strong>${won(Number(p.amount))}</strong></td>
<td>${stateBadge(p.state)}</td>
<td class="sub">${when(p.created_at)}</td>
<td class="sub"><a href="/console/payments/${encodeURIComponent(p.trans_seqno)}">${p.trans_seqno}</a></td>
<td class="sub">${phone(p.mobile_no)}</td>
<td class="wrap more">${p.request_reason}</td>
<td class="more">${p.card_last4 ? html`${p.issuer_name ?? ''} ${maskedCard(p.card_bin, p.card_last4)}` : ''}</td>
<td class="more">${p.approval_number ?? ''}</td>
</tr>`);
  return html`<h1>결제</h1>
${paymentFilters(v.query)}
<div class="actions"><a class="link-btn" href="${v.exportHref}">CSV 내보내기 (검색 결과 전체)</a></div>
${v.rows.length === 0 ? html`<p class="card">조건에 맞는 결제가 없습니다.</p>` : tableRegion('결제 목록', html`<table class="list cards"><caption>최신 요청 순</caption>
<thead><tr><th scope="col">결제자</th><th scope="col" class="num">금액</th><th scope="col">상태</th><th scope="col">요청 시각</th><th scope="col">거래번호</th><th scope="col">전화번호</th><th scope="col">내용</th><th scope="col">카드</th><th scope="col">승인번호</th></tr></thead>
<tbody>${rows}</tbody></table>`)}
<nav class="pager" aria-label="페이지">${v.firstHref ? html`<a href="${v.firstHref}">처음으로</a>` : ''}${v.nextHref ? html`<a class="link-btn" href="${v.nextHref}" rel="next">다음 페이지</a>` : ''}</nav>`;
}

const ATTEMPT_LABEL: Record<string, string> = { APPROVE: '카드 승인 시도', CHECKOUT: '결제창', CANCEL: '취소 시도', DELETE: '요청 삭제' };
const ATTEMPT_STATUS: Record<string, string> = {
  OPEN: '진행 중', WINDOW: '결제창 열림', ISSUED: '가상계좌 발급, 입금 대기', UNKNOWN: '결과 확인 중 (결제사에 다시 조회)', APPROVED: '승인', DECLINED: '거절', ERROR: '오류',
  ABANDONED: '결제창 닫힘', CLOSED: '가상계좌 닫힘', CANCELED: '취소됨', REFUNDED: '늦게 확인된 승인, 자동 환불됨', FAILED: '실패', DELETED: '삭제됨', SKIPPED: '변경 없음',
  VOIDING: '자동 취소 재시도 중 (결제사에 남은 승인)',
};
const METHOD_LABEL: Record<string, string> = { CARD: '카드', EASY_PAY: '간편결제', TRANSFER: '계좌이체', VIRTUAL_ACCOUNT: '가상계좌', MOBILE_PHONE: '휴대폰' };
const EVENT_OUTCOME: Record<string, string> = { RECEIVED: '받음', APPLIED: '조회 후 반영', IGNORED: '해당 없음', REFUSED: '검증 실패로 거부', FAILED: '처리 실패 (재전송 대기)' };

function entry(e: TimelineEntry): SafeHtml {
  const t = html`<time datetime="${new Date(e.at).toISOString()}">${whenSeconds(e.at)}</time>`;
  switch (e.kind) {
    case 'REQUESTED':
      return html`<li>${t}<span class="what">결제 요청됨</span></li>`;
    case 'ATTEMPT': {
      const bad = ['DECLINED', 'ERROR', 'FAILED'].includes(e.status);
      const via = [e.processor, e.method ? METHOD_LABEL[e.method] ?? e.method : null].filter(Boolean).join(' · ');
      return html`<li${bad ? html` class="bad"` : ''}>${t}<span class="what">${ATTEMPT_LABEL[e.attempt] ?? e.attempt}: ${e.attempt === 'APPROVE' && e.status === 'ABANDONED' ? '결제사에 기록 없음, 조회 마침' : ATTEMPT_STATUS[e.status] ?? e.status}</span>
<span class="detail">${via}${e.card ? html`${via ? ' · ' : ''}카드 ${e.card}` : ''}${e.message ? html` · ${e.message}` : ''}</span></li>`;
    }
    case 'APPROVED':
      return html`<li>${t}<span class="what">결제 승인</span><span class="detail">${[e.methodName, e.issuer, e.card, e.approvalNumber ? `승인번호 ${e.approvalNumber}` : ''].filter(Boolean).join(' · ')}</span></li>`;
    case 'EVENT':
      return html`<li${e.outcome === 'REFUSED' || e.outcome === 'FAILED' ? html` class="bad"` : ''}>${t}<span class="what">결제사 알림 (${e.processor}): ${e.type}</span>
<span class="detail">${EVENT_OUTCOME[e.outcome] ?? e.outcome}${e.detail ? html` · ${e.detail}` : ''}</span></li>`;
    case 'CALLBACK': {
      const ok = e.error === null;
      return html`<li${ok ? '' : html` class="bad"`}>${t}<span class="what">결과 알림(콜백) ${e.attemptNo}회차: ${ok ? `성공 (HTTP ${e.statusCode})` : '실패'}</span>
<span class="detail">${e.url} · ${e.durationMs}ms${e.error ? html` · ${problemWords(e.error)} <details><summary>자세히</summary><code>${e.error}</code></details>` : ''}</span></li>`;
    }
    case 'LATE_REFUND':
      return html`<li>${t}<span class="what">늦게 확인된 승인 자동 환불</span><span class="detail">${e.card ? html`카드 ${e.card} · ` : ''}${e.message}</span></li>`;
    case 'CANCELED':
      return html`<li>${t}<span class="what">결제 취소 완료</span><span class="detail">${won(e.amount)}${e.reason ? html` · 사유: ${e.reason}` : ''}</span></li>`;
  }
}

export function paymentDetail(v: {
  payment: Payment; timeline: TimelineEntry[]; callbackJob: { status: string; attempts: number; maxAttempts: number; nextAt: number | null } | null;
  canAct: boolean; csrf: string; invoiceHref: string | null;
}): SafeHtml {
  const p = v.payment;
  const seq = encodeURIComponent(p.trans_seqno);
  const cancellable = (p.state === 'APPROVE_COMPLETE' || p.state === 'CANCEL_FAIL') && !isTerminalPayPath(p.pay_path);
  const actions = v.canAct && (cancellable || p.state === 'STORE_REQUEST') ? html`<div class="actions">
${cancellable ? html`<a class="btn inline danger" href="/console/payments/${seq}/cancel">결제 취소…</a>` : ''}
${p.state === 'STORE_REQUEST' ? html`<a class="btn inline secondary" href="/console/payments/${seq}/delete">결제 요청 삭제…</a>` : ''}
</div>` : '';
  const cb = v.callbackJob;
  return html`<p><a href="/console/payments">← 결제 목록</a></p>
<h1>결제 ${p.trans_seqno}</h1>
<p>${stateBadge(p.state)}</p>
${actions}
<div class="grid2">
<section class="card" aria-labelledby="facts-title"><h2 id="facts-title">결제 정보</h2>
<dl class="facts">
<dt>금액</dt><dd>${won(Number(p.amount))}</dd>
<dt>공급가액 / 부가세 / 면세</dt><dd>${won(Number(p.supply_amount))} / ${won(Number(p.tax_charge))} / ${won(Number(p.tax_free_amount))}</dd>
<dt>결제자</dt><dd>${p.pay_user_name}</dd>
<dt>전화번호</dt><dd>${phone(p.mobile_no)}</dd>
<dt>내용</dt><dd>${p.request_reason}</dd>
<dt>주문 유형</dt><dd>${ORDER_TYPE_LABEL[p.order_type]}</dd>
<dt>결제 경로</dt><dd>${PAY_PATH_LABEL[p.pay_path]}</dd>
<dt>결제수단</dt><dd>${p.method_name ?? (p.method ? METHOD_LABEL[p.method] : '-')}</dd>
<dt>결제사</dt><dd>${p.processor ?? '-'}</dd>
${p.vbank_account ? html`<dt>가상계좌</dt><dd>${p.vbank_name} ${p.vbank_account} (${p.vbank_holder})</dd>
<dt>입금 기한</dt><dd>${p.vbank_due_at ? whenSeconds(Number(p.vbank_due_at)) : '-'}</dd>` : ''}
<dt>카드</dt><dd>${p.card_last4 ? html`${p.issuer_name ?? ''} ${maskedCard(p.card_bin, p.card_last4)}` : '-'}</dd>
<dt>할부</dt><dd>${p.installment_month && p.installment_month !== '00' ? `${Number(p.installment_month)}개월` : p.approval_at ? '일시불' : '-'}</dd>
<dt>승인번호</dt><dd>${p.approval_number ?? '-'}</dd>
<dt>승인 시각</dt><dd>${p.approval_at ? whenSeconds(p.approval_at) : '-'}</dd>
<dt>취소 시각</dt><dd>${p.cancel_at ? whenSeconds(p.cancel_at) : '-'}</dd>
${p.cancel_reason ? html`<dt>취소 사유</dt><dd>${p.cancel_reason}</dd>` : ''}
<dt>요청 시각</dt><dd>${whenSeconds(p.created_at)}</dd>
<dt>CONFIRM_URL</dt><dd>${p.confirm_url ?? '-'}</dd>
<dt>TEMP_VALUE</dt><dd>${p.temp_value ?? '-'}</dd>
${v.invoiceHref ? html`<dt>청구서</dt><dd><a href="${v.invoiceHref}">청구서 보기</a></dd>` : ''}
</dl></section>
<section class="card" aria-labelledby="timeline-title"><h2 id="timeline-title">진행 기록</h2>
<ol class="timeline">${v.timeline.map(entry)}</ol>
${cb ? html`<p class="muted">결과 알림: ${cb.status === 'DONE' ? '전달 완료' : cb.status === 'DEAD' ? `${cb.attempts}회 시도 후 중단` : `${cb.attempts}/${cb.maxAttempts}회 시도${cb.nextAt ? html`, 다음 시도 ${when(cb.nextAt)}` : ''}`}</p>` : ''}
</section>
</div>`;
}

/** The refund account a cancel form sends back after an error (never the account number: it is typed again). */
/** The cancel form as typed (kept after a refusal). */
export interface CancelValues {
  reason?: string;
  confirm?: string;
  refundBank?: string;
  refundAccount?: string;
  refundHolder?: string;
}

export function cancelConfirm(v: { payment: Payment; csrf: string; errors?: FieldErrors; banks: { code: string; name: string }[]; values?: CancelValues }): SafeHtml {
  const p = v.payment;
  const va = p.method === 'VIRTUAL_ACCOUNT';
  const r = v.values ?? {};
  const e = v.errors ?? {};
  return html`<p><a href="/console/payments/${encodeURIComponent(p.trans_seqno)}">← 결제로 돌아가기</a></p>
<h1>결제 취소</h1>
${summary(e)}
<section class="card"><dl class="facts"><dt>거래번호</dt><dd>${p.trans_seqno}</dd><dt>결제자</dt><dd>${p.pay_user_name}</dd><dt>결제수단</dt><dd>${p.method_name ?? '신용카드'}</dd><dt>취소 금액</dt><dd>${won(Number(p.amount))}</dd></dl>
<p class="notice">${va ? '전액 취소되며 되돌릴 수 없습니다. 가상계좌로 입금된 금액은 아래 환불 계좌로 돌려드립니다.' : '전액 취소되며 되돌릴 수 없습니다. 결제한 수단(카드사 등)을 통해 환불됩니다.'} 청구서 결제라면 청구서도 취소됩니다.</p></section>
<form method="post" action="/console/payments/${encodeURIComponent(p.trans_seqno)}/cancel" class="card" novalidate>
${csrfField(v.csrf)}
${inputField({ id: 'reason', label: '취소 사유', value: r.reason, e, attrs: html`required maxlength="100"`, hint: '100자까지. 결제 기록과 활동 기록에 남습니다' })}
${va ? html`<fieldset><legend>환불 받을 계좌</legend>
<p class="muted">가상계좌 입금은 카드처럼 되돌릴 수 없어 고객의 계좌로 환불합니다. 계좌 정보는 환불 요청에만 쓰고 저장하지 않습니다.</p>
<div class="field"><label for="refundBank">은행</label><select id="refundBank" name="refundBank" required${describedBy('refundBank', e)}><option value="">은행 선택</option>
${v.banks.map((b) => html`<option value="${b.code}"${r.refundBank === b.code ? html` selected` : ''}>${b.name}</option>`)}</select>${problem('refundBank', e)}</div>
${inputField({ id: 'refundAccount', label: '계좌번호', value: r.refundAccount, e, attrs: html`required inputmode="numeric" autocomplete="off" maxlength="30"`, hint: '숫자만, 또는 - 포함 (6~20자리)' })}
${inputField({ id: 'refundHolder', label: '예금주', value: r.refundHolder, e, attrs: html`required maxlength="30" autocomplete="off"` })}
</fieldset>` : ''}
<div class="field"><label><input type="checkbox" id="confirm" name="confirm" value="yes" required${r.confirm === 'yes' ? html` checked` : ''}${describedBy('confirm', e)}> ${won(Number(p.amount))} 전액 취소를 확인합니다</label>${problem('confirm', e)}</div>
<button class="btn danger" type="submit">결제 취소하기</button>
</form>`;
}

export function deleteConfirm(v: { payment: Payment; csrf: string }): SafeHtml {
  const p = v.payment;
  return html`<p><a href="/console/payments/${encodeURIComponent(p.trans_seqno)}">← 결제로 돌아가기</a></p>
<h1>결제 요청 삭제</h1>
<section class="card"><dl class="facts"><dt>거래번호</dt><dd>${p.trans_seqno}</dd><dt>금액</dt><dd>${won(Number(p.amount))}</dd></dl>
<p class="notice">결제 링크가 더 이상 결제되지 않습니다. 청구서의 결제라면 청구서를 삭제해 주세요.</p></section>
<form method="post" action="/console/payments/${encodeURIComponent(p.trans_seqno)}/delete">
${csrfField(v.csrf)}
<button class="btn danger" type="submit">결제 요청 삭제하기</button>
</form>`;
}
