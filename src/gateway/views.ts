import { kstCompact } from '../platform/kst.js';
import type { Payment, PaymentView, Store } from './repository.js';

/** searchPayment's record (docs/reference.md, "Gateway RESULT_CODE values"). */
export function paymentRecord(p: PaymentView, store: Pick<Store, 'name' | 'ceo_name' | 'biz_reg_num' | 'tel'>): Record<string, unknown> {
  return {
    TRANS_SEQNO: p.trans_seqno,
    APPROVE_STATUS: p.state,
    MOBILE_NO: p.mobile_no,
    APPROVAL_DATETIME: p.approval_at !== null ? kstCompact(p.approval_at) : null,
    APPROVAL_AMOUNT: p.amount,
    SUPPLY_AMOUNT: p.supply_amount,
    TAX_CHARGE: p.tax_charge,
    APPROVAL_NUMBER: p.approval_number ?? '',
    INSTALLMENT_MONTH: p.installment_month ?? '',
    ISSUER_NAME: p.issuer_name ?? '',
    ACCEPTER_NAME: p.accepter_name ?? '',
    METHOD_NAME: p.method_name ?? '',
    STORE_NAME: store.name,
    CEO_NAME: store.ceo_name,
    BIZ_REG_NUM: store.biz_reg_num,
    STORE_TEL_NUM: store.tel,
    APPROVAL_CANCEL_DATETIME: p.cancel_at !== null ? kstCompact(p.cancel_at) : null,
    CANCEL_REASON: p.cancel_reason,
    CANCEL_AMOUNT: p.state === 'CANCEL_COMPLETE' ? p.cancel_amount : 0,
    PAY_PATH: p.pay_path,
    VBANK_NAME: p.vbank_name,
    VBANK_ACCOUNT: p.vbank_account,
    VBANK_HOLDER: p.vbank_holder,
    VBANK_DUE: p.vbank_due_at !== null ? kstCompact(Number(p.vbank_due_at)) : null,
  };
}

/**
 * Whether a card paid (a card, or an easy pay paid by card): then the callback carries the
 * card's company and instalments. A transfer keeps its bank in issuer_name, which is not a card.
 */
export function cardPaid(p: Pick<Payment, 'method' | 'issuer_name'>): boolean {
  return p.method == null || p.method === 'CARD' || (p.method === 'EASY_PAY' && !!p.issuer_name);
}

/** RESULT_MSG handed to RETURN_URL after an approval (the same words as the sandbox pay call). */
export const APPROVED_MSG = '승인되었습니다';

/** Where the customer's browser goes after paying, with the five parameters appended (an existing query is kept). */
export function returnUrlFor(p: Payment, resultCode: string, resultMsg: string): string | null {
  if (p.return_display_yn !== 'Y' || !p.return_url) return null;
  const u = new URL(p.return_url);
  u.searchParams.append('RESULT_CODE', resultCode);
  u.searchParams.append('RESULT_MSG', resultMsg);
  u.searchParams.append('TRANS_SEQNO', p.trans_seqno);
  u.searchParams.append('APPROVAL_AMOUNT', String(p.amount));
  u.searchParams.append('TEMP_VALUE', p.temp_value ?? '');
  return u.toString();
}
