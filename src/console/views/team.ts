import { ACCESS, ACCOUNT_ROLES, type Account, type AccountRole } from '../../invoicing/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import type { FieldErrors } from '../field-errors.js';
import type { InviteRow } from '../repository.js';
import { describedBy, inputField, problem, summary } from './form-fields.js';
import { when } from './format.js';
import { csrfField, ROLE_LABEL, tableRegion } from './shell.js';

/** The invite form as typed (kept after a refusal). */
export interface InviteValues {
  email?: string;
  role?: string;
}

export function teamBody(v: { members: Account[]; invites: InviteRow[]; me: Account; tenantId: string; csrf: string; link?: string; resetLink?: { email: string; link: string }; invite?: InviteValues; errors?: FieldErrors }): SafeHtml {
  const e = v.errors ?? {};
  const x = v.invite ?? {};
  const roleSelect = (m: Account) => html`<form method="post" action="/console/team/${m.id}/role" class="actions">${csrfField(v.csrf)}
<label class="muted" for="role-${m.id}">역할</label><select id="role-${m.id}" name="role"${describedBy(`role-${m.id}`, e)}>${ACCOUNT_ROLES.map((r) => html`<option value="${r}"${r === m.role ? html` selected` : ''}>${ROLE_LABEL[r]}</option>`)}</select>
<button class="link-btn" type="submit">변경</button>${problem(`role-${m.id}`, e)}</form>`;
  // The invite starts as 조회 전용 (viewer): more is the owner's choice.
  const inviteRole = x.role ?? 'viewer';
  return html`<h1>팀</h1>
${summary(e)}
${v.link ? html`<section class="card" aria-labelledby="link-title"><h2 id="link-title">초대 링크</h2><p>이 링크는 지금 한 번만 보입니다. 초대한 분에게 전해 주세요 (3일 동안, 한 번 쓸 수 있습니다).</p><code class="secret">${v.link}</code></section>` : ''}
${v.resetLink ? html`<section class="card" aria-labelledby="reset-title"><h2 id="reset-title">${v.resetLink.email}님의 비밀번호 재설정 링크</h2><p>이 링크는 지금 한 번만 보입니다. 그 멤버에게 전해 주세요 (1시간 동안, 한 번 쓸 수 있습니다. 새 링크를 만들면 이전 링크는 쓸 수 없습니다). 비밀번호를 바꾸면 그 멤버는 모든 기기에서 로그아웃됩니다.</p><code class="secret">${v.resetLink.link}</code></section>` : ''}
<section aria-labelledby="members-title"><h2 id="members-title">멤버</h2>
${tableRegion('멤버', html`<table class="list cards"><thead><tr><th scope="col">이메일</th><th scope="col">역할</th><th scope="col">가입</th><th scope="col">관리</th></tr></thead>
<tbody>${v.members.map((m) => html`<tr><td>${m.email}${m.id === v.me.id ? ' (나)' : ''}</td><td>${ROLE_LABEL[m.role]}</td><td>${when(m.created_at)}</td>
<td class="wrap full">${roleSelect(m)}<form method="post" action="/console/team/${m.id}/reset-link">${csrfField(v.csrf)}<button class="link-btn" type="submit">비밀번호 재설정 링크<span class="sr-only"> 만들기: ${m.email}</span></button></form>
<form method="post" action="/console/team/${m.id}/sign-out">${csrfField(v.csrf)}<button class="link-btn" type="submit">모든 기기에서 로그아웃<span class="sr-only">: ${m.email}</span></button></form>
${m.id !== v.tenantId ? html`<form method="post" action="/console/team/${m.id}/remove">${csrfField(v.csrf)}<button class="link-btn" type="submit">팀에서 빼기<span class="sr-only">: ${m.email}</span></button></form>` : html`<span class="muted">팀의 첫 계정</span>`}</td></tr>`)}</tbody></table>`)}
</section>
<form method="post" action="/console/team/invite" class="card" novalidate>
${csrfField(v.csrf)}
<h2>멤버 초대</h2>
<div class="grid2">${inputField({ id: 'email', label: '이메일', value: x.email, e, attrs: html`type="email" required maxlength="254" autocomplete="off"` })}
<div class="field"><label for="role">역할</label><select id="role" name="role"${describedBy('role', e)}>${ACCOUNT_ROLES.map((r) => html`<option value="${r}"${r === inviteRole ? html` selected` : ''}>${ROLE_LABEL[r]}</option>`)}</select>${problem('role', e)}</div></div>
${rolesHelp()}
<button class="btn" type="submit">초대 링크 만들기</button>
</form>
${v.invites.length ? html`<section aria-labelledby="invites-title"><h2 id="invites-title">대기 중인 초대</h2>
${tableRegion('대기 중인 초대', html`<table class="list cards"><thead><tr><th scope="col">이메일</th><th scope="col">역할</th><th scope="col">만료</th><th scope="col">관리</th></tr></thead>
<tbody>${v.invites.map((i) => html`<tr><td>${i.email}</td><td>${ROLE_LABEL[i.role]}</td><td class="sub" data-label="만료">${when(i.expires_at)}</td><td><form method="post" action="/console/team/invites/${i.id}/revoke">${csrfField(v.csrf)}<button class="link-btn" type="submit">취소</button></form></td></tr>`)}</tbody></table>`)}</section>` : ''}`;
}

/** What each role may do, from the one table (src/invoicing/access.ts): the words beside the role choice never restate it. */
function rolesHelp(): SafeHtml {
  const at = (r: AccountRole) => Object.values(ACCESS).filter((a) => a.role === r).map((a) => a.ko).join(', ');
  return html`<details class="roles-help"><summary>역할별로 할 수 있는 일</summary>
<p><strong>${ROLE_LABEL.viewer}</strong>: ${at('viewer')}. 내보낸 파일의 전화번호는 가려집니다.</p>
<p><strong>${ROLE_LABEL.manager}</strong>: ${ROLE_LABEL.viewer}의 모든 것과 ${at('manager')}.</p>
<p><strong>${ROLE_LABEL.owner}</strong>: ${ROLE_LABEL.manager}의 모든 것과 ${at('owner')}.</p>
<p class="muted">새 멤버는 고르지 않으면 ${ROLE_LABEL.viewer}입니다.</p></details>`;
}
