import type { Store } from '../../gateway/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { AUDIT_ACTIONS, type AuditAction } from '../audit.js';
import type { FieldErrors } from '../field-errors.js';
import { inputField, summary } from './form-fields.js';
import type { AuditRow } from '../repository.js';
import { whenSeconds } from './format.js';
import { csrfField, tableRegion } from './shell.js';

export interface StoreValues {
  name?: string;
  ceoName?: string;
  bizRegNum?: string;
  tel?: string;
}

export function settingsBody(v: { store: Store; values?: StoreValues; errors?: FieldErrors; csrf: string; audit: AuditRow[]; nextHref: string | null; firstHref: string | null; processor: SafeHtml }): SafeHtml {
  const x = v.values ?? { name: v.store.name, ceoName: v.store.ceo_name, bizRegNum: v.store.biz_reg_num, tel: v.store.tel };
  const e = v.errors ?? {};
  const input = (id: keyof StoreValues, label: string, attrs: SafeHtml, hint?: string) => inputField({ id, label, value: x[id], e, attrs, hint });
  const label = (a: string) => (a in AUDIT_ACTIONS ? AUDIT_ACTIONS[a as AuditAction] : a);
  return html`<h1>설정</h1>
<form method="post" action="/console/settings/store" class="card" novalidate>
${csrfField(v.csrf)}
<h2>상점 정보</h2>
<p class="muted">상점 코드 <code>${v.store.code}</code> · 고객의 결제 화면과 알림에 보입니다.</p>
${summary(e)}
<div class="grid2">
${input('name', '상점 이름', html`required maxlength="60"`)}
${input('ceoName', '대표자', html`maxlength="30"`)}
${input('bizRegNum', '사업자등록번호', html`inputmode="numeric" maxlength="12"`, '10자리 (- 포함 가능)')}
${input('tel', '전화번호', html`type="tel" inputmode="numeric" maxlength="14"`)}
</div>
<button class="btn" type="submit">저장</button>
</form>
${v.processor}
<section aria-labelledby="audit-title"><h2 id="audit-title">활동 기록</h2>
${v.audit.length === 0 ? html`<p class="card">기록이 없습니다.</p>` : tableRegion('활동 기록', html`<table class="list cards"><thead><tr><th scope="col">시각</th><th scope="col">누가</th><th scope="col">무엇을</th><th scope="col">대상</th><th scope="col">내용</th><th scope="col">어디서</th></tr></thead>
<tbody>${v.audit.map((a) => html`<tr><td class="sub">${whenSeconds(a.created_at)}</td><td class="sub">${a.actor_email}</td><td class="full"><strong>${label(a.action)}</strong></td><td class="wrap full">${a.target ?? ''}</td><td class="wrap full sub">${a.detail ?? ''}</td><td class="full sub" data-label="IP">${a.ip}</td></tr>`)}</tbody></table>`)}
<nav class="pager" aria-label="페이지">${v.firstHref ? html`<a href="${v.firstHref}">처음으로</a>` : ''}${v.nextHref ? html`<a class="link-btn" href="${v.nextHref}" rel="next">다음 페이지</a>` : ''}</nav>
</section>`;
}
