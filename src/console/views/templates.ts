import { MAX_DUE_DAYS, SEND_CHANNELS, type TemplateView } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { SEND_CHANNEL_LABEL } from '../../pages/labels.js';
import { won } from '../../platform/format.js';
import type { FieldErrors } from '../field-errors.js';
import { describedBy, inputField, problem, summary } from './form-fields.js';
import { when } from './format.js';
import { csrfField, tableRegion } from './shell.js';

export interface TemplateValues {
  name?: string;
  reason?: string;
  description?: string;
  amount?: string;
  items?: string;
  sendChannel?: string;
  dueDays?: string;
}

/** Items as the form shows them: `name:price[:qty]; ...` (the CSV's 항목 format). */
export function itemsText(t: TemplateView): string {
  return t.items.map((it) => `${it.name}:${it.price}${(it.qty ?? 1) > 1 ? `:${it.qty}` : ''}`).join('; ');
}

export function templateList(v: { templates: TemplateView[]; canEdit: boolean }): SafeHtml {
  return html`<h1>템플릿</h1>
<p class="muted">자주 보내는 청구 내용을 저장해 두고 청구서를 보낼 때 고릅니다. API에서는 <code>billTemplateId</code>로 씁니다.</p>
${v.canEdit ? html`<div class="actions"><a class="btn inline" href="/console/templates/new">새 템플릿</a></div>` : ''}
${v.templates.length === 0 ? html`<p class="card">아직 템플릿이 없습니다.</p>` : tableRegion('템플릿 목록', html`<table class="list cards"><thead><tr><th scope="col">이름</th><th scope="col">청구 사유</th><th scope="col" class="num">금액</th><th scope="col">발송 방법</th><th scope="col">납부 기한</th><th scope="col">billTemplateId</th><th scope="col">수정 시각</th></tr></thead>
<tbody>${v.templates.map((t) => html`<tr><td class="start"><strong>${v.canEdit ? html`<a href="/console/templates/${t.id}">${t.name}</a>` : t.name}</strong></td><td class="wrap full sub">${t.reason}</td><td class="num end"><strong>${t.amount !== null ? won(t.amount) : '-'}</strong></td>
<td class="start sub" data-label="발송">${t.sendChannel ? SEND_CHANNEL_LABEL[t.sendChannel] : '-'}</td><td class="end sub" data-label="기한">${t.dueDays !== null ? `발송 후 ${t.dueDays}일` : '-'}</td><td class="full sub"><code>${t.id}</code></td><td class="full sub" data-label="수정">${when(t.updatedAt)}</td></tr>`)}</tbody></table>`)}`;
}

const option = (value: string, label: string, current: string | undefined) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;

export function templateForm(v: { csrf: string; id?: string; values: TemplateValues; errors?: FieldErrors }): SafeHtml {
  const x = v.values;
  const e = v.errors ?? {};
  const action = v.id ? `/console/templates/${v.id}` : '/console/templates';
  return html`<p><a href="/console/templates">← 템플릿 목록</a></p>
<h1>${v.id ? '템플릿 수정' : '새 템플릿'}</h1>
${v.id ? html`<p class="muted">billTemplateId: <code>${v.id}</code></p>` : ''}
${summary(e)}
<form method="post" action="${action}" class="card" novalidate>
${csrfField(v.csrf)}
${inputField({ id: 'name', label: '템플릿 이름', value: x.name, e, attrs: html`required maxlength="40"`, hint: '40자까지' })}
${inputField({ id: 'reason', label: '청구 사유', value: x.reason, e, attrs: html`required maxlength="60"`, hint: '알림에 보입니다 (60자까지)' })}
<div class="field"><label for="description">안내 문구 (선택)</label><textarea id="description" name="description" maxlength="200"${describedBy('description', e)}>${x.description ?? ''}</textarea>${problem('description', e)}</div>
${inputField({ id: 'amount', label: '금액 (선택, 원)', value: x.amount, e, attrs: html`inputmode="numeric" maxlength="15"` })}
${inputField({ id: 'items', label: '청구 항목 (선택)', value: x.items, e, attrs: html`maxlength="2000"`, hint: '이름:가격[:수량]을 ;로 구분. 합계가 금액과 같아야 합니다' })}
<div class="field"><label for="sendChannel">발송 방법 (선택)</label><select id="sendChannel" name="sendChannel"${describedBy('sendChannel', e)}>${option('', '정하지 않음 (알림톡)', x.sendChannel)}${SEND_CHANNELS.map((c) => option(c, SEND_CHANNEL_LABEL[c], x.sendChannel))}</select>${problem('sendChannel', e)}</div>
${inputField({ id: 'dueDays', label: '납부 기한: 발송 후 며칠 (선택)', value: x.dueDays, e, attrs: html`inputmode="numeric" maxlength="3"`, hint: `0~${MAX_DUE_DAYS}일. 0이면 보내는 날이 기한입니다. 비우면 기한 없음` })}
${e.form ? html`<p class="field-error">${e.form}</p>` : ''}
<button class="btn" type="submit">저장</button>
</form>
${v.id ? html`<form method="post" action="/console/templates/${v.id}/delete" class="actions">${csrfField(v.csrf)}<button class="btn inline danger" type="submit">이 템플릿 삭제</button></form>` : ''}`;
}
