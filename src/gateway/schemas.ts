import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../platform/schemas.js';
import { DisplayText } from '../platform/validation.js';

/**
 * Gateway bodies. Field names, shapes and limits follow the gateway's published interface to the
 * letter so that existing client SDKs work unchanged. Unknown fields are ignored.
 */
const digits = (min: number, max: number, reason: string) =>
  Type.String({ pattern: `^\\d{${min},${max}}$`, 'x-reason': reason });

export const TransSeqNo = Type.String({ minLength: 1, maxLength: 64, description: 'Caller-assigned transaction number, unique per platform and store', examples: ['ORDER-20261122-0001'] });
export const TransAt = Type.String({ pattern: '^\\d{14}$', 'x-reason': 'must be 14 digits, yyyyMMddHHmmss in KST', description: 'Request time, KST yyyyMMddHHmmss, within SUNAP_SIGN_MAX_SKEW_SECONDS (600) of the server', examples: ['20261122143005'] });
export const ApiSign = Type.String({
  pattern: '^[0-9a-fA-F]{64}$', 'x-reason': 'must be 64 hex characters',
  description: 'Lowercase hex SHA-256 of TRANS_SEQNO + PLATFORM_CODE + STORE_CODE + TRANS_AT + API_KEY (docs/reference.md, "Signing gateway calls"). The example signs the other examples with the API key sk_live_example_key_do_not_use.',
  examples: ['a66193e3f40bfd026b7d87adf92fdfdb65ecccfb42cbe16148815d36e442193b'],
});

/** The signing fields, checked before anything else (the order of checks is in signing.ts). */
export const SigningFields = Type.Object({
  TRANS_SEQNO: TransSeqNo,
  PLATFORM_CODE: Type.String({ minLength: 1, maxLength: 64, examples: ['PC1A2B3C4D5E'] }),
  STORE_CODE: Type.String({ minLength: 1, maxLength: 64, examples: ['SD9F8E7D6C5B'] }),
  TRANS_AT: TransAt,
  API_SIGN: ApiSign,
});

export const Item = Type.Object({
  name: DisplayText({ minLength: 1, maxLength: 20 }),
  unitPrice: Type.Integer({ minimum: 0, maximum: 999_999_999_999 }),
  qty: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  discountAmount: Type.Optional(Type.Integer({ minimum: 0, maximum: 999_999_999_999 })),
  discountUnit: Type.Optional(Type.Union([Type.Literal('AMOUNT'), Type.Literal('RATE')])),
  taxType: Type.Optional(Type.Union([Type.Literal('TAX_ON'), Type.Literal('TAX_FREE')])),
  vatRateBps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  publisher: Type.Optional(DisplayText({ maxLength: 60 })),
  imageUrl: Type.Optional(Type.String({ maxLength: 500 })),
});
export type Item = Static<typeof Item>;

export const RequestPaymentBody = Type.Object({
  ...SigningFields.properties,
  APPROVAL_AMOUNT: { ...digits(1, 12, 'must be a string of 1 to 12 digits'), examples: ['128000'] },
  MOBILE_NO: { ...digits(10, 11, 'must be 10 to 11 digits'), examples: ['01012345678'] },
  PAY_USER_NAME: DisplayText({ minLength: 1, maxLength: 50, examples: ['홍길동'] }),
  REQUEST_REASON: DisplayText({ minLength: 1, maxLength: 100, examples: ['11월 수강료'] }),
  INFO_MESSAGE: Type.Optional(DisplayText({ maxLength: 500 }, 'lines')),
  CONFIRM_URL: Type.String({ minLength: 1, description: 'HTTPS callback address, at most 100 characters (longer: 5001); in the sandbox also http:// to localhost, 127.0.0.0/8 or [::1]. The body carries txId = PLATFORM_CODE_STORE_CODE_TRANS_SEQNO', examples: ['https://shop.example.com/sunap/confirm'] }),
  RETURN_DISPLAY_YN: Type.Optional(Type.Union([Type.Literal('Y'), Type.Literal('N')])),
  RETURN_URL: Type.Optional(Type.String({ maxLength: 100, description: 'https:// (in the sandbox also http:// to localhost, 127.0.0.0/8 or [::1]); required with RETURN_DISPLAY_YN Y', examples: ['https://shop.example.com/orders/1234/done'] })),
  TEMP_VALUE: Type.Optional(Type.String({ maxLength: 500, examples: ['order-1234'] })),
  USER_ID: Type.Optional(Type.String({ maxLength: 100 })),
  orderType: Type.Optional(Type.Union([Type.Literal('BILL'), Type.Literal('SHOP')])),
  ITEMS: Type.Optional(Type.Array(Item, { maxItems: 100 })),
});
export type RequestPaymentBody = Static<typeof RequestPaymentBody>;

export const SearchPaymentBody = SigningFields;
export type SearchPaymentBody = Static<typeof SearchPaymentBody>;

export const CancelPaymentBody = Type.Object({
  ...SigningFields.properties,
  REQUEST_TYPE: Type.Union([Type.Literal('CANCEL'), Type.Literal('DELETE')]),
  APPROVAL_AMOUNT: digits(1, 12, 'must be a string of 1 to 12 digits'),
  MOBILE_NO: digits(9, 11, 'must be 9 to 11 digits'),
  CANCEL_REASON: Type.Optional(DisplayText({ maxLength: 100 })),
  REFUND_BANK_CODE: Type.Optional(Type.String({ maxLength: 10, description: 'CANCEL of a payment made by virtual account: the standard three-digit code of the bank to refund to (004 KB국민은행, 088 신한은행, ...; docs/reference.md, "Refunds to a bank account"). Without the three REFUND_ fields such a CANCEL answers 4010; other methods ignore them.', examples: ['088'] })),
  REFUND_ACCOUNT_NO: Type.Optional(Type.String({ maxLength: 30, description: 'The account number to refund to, 6 to 20 digits (dashes allowed). Personal data: kept sealed only while the cancel runs, never logged.', examples: ['110123456789'] })),
  REFUND_HOLDER_NAME: Type.Optional(DisplayText({ maxLength: 50, description: 'The account holder\'s name, 1 to 30 characters', examples: ['홍길동'] })),
});
export type CancelPaymentBody = Static<typeof CancelPaymentBody>;

/** The refund account a cancel carries, as given (checked when the payment is a virtual account's). */
export function refundAccountOf(b: Pick<CancelPaymentBody, 'REFUND_BANK_CODE' | 'REFUND_ACCOUNT_NO' | 'REFUND_HOLDER_NAME'>): { bankCode?: string; accountNumber?: string; holderName?: string } {
  return { bankCode: b.REFUND_BANK_CODE, accountNumber: b.REFUND_ACCOUNT_NO, holderName: b.REFUND_HOLDER_NAME };
}

const Outcome = {
  RESULT_CODE: Type.String({ description: '0000 on success; otherwise the code of docs/reference.md, "Gateway RESULT_CODE values"', examples: ['0000'] }),
  RESULT_MSG: Type.String({ description: 'On failure: FIELD: reason', examples: ['정상 처리되었습니다'] }),
};

export const RequestPaymentResult = Type.Object({
  ...Outcome,
  REDIRECT_URL: Type.Optional(Type.String({ description: 'Payment page link; use exactly as returned' })),
});

export const PaymentRecord = Type.Object({
  ...Outcome,
  TRANS_SEQNO: Type.Optional(Type.String()),
  APPROVE_STATUS: Type.Optional(Type.String({ description: 'STORE_REQUEST, APPROVE_COMPLETE, CANCEL_COMPLETE, CANCEL_FAIL or STORE_DELETE' })),
  MOBILE_NO: Type.Optional(Type.String()),
  APPROVAL_DATETIME: Type.Optional(Nullable(Type.String())),
  APPROVAL_AMOUNT: Type.Optional(Type.Number()),
  SUPPLY_AMOUNT: Type.Optional(Type.Number()),
  TAX_CHARGE: Type.Optional(Type.Number()),
  APPROVAL_NUMBER: Type.Optional(Type.String()),
  INSTALLMENT_MONTH: Type.Optional(Type.String()),
  ISSUER_NAME: Type.Optional(Type.String()),
  ACCEPTER_NAME: Type.Optional(Type.String()),
  METHOD_NAME: Type.Optional(Type.String()),
  STORE_NAME: Type.Optional(Type.String()),
  CEO_NAME: Type.Optional(Type.String()),
  BIZ_REG_NUM: Type.Optional(Type.String()),
  STORE_TEL_NUM: Type.Optional(Type.String()),
  APPROVAL_CANCEL_DATETIME: Type.Optional(Nullable(Type.String())),
  CANCEL_REASON: Type.Optional(Type.String()),
  CANCEL_AMOUNT: Type.Optional(Type.Number()),
  PAY_PATH: Type.Optional(Type.String()),
  VBANK_NAME: Type.Optional(Type.String({ description: 'The virtual account\'s bank while one is open (and after its deposit); "" otherwise', examples: ['신한은행'] })),
  VBANK_ACCOUNT: Type.Optional(Type.String({ description: 'The virtual account\'s number; "" when none is open', examples: ['56211234567890'] })),
  VBANK_HOLDER: Type.Optional(Type.String({ description: 'The account\'s holder; "" when none is open', examples: ['행복 피아노 학원'] })),
  VBANK_DUE: Type.Optional(Nullable(Type.String({ description: 'yyyyMMddHHmmss KST: the account closes then without a deposit; null when none is open', examples: ['20261129143005'] }))),
});

export const CancelResult = Type.Object({
  ...Outcome,
  TRANS_SEQNO: Type.Optional(Type.String()),
  MOBILE_NO: Type.Optional(Type.String()),
  APPROVAL_AMOUNT: Type.Optional(Type.Number()),
  TEMP_VALUE: Type.Optional(Nullable(Type.String())),
});

export const gatewayEnvelopeSchema = <T extends ReturnType<typeof Type.Object>>(data: T) =>
  Type.Object({
    result_code: Type.Integer({ description: 'Always 0 when the body was read: the outcome is result_data.RESULT_CODE', examples: [0] }),
    result_msg: Type.String({ examples: ['SUCCESS'] }),
    result_data: data,
  });

/** A body the gateway could not read (HTTP 400, 413) or an internal error (HTTP 500, RESULT_CODE 9999). */
export const GatewayRefusal = Type.Object({
  result_code: Type.Integer({ examples: [-1] }),
  result_msg: Type.String({ examples: ['invalid request body'] }),
  result_data: Type.Object({
    RESULT_CODE: Type.String({ examples: ['4002'] }),
    RESULT_MSG: Type.String({ examples: ['body: must be a JSON object'] }),
  }),
});
