import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { GatewayService, Payment, PaymentListener } from '../gateway/index.js';
import type { Clock } from '../platform/clock.js';
import { newId } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import * as team from './console-repository.js';
import type { Recharge } from './console-repository.js';
import { newTransSeqNo } from './creation.js';
import { creditRecharge } from './points.js';
import type { Account } from './repository.js';

/** Points a recharge may buy at once; one point costs one won. */
export const RECHARGE_LIMITS = { min: 1_000, max: 1_000_000 };
export const WON_PER_POINT = 1;

export interface RechargeDeps {
  gateway: GatewayService;
  clock: Clock;
  log: Logger;
  /** The store whose card payments buy points (SUNAP_RECHARGE_STORE_CODE); null: none named. */
  storeCode: string | null;
  /** Sandbox without a recharge store: points are credited at once. */
  sandbox: boolean;
  /** Where the payment page sends the merchant back (the console's points page). */
  returnUrl: (rechargeId: string) => string;
}

export type RechargeStart =
  | { kind: 'CREDITED'; recharge: Recharge }
  | { kind: 'PAY'; recharge: Recharge; paymentUrl: string };

/**
 * Points recharges (docs/console.md, "Points"). With a recharge store named, the merchant pays
 * by card on Sunap's own payment page (a gateway payment in that store) and the points are
 * credited once, by the payment's approval, in the approval's transaction: never by a callback
 * or the browser coming back. In the sandbox without one, they are credited at once.
 */
export class RechargeService {
  constructor(private readonly db: Kysely<Database>, private readonly deps: RechargeDeps) {}

  /** Whether recharging is possible here, and how. */
  mode(): 'card' | 'instant' | 'unavailable' {
    if (this.deps.storeCode) return 'card';
    return this.deps.sandbox ? 'instant' : 'unavailable';
  }

  async start(tenant: Account, points: number): Promise<RechargeStart> {
    if (!Number.isSafeInteger(points) || points < RECHARGE_LIMITS.min || points > RECHARGE_LIMITS.max) {
      throw new AppError('VALIDATION', `points: must be a whole number from ${RECHARGE_LIMITS.min} to ${RECHARGE_LIMITS.max}`);
    }
    const now = this.deps.clock.nowMs();
    const id = newId();
    const mode = this.mode();
    if (mode === 'unavailable') throw new AppError('STATE', 'points: recharging is not set up; the operator names the store that sells points (SUNAP_RECHARGE_STORE_CODE)');
    if (mode === 'instant') {
      const recharge: Recharge = { id, account_id: tenant.id, points, amount: 0, store_code: null, payment_id: null, status: 'CREDITED', created_at: now, credited_at: now };
      await this.db.transaction().execute(async (trx) => {
        await team.insertRecharge(trx, recharge);
        await creditRecharge(trx, tenant.id, points, id, '샌드박스 충전', now);
      });
      return { kind: 'CREDITED', recharge };
    }
    const store = await this.deps.gateway.findStore(this.deps.storeCode!);
    if (!store) throw new Error(`SUNAP_RECHARGE_STORE_CODE names no store (${this.deps.storeCode})`);
    const amount = points * WON_PER_POINT;
    const merchant = await this.deps.gateway.findStore(tenant.store_code);
    const recharge = await this.db.transaction().execute(async (trx) => {
      const payment = await this.deps.gateway.createPayment(store, {
        transSeqNo: `RCH${newTransSeqNo().slice(3)}`, amount, mobileNo: (merchant?.tel ?? '').replace(/\D/g, ''),
        payUserName: merchant?.name ?? tenant.email, requestReason: `발송 포인트 ${points.toLocaleString('ko-KR')}P 충전`,
        returnUrl: this.deps.returnUrl(id), returnUrlIsOurs: true, returnDisplayYn: 'Y', orderType: 'SHOP',
      }, trx);
      const row: Recharge = { id, account_id: tenant.id, points, amount, store_code: store.code, payment_id: payment.id, status: 'PENDING', created_at: now, credited_at: null };
      await team.insertRecharge(trx, row);
      return row;
    });
    return { kind: 'PAY', recharge, paymentUrl: this.deps.gateway.redirectUrl({ id: recharge.payment_id! }) };
  }

  async find(tenantId: string, id: string): Promise<Recharge | undefined> {
    return team.findRecharge(this.db, tenantId, id);
  }

  recent(tenantId: string, limit = 10): Promise<Recharge[]> {
    return team.recentRecharges(this.db, tenantId, limit);
  }

  /** Credits a recharge when its payment is approved, in the approval's transaction, once. */
  listener(): PaymentListener {
    return {
      onApproved: async (trx: Transaction<Database>, payment: Payment) => {
        const r = await team.findRechargeByPayment(trx, payment.id, payment.store_code);
        if (!r) return;
        const now = payment.approval_at ?? this.deps.clock.nowMs();
        if (!(await team.markCredited(trx, r.id, now))) return;
        await creditRecharge(trx, r.account_id, Number(r.points), r.id, `카드 충전 (승인번호 ${payment.approval_number ?? ''})`, now);
        this.deps.log.info({ recharge: r.id, points: Number(r.points) }, 'points recharge credited');
      },
    };
  }
}
