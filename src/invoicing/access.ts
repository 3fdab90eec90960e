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
  'schedules.view': { role: 'viewer', ko: '자동 청구 일정 보기', en: 'See schedules' },
  'points.view': { role: 'viewer', ko: '포인트 잔액·내역 보기', en: 'See points and the ledger' },
  'deliveries.view': { role: 'viewer', ko: '웹훅 전송 기록·엔드포인트 보기', en: 'See webhook deliveries and endpoints' },

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
  'schedule.edit': { role: 'manager', ko: '자동 청구 만들기·일시 정지·재개', en: 'Create, pause, resume schedules' },
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
  'team.remove': { role: 'owner', ko: '멤버 삭제', en: 'Remove a member' },
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
