import { html } from '../../pages/html.js';
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
<p class="notice">계정은 운영자가 <code>sunap account create</code>로 만들거나, 상점 소유자의 초대 링크로 만듭니다.</p>`);
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
