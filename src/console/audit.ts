import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { PaymentListener } from '../gateway/index.js';
import type { Clock } from '../platform/clock.js';
import * as repo from './repository.js';
import type { AuditRow } from './repository.js';
import type { ConsoleUser } from './sessions.js';

/**
 * Every console action on record (docs/console.md, "Audit log"): who (the member's email, kept
 * as text so it outlives the member), what, on which object, when and from which address.
 * The owner reads it under Settings.
 */
export const AUDIT_ACTIONS = {
  'session.sign_in': '로그인',
  'session.sign_out': '로그아웃',
  'session.revoke': '세션 종료',
  'session.revoke_all': '모든 기기에서 로그아웃',
  'account.password': '비밀번호 변경',
  'payment.cancel': '결제 취소',
  'payment.delete': '결제 요청 삭제',
  'payment.export': '결제 내역 내보내기',
  'invoice.create': '청구서 발송',
  'invoice.resend': '청구서 재발송',
  'invoice.cancel': '청구 취소',
  'invoice.delete': '청구서 삭제',
  'invoice.export': '청구서 내보내기',
  'template.create': '템플릿 만들기',
  'template.update': '템플릿 수정',
  'template.delete': '템플릿 삭제',
  'points.recharge': '포인트 충전',
  'store.update': '상점 정보 수정',
  'store.processor': '결제 설정 변경',
  'store.processor_reset': '결제 설정 초기화',
  'team.invite': '멤버 초대',
  'team.invite_revoke': '초대 취소',
  'team.join': '초대 수락',
  'team.role': '역할 변경',
  'team.remove': '팀에서 빼기',
  'team.password_reset_link': '비밀번호 재설정 링크 만들기',
  'team.sign_out': '멤버를 모든 기기에서 로그아웃',
  'account.password_reset': '재설정 링크로 비밀번호 변경',
  'operator.password_reset': '운영자의 비밀번호 재설정',
  'delivery.redeliver': '콜백·웹훅 다시 보내기',
  'delivery.recover': '실패한 전송 복구',
  'endpoint.create': '웹훅 엔드포인트 등록',
  'endpoint.rotate': '웹훅 시크릿 교체',
  'endpoint.enable': '웹훅 엔드포인트 켜기',
  'endpoint.disable': '웹훅 엔드포인트 끄기',
  'endpoint.test': '웹훅 테스트 이벤트',
  'payment.late_refund': '늦게 확인된 승인 자동 환불',
  'payment.void_pending': '맞지 않는 결제의 자동 취소 실패, 재시도',
  'payment.void_done': '맞지 않는 결제 재시도로 자동 취소',
  'payment.void_failed': '맞지 않는 결제 자동 취소 포기, 직접 취소 필요',
  // Billing that runs itself (issue 30).
  'class.create': '반 만들기',
  'class.update': '반 수정',
  'class.archive': '반 보관',
  'class.unarchive': '반 보관 해제',
  'class.members': '반 인원 변경',
  'class.remind': '미결제 안내 보내기',
  'class.export_unpaid': '미결제 내보내기',
  'schedule.create': '예약 발송 만들기',
  'schedule.pause': '예약 발송 일시 정지',
  'schedule.resume': '예약 발송 다시 시작',
  // Written by the service itself (actor "system"): a run that found too few points.
  'schedule.points_short': '예약 발송 포인트 부족',
} as const;

/** The actor of what the service did by itself (no member did it). */
export const SERVICE_ACTOR = 'Sunap (자동)';
export type AuditAction = keyof typeof AUDIT_ACTIONS;

/** The actor of what the operator did with the CLI. */
export const OPERATOR_ACTOR = '운영자 (sunap CLI)';

export class AuditLog {
  constructor(private readonly db: Kysely<Database>, private readonly clock: Clock) {}

  async record(user: Pick<ConsoleUser, 'member' | 'tenant'>, ip: string, action: AuditAction, target: string | null = null, detail: string | null = null): Promise<void> {
    await this.recordIn(this.db, user, ip, action, target, detail);
  }

  /** A row of what the operator did from the CLI (no member did it): actor `OPERATOR_ACTOR`, address `cli`. */
  async recordOperator(tenantId: string, action: AuditAction, target: string | null = null, detail: string | null = null): Promise<void> {
    await repo.insertAudit(this.db, { tenant_id: tenantId, actor_id: null, actor_email: OPERATOR_ACTOR, action, target, detail, ip: 'cli', created_at: this.clock.nowMs() });
  }

  /** The same row, written in the caller's transaction: it commits (or not) with the change it records. */
  async recordIn(db: repo.Db, user: Pick<ConsoleUser, 'member' | 'tenant'>, ip: string, action: AuditAction, target: string | null = null, detail: string | null = null): Promise<void> {
    await repo.insertAudit(db, {
      tenant_id: user.tenant.id, actor_id: user.member.id, actor_email: user.member.email, action, target: target?.slice(0, 200) ?? null,
      detail: detail?.slice(0, 500) ?? null, ip: ip.slice(0, 64), created_at: this.clock.nowMs(),
    });
  }

  /**
   * What the service does by itself that a team must see, written in the change's own
   * transaction: a charge the processor booked late, refunded because another attempt had paid
   * the payment (src/gateway/late-charge.ts).
   */
  listener(): PaymentListener {
    return {
      onLateChargeRefunded: async (trx, payment, refund) => {
        const detail = `승인번호 ${refund.approvalNumber}, ${refund.amount.toLocaleString('ko-KR')}원: 다른 시도로 이미 결제된 결제에 결제사가 늦게 기록한 승인이라 자동 환불했습니다 (시도 ${refund.attemptId})`;
        for (const tenantId of await repo.tenantsOfStore(trx, payment.store_code)) {
          await repo.insertAudit(trx, {
            tenant_id: tenantId, actor_id: null, actor_email: SERVICE_ACTOR, action: 'payment.late_refund', target: payment.trans_seqno,
            detail: detail.slice(0, 500), ip: '', created_at: this.clock.nowMs(),
          });
        }
      },
      // The automatic void of a window order the payment cannot take, refused or lost, retried, given up (src/gateway/order-void.ts).
      onOrderVoid: async (trx, payment, e) => {
        const action = e.outcome === 'PENDING' ? 'payment.void_pending' : e.outcome === 'VOIDED' ? 'payment.void_done' : 'payment.void_failed';
        const detail = `${e.amount.toLocaleString('ko-KR')}원, 결제창 주문 ${e.attemptId}: ${e.detail}`;
        for (const tenantId of await repo.tenantsOfStore(trx, payment.store_code)) {
          await repo.insertAudit(trx, {
            tenant_id: tenantId, actor_id: null, actor_email: SERVICE_ACTOR, action, target: payment.trans_seqno,
            detail: detail.slice(0, 500), ip: '', created_at: this.clock.nowMs(),
          });
        }
      },
    };
  }

  async page(tenantId: string, beforeId: number | undefined, size: number): Promise<{ rows: AuditRow[]; next: number | null }> {
    const rows = await repo.auditPage(this.db, tenantId, beforeId, size + 1);
    const more = rows.length > size;
    const page = more ? rows.slice(0, size) : rows;
    return { rows: page, next: more ? Number(page[page.length - 1]!.id) : null };
  }
}
