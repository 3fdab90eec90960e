import { can, type AccountRole, type Action } from '../../invoicing/index.js';
import { html, layout, type SafeHtml } from '../../pages/html.js';
import type { ConsoleUser } from '../sessions.js';

/**
 * The console's page shell: a top bar (store, who is signed in, sign out), the navigation, and
 * the main column. NAV is the one list of sections; a new section is one entry here (and its
 * routes), shown to the roles that may open it.
 */
export interface NavItem {
  key: string;
  label: string;
  href: string;
  /** The action its page is (src/console/access.ts): shown to the roles that may do it. */
  action: Action;
}

export const NAV: NavItem[] = [
  { key: 'overview', label: '개요', href: '/console', action: 'overview.view' },
  { key: 'payments', label: '결제', href: '/console/payments', action: 'payments.view' },
  { key: 'invoices', label: '청구서', href: '/console/invoices', action: 'invoices.view' },
  { key: 'templates', label: '템플릿', href: '/console/templates', action: 'templates.view' },
  { key: 'classes', label: '반', href: '/console/classes', action: 'classes.view' },
  { key: 'schedules', label: '예약 발송', href: '/console/schedules', action: 'schedules.view' },
  { key: 'points', label: '포인트', href: '/console/points', action: 'points.view' },
  { key: 'deliveries', label: '콜백·웹훅', href: '/console/deliveries', action: 'deliveries.view' },
  { key: 'team', label: '팀', href: '/console/team', action: 'team.view' },
  { key: 'settings', label: '설정', href: '/console/settings', action: 'settings.view' },
  { key: 'account', label: '내 계정', href: '/console/account', action: 'account.manage' },
];

export const ROLE_LABEL: Record<AccountRole, string> = { owner: '소유자', manager: '관리자', viewer: '조회 전용' };

/** The hidden CSRF field every console form carries. */
export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** What a page needs to draw its shell. */
export interface ShellContext {
  user: ConsoleUser;
  csrf: string;
}

export interface ShellPage {
  title: string;
  /** The NAV key of the current section. */
  active: string;
  body: SafeHtml;
  /** A short confirmation after a redirect (e.g. "취소되었습니다"). */
  notice?: string | null;
}

export function consolePage(ctx: ShellContext, page: ShellPage): string {
  const { user } = ctx;
  const items = NAV.filter((n) => can(user.member, n.action));
  const header = html`<a class="skip" href="#main">본문으로 건너뛰기</a>
<header class="topbar"><div class="inner">
<a class="brand" href="/console">Sunap 상점관리자</a>
<span class="who">${user.store.name} · ${user.member.email} (${ROLE_LABEL[user.member.role]})</span>
<form method="post" action="/console/logout">${csrfField(ctx.csrf)}<button class="link-btn" type="submit">로그아웃</button></form>
</div></header>
<nav class="console-nav" aria-label="상점관리자 메뉴"><ul>
${items.map((n) => html`<li><a href="${n.href}"${n.key === page.active ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
</ul></nav>
`;
  const notice = page.notice ? html`<p class="ok-note" role="status">${page.notice}</p>` : '';
  return layout(`${page.title} - Sunap 상점관리자`, html`${notice}${page.body}`, { header, wide: true });
}

/** A page for someone not signed in (sign-in, invite): the narrow column, no navigation. */
export function publicPage(title: string, body: SafeHtml): string {
  return layout(`${title} - Sunap 상점관리자`, html`<header class="merchant"><p class="store">Sunap 상점관리자</p></header>${body}`);
}

/** A problem shown inside the console (403, 404, 409...): what happened and the way back. */
export function problemBody(title: string, message: string, back: { href: string; label: string } = { href: '/console', label: '개요로 돌아가기' }): SafeHtml {
  return html`<h1>${title}</h1><section class="card" aria-label="안내"><p>${message}</p><p><a href="${back.href}">${back.label}</a></p></section>`;
}

/** A table that may scroll sideways on a phone: a labelled, focusable region (keyboard users can scroll it). */
export function tableRegion(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-wrap" role="region" aria-label="${label} 표" tabindex="0">${table}</div>`;
}
