import { Type, type Static } from '@sinclair/typebox';

/**
 * Gateway bodies. Field names, shapes and limits follow the interface document to the
 * letter so that existing client SDKs work unchanged. Unknown fields are ignored.
 */
const digits = (min: number, max: number, reason: string) =>
  Type.String({ pattern: `^\\d{${min},${max}}$`, 'x-reason': reason });

export const TransSeqNo = Type.String({ minLength: 1, maxLength: 64, description: 'Caller-assigned transaction number, unique per platform and store' });
export const TransAt = Type.String({ pattern: '^\\d{14}$', 'x-reason': 'must be 14 digits, yyyyMMddHHmmss in KST', description: 'Request time, KST yyyyMMddHHmmss' });
export const ApiSign = Type.String({ pattern: '^[0-9a-fA-F]{64}$', 'x-reason': 'must be 64 hex characters', description: 'sha256 hex of TRANS_SEQNO+PLATFORM_CODE+STORE_CODE+TRANS_AT+API_KEY' });

/** The signing fields, checked before anything else (decisions §4 order of checks). */
export const SigningFields = Type.Object({
  TRANS_SEQNO: TransSeqNo,
  PLATFORM_CODE: Type.String({ minLength: 1, maxLength: 64 }),
  STORE_CODE: Type.String({ minLength: 1, maxLength: 64 }),
  TRANS_AT: TransAt,
  API_SIGN: ApiSign,
});

export const Item = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 20 }),
  unitPrice: Type.Integer({ minimum: 0, maximum: 999_999_999_999 }),
  qty: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  discountAmount: Type.Optional(Type.Integer({ minimum: 0, maximum: 999_999_999_999 })),
  discountUnit: Type.Optional(Type.Union([Type.Literal('AMOUNT'), Type.Literal('RATE')])),
  taxType: Type.Optional(Type.Union([Type.Literal('TAX_ON'), Type.Literal('TAX_FREE')])),
  vatRateBps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  publisher: Type.Optional(Type.String({ maxLength: 60 })),
  imageUrl: Type.Optional(Type.String({ maxLength: 500 })),
});
export type Item = Static<typeof Item>;

export const RequestPaymentBody = Type.Object({
  ...SigningFields.properties,
  APPROVAL_AMOUNT: digits(1, 12, 'must be a string of 1 to 12 digits'),
  MOBILE_NO: digits(10, 11, 'must be 10 to 11 digits'),
  PAY_USER_NAME: Type.String({ minLength: 1, maxLength: 50 }),
  REQUEST_REASON: Type.String({ minLength: 1, maxLength: 100 }),
  INFO_MESSAGE: Type.Optional(Type.String({ maxLength: 500 })),
  CONFIRM_URL: Type.String({ minLength: 1, description: 'HTTPS callback address, at most 100 characters (longer: 5001)' }),
  RETURN_DISPLAY_YN: Type.Optional(Type.Union([Type.Literal('Y'), Type.Literal('N')])),
  RETURN_URL: Type.Optional(Type.String({ maxLength: 100 })),
  TEMP_VALUE: Type.Optional(Type.String({ maxLength: 500 })),
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
  CANCEL_REASON: Type.Optional(Type.String({ maxLength: 100 })),
});
export type CancelPaymentBody = Static<typeof CancelPaymentBody>;

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const ResultOnly = Type.Object({ RESULT_CODE: Type.String(), RESULT_MSG: Type.String() });

export const RequestPaymentResult = Type.Object({
  RESULT_CODE: Type.String(), RESULT_MSG: Type.String(),
  REDIRECT_URL: Type.Optional(Type.String({ description: 'Payment page link; use exactly as returned' })),
});

export const PaymentRecord = Type.Object({
  RESULT_CODE: Type.String(), RESULT_MSG: Type.String(),
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
});

export const CancelResult = Type.Object({
  RESULT_CODE: Type.String(), RESULT_MSG: Type.String(),
  TRANS_SEQNO: Type.Optional(Type.String()),
  MOBILE_NO: Type.Optional(Type.String()),
  APPROVAL_AMOUNT: Type.Optional(Type.Number()),
  TEMP_VALUE: Type.Optional(Nullable(Type.String())),
});

export const gatewayEnvelopeSchema = <T extends ReturnType<typeof Type.Object>>(data: T) =>
  Type.Object({ result_code: Type.Integer(), result_msg: Type.String(), result_data: data });
