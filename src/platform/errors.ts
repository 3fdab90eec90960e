/**
 * The one list of outcome codes, mapped to HTTP statuses and envelopes in one place.
 * Internal messages never reach clients: anything that is not one of these becomes 9999/-99.
 */

/** Gateway RESULT_CODE values (interface "Errors" + decisions §4). */
export const GatewayCodes = {
  OK: '0000',
  SIGNATURE: '3001',
  DUPLICATE: '4001',
  VALIDATION: '4002',
  NOT_FOUND_SEARCH: '4003',
  NOT_FOUND_CANCEL: '4004',
  CANCEL_FAILED: '4004',
  STORE: '4005',
  NO_CAT: '4006',
  AMOUNT_MISMATCH: '4007',
  TERMINAL: '4008',
  STATE: '4009',
  CONFIRM_URL_LENGTH: '5001',
  INTERNAL: '9999',
} as const;
export type GatewayCode = (typeof GatewayCodes)[keyof typeof GatewayCodes];

export class GatewayError extends Error {
  override name = 'GatewayError';
  constructor(readonly resultCode: GatewayCode, message: string) {
    super(message);
  }
}

/** Invoicing result_code values with their HTTP statuses (decisions §5 error table). */
export const AppCodes = {
  TOKEN_MISSING: { code: -1, http: 401 },
  TOKEN_EXPIRED: { code: -2, http: 401 },
  BAD_CREDENTIALS: { code: -3, http: 401 },
  FORBIDDEN: { code: -4, http: 403 },
  NOT_FOUND: { code: -10, http: 404 },
  VALIDATION: { code: -20, http: 400 },
  INSUFFICIENT_POINTS: { code: -21, http: 409 },
  IDEMPOTENCY_CONFLICT: { code: -22, http: 409 },
  IDEMPOTENCY_MULTI: { code: -23, http: 400 },
  STATE: { code: -24, http: 409 },
  TOO_MANY: { code: -29, http: 429 },
  GATEWAY: { code: -30, http: 502 },
  INTERNAL: { code: -99, http: 500 },
} as const;
export type AppCode = keyof typeof AppCodes;

export class AppError extends Error {
  override name = 'AppError';
  readonly resultCode: number;
  readonly httpStatus: number;
  constructor(readonly kind: AppCode, message: string) {
    super(message);
    this.resultCode = AppCodes[kind].code;
    this.httpStatus = AppCodes[kind].http;
  }
}

export function appEnvelope(resultCode: number, message: string, data: unknown = null) {
  return { result_code: resultCode, result_msg: message, result_data: data };
}

export function gatewayEnvelope(resultCode: string, message: string, extra: Record<string, unknown> = {}) {
  return { result_code: 0, result_msg: 'SUCCESS', result_data: { RESULT_CODE: resultCode, RESULT_MSG: message, ...extra } };
}

/** True when a driver error is a unique-constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
