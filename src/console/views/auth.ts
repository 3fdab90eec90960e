import { html } from '../../pages/html.js';
import type { FieldErrors } from '../field-errors.js';
import { inputField, summary } from './form-fields.js';
import { csrfField, publicPage, ROLE_LABEL } from './shell.js';
import type { AccountRole } from '../../invoicing/index.js';

export function signInPage(v: { csrf: string; next: string; email?: string; errors?: FieldErrors; notice?: string }): string {
  const e = v.errors ?? {};
  return publicPage('로그인', html`<h1>상점관리자 로그인</h1>
${v.notice ? html`<p class="ok-note" role="status">${v.notice}</p>` : ''}
${summary(e)}
<section class="card">
<form method="post" action="/console/login" novalidate>
${csrfField(v.csrf)}
<input type="hidden" name="next" value="${v.next}">
${inputField({ id: 'email', label: '이메일', value: v.email, e, attrs: html`type="email" autocomplete="username" required maxlength="254"` })}
${inputField({ id: 'password', label: '비밀번호', value: '', e, attrs: html`type="password" autocomplete="current-password" required maxlength="200"` })}
<button class="btn" type="submit">로그인</button>
</form>
</section>
<p class="notice"><a href="/console/forgot">비밀번호를 잊었나요?</a> 계정이 없다면 상점 소유자에게 초대를 부탁해 주세요.</p>`);
}

export function invitePage(v: { csrf: string; token: string; email: string; role: AccountRole; storeName: string; errors?: FieldErrors }): string {
  const e = v.errors ?? {};
  return publicPage('초대 수락', html`<h1>${v.storeName} 팀에 참여하기</h1>
${summary(e)}
<section class="card">
<dl class="facts"><dt>이메일</dt><dd>${v.email}</dd><dt>역할</dt><dd>${ROLE_LABEL[v.role]}</dd></dl>
</section>
<section class="card">
<form method="post" action="/console/invite/${v.token}" novalidate>
${csrfField(v.csrf)}
${inputField({ id: 'password', label: '사용할 비밀번호', value: '', e, attrs: html`type="password" autocomplete="new-password" required minlength="8" maxlength="200"`, hint: '8자 이상 200자까지' })}
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
  return publicPage('비밀번호 재설정', html`<h1>새 비밀번호 정하기</h1>
${summary(e)}
<section class="card"><dl class="facts"><dt>상점</dt><dd>${v.storeName}</dd><dt>이메일</dt><dd>${v.email}</dd></dl></section>
<section class="card">
<form method="post" action="/console/reset/${v.token}" novalidate>
${csrfField(v.csrf)}
${inputField({ id: 'password', label: '새 비밀번호', value: '', e, attrs: html`type="password" autocomplete="new-password" required minlength="8" maxlength="200"`, hint: '8자 이상 200자까지. 바꾸면 모든 기기에서 로그아웃됩니다' })}
${inputField({ id: 'confirm', label: '새 비밀번호 확인', value: '', e, attrs: html`type="password" autocomplete="new-password" required maxlength="200"` })}
<button class="btn" type="submit">비밀번호 바꾸기</button>
</form>
</section>`);
}
