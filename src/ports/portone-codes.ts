import type { PayMethod } from './checkout.js';

/**
 * PortOne V2's names and what they mean for Sunap (docs/going-live.md, "PortOne"): the pay
 * methods of `requestPayment`, the easy pays' and card companies' Korean names, the statuses of
 * `GET /payments/{paymentId}`, and the error types of its REST API, each mapped to approved,
 * declined (with Korean words for the customer), waiting for a deposit, or unknown.
 */

/** Sunap's method → PortOne's `payMethod` of requestPayment. */
export const PORTONE_PAY_METHOD: Readonly<Record<PayMethod, string>> = {
  CARD: 'CARD', EASY_PAY: 'EASY_PAY', TRANSFER: 'TRANSFER', VIRTUAL_ACCOUNT: 'VIRTUAL_ACCOUNT', MOBILE_PHONE: 'MOBILE',
};

/** PortOne's `method.type` of a payment → Sunap's method. */
export const METHOD_OF_TYPE: Readonly<Record<string, PayMethod>> = {
  PaymentMethodCard: 'CARD', PaymentMethodEasyPay: 'EASY_PAY', PaymentMethodTransfer: 'TRANSFER',
  PaymentMethodVirtualAccount: 'VIRTUAL_ACCOUNT', PaymentMethodMobile: 'MOBILE_PHONE',
};

/** EasyPayProvider → METHOD_NAME. */
export const EASY_PAY_NAMES: Readonly<Record<string, string>> = {
  TOSSPAY: '토스페이', KAKAOPAY: '카카오페이', NAVERPAY: '네이버페이', PAYCO: '페이코', SAMSUNGPAY: '삼성페이', SSGPAY: 'SSG페이',
  LPAY: 'L.PAY', KPAY: 'K페이', APPLEPAY: '애플페이', SKPAY: 'SK페이', LGPAY: 'LG페이', PINPAY: '핀페이', CHAI: '차이', TOSS_BRANDPAY: '토스페이', KB_APP: 'KB Pay',
};

/** Card company codes (PortOne's card company enum) → the names receipts show. */
export const CARD_COMPANY_NAMES: Readonly<Record<string, string>> = {
  SHINHAN_CARD: '신한카드', KOOKMIN_CARD: 'KB국민카드', HYUNDAI_CARD: '현대카드', SAMSUNG_CARD: '삼성카드', LOTTE_CARD: '롯데카드',
  BC_CARD: 'BC카드', HANA_CARD: '하나카드', WOORI_CARD: '우리카드', NH_CARD: 'NH농협카드',
};

/**
 * Every status `GET /payments/{paymentId}` answers, and what it is for Sunap. PARTIAL_CANCELLED
 * is unknown on purpose: Sunap cancels in full only, so a partial cancel made in PortOne's
 * console is for the operator to finish there (the look-up then says CANCELLED).
 */
export const PORTONE_STATUSES = {
  READY: 'pending', PAY_PENDING: 'pending', VIRTUAL_ACCOUNT_ISSUED: 'waiting for deposit', PAID: 'approved',
  FAILED: 'declined', CANCELLED: 'cancelled', PARTIAL_CANCELLED: 'unknown',
} as const;

/** The customer's words for a refusal, by PortOne's failure (the PG's code when it gives a known one). */
const DECLINE_WORDS: readonly [RegExp, string][] = [
  [/잔액|한도|BALANCE|LIMIT/i, '잔액 또는 한도가 부족합니다'],
  [/비밀번호|PASSWORD/i, '비밀번호가 맞지 않습니다'],
  [/취소|CANCEL/i, '결제를 취소했습니다'],
  [/유효기간|EXPIR/i, '카드 유효기간을 확인해 주세요'],
  [/도난|분실|STOLEN|LOST/i, '사용할 수 없는 카드입니다. 카드사에 문의해 주세요'],
];

/**
 * The Korean reason of a FAILED payment, for the customer. PortOne's `failure.reason` and the
 * PG's message are read only to choose among these words, never shown as they are.
 */
export function declineWords(failure: { reason?: string; pgCode?: string; pgMessage?: string } | null | undefined): string {
  const text = [failure?.pgCode, failure?.pgMessage, failure?.reason].filter(Boolean).join(' ');
  for (const [re, words] of DECLINE_WORDS) if (re.test(text)) return words;
  return '결제사에서 결제를 승인하지 않았습니다';
}

/**
 * Each error `type` of PortOne's REST API (the body `{ type, message }`) this adapter meets, and
 * what it means: `gone` nothing to do (already done), `refused` a definite no, `auth` the keys
 * are wrong, `unknown` the outcome cannot be told now.
 */
export const PORTONE_ERRORS: Readonly<Record<string, 'gone' | 'refused' | 'auth' | 'unknown'>> = {
  PAYMENT_NOT_FOUND: 'refused',
  PAYMENT_ALREADY_CANCELLED: 'gone',
  PAYMENT_NOT_PAID: 'refused',
  PAYMENT_NOT_WAITING_FOR_DEPOSIT: 'refused',
  ALREADY_PAID: 'refused',
  CANCELLABLE_AMOUNT_CONSISTENCY_BROKEN: 'refused',
  CANCEL_AMOUNT_EXCEEDS_CANCELLABLE_AMOUNT: 'refused',
  CANCEL_TAX_AMOUNT_EXCEEDS_CANCELLABLE_TAX_AMOUNT: 'refused',
  CANCEL_TAX_FREE_AMOUNT_EXCEEDS_CANCELLABLE_TAX_FREE_AMOUNT: 'refused',
  SUM_OF_PARTS_EXCEEDS_CANCEL_AMOUNT: 'refused',
  NEGATIVE_PROMOTION_ADJUSTED_CANCEL_AMOUNT: 'refused',
  PROMOTION_DISCOUNT_RETAIN_OPTION_SHOULD_NOT_BE_CHANGED: 'refused',
  INVALID_REQUEST: 'refused',
  PG_PROVIDER: 'refused',
  UNAUTHORIZED: 'auth',
  FORBIDDEN: 'auth',
};

/** The Korean words of a refused cancel or close, by PortOne's error type. */
export function errorWords(type: string, pgMessage?: string): string {
  switch (type) {
    case 'PG_PROVIDER':
      return `결제사(PG)가 처리하지 않았습니다${pgMessage ? ` (${pgMessage.slice(0, 100)})` : ''}`;
    case 'CANCELLABLE_AMOUNT_CONSISTENCY_BROKEN':
    case 'CANCEL_AMOUNT_EXCEEDS_CANCELLABLE_AMOUNT':
      return '포트원에서 이미 일부 취소된 결제입니다. 포트원 콘솔에서 확인해 주세요';
    case 'UNAUTHORIZED':
    case 'FORBIDDEN':
      return '포트원 API 시크릿 또는 상점 아이디가 맞지 않습니다';
    case 'PAYMENT_NOT_FOUND':
      return '포트원에 없는 결제입니다';
    case 'INVALID_REQUEST':
      return '포트원이 요청을 거절했습니다 (환불 계좌 등 입력값 확인)';
    default:
      return `포트원이 거절했습니다 (${type})`;
  }
}
