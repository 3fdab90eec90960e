import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { PayMethod } from './checkout.js';

/**
 * The SQL of the sandbox's window orders (`sandbox_checkouts`), kept as a processor keeps its
 * own: what the window was opened with, what the customer chose in it (never a card number),
 * and where the order stands. Every change is a compare-and-set on the state, so a repeated
 * confirm or a deposit racing an expiry acts once.
 */
type Db = Kysely<Database>;

/**
 * OPEN: the window is shown. AUTHORIZED: the customer approved in the window; the server's
 * confirm takes the money. DONE: paid. WAITING_FOR_DEPOSIT: a virtual account is issued.
 * CANCELED, ABORTED (refused or window closed), CLOSED (an account closed or expired unpaid).
 */
export type SandboxOrderState = 'OPEN' | 'AUTHORIZED' | 'DONE' | 'WAITING_FOR_DEPOSIT' | 'CANCELED' | 'ABORTED' | 'CLOSED';

export interface SandboxChoice {
  /** A test card's key (WINDOW_CARDS in sandbox-checkout.ts). */
  card?: string;
  installment?: string;
  easyPay?: string;
  /** An easy pay paid by the linked card, or from its balance. */
  funding?: 'card' | 'balance';
  /** A transfer's or a virtual account's bank (standard code). */
  bankCode?: string;
}

export interface SandboxDetail {
  orderName: string;
  storeName: string;
  customerName: string;
  successUrl: string;
  failUrl: string;
  accountHours: number;
  choice?: SandboxChoice;
  approvalNumber?: string;
  /** When the money moved (the deposit's time for an account). */
  approvedAt?: number;
  account?: { bankCode: string; number: string; holder: string; dueAt: number };
  secret?: string;
  failure?: { code: string; message: string };
  canceledAt?: number;
  /** How many refunds the network made (a test reads 1 after any number of cancels). */
  refunds?: number;
  /** The bank a paid account was refunded to (the account number itself is not kept). */
  refundBank?: string;
}

export interface SandboxOrder {
  orderId: string;
  paymentKey: string;
  state: SandboxOrderState;
  method: PayMethod;
  amount: number;
  detail: SandboxDetail;
  createdAt: number;
}

export async function insertOrder(db: Db, o: { orderId: string; paymentKey: string; method: PayMethod; amount: number; detail: SandboxDetail; now: number }): Promise<void> {
  await db.insertInto('sandbox_checkouts').values({
    order_id: o.orderId, payment_key: o.paymentKey, state: 'OPEN', method: o.method, amount: o.amount, detail: JSON.stringify(o.detail),
    created_at: o.now, updated_at: o.now,
  }).onConflict((oc) => oc.column('order_id').doNothing()).execute();
}

export async function findOrder(db: Db, orderId: string): Promise<SandboxOrder | undefined> {
  if (orderId.length > 64) return undefined;
  const r = await db.selectFrom('sandbox_checkouts').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  return r && {
    orderId: r.order_id, paymentKey: r.payment_key, state: r.state as SandboxOrderState, method: r.method, amount: Number(r.amount),
    detail: JSON.parse(r.detail) as SandboxDetail, createdAt: Number(r.created_at),
  };
}

/** Compare-and-set of the order's state (and its detail): false when it was not in `from`. */
export async function moveOrder(db: Db, orderId: string, from: readonly SandboxOrderState[], to: SandboxOrderState, detail: SandboxDetail, now: number): Promise<boolean> {
  const r = await db.updateTable('sandbox_checkouts').set({ state: to, detail: JSON.stringify(detail), updated_at: now })
    .where('order_id', '=', orderId).where('state', 'in', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
