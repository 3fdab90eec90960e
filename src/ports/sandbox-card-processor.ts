import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { OutcomeUnknown, type ApproveOutcome, type CancelOutcome, type CardProcessor } from './card-processor.js';
import { recallCharge, rememberCharge } from './sandbox-repository.js';

/** The sandbox cards (docs/reference.md, "Sandbox"). Any other number is declined: no real card is ever charged. */
export const SANDBOX_CARDS: Record<string, { outcome: 'APPROVED' | 'DECLINED' | 'ERROR'; issuer?: string; message?: string; cancelFails?: boolean; lostAnswer?: boolean }> = {
  '4242424242424242': { outcome: 'APPROVED', issuer: '신한카드' },
  '5555555555554444': { outcome: 'APPROVED', issuer: 'KB국민카드' },
  '4000000000000002': { outcome: 'DECLINED', message: '카드사에서 승인을 거절했습니다' },
  '4000000000009995': { outcome: 'DECLINED', message: '잔액이 부족합니다' },
  '4000000000000119': { outcome: 'ERROR', message: '카드사 처리 중 오류가 발생했습니다' },
  '4000000000000259': { outcome: 'APPROVED', issuer: '신한카드', cancelFails: true },
  /** Approved, but the answer is lost on its way back: the attempt stays open until a look-up settles it. */
  '4000000000000127': { outcome: 'APPROVED', issuer: '신한카드', lostAnswer: true },
};

/**
 * Stands in for the card network. It keeps its own record of answers by idempotency key, as a
 * processor would (in the database when given one, so it outlives a crash): a repeated
 * approve returns the first answer instead of charging again.
 */
export class SandboxCardProcessor implements CardProcessor {
  private readonly memory = new Map<string, ApproveOutcome>();
  constructor(private readonly db?: Kysely<Database>) {}

  private async recall(key: string): Promise<ApproveOutcome | null> {
    if (!this.db) return this.memory.get(key) ?? null;
    const outcome = await recallCharge(this.db, key);
    return outcome ? (JSON.parse(outcome) as ApproveOutcome) : null;
  }

  private async remember(key: string, outcome: ApproveOutcome): Promise<ApproveOutcome> {
    if (!this.db) {
      this.memory.set(key, outcome);
      return outcome;
    }
    await rememberCharge(this.db, key, JSON.stringify(outcome));
    return (await this.recall(key))!;
  }

  async approve(req: Parameters<CardProcessor['approve']>[0]): Promise<ApproveOutcome> {
    const seen = await this.recall(req.idempotencyKey);
    if (seen) return seen;
    const card = SANDBOX_CARDS[req.card.number];
    if (!card) return this.remember(req.idempotencyKey, { outcome: 'DECLINED', message: '샌드박스에서는 테스트 카드만 사용할 수 있습니다' });
    if (card.outcome === 'ERROR') return { outcome: 'ERROR', message: card.message! };
    if (card.outcome === 'DECLINED') return this.remember(req.idempotencyKey, { outcome: 'DECLINED', message: card.message! });
    const approvalNumber = String(randomInt(10_000_000, 100_000_000));
    const approved = await this.remember(req.idempotencyKey, { outcome: 'APPROVED', approvalNumber, issuerName: card.issuer!, accepterName: card.issuer! });
    if (card.lostAnswer) throw new OutcomeUnknown('sandbox: the approval was made and its answer lost (test card 4000 0000 0000 0127)');
    return approved;
  }

  async lookup(idempotencyKey: string): Promise<ApproveOutcome | null> {
    return this.recall(idempotencyKey);
  }

  /**
   * Cancels (and voids) are kept under their idempotency key too, so a test can tell from the
   * network's records that a refund happened once and that no committed approval was voided.
   */
  async cancel(req: Parameters<CardProcessor['cancel']>[0]): Promise<CancelOutcome> {
    const number = Object.keys(SANDBOX_CARDS).find((n) => n.startsWith(req.cardBin) && n.endsWith(req.cardLast4));
    if (number && SANDBOX_CARDS[number]!.cancelFails) return { outcome: 'FAILED', message: '카드사 취소 처리에 실패했습니다' };
    if (this.db) await rememberCharge(this.db, req.idempotencyKey, JSON.stringify({ outcome: 'CANCELED', approvalNumber: req.approvalNumber, amount: req.amount }));
    return { outcome: 'CANCELED' };
  }
}
