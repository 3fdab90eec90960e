/**
 * Toss Payments' published code tables, as the card-number (key-in) adapter needs them
 * (docs/going-live.md, "Toss Payments"): card company codes and what each error code means
 * for a payment.
 */

/** Issuer and acquirer codes (`card.issuerCode`, `card.acquirerCode`) to the Korean company names the pages show. */
export const CARD_COMPANIES: Readonly<Record<string, string>> = {
  '3K': '기업BC', '46': '광주은행', '71': '롯데카드', '30': 'KDB산업은행', '31': 'BC카드', '51': '삼성카드',
  '38': '새마을금고', '41': '신한카드', '62': '신협', '36': '씨티카드', '33': '우리BC카드', 'W1': '우리카드',
  '37': '우체국예금보험', '39': '저축은행중앙회', '35': '전북은행', '42': '제주은행', '15': '카카오뱅크',
  '3A': '케이뱅크', '24': '토스뱅크', '21': '하나카드', '61': '현대카드', '11': 'KB국민카드', '91': 'NH농협카드',
  '34': 'Sh수협은행', '6D': '다이너스 클럽', '6I': '디스커버', '4M': '마스터카드', '3C': '유니온페이',
  '7A': '아메리칸 익스프레스', '4J': 'JCB', '4V': 'VISA',
};

/** A code not in the table still names something the operator can look up. */
export function cardCompany(code: string): string {
  return CARD_COMPANIES[code] ?? (code ? `카드사(${code})` : '카드사');
}

/**
 * What an error answer to an approval means. DECLINED: the card was refused, with the Korean
 * reason the payment page shows. ERROR: nothing was approved and the customer's card is not at
 * fault (Sunap's configuration or contract, a processor fault). EXISTS: the order was already
 * processed under this key: the look-up tells its outcome. Any other 4xx code is a decline
 * with Toss's own (Korean) message; 5xx and the codes under UNKNOWN leave the outcome open.
 */
export type ApproveErrorKind = { kind: 'DECLINED'; message: string } | { kind: 'ERROR'; message: string } | { kind: 'EXISTS' } | { kind: 'UNKNOWN' };

const CONFIG_MESSAGE = '결제 설정 문제로 지금은 결제할 수 없습니다. 가맹점에 문의해 주세요';
const TEMPORARY_MESSAGE = '카드사 처리 중 일시적인 오류가 발생했습니다. 잠시 후 다시 시도해 주세요';
const INSTALLMENT_MESSAGE = '이 카드로는 선택한 할부를 이용할 수 없습니다. 일시불이나 다른 카드로 결제해 주세요';
const LIMIT_MESSAGE = '카드 결제 한도를 초과했습니다';

export const APPROVE_ERRORS: Readonly<Record<string, ApproveErrorKind>> = {
  REJECT_CARD_COMPANY: { kind: 'DECLINED', message: '카드사에서 승인을 거절했습니다' },
  REJECT_CARD_PAYMENT: { kind: 'DECLINED', message: '한도 초과 또는 잔액 부족으로 결제되지 않았습니다' },
  INVALID_CARD_NUMBER: { kind: 'DECLINED', message: '카드번호를 다시 확인해 주세요' },
  INVALID_CARD_EXPIRATION: { kind: 'DECLINED', message: '카드 유효기간을 다시 확인해 주세요' },
  INVALID_STOPPED_CARD: { kind: 'DECLINED', message: '정지된 카드입니다' },
  INVALID_CARD_LOST_OR_STOLEN: { kind: 'DECLINED', message: '분실 또는 도난 신고된 카드입니다' },
  INVALID_REJECT_CARD: { kind: 'DECLINED', message: '카드 사용이 거절되었습니다. 카드사에 문의해 주세요' },
  INVALID_PASSWORD: { kind: 'DECLINED', message: '카드 비밀번호 앞 2자리가 맞지 않습니다' },
  INVALID_CARD_PASSWORD: { kind: 'DECLINED', message: '카드 비밀번호 앞 2자리가 맞지 않습니다' },
  INVALID_BIRTH_DAY_FORMAT: { kind: 'DECLINED', message: '생년월일 또는 사업자등록번호를 다시 확인해 주세요' },
  EXCEED_MAX_DAILY_PAYMENT_COUNT: { kind: 'DECLINED', message: '이 카드의 하루 결제 횟수를 초과했습니다' },
  EXCEED_MAX_PAYMENT_AMOUNT: { kind: 'DECLINED', message: LIMIT_MESSAGE },
  EXCEED_MAX_AMOUNT: { kind: 'DECLINED', message: LIMIT_MESSAGE },
  EXCEED_MAX_ONE_DAY_AMOUNT: { kind: 'DECLINED', message: LIMIT_MESSAGE },
  EXCEED_MAX_MONTHLY_PAYMENT_AMOUNT: { kind: 'DECLINED', message: LIMIT_MESSAGE },
  EXCEED_MAX_CARD_INSTALLMENT_PLAN: { kind: 'DECLINED', message: INSTALLMENT_MESSAGE },
  INVALID_CARD_INSTALLMENT_PLAN: { kind: 'DECLINED', message: INSTALLMENT_MESSAGE },
  NOT_SUPPORTED_INSTALLMENT_PLAN_CARD_OR_MERCHANT: { kind: 'DECLINED', message: INSTALLMENT_MESSAGE },
  NOT_SUPPORTED_MONTHLY_INSTALLMENT_PLAN: { kind: 'DECLINED', message: INSTALLMENT_MESSAGE },
  BELOW_MINIMUM_AMOUNT: { kind: 'DECLINED', message: '카드 결제는 100원 이상부터 가능합니다' },
  NOT_ALLOWED_POINT_USE: { kind: 'DECLINED', message: '포인트를 사용할 수 없는 카드입니다' },
  FDS_ERROR: { kind: 'DECLINED', message: '위험 거래로 판단되어 결제가 제한되었습니다. 카드사에 문의해 주세요' },
  EXCEED_MAX_AUTH_COUNT: { kind: 'DECLINED', message: '인증 가능 횟수를 초과했습니다. 잠시 후 다시 시도해 주세요' },
  NOT_AVAILABLE_PAYMENT: { kind: 'DECLINED', message: '지금은 결제할 수 없는 시간입니다. 잠시 후 다시 시도해 주세요' },
  PROVIDER_ERROR: { kind: 'ERROR', message: TEMPORARY_MESSAGE },
  CARD_PROCESSING_ERROR: { kind: 'ERROR', message: TEMPORARY_MESSAGE },
  UNAUTHORIZED_KEY: { kind: 'ERROR', message: CONFIG_MESSAGE },
  INVALID_API_KEY: { kind: 'ERROR', message: CONFIG_MESSAGE },
  FORBIDDEN_REQUEST: { kind: 'ERROR', message: CONFIG_MESSAGE },
  INVALID_REQUEST: { kind: 'ERROR', message: CONFIG_MESSAGE },
  NOT_FOUND_TERMINAL_ID: { kind: 'ERROR', message: CONFIG_MESSAGE },
  INVALID_AUTHORIZE_AUTH: { kind: 'ERROR', message: CONFIG_MESSAGE },
  INVALID_UNREGISTERED_SUBMALL: { kind: 'ERROR', message: CONFIG_MESSAGE },
  NOT_REGISTERED_BUSINESS: { kind: 'ERROR', message: CONFIG_MESSAGE },
  ALREADY_PROCESSED_PAYMENT: { kind: 'EXISTS' },
  DUPLICATED_ORDER_ID: { kind: 'EXISTS' },
  IDEMPOTENT_REQUEST_PROCESSING: { kind: 'UNKNOWN' },
  FAILED_INTERNAL_SYSTEM_PROCESSING: { kind: 'UNKNOWN' },
  FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING: { kind: 'UNKNOWN' },
  UNKNOWN_PAYMENT_ERROR: { kind: 'UNKNOWN' },
  COMMON_ERROR: { kind: 'UNKNOWN' },
};

/** Codes after which an approval's outcome is known to be "nothing happened" and the key an operator problem. */
export const CREDENTIAL_ERRORS = new Set(['UNAUTHORIZED_KEY', 'INVALID_API_KEY', 'FORBIDDEN_REQUEST']);

export function approveError(status: number, code: string, message: string): ApproveErrorKind {
  const known = APPROVE_ERRORS[code];
  if (known) return known;
  if (status >= 500 || status === 409 || status === 429) return { kind: 'UNKNOWN' };
  return { kind: 'DECLINED', message: message || '카드 결제가 승인되지 않았습니다' };
}

/** A cancel answered with one of these means the payment is cancelled already: success. */
export const ALREADY_CANCELED = new Set(['ALREADY_CANCELED_PAYMENT', 'ALREADY_REFUND_PAYMENT']);

/**
 * What an error answer to a window payment's confirm (POST /v1/payments/confirm) means: the
 * card-number codes above, and the codes only the window's payments answer (transfers, easy
 * pays, an authorization that expired). DECLINED and ERROR take nothing; EXISTS (confirmed
 * before) and UNKNOWN are settled by a look-up.
 */
export const CONFIRM_ERRORS: Readonly<Record<string, ApproveErrorKind>> = {
  ...APPROVE_ERRORS,
  NOT_FOUND_PAYMENT_SESSION: { kind: 'DECLINED', message: '결제 시간이 만료되었습니다. 다시 결제해 주세요' },
  NOT_FOUND_PAYMENT: { kind: 'DECLINED', message: '결제 정보를 찾을 수 없습니다. 다시 결제해 주세요' },
  UNAPPROVED_ORDER_ID: { kind: 'DECLINED', message: '결제가 인증되지 않았습니다. 다시 결제해 주세요' },
  REJECT_ACCOUNT_PAYMENT: { kind: 'DECLINED', message: '잔액 부족으로 계좌에서 출금되지 않았습니다' },
  RESTRICTED_TRANSFER_ACCOUNT: { kind: 'DECLINED', message: '이체가 제한된 계좌입니다. 다른 계좌나 결제수단을 이용해 주세요' },
  EXCEED_MAX_ONE_DAY_WITHDRAW_AMOUNT: { kind: 'DECLINED', message: '계좌의 하루 출금 한도를 초과했습니다' },
  EXCEED_MAX_ONE_TIME_WITHDRAW_AMOUNT: { kind: 'DECLINED', message: '계좌의 1회 출금 한도를 초과했습니다' },
  INVALID_ACCOUNT_INFO_RE_REGISTER: { kind: 'DECLINED', message: '계좌 정보가 유효하지 않습니다. 계좌를 다시 등록해 주세요' },
  REJECT_TOSSPAY_INVALID_ACCOUNT: { kind: 'DECLINED', message: '토스페이에 연결된 계좌를 쓸 수 없습니다. 다른 결제수단을 이용해 주세요' },
  NOT_AVAILABLE_BANK: { kind: 'DECLINED', message: '은행 점검 시간입니다. 잠시 후 다시 시도해 주세요' },
  INCORRECT_BASIC_AUTH_FORMAT: { kind: 'ERROR', message: CONFIG_MESSAGE },
};

export function confirmError(status: number, code: string, message: string): ApproveErrorKind {
  const known = CONFIRM_ERRORS[code];
  if (known) return known;
  if (status >= 500 || status === 409 || status === 429) return { kind: 'UNKNOWN' };
  return { kind: 'DECLINED', message: message || '결제가 승인되지 않았습니다' };
}

/** The customer closed Toss's window: the fail address's PAY_PROCESS_CANCELED, or the SDK's USER_CANCEL. */
export const WINDOW_CLOSED = { code: 'PAY_PROCESS_CANCELED', message: '결제를 취소했습니다' };

/** The codes Toss's window sends the browser to the fail address with, and the words the page shows for each. */
export const WINDOW_FAILURES: Readonly<Record<string, string>> = {
  PAY_PROCESS_ABORTED: '결제가 중단되었습니다',
  REJECT_CARD_COMPANY: '카드사에서 승인을 거절했습니다',
  INVALID_CARD_COMPANY: '사용할 수 없는 카드입니다',
  NEED_CARD_PAYMENT_DETAIL: '카드 결제 정보를 선택해 주세요',
  NEED_REFUND_ACCOUNT_DETAIL: '환불 계좌 정보를 입력해 주세요',
  EXCEED_MAX_PAYMENT_AMOUNT: '결제 한도를 초과했습니다',
  INVALID_PARAMETER: '결제 요청이 올바르지 않습니다. 가맹점에 문의해 주세요',
  INVALID_CLIENT_KEY: '결제 설정 문제로 지금은 결제할 수 없습니다. 가맹점에 문의해 주세요',
};

/** A failure the fail address names, in the words we know (the address's own message is never shown). */
export function windowFailure(code: string): { code: string; message: string } {
  if (code === 'PAY_PROCESS_CANCELED' || code === 'USER_CANCEL') return WINDOW_CLOSED;
  const known = WINDOW_FAILURES[code];
  if (known) return { code, message: known };
  const approve = APPROVE_ERRORS[code];
  if (approve && (approve.kind === 'DECLINED' || approve.kind === 'ERROR')) return { code, message: approve.message };
  return { code: /^[A-Z_]{1,64}$/.test(code) ? code : 'PAY_PROCESS_ABORTED', message: '결제가 승인되지 않았습니다' };
}
