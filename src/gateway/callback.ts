import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { defineJob, type JobDefinition } from '../jobs/define.js';
import { deliver } from '../jobs/outbound.js';
import type { HttpOut } from '../ports/http-out.js';
import type { Clock } from '../platform/clock.js';
import { kstCompact } from '../platform/kst.js';
import type { CallbackPayload } from './context.js';
import { findPaymentById, type Payment } from './repository.js';

/**
 * The CONFIRM_URL callback (docs/reference.md, "The CONFIRM_URL callback and RETURN_URL"): attempts at once, then 10 s,
 * 1 min, 5 min and 30 min after each failure (5 in all); after the last the job is DEAD and
 * the merchant learns of the approval from searchPayment.
 */
export const CALLBACK_BACKOFF_SECONDS = [10, 60, 300, 1800] as const;

/**
 * The callback body: the approval's facts, with TEMP_VALUE echoed and the ORDER_TYPE branch;
 * txId is PLATFORM_CODE_STORE_CODE_TRANS_SEQNO, as the real service sends it.
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
    cardCompany: p.issuer_name ?? '',
    installment: p.installment_month ?? '00',
    payerName: p.pay_user_name,
    txId: `${p.platform_code}_${p.store_code}_${p.trans_seqno}`,
  };
}

export interface CallbackDeps {
  db: Kysely<Database>;
  http: HttpOut;
  clock: Clock;
}

/** One attempt: the body POSTed to CONFIRM_URL, recorded, no redirects, the outbound time limit. */
export const CALLBACK_JOB: JobDefinition<CallbackPayload, CallbackDeps> = defineJob({
  kind: 'gateway.callback',
  backoffSeconds: CALLBACK_BACKOFF_SECONDS,
  async run({ paymentId }: CallbackPayload, deps: CallbackDeps, job) {
    const p = await findPaymentById(deps.db, paymentId);
    if (!p || !p.confirm_url) return;
    await deliver(deps.db, deps.http, {
      jobId: job.jobId, target: 'CALLBACK', refId: p.id, attemptNo: job.attempt, url: p.confirm_url,
      body: Buffer.from(JSON.stringify(callbackBody(p))), headers: { 'content-type': 'application/json' }, now: deps.clock.nowMs(),
    });
  },
});
