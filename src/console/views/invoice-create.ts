import { SEND_CHANNELS, type TemplateView } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { SEND_CHANNEL_LABEL } from '../../pages/labels.js';
import { won } from '../../platform/format.js';
import { CSV_LIMITS, ENCODING_LABEL, type CsvEncoding } from '../csv-upload.js';
import type { FieldErrors } from '../field-errors.js';
import type { RecipientRow } from '../recipients.js';
import { num, phone } from './format.js';
import { describedBy, problem, summary } from './form-fields.js';
import { csrfField, tableRegion } from './shell.js';

/** What the shared part of both forms holds (as typed, so a form comes back filled after an error). */
export interface CommonValues {
  reason?: string;
  description?: string;
  sendChannel?: string;
  template?: string;
  webhookUrl?: string;
  /** yyyy-MM-dd (the date input's value). */
  dueDate?: string;
}

const option = (value: string, label: string, current: string | undefined) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;

function common(v: CommonValues, templates: TemplateView[], e: FieldErrors): SafeHtml {
  return html`<div class="field"><label for="template">템플릿</label><select id="template" name="template"${describedBy('template', e, 'template-hint')}>${option('', '사용 안 함', v.template)}${templates.map((t) => option(t.id, `${t.name} (${t.reason}${t.amount ? `, ${won(t.amount)}` : ''})`, v.template))}</select>
${problem('template', e)}<span class="hint" id="template-hint">비워 둔 청구 사유·안내·금액·발송 방법을 템플릿이 채웁니다. 적은 값이 우선합니다.</span></div>
<div class="field"><label for="reason">청구 사유</label><input id="reason" name="reason" maxlength="60" value="${v.reason ?? ''}"${describedBy('reason', e, 'reason-hint')}>${problem('reason', e)}<span class="hint" id="reason-hint">알림에 보입니다 (60자까지)</span></div>
<div class="field"><label for="description">안내 문구 (선택)</label><textarea id="description" name="description" maxlength="200"${describedBy('description', e)}>${v.description ?? ''}</textarea>${problem('description', e)}</div>
<div class="field"><label for="sendChannel">발송 방법</label><select id="sendChannel" name="sendChannel"${describedBy('sendChannel', e)}>${option('', '템플릿 또는 알림톡', v.sendChannel)}${SEND_CHANNELS.map((c) => option(c, SEND_CHANNEL_LABEL[c], v.sendChannel))}</select>${problem('sendChannel', e)}</div>
<div class="field"><label for="dueDate">납부 기한 (선택)</label><input id="dueDate" name="dueDate" type="date" value="${v.dueDate ?? ''}"${describedBy('dueDate', e, 'due-hint')}>${problem('dueDate', e)}<span class="hint" id="due-hint">알림과 결제 화면에 보입니다. 비우면 템플릿의 "발송 후 N일"을 씁니다</span></div>
<div class="field"><label for="webhookUrl">웹훅 주소 (선택)</label><input id="webhookUrl" name="webhookUrl" type="url" maxlength="500" value="${v.webhookUrl ?? ''}"${describedBy('webhookUrl', e, 'webhook-hint')}>${problem('webhookUrl', e)}<span class="hint" id="webhook-hint">결제·취소 때 POST를 받을 https:// 주소 (개발자용)</span></div>`;
}

/** One item row of the send form, as typed. */
export interface ItemRowValues {
  name: string;
  price: string;
}

/** The send form's item rows: at most this many (the API takes 100; a form of more is a CSV's job). */
export const MAX_ITEM_ROWS = 20;
/** Empty rows a fresh form shows. */
export const FIRST_ITEM_ROWS = 2;

/** 과세 구분: all taxed (default), all tax-free, or a tax-free part typed in won. */
export const TAX_MODES = ['TAX_ON', 'TAX_FREE', 'PART'] as const;
export type TaxMode = (typeof TAX_MODES)[number];

export interface SingleValues extends CommonValues {
  name?: string;
  phone?: string;
  guardianPhone?: string;
  amount?: string;
  itemRows: ItemRowValues[];
  taxMode?: string;
  taxFreeAmount?: string;
  requestId: string;
}

/** The sum of the rows whose price reads as a whole number (what the form shows as 항목 합계). */
export function rowsSum(rows: ItemRowValues[], read: (s: string) => number | undefined): number {
  return rows.reduce((s, r) => s + (r.name.trim() || r.price.trim() ? read(r.price) ?? 0 : 0), 0);
}

/**
 * The item rows: 품목명 and 금액 per row, each row's own 삭제, and 품목 추가. All of it works
 * without a script: the buttons submit the form, which comes back with a row more or less and
 * everything typed kept (src/console/routes/invoice-create.ts).
 */
function itemRows(rows: ItemRowValues[], sum: number, e: FieldErrors): SafeHtml {
  return html`<fieldset class="item-rows" id="items" aria-describedby="items-hint"><legend>청구 항목 (선택)</legend>${problem('items', e)}
<input type="hidden" name="itemRows" value="${String(rows.length)}">
${rows.map((r, i) => html`<div class="item-row">
<div class="field"><label for="itemName${i}">품목명 ${i + 1}</label><input id="itemName${i}" name="itemName${i}" maxlength="40" value="${r.name}"${describedBy(`itemName${i}`, e)}>${problem(`itemName${i}`, e)}</div>
<div class="field"><label for="itemPrice${i}">금액 ${i + 1} (원)</label><input id="itemPrice${i}" name="itemPrice${i}" inputmode="numeric" maxlength="15" value="${r.price}"${describedBy(`itemPrice${i}`, e)}>${problem(`itemPrice${i}`, e)}</div>
<button class="btn secondary" type="submit" name="op" value="del:${String(i)}" formnovalidate aria-label="${i + 1}번 항목 삭제">삭제</button>
</div>`)}
<p class="hint" id="items-hint">항목 합계 <strong id="items-sum">${won(sum)}</strong>. 항목을 적으면 금액이 합계와 같아야 합니다 (금액을 비우면 합계를 씁니다).</p>
${rows.length < MAX_ITEM_ROWS ? html`<button class="btn secondary" type="submit" name="op" value="add" formnovalidate>품목 추가</button>` : html`<p class="hint">항목은 ${MAX_ITEM_ROWS}개까지입니다. 더 많으면 CSV로 보내 주세요.</p>`}
</fieldset>`;
}

/** 과세 구분 and the tax-free amount it may need. */
function taxChoice(x: SingleValues, e: FieldErrors): SafeHtml {
  const mode = TAX_MODES.find((m) => m === x.taxMode) ?? 'TAX_ON';
  const radio = (value: TaxMode, label: string) => html`<label class="choice"><input type="radio" name="taxMode" value="${value}"${mode === value ? html` checked` : ''}> ${label}</label>`;
  return html`<fieldset class="tax-mode"><legend>과세 구분</legend>
${radio('TAX_ON', '과세 (부가세 포함)')}${radio('TAX_FREE', '전액 면세')}${radio('PART', '일부 면세')}
<div class="field"><label for="taxFreeAmount">면세 금액 (원, 일부 면세일 때)</label><input id="taxFreeAmount" name="taxFreeAmount" inputmode="numeric" maxlength="15" value="${x.taxFreeAmount ?? ''}"${describedBy('taxFreeAmount', e, 'tax-hint')}>${problem('taxFreeAmount', e)}
<span class="hint" id="tax-hint">학원 수강료처럼 부가세가 없는 금액입니다. 0원부터 청구 금액까지 적을 수 있고, 결제창과 영수증에 면세금액으로 나뉘어 보입니다.</span></div>
</fieldset>`;
}

export function singleForm(v: { csrf: string; templates: TemplateView[]; values: SingleValues; errors?: FieldErrors; costs: { ALIMTALK: number; SMS: number }; balance: number; itemsSum: number }): SafeHtml {
  const x = v.values;
  const e = v.errors ?? {};
  return html`<p><a href="/console/invoices">← 청구서 목록</a></p>
<h1>청구서 보내기</h1>
<p class="muted">발송 포인트 ${num(v.balance)}P · 한 통에 알림톡 ${v.costs.ALIMTALK}P, 문자 ${v.costs.SMS}P. <a href="/console/invoices/bulk">여러 명에게는 CSV로</a></p>
${summary(e)}
<form method="post" action="/console/invoices/new" class="card" novalidate>
${csrfField(v.csrf)}
<button type="submit" name="op" value="send" class="sr-only" tabindex="-1" aria-hidden="true">보내기</button>
<input type="hidden" name="requestId" value="${x.requestId}">
<div class="grid2">
<div class="field"><label for="name">받는 분 이름</label><input id="name" name="name" required maxlength="30" value="${x.name ?? ''}"${describedBy('name', e)}>${problem('name', e)}</div>
<div class="field"><label for="phone">전화번호</label><input id="phone" name="phone" type="tel" inputmode="numeric" required maxlength="13" value="${x.phone ?? ''}"${describedBy('phone', e)}>${problem('phone', e)}</div>
<div class="field"><label for="guardianPhone">보호자 전화번호 (선택)</label><input id="guardianPhone" name="guardianPhone" type="tel" inputmode="numeric" maxlength="13" value="${x.guardianPhone ?? ''}"${describedBy('guardianPhone', e, 'guardian-hint')}>${problem('guardianPhone', e)}<span class="hint" id="guardian-hint">있으면 이 번호로 보냅니다</span></div>
<div class="field"><label for="amount">금액 (원)</label><input id="amount" name="amount" inputmode="numeric" maxlength="15" value="${x.amount ?? ''}"${describedBy('amount', e)}>${problem('amount', e)}</div>
</div>
${itemRows(x.itemRows, v.itemsSum, e)}
${taxChoice(x, e)}
${common(x, v.templates, e)}
${e.form ? html`<p class="field-error">${e.form}</p>` : ''}
<button class="btn" type="submit" name="op" value="send">보내기</button>
</form>`;
}

export function bulkForm(v: { csrf: string; templates: TemplateView[]; values: CommonValues & { csv?: string }; errors?: FieldErrors }): SafeHtml {
  const e = v.errors ?? {};
  return html`<p><a href="/console/invoices">← 청구서 목록</a></p>
<h1>CSV로 여러 명에게 보내기</h1>
${summary(e)}
<section class="card"><h2>CSV 형식</h2>
<p>한 줄에 한 명: <strong>이름, 전화번호, 금액</strong>, 선택으로 <strong>보호자 전화번호, 항목, 면세금액</strong>. 첫 줄에 열 이름(이름, 전화번호, 금액, 보호자 전화번호, 항목, 면세금액)을 쓰면 순서는 자유이고, 없으면 이 순서로 읽습니다. 항목은 <code>교재:15000; 레슨:100000:2</code>처럼 적습니다. 면세금액은 금액 중 부가세가 없는 부분(0원~금액)으로, 첫 줄에 열 이름 "면세금액"이 있을 때만 읽고, 비우면 모두 과세입니다.</p>
<p>엑셀의 "CSV"(CP949), "CSV UTF-8", "유니코드 텍스트"(UTF-16, 탭 구분)를 모두 읽습니다. 한 번에 ${num(CSV_LIMITS.rows)}명, ${CSV_LIMITS.bytes / 1024 / 1024}MB까지입니다.</p>
<pre class="secret">이름,전화번호,금액
홍길동,010-1234-5678,128000
김영희,01098765432,98000</pre></section>
<form method="post" action="/console/invoices/bulk/preview" enctype="multipart/form-data" class="card" novalidate>
${csrfField(v.csrf)}
<div class="field"><label for="file">CSV 파일</label><input id="file" name="file" type="file" accept=".csv,.txt,text/csv,text/plain"${describedBy('file', e)}>${problem('file', e)}</div>
<div class="field"><label for="csv">또는 붙여넣기</label><textarea id="csv" name="csv" rows="8"${describedBy('csv', e, 'csv-hint')}>${v.values.csv ?? ''}</textarea>${problem('csv', e)}<span class="hint" id="csv-hint">파일을 올린 뒤 문제가 있으면 읽은 내용이 여기에 남습니다. 고쳐서 다시 미리 보세요.</span></div>
${common(v.values, v.templates, e)}
<button class="btn" type="submit">미리 보기</button>
</form>`;
}

export function bulkPreview(v: {
  csrf: string; rows: RecipientRow[]; values: CommonValues; csv: string; encoding: CsvEncoding | null; templateAmount: number | null; cost: number; perMessage: number; balance: number; error?: string;
}): SafeHtml {
  const bad = v.rows.filter((r) => r.errors.length > 0);
  // The totals count only the rows a send would send.
  const good = v.rows.filter((r) => r.errors.length === 0);
  const total = good.reduce((s, r) => s + (r.amount ?? v.templateAmount ?? 0), 0);
  const short = v.cost > v.balance;
  const sendable = bad.length === 0 && !short && good.length > 0;
  return html`<p><a href="/console/invoices/bulk">← 다시 올리기</a></p>
<h1>미리 보기: ${num(good.length)}명${bad.length ? html` <span class="muted">(문제 ${num(bad.length)}행)</span>` : ''}</h1>
${v.encoding ? html`<p class="muted">파일을 ${ENCODING_LABEL[v.encoding]}로 읽었습니다. 이름이 이상하게 보이면 엑셀에서 "CSV UTF-8"로 저장해 다시 올려 주세요.</p>` : ''}
${v.error ? html`<div class="alert" role="alert"><p>${v.error}</p></div>` : ''}
${bad.length ? html`<div class="alert" role="alert"><p>${num(bad.length)}개 행에 문제가 있습니다 (표의 "확인" 열). CSV를 고쳐 다시 올려 주세요. 합계에는 문제없는 ${num(good.length)}명만 셌습니다.</p></div>` : ''}
<div class="stats">
<div class="stat"><p class="label">받는 분</p><p class="value">${num(good.length)}명</p>${bad.length ? html`<p class="sub">문제 ${num(bad.length)}행 제외</p>` : ''}</div>
<div class="stat"><p class="label">청구 합계</p><p class="value">${won(total)}</p></div>
<div class="stat"><p class="label">필요한 포인트</p><p class="value">${num(v.cost)}P</p><p class="sub">한 통 ${v.perMessage}P</p></div>
<div class="stat"><p class="label">보유 포인트</p><p class="value">${num(v.balance)}P</p>${short ? html`<p class="sub"><a href="/console/points">${num(v.cost - v.balance)}P 부족: 충전하기</a></p>` : ''}</div>
</div>
${tableRegion('받는 분 미리 보기', html`<table class="list preview cards"><thead><tr><th scope="col">행</th><th scope="col">확인</th><th scope="col">이름</th><th scope="col">전화번호</th><th scope="col" class="num">금액</th><th scope="col">보호자</th><th scope="col">항목</th></tr></thead>
<tbody>${v.rows.map((r) => html`<tr${r.errors.length ? html` class="row-error"` : ''}><td class="${r.errors.length ? 'full' : 'start'} sub" data-label="행">${r.line}</td>
<td class="wrap ${r.errors.length ? 'full' : 'end'}">${r.errors.length ? html`<strong>${r.errors.join(' / ')}</strong>` : '확인됨'}</td><td class="start"><strong>${r.name}</strong></td><td class="end">${phone(r.phone)}</td>
<td class="num start">${r.amount !== null ? won(r.amount) : v.templateAmount !== null ? html`${won(v.templateAmount)} <span class="muted">(템플릿)</span>` : ''}${r.taxFree ? html` <span class="muted">(면세 ${won(r.taxFree)})</span>` : ''}</td>
<td class="end sub" data-label="보호자">${phone(r.guardianPhone)}</td>
<td class="wrap full sub">${r.items ? r.items.map((it) => `${it.name} ${won(it.price)}${(it.qty ?? 1) > 1 ? ` x${it.qty}` : ''}`).join(', ') : ''}</td></tr>`)}</tbody></table>`)}
${sendable ? html`<form method="post" action="/console/invoices/bulk" class="actions">
${csrfField(v.csrf)}
<input type="hidden" name="csv" value="${v.csv}">
<input type="hidden" name="reason" value="${v.values.reason ?? ''}">
<input type="hidden" name="description" value="${v.values.description ?? ''}">
<input type="hidden" name="sendChannel" value="${v.values.sendChannel ?? ''}">
<input type="hidden" name="template" value="${v.values.template ?? ''}">
<input type="hidden" name="webhookUrl" value="${v.values.webhookUrl ?? ''}">
<input type="hidden" name="dueDate" value="${v.values.dueDate ?? ''}">
<button class="btn" type="submit">${num(good.length)}명에게 보내기 (${num(v.cost)}P)</button>
</form>` : ''}`;
}
