import type { ClassView, RunView, ScheduleView, TemplateView } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { won } from '../../platform/format.js';
import { note, num } from './format.js';
import type { FieldErrors } from '../field-errors.js';
import { describedBy, inputField, problem, summary } from './form-fields.js';
import { csrfField, tableRegion } from './shell.js';

/** Schedules (docs/console.md, "Schedules"): the list, a new schedule, one schedule with its runs, one run. */

export const SCHEDULE_STATUS_LABEL: Record<string, string> = { ACTIVE: '진행 중', PAUSED: '일시 정지', ENDED: '끝남' };
export const RUN_STATUS_LABEL: Record<string, string> = { SENT: '발송함', WAITING_POINTS: '포인트 부족: 대기 중', MISSED: '기간 지남: 못 보냄', SKIPPED: '보낼 대상 없음' };
const RUN_TONE: Record<string, string> = { SENT: 'ok', WAITING_POINTS: 'bad', MISSED: 'bad', SKIPPED: 'warn' };
const t = (s: string | null) => (s ? s.replace('T', ' ').slice(0, 16) : '-');

/** When a schedule bills, in words. */
export function whenText(s: ScheduleView): string {
  if (s.repeat === 'ONCE') return `한 번: ${t(s.at)}`;
  return `매달 ${s.dayOfMonth}일 ${s.time}${(s.dayOfMonth ?? 0) >= 29 ? ' (없는 달은 말일)' : ''}`;
}

export interface WaitingRun {
  schedule_id: string;
  period: string;
  points_needed: number;
  class_name: string | null;
}

/** The banner of runs waiting for points: what is missing and where to recharge. */
export function pointsBanner(waiting: WaitingRun[], balance: number): SafeHtml | '' {
  if (waiting.length === 0) return '';
  return html`<div class="alert" role="alert"><p><strong>포인트가 부족해 예약 발송 ${num(waiting.length)}건을 보내지 못하고 있습니다.</strong> 포인트를 충전하면 10분 안에 다시 시도합니다 (보유 ${num(balance)}P).</p>
<ul>${waiting.map((w) => html`<li><a href="/console/schedules/${w.schedule_id}">${w.class_name ?? '반'} · ${w.period === 'once' ? '한 번' : w.period}</a>: ${num(Number(w.points_needed))}P 필요</li>`)}</ul>
<p><a href="/console/points">포인트 충전하기</a></p></div>`;
}

export function scheduleList(v: { schedules: ScheduleView[]; canEdit: boolean; banner: SafeHtml | '' }): SafeHtml {
  return html`<h1>예약 발송</h1>
${v.banner}
<p class="muted">반 전체에 템플릿으로 매달 정한 날 정한 시각(한국 시간)에 청구서를 보냅니다. 한 달에 한 번만 보내며, 포인트가 모자라면 보내지 않고 기다립니다.</p>
${v.canEdit ? html`<div class="actions"><a class="btn inline" href="/console/schedules/new">새 예약 발송</a></div>` : ''}
${v.schedules.length === 0 ? html`<p class="card">아직 예약 발송이 없습니다.</p>` : tableRegion('예약 발송 목록', html`<table class="list cards"><thead><tr><th scope="col">반</th><th scope="col">상태</th><th scope="col">템플릿</th><th scope="col">언제</th><th scope="col">다음 발송</th></tr></thead>
<tbody>${v.schedules.map((s) => html`<tr><td><strong><a href="/console/schedules/${s.id}">${s.className ?? '(지운 반)'}</a></strong></td>
<td><span class="badge ${s.status === 'ACTIVE' ? 'ok' : s.status === 'PAUSED' ? 'warn' : ''}">${SCHEDULE_STATUS_LABEL[s.status] ?? s.status}</span></td><td class="sub">${s.templateName ?? '(지운 템플릿)'}</td><td class="sub">${whenText(s)}</td><td class="full sub" data-label="다음 발송">${t(s.nextRunAt)}</td></tr>`)}</tbody></table>`)}`;
}

export interface ScheduleFormValues {
  classId?: string;
  templateId?: string;
  repeat?: string;
  dayOfMonth?: string;
  time?: string;
  at?: string;
  dueDays?: string;
  beforeDays?: string;
  afterDays?: string;
  times?: string;
}

const option = (value: string, label: string, current: string | undefined) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;

export function scheduleForm(v: { csrf: string; classes: ClassView[]; templates: TemplateView[]; values: ScheduleFormValues; errors: FieldErrors }): SafeHtml {
  const x = v.values;
  const e = v.errors;
  const repeat = x.repeat ?? 'MONTHLY';
  const n = (id: keyof ScheduleFormValues, label: string, max: number, value: string | undefined, hint?: string) =>
    inputField({ id, label, value, e, attrs: html`inputmode="numeric" maxlength="${String(max)}"`, hint });
  return html`<p><a href="/console/schedules">← 예약 발송 목록</a></p>
<h1>새 예약 발송</h1>
${summary(e)}
${v.classes.length === 0 || v.templates.length === 0 ? html`<p class="card">먼저 ${v.classes.length === 0 ? html`<a href="/console/classes/new">반</a>` : ''}${v.classes.length === 0 && v.templates.length === 0 ? '과 ' : ''}${v.templates.length === 0 ? html`<a href="/console/templates/new">템플릿</a>` : ''}을 만들어 주세요.</p>` : ''}
<form method="post" action="/console/schedules" class="card" novalidate>
${csrfField(v.csrf)}
<div class="field"><label for="classId">반</label><select id="classId" name="classId" required${describedBy('classId', e)}>${v.classes.map((c) => option(c.id, `${c.name} (${c.memberCount}명)`, x.classId))}</select>${problem('classId', e)}</div>
<div class="field"><label for="templateId">템플릿</label><select id="templateId" name="templateId" required${describedBy('templateId', e, 'tpl-hint')}>${v.templates.map((tp) => option(tp.id, `${tp.name} (${tp.reason}${tp.amount ? `, ${won(tp.amount)}` : ''})`, x.templateId))}</select>
${problem('templateId', e)}<span class="hint" id="tpl-hint">청구 사유·안내·발송 방법과, 금액이 없는 분의 금액을 템플릿에서 가져옵니다</span></div>
<fieldset class="field"><legend>언제</legend>
<label><input type="radio" name="repeat" value="MONTHLY"${repeat === 'MONTHLY' ? html` checked` : ''}> 매달</label>
<label><input type="radio" name="repeat" value="ONCE"${repeat === 'ONCE' ? html` checked` : ''}> 한 번</label></fieldset>
<div class="row">${n('dayOfMonth', '매달 며칠 (1~31)', 2, x.dayOfMonth ?? '1', '29~31일은 그날이 없는 달에 말일에 보냅니다')}
${inputField({ id: 'time', label: '시각 (한국 시간)', value: x.time ?? '09:00', e, attrs: html`type="time"` })}</div>
${inputField({ id: 'at', label: '한 번 보낼 때: 날짜와 시각', value: x.at, e, attrs: html`type="datetime-local"` })}
${n('dueDays', '납부 기한: 발송 후 며칠 (선택)', 3, x.dueDays, '비우면 템플릿의 기한을 씁니다')}
<fieldset class="field"><legend>미납 안내 (선택)</legend>
<div class="row">${n('beforeDays', '기한 며칠 전 (1~30)', 2, x.beforeDays)}
${n('afterDays', '기한 지난 뒤 며칠마다 (1~30)', 2, x.afterDays)}
${n('times', '최대 몇 번 (1~5)', 1, x.times)}</div>
<span class="hint">같은 결제 링크로 다시 보냅니다 (한 통마다 포인트). 결제·취소·삭제된 청구서에는 보내지 않고, 밤 9시~아침 8시에는 아침 8시로 미룹니다.</span></fieldset>
<button class="btn" type="submit">예약하기</button>
</form>`;
}

export function scheduleDetail(v: { s: ScheduleView; runs: RunView[]; csrf: string; canEdit: boolean; banner: SafeHtml | '' }): SafeHtml {
  const s = v.s;
  return html`<p><a href="/console/schedules">← 예약 발송 목록</a></p>
<h1>${s.className ?? '(지운 반)'} · ${whenText(s)}</h1>
${v.banner}
<p><span class="badge ${s.status === 'ACTIVE' ? 'ok' : 'warn'}">${SCHEDULE_STATUS_LABEL[s.status] ?? s.status}</span></p>
${v.canEdit && s.status !== 'ENDED' ? html`<div class="actions"><form method="post" action="/console/schedules/${s.id}/${s.status === 'PAUSED' ? 'resume' : 'pause'}">${csrfField(v.csrf)}<button class="btn inline${s.status === 'PAUSED' ? '' : ' secondary'}" type="submit">${s.status === 'PAUSED' ? '다시 시작' : '일시 정지'}</button></form></div>` : ''}
<section class="card" aria-labelledby="facts-title"><h2 id="facts-title">설정</h2><dl class="facts">
<dt>반</dt><dd><a href="/console/classes/${s.classId}">${s.className ?? s.classId}</a></dd>
<dt>템플릿</dt><dd>${s.templateName ?? s.templateId}</dd>
<dt>언제</dt><dd>${whenText(s)}</dd>
<dt>다음 발송</dt><dd>${t(s.nextRunAt)}</dd>
<dt>납부 기한</dt><dd>${s.dueDays !== null ? `발송 후 ${s.dueDays}일` : '템플릿대로'}</dd>
<dt>미납 안내</dt><dd>${s.reminders ? `${s.reminders.beforeDays ? `기한 ${s.reminders.beforeDays}일 전, ` : ''}${s.reminders.afterDays ? `기한 뒤 ${s.reminders.afterDays}일마다, ` : ''}최대 ${s.reminders.times}번` : '없음'}</dd>
</dl></section>
<section class="card" aria-labelledby="runs-title"><h2 id="runs-title">발송 기록</h2>
${v.runs.length === 0 ? html`<p class="muted">아직 없습니다.</p>` : tableRegion('발송 기록', html`<table class="list cards"><thead><tr><th scope="col">기간</th><th scope="col">예정 시각</th><th scope="col">결과</th><th scope="col" class="num">청구서</th><th scope="col" class="num">포인트</th><th scope="col">메모</th></tr></thead>
<tbody>${v.runs.map((r) => html`<tr><td class="start"><strong><a href="/console/schedules/${s.id}/runs/${r.id}">${r.period === 'once' ? '한 번' : r.period}</a></strong></td><td class="full sub" data-label="예정">${t(r.plannedAt)}</td>
<td class="end"><span class="badge ${RUN_TONE[r.status] ?? ''}">${RUN_STATUS_LABEL[r.status] ?? r.status}</span>${r.tries > 1 ? html` <span class="muted">${r.tries}번 시도</span>` : ''}</td>
<td class="num start" data-label="청구서">${num(r.invoices)}/${num(r.recipients)}명</td><td class="num end">${r.status === 'SENT' ? `${num(r.pointsSpent)}P` : `${num(r.pointsNeeded)}P 필요`}</td><td class="wrap full sub">${note(r.message)}</td></tr>`)}</tbody></table>`)}
</section>`;
}

export function runDetail(v: { s: ScheduleView; run: RunView; invoices: { uniqueId: string; receiverName: string; amount: number; status: string; sendStatus: string; dueDate: string | null }[] }): SafeHtml {
  const r = v.run;
  return html`<p><a href="/console/schedules/${v.s.id}">← ${v.s.className ?? '예약 발송'}</a></p>
<h1>${r.period === 'once' ? '한 번' : r.period} 발송</h1>
<section class="card"><dl class="facts"><dt>결과</dt><dd><span class="badge ${RUN_TONE[r.status] ?? ''}">${RUN_STATUS_LABEL[r.status] ?? r.status}</span></dd>
<dt>예정 시각</dt><dd>${t(r.plannedAt)}</dd><dt>보낸 시각</dt><dd>${t(r.finishedAt)}</dd>
<dt>청구서</dt><dd>${num(r.invoices)}건 (반 ${num(r.recipients)}명)</dd><dt>포인트</dt><dd>${num(r.pointsSpent)}P 사용${r.pointsNeeded !== r.pointsSpent ? ` (${num(r.pointsNeeded)}P 필요)` : ''}</dd>
${r.message ? html`<dt>메모</dt><dd>${note(r.message)}</dd>` : ''}</dl></section>
${v.invoices.length === 0 ? '' : tableRegion('이 발송의 청구서', html`<table class="list cards"><thead><tr><th scope="col">받는 분</th><th scope="col" class="num">금액</th><th scope="col">납부 기한</th><th scope="col">결제</th></tr></thead>
<tbody>${v.invoices.map((i) => html`<tr><td><strong><a href="/console/invoices/${i.uniqueId}">${i.receiverName}</a></strong></td><td class="num"><strong>${won(i.amount)}</strong></td><td class="sub" data-label="기한">${i.dueDate ?? '-'}</td><td>${i.status === 'DONE' ? '결제 완료' : i.status === 'CANCELED' ? '취소' : '결제 대기'}</td></tr>`)}</tbody></table>`)}`;
}
