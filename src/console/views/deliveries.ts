import type { EndpointView } from '../../gateway/index.js';
import { isFailing, type DeliveryDetail, type DeliveryView, type RecoverResult, type SkipReason } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { problemWords } from './format.js';
import type { FieldErrors } from '../field-errors.js';
import { inputField, problem as fieldProblem, summary } from './form-fields.js';
import { csrfField, tableRegion } from './shell.js';

const STATUS_LABEL: Record<DeliveryView['status'], string> = { pending: '전송 중', delivered: '전달됨', failed: '실패' };
/** Why recovery skipped a delivery, as the merchant reads it. */
export const SKIP_LABEL: Record<SkipReason, string> = {
  delivered: '그사이 전달되었습니다',
  on_its_way: '이미 다시 보내는 중입니다',
  endpoint_disabled: '엔드포인트가 꺼져 있습니다 (켠 뒤 다시 보내 주세요)',
  endpoint_removed: '엔드포인트가 삭제되었습니다',
};
/** An endpoint's reason for being off, as the merchant reads it (the stored reason behind 자세히). */
const DISABLED_LABEL: Record<string, string> = {
  'disabled by the store': '상점에서 껐습니다',
  'the endpoint answered 410 Gone': '받는 서버가 410 Gone(더 이상 받지 않음)으로 답해 껐습니다',
  'every attempt failed for 3 days': '3일 동안 모든 시도가 실패해 껐습니다',
};
const KIND_LABEL: Record<DeliveryView['kind'], string> = { callback: '콜백', webhook: '웹훅' };
export const EVENT_LABEL: Record<string, string> = {
  'bill.paid': '청구서 결제', 'bill.canceled': '청구서 취소', 'payment.approved': '결제 승인', 'payment.canceled': '결제 취소', 'webhook.test': '테스트',
};

const at = (s: string | null) => (s ? s.replace('T', ' ') : '');
// A pending delivery with a failed attempt behind it is failing (isFailing): "재시도 중", marked as failing.
const status = (d: Pick<DeliveryView, 'status' | 'attempts'>) => (d.status === 'pending' && isFailing(d)
  ? html`<span class="badge bad">재시도 중</span>`
  : html`<span class="badge ${d.status === 'failed' ? 'bad' : d.status === 'delivered' ? 'ok' : 'warn'}">${STATUS_LABEL[d.status]}</span>`);
const problem = (raw: string | null) => (raw ? html`${problemWords(raw)} <details><summary>자세히</summary><code>${raw}</code></details>` : '');
const what = (d: Pick<DeliveryView, 'kind' | 'event'>) => (d.event ? `${KIND_LABEL[d.kind]} · ${EVENT_LABEL[d.event] ?? d.event}` : KIND_LABEL[d.kind]);

/** The list: failed first, then newest; recovery for managers and owners. */
export function deliveriesBody(v: {
  rows: DeliveryView[]; filter: { status?: string; kind?: string }; canWrite: boolean; csrf: string; recoverSince: string; error?: string; recovered?: RecoverResult;
}): SafeHtml {
  const opt = (value: string, label: string, current?: string) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;
  const failed = v.rows.filter(isFailing).length;
  const active = [v.filter.status, v.filter.kind].filter(Boolean).length;
  return html`<h1>콜백·웹훅</h1>
<p class="muted">결제 승인 콜백(CONFIRM_URL)과 청구서·엔드포인트 웹훅의 전송 기록입니다. 실패한 것이 먼저 보입니다. <a href="/console/deliveries/endpoints">웹훅 엔드포인트</a></p>
${v.error ? html`<div class="alert" role="alert"><p>${v.error}</p></div>` : ''}
${v.recovered ? recoveredCard(v.recovered) : ''}
<form method="get" action="/console/deliveries" class="card" aria-label="전송 기록 필터">
<details class="filter-fold"${active ? html` open` : ''}><summary>필터: 상태·종류${active ? ` (${active}개 적용 중)` : ''}</summary>
<div class="filters">
<div class="field"><label for="status">상태</label><select id="status" name="status">${opt('', '전체', v.filter.status)}${opt('failed', '실패', v.filter.status)}${opt('pending', '전송 중', v.filter.status)}${opt('delivered', '전달됨', v.filter.status)}</select></div>
<div class="field"><label for="kind">종류</label><select id="kind" name="kind">${opt('', '전체', v.filter.kind)}${opt('callback', '콜백', v.filter.kind)}${opt('webhook', '웹훅', v.filter.kind)}</select></div>
<div class="field"><button class="btn inline secondary" type="submit">보기</button></div>
</div></details></form>
${v.canWrite ? html`<form method="post" action="/console/deliveries/recover" class="card">${csrfField(v.csrf)}
<h2>실패한 전송 복구</h2>
<p>받는 서버가 멈춰 있던 동안 실패한 콜백과 웹훅을, 같은 전송 번호로 모두 다시 보냅니다. 아직 재시도 중인 것은 다음 시도를 지금으로 당깁니다.${failed ? ` 지금 목록에 실패 ${failed}건이 있습니다.` : ''}</p>
<div class="field"><label for="since">이 시각 이후 만들어진 것 (KST)</label><input id="since" name="since" type="datetime-local" required value="${v.recoverSince}"></div>
<button class="btn" type="submit">복구</button></form>` : ''}
${v.rows.length === 0 ? html`<p class="card">전송 기록이 없습니다.</p>` : tableRegion('전송 기록', html`<table class="list cards"><thead><tr><th scope="col">종류</th><th scope="col">상태</th><th scope="col">대상</th><th scope="col">전송 번호</th><th scope="col">시도</th><th scope="col">마지막 시도</th><th scope="col">만든 시각</th></tr></thead>
<tbody>${v.rows.map((d) => html`<tr><td><a href="/console/deliveries/${d.id}">${what(d)}</a></td><td>${status(d)}</td><td class="wrap full sub">${d.url}</td><td class="more"><code>${d.number}</code></td><td class="start sub" data-label="시도">${d.attempts}회</td><td class="end sub" data-label="마지막">${at(d.lastAttemptAt) || '-'}</td><td class="start sub" data-label="만듦">${at(d.createdAt)}</td></tr>`)}</tbody></table>`)}`;
}

/** One delivery: the request as sent and every attempt; "send again" for managers and owners. */
export function deliveryBody(v: { d: DeliveryDetail; canWrite: boolean; csrf: string }): SafeHtml {
  const d = v.d;
  return html`<p><a href="/console/deliveries">← 콜백·웹훅</a></p>
<h1>${what(d)} ${status(d)}</h1>
<section class="card" aria-labelledby="req-title"><h2 id="req-title">보낸 요청</h2>
<dl class="facts"><dt>전송 번호</dt><dd><code>${d.number}</code></dd><dt>대상</dt><dd class="wrap">${d.url}</dd>
${d.transSeqNo ? html`<dt>TRANS_SEQNO</dt><dd><code>${d.transSeqNo}</code></dd>` : ''}${d.billId ? html`<dt>청구서</dt><dd><a href="/console/invoices/${d.billId}">${d.billId}</a></dd>` : ''}
<dt>만든 시각</dt><dd>${at(d.createdAt)}</dd></dl>
<h3>헤더 (서명 제외)</h3>${tableRegion('헤더', html`<pre class="secret">${Object.entries(d.request.headers).map(([k, val]) => `${k}: ${val}\n`).join('')}</pre>`)}
<h3>본문</h3>${tableRegion('본문', html`<pre class="secret">${pretty(d.request.body)}</pre>`)}
${v.canWrite ? html`<form method="post" action="/console/deliveries/${d.id}/redeliver">${csrfField(v.csrf)}<button class="btn" type="submit">지금 다시 보내기</button>
<p class="muted">같은 전송 번호와 본문으로, 새로 서명해 보냅니다.</p></form>` : ''}
</section>
<section aria-labelledby="att-title"><h2 id="att-title">시도 ${d.attemptLog.length}회</h2>
${d.attemptLog.length === 0 ? html`<p class="card">아직 시도하지 않았습니다.</p>` : tableRegion('시도', html`<table class="list cards"><thead><tr><th scope="col">회차</th><th scope="col">시각</th><th scope="col">계기</th><th scope="col">HTTP</th><th scope="col">걸린 시간</th><th scope="col">응답 (앞 2 KB)</th><th scope="col">오류</th></tr></thead>
<tbody>${d.attemptLog.map((a) => html`<tr><td>${a.attemptNo}회차</td><td>${at(a.at)}</td><td>${a.trigger === 'manual' ? '수동' : '예약'}</td><td data-label="HTTP">${a.statusCode ?? '–'}</td><td class="sub">${a.durationMs} ms</td><td class="wrap full sub" data-label="응답">${a.responseBody ? html`<code>${a.responseBody.slice(0, 300)}</code>` : ''}</td><td class="wrap full">${problem(a.error)}</td></tr>`)}</tbody></table>`)}
</section>`;
}

/** What one recovery did: how many it re-queued, and each it skipped with why. */
function recoveredCard(r: RecoverResult): SafeHtml {
  const shown = r.skipped.slice(0, 20);
  return html`<section class="card" role="status" aria-labelledby="recovered-title"><h2 id="recovered-title">복구 결과</h2>
<p>실패한 전송 ${r.requeued}건을 다시 보내도록 예약했습니다.${r.more ? ' 더 남아 있습니다: 복구를 한 번 더 눌러 주세요.' : ''}</p>
${r.skipped.length ? html`<p>${r.skipped.length}건은 건너뛰었습니다.</p><ul>${shown.map((k) => html`<li><a href="/console/deliveries/${k.id}">${what(k)} <code>${k.number}</code></a>: ${SKIP_LABEL[k.reason]}</li>`)}</ul>${r.skipped.length > shown.length ? html`<p class="muted">외 ${r.skipped.length - shown.length}건</p>` : ''}` : ''}
</section>`;
}

function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** The store's webhook endpoints; a new or rotated secret is shown on this answer only. */
/** The endpoint form as typed (kept after a refusal). */
export interface EndpointValues {
  url?: string;
  events?: string[];
}

export function endpointsBody(v: { endpoints: EndpointView[]; canWrite: boolean; csrf: string; secret?: { id: string; value: string }; values?: EndpointValues; errors?: FieldErrors; events: readonly string[] }): SafeHtml {
  const fe = v.errors ?? {};
  const chosen = v.values?.events;
  const post = (id: string, action: string, label: string) => html`<form method="post" action="/console/deliveries/endpoints/${id}/${action}">${csrfField(v.csrf)}<button class="link-btn" type="submit">${label}</button></form>`;
  return html`<p><a href="/console/deliveries">← 콜백·웹훅</a></p>
<h1>웹훅 엔드포인트</h1>
<p class="muted">청구서마다 주는 webhookUrl과 별도로, 상점의 이벤트를 받을 주소입니다. Standard Webhooks 방식(webhook-id, webhook-timestamp, webhook-signature)으로 서명합니다.</p>
${summary(fe)}
${v.secret ? html`<section class="card" aria-labelledby="secret-title"><h2 id="secret-title">서명 시크릿</h2><p>이 시크릿은 지금 한 번만 보입니다. 받는 서버에 저장해 주세요. 교체한 경우 24시간 동안 이전 시크릿의 서명도 함께 붙습니다.</p><code class="secret">${v.secret.value}</code></section>` : ''}
${v.endpoints.length === 0 ? html`<p class="card">등록한 엔드포인트가 없습니다.</p>` : tableRegion('웹훅 엔드포인트', html`<table class="list cards"><thead><tr><th scope="col">주소</th><th scope="col">이벤트</th><th scope="col">상태</th>${v.canWrite ? html`<th scope="col">관리</th>` : ''}</tr></thead>
<tbody>${v.endpoints.map((e) => html`<tr><td class="wrap full">${e.url}</td><td class="start sub">${e.events.map((x) => EVENT_LABEL[x] ?? x).join(', ')}</td>
<td class="end">${e.enabled ? html`<span class="badge ok">켜짐</span>` : html`<span class="badge bad">꺼짐</span> <span class="muted">${e.disabledReason ? html`${DISABLED_LABEL[e.disabledReason] ?? '꺼졌습니다'} <details><summary>자세히</summary><code>${e.disabledReason}</code></details>` : ''}</span>`}${e.rotating ? html` <span class="muted">(시크릿 교체 중)</span>` : ''}${e.failingSince ? html` <span class="muted">${at(e.failingSince)}부터 실패</span>` : ''}</td>
${v.canWrite ? html`<td class="actions full">${e.enabled ? html`${post(e.id, 'test', '테스트 이벤트')}${post(e.id, 'disable', '끄기')}` : post(e.id, 'enable', '켜기')}${post(e.id, 'rotate', '시크릿 교체')}</td>` : ''}</tr>`)}</tbody></table>`)}
${v.canWrite ? html`<form method="post" action="/console/deliveries/endpoints" class="card" novalidate>${csrfField(v.csrf)}
<h2>엔드포인트 등록</h2>
${inputField({ id: 'url', label: '주소 (https)', value: v.values?.url, e: fe, attrs: html`type="url" required maxlength="500" placeholder="https://academy.example.com/hooks/sunap"` })}
<fieldset id="events"${fe.events ? html` aria-describedby="events-error"` : ''}><legend>받을 이벤트</legend>${v.events.map((x) => html`<label><input type="checkbox" name="events" value="${x}"${!chosen || chosen.includes(x) ? html` checked` : ''}> ${EVENT_LABEL[x] ?? x} <code>${x}</code></label>`)}${fieldProblem('events', fe)}</fieldset>
<button class="btn" type="submit">등록</button></form>` : ''}`;
}
