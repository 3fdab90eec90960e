import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { JobHandler } from '../jobs/queue.js';
import { deliver } from '../jobs/outbound.js';
import type { HttpOut } from '../ports/http-out.js';
import { kstCompact, type Clock } from '../platform/clock.js';
import { findPaymentById, type Payment } from './repository.js';
import { CALLBACK_BACKOFF_SECONDS } from './service.js';

/** The CONFIRM_URL body (decisions §4, public shape). */
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
  };
}

export function callbackHandler(db: Kysely<Database>, http: HttpOut, clock: Clock): JobHandler {
  return {
    backoffSeconds: CALLBACK_BACKOFF_SECONDS,
    async run(job) {
      const p = await findPaymentById(db, job.data.paymentId);
      if (!p || !p.confirm_url) return;
      const body = Buffer.from(JSON.stringify(callbackBody(p)));
      await deliver(db, http, {
        jobId: job.id, target: 'CALLBACK', refId: p.id, attemptNo: job.attempts, url: p.confirm_url, body,
        headers: { 'content-type': 'application/json' }, now: clock.nowMs(),
      });
    },
  };
}
