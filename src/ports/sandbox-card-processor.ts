import { randomInt } from 'node:crypto';
import type { ApproveOutcome, CancelOutcome, CardProcessor } from './card-processor.js';

/** The sandbox cards of decisions §4. Any other number is declined: no real card is ever charged. */
export const SANDBOX_CARDS: Record<string, { outcome: 'APPROVED' | 'DECLINED' | 'ERROR'; issuer?: string; message?: string; cancelFails?: boolean }> = {
  '4242424242424242': { outcome: 'APPROVED', issuer: '신한카드' },
  '5555555555554444': { outcome: 'APPROVED', issuer: 'KB국민카드' },
  '4000000000000002': { outcome: 'DECLINED', message: '카드사에서 승인을 거절했습니다' },
  '4000000000009995': { outcome: 'DECLINED', message: '잔액이 부족합니다' },
  '4000000000000119': { outcome: 'ERROR', message: '카드사 처리 중 오류가 발생했습니다' },
  '4000000000000259': { outcome: 'APPROVED', issuer: '신한카드', cancelFails: true },
};

/**
 * Stands in for the card network. It keeps its own record of approvals by idempotency key,
 * as a processor would, so a repeated approve returns the first answer instead of charging again.
 */
export class SandboxCardProcessor implements CardProcessor {
  private readonly approvals = new Map<string, ApproveOutcome>();

  async approve(req: Parameters<CardProcessor['approve']>[0]): Promise<ApproveOutcome> {
    const seen = this.approvals.get(req.idempotencyKey);
    if (seen) return seen;
    const card = SANDBOX_CARDS[req.card.number];
    let result: ApproveOutcome;
    if (!card) result = { outcome: 'DECLINED', message: '샌드박스에서는 테스트 카드만 사용할 수 있습니다' };
    else if (card.outcome === 'APPROVED') {
      const approvalNumber = String(randomInt(10_000_000, 100_000_000));
      result = { outcome: 'APPROVED', approvalNumber, issuerName: card.issuer!, accepterName: card.issuer! };
    } else if (card.outcome === 'DECLINED') result = { outcome: 'DECLINED', message: card.message! };
    else result = { outcome: 'ERROR', message: card.message! };
    if (result.outcome !== 'ERROR') this.approvals.set(req.idempotencyKey, result);
    return result;
  }

  async cancel(req: Parameters<CardProcessor['cancel']>[0]): Promise<CancelOutcome> {
    const number = Object.keys(SANDBOX_CARDS).find((n) => n.startsWith(req.cardBin) && n.endsWith(req.cardLast4));
    if (number && SANDBOX_CARDS[number]!.cancelFails) return { outcome: 'FAILED', message: '카드사 취소 처리에 실패했습니다' };
    return { outcome: 'CANCELED' };
  }
}
