import { html, type SafeHtml } from '../../pages/html.js';
import type { FieldErrors } from '../field-errors.js';
import type { SessionRow } from '../repository.js';
import { inputField, summary } from './form-fields.js';
import { when } from './format.js';
import { csrfField, ROLE_LABEL, tableRegion } from './shell.js';
import type { ConsoleUser } from '../sessions.js';

/** A browser as people name it, from its user agent. */
function browserOf(ua: string): string {
  const os = /iPhone|iPad/.test(ua) ? 'iOS' : /Android/.test(ua) ? 'Android' : /Windows/.test(ua) ? 'Windows' : /Mac OS X/.test(ua) ? 'macOS' : /Linux/.test(ua) ? 'Linux' : '';
  const b = /Edg\//.test(ua) ? 'Edge' : /SamsungBrowser/.test(ua) ? 'Samsung Internet' : /Chrome\//.test(ua) ? 'Chrome' : /Firefox\//.test(ua) ? 'Firefox' : /Safari\//.test(ua) ? 'Safari' : ua ? ua.slice(0, 40) : '알 수 없음';
  return os ? `${b} (${os})` : b;
}

export function accountBody(v: { user: ConsoleUser; sessions: SessionRow[]; csrf: string; errors?: FieldErrors }): SafeHtml {
  const e = v.errors ?? {};
  return html`<h1>내 계정</h1>
<section class="card"><dl class="facts"><dt>이메일</dt><dd>${v.user.member.email}</dd><dt>역할</dt><dd>${ROLE_LABEL[v.user.member.role]}</dd><dt>상점</dt><dd>${v.user.store.name}</dd></dl></section>
<section aria-labelledby="sessions-title"><h2 id="sessions-title">로그인한 기기</h2>
${tableRegion('로그인한 기기', html`<table class="list cards"><thead><tr><th scope="col">기기</th><th scope="col">주소</th><th scope="col">로그인</th><th scope="col">마지막 사용</th><th scope="col">관리</th></tr></thead>
<tbody>${v.sessions.map((s) => html`<tr><td><strong>${browserOf(s.user_agent)}</strong>${s.id === v.user.sessionId ? html` <span class="badge ok">지금 이 기기</span>` : ''}</td><td class="sub">${s.ip}</td><td class="sub" data-label="로그인">${when(s.created_at)}</td><td class="sub" data-label="마지막">${when(s.last_seen_at)}</td>
<td class="full">${s.id === v.user.sessionId ? '' : html`<form method="post" action="/console/account/sessions/revoke">${csrfField(v.csrf)}<input type="hidden" name="session" value="${s.id}"><button class="link-btn" type="submit">로그아웃시키기</button></form>`}</td></tr>`)}</tbody></table>`)}
<form method="post" action="/console/account/sessions/revoke-all" class="actions">${csrfField(v.csrf)}<button class="btn inline secondary" type="submit">모든 기기에서 로그아웃</button></form>
</section>
<form method="post" action="/console/account/password" class="card" novalidate>
${csrfField(v.csrf)}
<h2>비밀번호 변경</h2>
${summary(e)}
${inputField({ id: 'current', label: '지금 비밀번호', value: '', e, attrs: html`type="password" autocomplete="current-password" required maxlength="200"` })}
${inputField({ id: 'next', label: '새 비밀번호', value: '', e, attrs: html`type="password" autocomplete="new-password" required minlength="8" maxlength="200"`, hint: '8자 이상 200자까지. 바꾸면 모든 기기에서 로그아웃되고 API 토큰도 폐기됩니다.' })}
<button class="btn" type="submit">비밀번호 바꾸기</button>
</form>`;
}
