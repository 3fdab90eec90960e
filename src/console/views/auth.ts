import { html, type SafeHtml } from '../../pages/html.js';
import type { FieldErrors } from '../field-errors.js';
import { csrfField, publicPage, ROLE_LABEL } from './shell.js';
import type { AccountRole } from '../../invoicing/index.js';

export function signInPage(v: { csrf: string; next: string; email?: string; error?: string; notice?: string }): string {
  return publicPage('로그인', html`<h1>상점관리자 로그인</h1>
${v.notice ? html`<p class="ok-note" role="status">${v.notice}</p>` : ''}
${v.error ? html`<div class="alert" role="alert"><p>${v.error}</p></div>` : ''}
<section class="card">
<form method="post" action="/console/login">
${csrfField(v.csrf)}
<input type="hidden" name="next" value="${v.next}">
<div class="field"><label for="email">이메일</label><input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${v.email ?? ''}"></div>
<div class="field"><label for="password">비밀번호</label><input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200"></div>
<button class="btn" type="submit">로그인</button>
</form>
</section>
<p class="notice"><a href="/console/forgot">비밀번호를 잊었나요?</a> 계정이 없다면 상점 소유자에게 초대를 부탁해 주세요.</p>`);
}

export function invitePage(v: { csrf: string; token: string; email: string; role: AccountRole; storeName: string; error?: string }): string {
  return publicPage('초대 수락', html`<h1>${v.storeName} 팀에 참여하기</h1>
${v.error ? html`<div class="alert" role="alert"><p>${v.error}</p></div>` : ''}
<section class="card">
<dl class="facts"><dt>이메일</dt><dd>${v.email}</dd><dt>역할</dt><dd>${ROLE_LABEL[v.role]}</dd></dl>
</section>
<section class="card">
<form method="post" action="/console/invite/${v.token}">
${csrfField(v.csrf)}
<div class="field"><label for="password">사용할 비밀번호</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="200" aria-describedby="password-hint"><span class="hint" id="password-hint">8자 이상</span></div>
<button class="btn" type="submit">참여하고 로그인</button>
</form>
</section>`);
}

/** Who can let a member back in: the page a forgotten password leads to. */
export function forgotPage(): string {
  return publicPage('비밀번호 재설정', html`<h1>비밀번호를 잊었나요?</h1>
<section class="card">
<p>상점 소유자에게 <strong>비밀번호 재설정 링크</strong>를 부탁해 주세요. 소유자는 상점관리자의 <strong>팀</strong> 메뉴에서 멤버마다 링크를 만들 수 있습니다. 링크는 1시간 동안, 한 번 쓸 수 있습니다.</p>
<p>상점 소유자 본인이라면 이 Sunap을 운영하는 분(운영자)에게 재설정 링크를 부탁해 주세요.</p>
<p><a href="/console/login">← 로그인으로 돌아가기</a></p>
</section>`);
}

export function resetPage(v: { csrf: string; token: string; email: string; storeName: string; errors?: FieldErrors }): string {
  const e = v.errors ?? {};
  const err = (id: string): SafeHtml | '' => (e[id] ? html`<span class="field-error" id="${id}-error">${e[id]}</span>` : '');
  const aria = (id: string, hint?: string): SafeHtml | '' => (e[id] ? html` aria-invalid="true" aria-describedby="${id}-error"` : hint ? html` aria-describedby="${hint}"` : '');
  return publicPage('비밀번호 재설정', html`<h1>새 비밀번호 정하기</h1>
${Object.keys(e).length ? html`<div class="alert" role="alert"><ul>${Object.values(e).map((m) => html`<li>${m}</li>`)}</ul></div>` : ''}
<section class="card"><dl class="facts"><dt>상점</dt><dd>${v.storeName}</dd><dt>이메일</dt><dd>${v.email}</dd></dl></section>
<section class="card">
<form method="post" action="/console/reset/${v.token}" novalidate>
${csrfField(v.csrf)}
<div class="field"><label for="password">새 비밀번호</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="200"${aria('password', 'password-hint')}>${err('password')}<span class="hint" id="password-hint">8자 이상. 바꾸면 모든 기기에서 로그아웃됩니다</span></div>
<div class="field"><label for="confirm">새 비밀번호 확인</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" required maxlength="200"${aria('confirm')}>${err('confirm')}</div>
<button class="btn" type="submit">비밀번호 바꾸기</button>
</form>
</section>`);
}
