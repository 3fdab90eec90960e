// The payment row requestPayment writes, built as GatewayService.createPayment builds it for the
// bench's request body (no ITEMS, no RETURN_URL), in the column order of the repository's
// insert. Shared by the same-stack requestPayment reference (bench/reference-server.ts) and the
// PostgreSQL insert-rate scenario (bench/pg-insert.ts), so both write the row Sunap writes; the
// run compares a row of each with Sunap's column by column before measuring.
import { breakdown } from '../src/gateway/amounts.js';
import { PAYMENT_COLUMNS } from '../src/gateway/repository.js';
import { newId } from '../src/platform/crypto.js';

export { PAYMENT_COLUMNS };

/** The repository's INSERT of every payment column, as Kysely compiles it for the dialect ("?" or "$n"). */
export function paymentInsertSql(dialect: 'sqlite' | 'postgres'): string {
  const values = PAYMENT_COLUMNS.map((_, i) => (dialect === 'sqlite' ? '?' : `$${i + 1}`));
  return `insert into "payments" (${PAYMENT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${values.join(', ')})`;
}

export interface RequestFields {
  platformCode: string; storeCode: string; transSeqNo: string; amount: number; mobileNo: string; payUserName: string;
  requestReason: string; infoMessage?: string | null; confirmUrl?: string | null; tempValue?: string | null; userId?: string | null;
}

/** The row's values in PAYMENT_COLUMNS order, with a new id; `now` is created_at and updated_at. */
export function paymentValues(f: RequestFields, now: number, id = newId()): unknown[] {
  const split = breakdown(f.amount, undefined);
  if ('error' in split) throw new Error(split.error);
  const row: Record<(typeof PAYMENT_COLUMNS)[number], unknown> = {
    id, platform_code: f.platformCode, store_code: f.storeCode, trans_seqno: f.transSeqNo,
    state: 'STORE_REQUEST', amount: f.amount, supply_amount: split.supplyAmount, tax_charge: split.taxCharge,
    tax_free_amount: split.taxFreeAmount, mobile_no: f.mobileNo, pay_user_name: f.payUserName,
    request_reason: f.requestReason, info_message: f.infoMessage ?? null, confirm_url: f.confirmUrl ?? null,
    return_display_yn: 'N', return_url: null, temp_value: f.tempValue ?? null,
    user_id: f.userId ?? null, order_type: 'BILL', items_json: null,
    pay_path: 'WEB', approval_number: null, approval_at: null, installment_month: null, issuer_name: null,
    accepter_name: null, method_name: null, card_bin: null, card_last4: null, processor_ref: null, cancel_at: null, cancel_reason: '',
    cancel_amount: 0, created_at: now, updated_at: now, processor: null, processor_order: null, method: null,
    vbank_code: '', vbank_name: '', vbank_account: '', vbank_holder: '', vbank_due_at: null, vbank_secret_sealed: null,
  };
  return PAYMENT_COLUMNS.map((c) => row[c]);
}
