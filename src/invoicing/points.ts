import type { Insertable, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { SendTable } from '../db/schema.js';
import type { MessageChannel } from '../ports/messaging.js';
import { newId } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import type { SendChannel } from './invoice-state.js';
import * as repo from './repository.js';

/**
 * Send points (docs/reference.md, "Invoices"): where they are reserved and where they are
 * refunded. A wallet per account; every movement is a ledger row written in the same
 * transaction as the balance change, so the balance always equals the ledger's sum, and the
 * balance never goes below 0 (a compare-and-set, and a CHECK in the database).
 */
export type Costs = { ALIMTALK: number; SMS: number };

/** Points reserved per recipient: the configured channel's price; with fallback, the SMS price. */
export function reserveCost(channel: SendChannel, costs: Costs): number {
  return channel === 'ALIMTALK' ? costs.ALIMTALK : costs.SMS;
}

/** What an accepted message costs in the end: the price of the channel that carried it, never more than was reserved. */
export function settledCost(reserved: number, carriedBy: MessageChannel | null, costs: Costs): number {
  return carriedBy ? Math.min(reserved, costs[carriedBy]) : 0;
}

/**
 * Takes the points of every send at once, or none (-21): one debit for the total, one RESERVE
 * ledger row per send (ref = send id, so a send reserves once), in the caller's transaction.
 * The rows share one `batch` id: the console shows them as one line per send (a class of 30 is
 * "청구서 30건 발송"), expandable to its rows.
 */
export async function reserve(trx: Transaction<Database>, accountId: string, sends: Insertable<SendTable>[], now: number): Promise<void> {
  const total = sends.reduce((s, x) => s + Number(x.cost_reserved), 0);
  if (!(await repo.debit(trx, accountId, total, now))) {
    const have = await repo.balance(trx, accountId);
    throw new AppError('INSUFFICIENT_POINTS', `points: insufficient send points to send the invoice (needs ${total}, balance ${have})`);
  }
  const batch = newId();
  await repo.addLedger(trx, sends.map((s) => ({
    account_id: accountId, delta: -Number(s.cost_reserved), kind: 'RESERVE' as const, ref: s.id, memo: s.send_type, created_at: now, batch,
  })));
}

/**
 * Gives back the part of a send's reservation it did not use, once per send however often it
 * is settled: the REFUND ledger row is unique per (account, kind, ref), and the balance moves
 * only when that row was written.
 */
export async function refund(trx: Transaction<Database>, send: { id: string; account_id: string }, amount: number, memo: string, now: number): Promise<void> {
  if (amount <= 0) return;
  const written = await repo.addLedger(trx, [{ account_id: send.account_id, delta: amount, kind: 'REFUND', ref: send.id, memo, created_at: now }]);
  if (written === 1) await repo.credit(trx, send.account_id, amount, now);
}

/** Points the operator grants (`sunap points grant`): a GRANT ledger row and the balance, together. */
export async function grant(trx: Transaction<Database>, accountId: string, amount: number, memo: string | null, now: number): Promise<number> {
  await repo.addLedger(trx, [{ account_id: accountId, delta: amount, kind: 'GRANT', ref: null, memo, created_at: now }]);
  await repo.credit(trx, accountId, amount, now);
  return repo.balance(trx, accountId);
}

/**
 * Points bought in the console: a RECHARGE ledger row (ref = the recharge id, unique through
 * ledger_once) and the balance, together; a second credit of the same recharge writes nothing.
 */
export async function creditRecharge(trx: Transaction<Database>, accountId: string, points: number, rechargeId: string, memo: string, now: number): Promise<void> {
  const written = await repo.addLedger(trx, [{ account_id: accountId, delta: points, kind: 'RECHARGE', ref: rechargeId, memo, created_at: now }]);
  if (written === 1) await repo.credit(trx, accountId, points, now);
}
