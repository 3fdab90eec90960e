import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import { deliveryByRef, ensureDelivery, type Delivery } from '../jobs/delivery-repository.js';
import { deliver } from '../jobs/outbound.js';
import type { HttpOut } from '../ports/http-out.js';
import type { Clock } from '../platform/clock.js';
import { kstCompact } from '../platform/kst.js';
import type { CallbackPayload } from './context.js';
import { findPaymentById, type Payment } from './repository.js';
import { cardPaid } from './views.js';

/**
 * The CONFIRM_URL callback (docs/reference.md, "The CONFIRM_URL callback and RETURN_URL"): attempts at once, then 10 s,
 * 1 min, 5 min and 30 min after each failure (5 in all); after the last the job is DEAD and
 * the merchant learns of the approval from searchPayment.
 */
export const CALLBACK_BACKOFF_SECONDS = [10, 60, 300, 1800] as const;

/**
 * The callback body: the approval's facts, with TEMP_VALUE echoed and the ORDER_TYPE branch;
 * txId is PLATFORM_CODE_STORE_CODE_TRANS_SEQNO, as the real service sends it; methodName is
 * searchPayment's METHOD_NAME, and cardCompany is "" and installment "00" when no card paid.
 */
export function callbackBody(p: Payment): Record<string, unknown> {
  return {
    RESULT_CODE: '0000',
    RESULT_MSG: '정상 승인되었습니다',
    TRANS_SEQNO: p.trans_seqno,
    MOBILE_NO: p.mobile_no,
    APPROVAL_AMOUNT: String(p.amount),
    TEMP_VALUE: p.temp_value ?? '',
    ORDER_TYPE: p.order_type,
    approvalNumber: p.approval_number ?? '',
    approvalDatetime: p.approval_at !== null ? kstCompact(p.approval_at) : '',
    cardCompany: cardPaid(p) ? p.issuer_name ?? '' : '',
    installment: cardPaid(p) ? p.installment_month ?? '00' : '00',
    payerName: p.pay_user_name,
    txId: `${p.platform_code}_${p.store_code}_${p.trans_seqno}`,
    methodName: p.method_name ?? '',
  };
}

export interface CallbackDeps {
  db: Kysely<Database>;
  http: HttpOut;
  clock: Clock;
}

const CALLBACK_HEADERS = { 'content-type': 'application/json' };

/** The callback's delivery: the request as it will be sent, in the caller's transaction; once per payment. */
function callbackDelivery(db: Kysely<Database> | Transaction<Database>, p: Payment & { confirm_url: string }, now: number): Promise<Delivery> {
  return ensureDelivery(db, {
    storeCode: p.store_code, kind: 'callback', number: p.trans_seqno, refId: p.id, transSeqNo: p.trans_seqno, url: p.confirm_url,
    headers: CALLBACK_HEADERS, body: JSON.stringify(callbackBody(p)), now,
  });
}

/** An approval's callback: its delivery and its job, in the approval's transaction. */
export async function recordCallback(trx: Transaction<Database>, p: Payment, now: number): Promise<void> {
  if (!p.confirm_url) return;
  await callbackDelivery(trx, { ...p, confirm_url: p.confirm_url }, now);
  await enqueue(trx, CALLBACK_JOB, { paymentId: p.id }, { runAt: now, uniqueKey: `callback:${p.id}`, now, storeCode: p.store_code });
}

/**
 * One attempt: the delivery's stored body POSTed to CONFIRM_URL, recorded, no redirects, the
 * outbound time limit. A scheduled job stops once its delivery is settled (a job may run twice
 * after a crash); a manual one (redeliver, recover) sends whatever the status.
 */
export const CALLBACK_JOB: JobDefinition<CallbackPayload, CallbackDeps> = defineJob({
  kind: 'gateway.callback',
  backoffSeconds: CALLBACK_BACKOFF_SECONDS,
  async run({ paymentId, manual }: CallbackPayload, deps: CallbackDeps, job) {
    const p = await findPaymentById(deps.db, paymentId);
    if (!p || !p.confirm_url) return;
    // A job written before deliveries existed makes its delivery on its first run.
    const d = (await deliveryByRef(deps.db, 'callback', p.id)) ?? (await callbackDelivery(deps.db, { ...p, confirm_url: p.confirm_url }, deps.clock.nowMs()));
    if (!manual && d.status !== 'pending') return;
    await deliver(deps.db, deps.http, {
      jobId: job.jobId, target: 'CALLBACK', refId: p.id, attemptNo: job.attempt, url: d.url,
      body: Buffer.from(d.body, 'utf8'), headers: CALLBACK_HEADERS, now: deps.clock.nowMs(),
      of: { deliveryId: d.id, trigger: manual && job.attempt === 1 ? 'manual' : 'scheduled', final: job.final },
    });
  },
});
