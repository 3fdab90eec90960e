import type { ClassMemberView, ClassView } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { won } from '../../platform/format.js';
import type { RecipientRow } from '../recipients.js';
import { num, phone, when } from './format.js';
import type { FieldErrors } from '../field-errors.js';
import { describedBy, inputField, problem, summary } from './form-fields.js';
import { csrfField, tableRegion } from './shell.js';

/** Classes (docs/console.md, "Classes"): the list, a new class from a CSV, one class and its members. */

export function classList(v: { classes: ClassView[]; archived: boolean; canEdit: boolean }): SafeHtml {
  return html`<h1>${v.archived ? '보관된 반' : '반'}</h1>
<p class="muted">매달 같은 분들께 청구하는 목록입니다. 예약 발송이 반 전체에 청구서를 보냅니다. 한 분이 여러 반에 있어도 됩니다.</p>
<div class="actions">${v.canEdit && !v.archived ? html`<a class="btn inline" href="/console/classes/new">새 반</a>` : ''}
${v.archived ? html`<a class="link-btn" href="/console/classes">반 목록으로</a>` : html`<a class="link-btn" href="/console/classes?archived=1">보관된 반 보기</a>`}</div>
${v.classes.length === 0 ? html`<p class="card">${v.archived ? '보관된 반이 없습니다.' : '아직 반이 없습니다. CSV로 한 번에 만들 수 있습니다.'}</p>` : tableRegion('반 목록', html`<table class="list cards"><thead><tr><th scope="col">이름</th><th scope="col" class="num">인원</th><th scope="col">메모</th><th scope="col">수정 시각</th></tr></thead>
<tbody>${v.classes.map((c) => html`<tr><td><strong><a href="/console/classes/${c.id}">${c.name}</a></strong></td><td class="num">${num(c.memberCount)}명</td><td class="wrap full sub">${c.memo ?? ''}</td><td class="full sub" data-label="수정">${when(c.updatedAt)}</td></tr>`)}</tbody></table>`)}`;
}

export interface ClassFormValues {
  name?: string;
  memo?: string;
  csv?: string;
}

const csvHint = html`<span class="hint" id="csv-hint">한 줄에 한 명: 이름, 전화번호, 금액(비우면 템플릿 금액), 보호자 전화번호, 항목. 첫 줄에 열 이름을 적으면 순서는 자유입니다.</span>`;

/** Row problems of a CSV, in Korean, by line. */
function rowProblems(rows: RecipientRow[]): SafeHtml | '' {
  const bad = rows.filter((r) => r.errors.length > 0);
  if (bad.length === 0) return '';
  return html`<div class="alert" role="alert"><p><strong>고칠 줄이 ${num(bad.length)}개 있습니다.</strong> 아무것도 저장하지 않았습니다.</p>
<ul>${bad.slice(0, 50).map((r) => html`<li>${r.line}번째 줄 (${r.name || '이름 없음'}): ${r.errors.join(', ')}</li>`)}</ul>${bad.length > 50 ? html`<p>외 ${num(bad.length - 50)}줄</p>` : ''}</div>`;
}

/** The CSV fields (a file or pasted text) with the CSV's problem beside them. */
function csvFields(csv: string | undefined, e: FieldErrors, optional: boolean, rows: number): SafeHtml {
  return html`<div class="field"><label for="file">CSV 파일${optional ? ' (선택)' : ''}</label><input id="file" name="file" type="file" accept=".csv,text/csv" aria-describedby="csv-hint"></div>
<div class="field"><label for="csv">또는 붙여넣기${optional ? ' (선택)' : ''}</label><textarea id="csv" name="csv" rows="${rows}"${describedBy('csv', e, 'csv-hint')}>${csv ?? ''}</textarea>${problem('csv', e)}${csvHint}</div>`;
}

export function classNewForm(v: { csrf: string; values: ClassFormValues; errors?: FieldErrors; rows?: RecipientRow[] }): SafeHtml {
  const x = v.values;
  const e = v.errors ?? {};
  return html`<p><a href="/console/classes">← 반 목록</a></p>
<h1>새 반</h1>
${summary(e)}${v.rows ? rowProblems(v.rows) : ''}
<form method="post" action="/console/classes" enctype="multipart/form-data" class="card" novalidate>
${csrfField(v.csrf)}
${inputField({ id: 'name', label: '반 이름', value: x.name, e, attrs: html`required maxlength="40"`, hint: '40자까지' })}
${inputField({ id: 'memo', label: '메모 (선택)', value: x.memo, e, attrs: html`maxlength="200"` })}
${csvFields(x.csv, e, true, 6)}
<button class="btn" type="submit">반 만들기</button>
</form>`;
}

/** What the class page's forms hold after a refusal: the class's name and memo, the member being added, the pasted CSV. */
export interface ClassDetailValues {
  name?: string;
  memo?: string;
  member?: { name?: string; phone?: string; guardianPhone?: string; amount?: string };
  csv?: string;
}

export function classDetail(v: { c: ClassView; members: ClassMemberView[]; csrf: string; canEdit: boolean; errors?: FieldErrors; values?: ClassDetailValues; rows?: RecipientRow[]; monthHref: string | null }): SafeHtml {
  const e = v.errors ?? {};
  const x = v.values ?? {};
  const mem = x.member ?? {};
  const c = v.c;
  const id = c.id;
  const members = v.members.map((m) => html`<tr><td class="start"><strong>${m.name}</strong></td><td class="end sub">${phone(m.phone)}</td><td class="start sub" data-label="보호자">${m.guardianPhone ? phone(m.guardianPhone) : '-'}</td>
<td class="num end">${m.amount !== null ? won(m.amount) : html`<span class="muted">템플릿 금액</span>`}</td><td class="wrap full sub">${m.items.map((it) => `${it.name} ${won(it.price)}${(it.qty ?? 1) > 1 ? ` x${it.qty}` : ''}`).join(', ')}</td>
${v.canEdit ? html`<td class="full"><form method="post" action="/console/classes/${id}/members/${m.id}/delete">${csrfField(v.csrf)}<button class="link-btn" type="submit" aria-label="${m.name} 빼기">빼기</button></form></td>` : ''}</tr>`);
  return html`<p><a href="/console/classes">← 반 목록</a></p>
<h1>${c.name}${c.archived ? html` <span class="badge">보관됨</span>` : ''}</h1>
${c.memo ? html`<p class="muted">${c.memo}</p>` : ''}
<div class="actions">${v.monthHref ? html`<a class="btn inline secondary" href="${v.monthHref}">이번 달 한눈에</a>` : ''}
${v.canEdit ? html`<form method="post" action="/console/classes/${id}/${c.archived ? 'unarchive' : 'archive'}">${csrfField(v.csrf)}<button class="btn inline secondary" type="submit">${c.archived ? '보관 해제' : '보관하기'}</button></form>` : ''}</div>
${summary(e)}${v.rows ? rowProblems(v.rows) : ''}
<section class="card" aria-labelledby="members-title"><h2 id="members-title">받는 분 ${num(v.members.length)}명</h2>
${v.members.length === 0 ? html`<p class="muted">아직 없습니다. 아래에서 추가하거나 CSV로 올려 주세요.</p>` : tableRegion('받는 분', html`<table class="list cards"><thead><tr><th scope="col">이름</th><th scope="col">전화번호</th><th scope="col">보호자</th><th scope="col" class="num">금액</th><th scope="col">항목</th>${v.canEdit ? html`<th scope="col">관리</th>` : ''}</tr></thead>
<tbody>${members}</tbody></table>`)}
</section>
${v.canEdit ? html`<div class="grid2">
<section class="card" aria-labelledby="add-title"><h2 id="add-title">한 명 추가</h2>
<form method="post" action="/console/classes/${id}/members" novalidate>${csrfField(v.csrf)}
${inputField({ id: 'm-name', name: 'name', label: '이름', value: mem.name, e, attrs: html`required maxlength="30"` })}
${inputField({ id: 'm-phone', name: 'phone', label: '전화번호', value: mem.phone, e, attrs: html`required inputmode="tel" maxlength="20"` })}
${inputField({ id: 'm-guardian', name: 'guardianPhone', label: '보호자 전화번호 (선택)', value: mem.guardianPhone, e, attrs: html`inputmode="tel" maxlength="20"` })}
${inputField({ id: 'm-amount', name: 'amount', label: '금액 (선택, 비우면 템플릿 금액)', value: mem.amount, e, attrs: html`inputmode="numeric" maxlength="15"` })}
<button class="btn inline" type="submit">추가</button></form></section>
<section class="card" aria-labelledby="import-title"><h2 id="import-title">CSV로 올리기</h2>
<form method="post" action="/console/classes/${id}/import" enctype="multipart/form-data" novalidate>${csrfField(v.csrf)}
${csvFields(x.csv, e, false, 4)}
<fieldset class="field"><legend>방법</legend>
<label><input type="radio" name="mode" value="append" checked> 뒤에 추가</label>
<label><input type="radio" name="mode" value="replace"> 모두 바꾸기</label></fieldset>
<button class="btn inline" type="submit">올리기</button></form></section>
</div>
<section class="card" aria-labelledby="rename-title"><h2 id="rename-title">이름과 메모</h2>
<form method="post" action="/console/classes/${id}" novalidate>${csrfField(v.csrf)}
${inputField({ id: 'name', label: '반 이름', value: x.name ?? c.name, e, attrs: html`required maxlength="40"` })}
${inputField({ id: 'memo', label: '메모', value: x.memo ?? c.memo ?? '', e, attrs: html`maxlength="200"` })}
<button class="btn inline secondary" type="submit">저장</button></form></section>` : ''}`;
}
