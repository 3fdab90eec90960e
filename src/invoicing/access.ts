import type { FastifyInstance } from 'fastify';
import type { AccountRole } from './invoice-state.js';
import type { Account } from './repository.js';

/**
 * Who may do what (docs/console.md, "Roles"): the one table of a store's actions and the least
 * role each needs. Every console route names its action in src/console/access.ts and every
 * /app/v1 route in src/invoicing/routes.ts (API_ROUTES); their hooks read the role here, never
 * restate it, and a route without an entry is refused (and the app does not start).
 *
 * Levels, lowest first: `public` (no sign-in: the sign-in, invite and reset pages), `viewer`
 * (any member of the team: reads), `manager` (payments, invoices, points, classes, webhooks),
 * `owner` (the team and the store's settings). Data rules live here too: an action such as
 * `payments.export.phones` is not a route but decides what a route shows (a viewer's export has
 * masked phone numbers).
 */
export type AccessLevel = 'public' | AccountRole;

export const ACCESS_RANK: Record<AccessLevel, number> = { public: -1, viewer: 0, manager: 1, owner: 2 };

interface Rule {
  role: AccessLevel;
  /** What it lets a person do, as the role table of docs/console.md says it (Korean, English). */
  ko: string;
  en: string;
}

export const ACCESS = {
  // Anyone, before signing in.
  'session.signIn': { role: 'public', ko: '로그인', en: 'Sign in' },
  'session.refresh': { role: 'public', ko: 'API 토큰 갱신', en: 'Refresh an API token' },
  'invite.accept': { role: 'public', ko: '초대 수락', en: 'Accept an invite' },
  'password.reset': { role: 'public', ko: '비밀번호 재설정 링크 사용', en: 'Use a password reset link' },
  'invoice.publicLookup': { role: 'public', ko: '청구서 번호로 공개 조회 (고객용, 연락처 가려짐)', en: 'Look an invoice up by its number (the customer\'s, contact data masked)' },

  // Any member (viewer and up): reading, and one's own account.
  'session.signOut': { role: 'viewer', ko: '로그아웃', en: 'Sign out' },
  'account.manage': { role: 'viewer', ko: '내 계정: 비밀번호 변경, 내 기기 로그아웃', en: 'Own account: change password, sign own devices out' },
  'overview.view': { role: 'viewer', ko: '개요 보기', en: 'See the overview' },
  'payments.view': { role: 'viewer', ko: '결제 목록·상세 보기', en: 'See payments' },
  'payments.export': { role: 'viewer', ko: '결제 내보내기 (CSV)', en: 'Export payments (CSV)' },
  'invoices.view': { role: 'viewer', ko: '청구서 목록·상세 보기, 발송 상태 새로 고침', en: 'See invoices, refresh their delivery status' },
  'invoices.export': { role: 'viewer', ko: '청구서 내보내기 (CSV)', en: 'Export invoices (CSV)' },
  'templates.view': { role: 'viewer', ko: '템플릿 목록 보기', en: 'See templates' },
  'classes.view': { role: 'viewer', ko: '반·월별 수납 보기', en: 'See classes and their months' },
  'classes.export': { role: 'viewer', ko: '미납자 내보내기 (CSV)', en: 'Export a month\'s unpaid (CSV)' },
  'schedules.view': { role: 'viewer', ko: '예약 발송 보기', en: 'See schedules' },
  'points.view': { role: 'viewer', ko: '포인트 잔액·내역 보기', en: 'See points and the ledger' },
  'deliveries.view': { role: 'viewer', ko: '콜백·웹훅 전송 기록과 엔드포인트 보기', en: 'See webhook deliveries and endpoints' },

  // Manager and owner: what changes money, messages and the store's integrations.
  'payment.cancel': { role: 'manager', ko: '결제 취소', en: 'Cancel a payment' },
  'payment.delete': { role: 'manager', ko: '미결제 건 삭제', en: 'Delete an unpaid payment' },
  'invoice.send': { role: 'manager', ko: '청구서 보내기 (한 명, 여러 명, CSV)', en: 'Send invoices (one, many, CSV)' },
  'invoice.resend': { role: 'manager', ko: '청구서 다시 보내기', en: 'Resend an invoice' },
  'invoice.cancel': { role: 'manager', ko: '결제된 청구서 취소', en: 'Cancel a paid invoice' },
  'invoice.delete': { role: 'manager', ko: '청구서 삭제', en: 'Delete an invoice' },
  'template.edit': { role: 'manager', ko: '템플릿 만들기·수정·삭제', en: 'Create, edit, delete templates' },
  'class.edit': { role: 'manager', ko: '반 만들기·수정·보관, 학생 추가·삭제·가져오기', en: 'Create, edit, archive classes; add, remove, import members' },
  'class.remind': { role: 'manager', ko: '미납자에게 다시 알림', en: 'Remind a month\'s unpaid' },
  'schedule.edit': { role: 'manager', ko: '예약 발송 만들기·일시 정지·재개', en: 'Create, pause, resume schedules' },
  'points.recharge': { role: 'manager', ko: '포인트 충전', en: 'Recharge points' },
  'delivery.redeliver': { role: 'manager', ko: '웹훅 다시 보내기·복구', en: 'Redeliver and recover webhooks' },
  'endpoint.edit': { role: 'manager', ko: '웹훅 엔드포인트 추가·변경·삭제·시크릿 교체·테스트', en: 'Add, change, delete, rotate, test webhook endpoints' },
  // Data rules: not routes; they decide what an export carries.
  'payments.export.phones': { role: 'manager', ko: '결제 내보내기에 고객 전화번호 전체 (조회 전용은 가려짐)', en: 'Full customer phone numbers in the payments export (masked for viewers)' },
  'invoices.export.phones': { role: 'manager', ko: '청구서 내보내기에 전화번호 전체 (조회 전용은 가려짐)', en: 'Full phone numbers in the invoices export (masked for viewers)' },
  'classes.export.phones': { role: 'manager', ko: '미납자 내보내기에 전화번호 전체 (조회 전용은 가려짐)', en: 'Full phone numbers in the unpaid export (masked for viewers)' },

  // Owner only: the team and the store.
  'team.view': { role: 'owner', ko: '팀 보기', en: 'See the team' },
  'team.invite': { role: 'owner', ko: '멤버 초대·초대 취소', en: 'Invite members, revoke invites' },
  'team.role': { role: 'owner', ko: '멤버 역할 변경', en: 'Change a member\'s role' },
  'team.remove': { role: 'owner', ko: '멤버를 팀에서 빼기', en: 'Remove a member from the team' },
  'team.reset': { role: 'owner', ko: '멤버 비밀번호 재설정 링크, 강제 로그아웃', en: 'Make a member\'s reset link, sign a member out' },
  'settings.view': { role: 'owner', ko: '설정·감사 기록 보기', en: 'See settings and the audit log' },
  'settings.store': { role: 'owner', ko: '상점 정보 변경', en: 'Change the store\'s details' },
  'settings.processor': { role: 'owner', ko: '결제사·결제 수단·키 설정', en: 'Set the processor, methods and keys' },
} as const satisfies Record<string, Rule>;

export type Action = keyof typeof ACCESS;

export function isAction(v: unknown): v is Action {
  return typeof v === 'string' && Object.hasOwn(ACCESS, v);
}

/** The least level an action needs. */
export function roleFor(action: Action): AccessLevel {
  return ACCESS[action].role;
}

/** True when a member (or nobody, for a public action) may do the action. */
export function can(member: Pick<Account, 'role'> | null | undefined, action: Action): boolean {
  const needed = ACCESS_RANK[ACCESS[action].role];
  return needed === ACCESS_RANK.public || (!!member && ACCESS_RANK[member.role] >= needed);
}

/**
 * Every /app/v1 route and its action, keyed as Fastify registers it: the invoicing API reads the
 * same table as the console. A token's member needs the action's role (a viewer reads; 403 / -4
 * otherwise); the app does not start while an /app/v1 route has no entry.
 */
export const API_ROUTES: Record<string, Action> = {
  'POST /app/v1/auth/login': 'session.signIn',
  'POST /app/v1/auth/refresh': 'session.refresh',
  'POST /app/v1/auth/logout': 'session.signOut',
  'GET /app/v1/sales/public/bill/:transSeqNo': 'invoice.publicLookup',

  'GET /app/v1/points/me': 'points.view',
  'GET /app/v1/sales/bill': 'invoices.view',
  'GET /app/v1/sales/bill/:id': 'invoices.view',
  'GET /app/v1/sales/summary': 'invoices.view',
  'POST /app/v1/sales/bill/:id/refresh-status': 'invoices.view',
  'POST /app/v1/sales/bill': 'invoice.send',
  'POST /app/v1/sales/bill/resend': 'invoice.resend',
  'PUT /app/v1/sales/bill/:id': 'invoice.cancel',
  'DELETE /app/v1/sales/bill/:id': 'invoice.delete',

  'GET /app/v1/classes': 'classes.view',
  'GET /app/v1/classes/:id': 'classes.view',
  'GET /app/v1/classes/:id/month': 'classes.view',
  'POST /app/v1/classes': 'class.edit',
  'PUT /app/v1/classes/:id': 'class.edit',
  'POST /app/v1/classes/:id/archive': 'class.edit',
  'POST /app/v1/classes/:id/unarchive': 'class.edit',
  'PUT /app/v1/classes/:id/members': 'class.edit',
  'POST /app/v1/classes/:id/members': 'class.edit',
  'DELETE /app/v1/classes/:id/members/:memberId': 'class.edit',
  'POST /app/v1/classes/:id/remind': 'class.remind',

  'GET /app/v1/schedules': 'schedules.view',
  'GET /app/v1/schedules/:id': 'schedules.view',
  'GET /app/v1/schedules/:id/runs/:runId': 'schedules.view',
  'POST /app/v1/schedules': 'schedule.edit',
  'POST /app/v1/schedules/:id/pause': 'schedule.edit',
  'POST /app/v1/schedules/:id/resume': 'schedule.edit',

  'GET /app/v1/deliveries': 'deliveries.view',
  'GET /app/v1/deliveries/:id': 'deliveries.view',
  'POST /app/v1/deliveries/:id/redeliver': 'delivery.redeliver',
  'POST /app/v1/deliveries/recover': 'delivery.redeliver',
  'GET /app/v1/webhook-endpoints': 'deliveries.view',
  'GET /app/v1/webhook-endpoints/:id': 'deliveries.view',
  'POST /app/v1/webhook-endpoints': 'endpoint.edit',
  'PATCH /app/v1/webhook-endpoints/:id': 'endpoint.edit',
  'DELETE /app/v1/webhook-endpoints/:id': 'endpoint.edit',
  'POST /app/v1/webhook-endpoints/:id/rotate-secret': 'endpoint.edit',
  'POST /app/v1/webhook-endpoints/:id/test': 'endpoint.edit',
};

/** What a route is, set on its config when it is registered (requireEntries): the request checks read it. */
export interface RouteAccess {
  action: Action;
  role: AccessLevel;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's action and least role, from CONSOLE_ROUTES or API_ROUTES (never written by a route file). */
    access?: RouteAccess;
  }
}

/** A table's key of a route: HEAD is served by its GET. */
export function routeKey(method: string, url: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${url}`;
}

/**
 * Installs the registration check on `app` before its routes: each route it covers (`covers`,
 * by URL) must have an entry in `table`, or the route's registration throws, so `app.ready()`
 * (and `sunap serve`) fails naming it; an entry that names no route fails `ready()` too. The
 * entry is copied onto the route's config, which the request checks read.
 */
export function requireEntries(app: FastifyInstance, table: Record<string, Action>, o: { what: string; tableName: string; covers?: (url: string) => boolean }): void {
  const seen = new Set<string>();
  app.addHook('onRoute', (opts) => {
    const url = opts.url ?? '';
    if (o.covers && !o.covers(url)) return;
    for (const method of [opts.method].flat()) {
      const key = routeKey(method, url);
      const action = table[key];
      if (!action) throw new Error(`${o.what} route ${key} has no entry in ${o.tableName}: name its action there (src/console/README.md, "Adding a page")`);
      seen.add(key);
      opts.config = { ...opts.config, access: { action, role: ACCESS[action].role } };
    }
  });
  app.addHook('onReady', async () => {
    const stale = Object.keys(table).filter((k) => !seen.has(k));
    if (stale.length) throw new Error(`${o.tableName} names routes that do not exist: ${stale.join(', ')}`);
  });
}
