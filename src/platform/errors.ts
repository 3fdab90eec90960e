/**
 * The one list of outcome codes (docs/reference.md, "Gateway RESULT_CODE values" and "Invoicing
 * result codes"), and the one place that turns any error into an answer: its HTTP status, its
 * envelope and the code that metrics and logs record. Internal messages never reach clients:
 * anything that is not one of these codes becomes 9999 / -99.
 */

/** Gateway RESULT_CODE values. */
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
  /** CANCEL of a payment made by virtual account without the account to refund to (REFUND_BANK_CODE, REFUND_ACCOUNT_NO, REFUND_HOLDER_NAME). */
  REFUND_ACCOUNT: '4010',
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

/** Invoicing result_code values with their HTTP statuses. */
export const AppCodes = {
  OK: { code: 0, http: 200 },
  /** No x-access-token header at all. */
  TOKEN_MISSING: { code: -1, http: 401 },
  /**
   * A token that is present but unknown, revoked or rotated, and an expired one, answer HTTP
   * 200: the public clients renew their token only on a 2xx answer carrying -1 or -2.
   */
  TOKEN_UNKNOWN: { code: -1, http: 200 },
  TOKEN_EXPIRED: { code: -2, http: 200 },
  BAD_CREDENTIALS: { code: -3, http: 401 },
  FORBIDDEN: { code: -4, http: 403 },
  NOT_FOUND: { code: -10, http: 404 },
  VALIDATION: { code: -20, http: 400 },
  INSUFFICIENT_POINTS: { code: -21, http: 409 },
  /** HTTP 400 as the real service's published OpenAPI lists it (docs/reference.md, -22); Sunap answered 409 before. */
  IDEMPOTENCY_CONFLICT: { code: -22, http: 400 },
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

export const SUCCESS_MSG = 'SUCCESS';
export const INTERNAL_MSG = 'internal error; nothing was changed, try again';

export function appEnvelope<T = null>(resultCode: number, message: string, data: T = null as T) {
  return { result_code: resultCode, result_msg: message, result_data: data };
}

/** An invoicing success: result_code 0 with the data. */
export function appOk<T>(data: T) {
  return appEnvelope(AppCodes.OK.code, SUCCESS_MSG, data);
}

/** A gateway answer: HTTP 200 and envelope success; the outcome is result_data.RESULT_CODE. */
export function gatewayEnvelope(resultCode: GatewayCode, message: string, extra: Record<string, unknown> = {}) {
  return { result_code: 0, result_msg: SUCCESS_MSG, result_data: { RESULT_CODE: resultCode, RESULT_MSG: message, ...extra } };
}

/** The gateway's answer to a request it could not read as a JSON object (HTTP 4xx, envelope -1). */
export function gatewayRefusal(message: string) {
  return { result_code: -1, result_msg: 'invalid request body', result_data: { RESULT_CODE: GatewayCodes.VALIDATION, RESULT_MSG: message } };
}

/** True when a driver error is a unique-constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

// ---- any error → an answer -----------------------------------------------------------------

export interface Answer {
  status: number;
  body: unknown;
  /** RESULT_CODE or result_code, for metrics and the request's log line. */
  resultCode: string;
}

type FrameworkError = Error & { statusCode?: number; code?: string; validationMessage?: string };

/**
 * The answer to a body sent as anything but JSON on the JSON APIs: a `curl -d` without
 * `-H 'content-type: application/json'` sends a form, which would otherwise be read as one
 * odd field and answered `TRANS_SEQNO: is required`.
 */
export const NOT_JSON_MESSAGE = 'body: send JSON with Content-Type: application/json';

/** Problems Fastify finds before a route runs, as `field: reason`. */
const FRAMEWORK_PROBLEMS: Record<string, string> = {
  FST_ERR_BAD_URL: 'path: is not a valid URL (malformed percent-encoding)',
  FST_ERR_MAX_PARAM_LENGTH: 'path: a path segment is longer than 1000 characters',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: NOT_JSON_MESSAGE,
  FST_ERR_CTP_BODY_TOO_LARGE: 'body: is larger than the allowed size',
};

/**
 * What a 4xx error raised before or by validation says, for either surface: `message` is null
 * when it is none of the known problems (each surface words that case itself). Null for a 5xx.
 */
export function clientProblem(err: FrameworkError): { status: number; message: string | null } | null {
  const status = err.statusCode ?? 500;
  if (status < 400 || status >= 500) return null;
  if (status === 413) return { status, message: FRAMEWORK_PROBLEMS.FST_ERR_CTP_BODY_TOO_LARGE! };
  const known = err.code ? FRAMEWORK_PROBLEMS[err.code] : undefined;
  if (known) return { status, message: known };
  // Our own refusals before a route runs (SUNAP_JSON_TOO_DEEP, SUNAP_NOT_JSON) carry their message.
  if (err.code?.startsWith('SUNAP_')) return { status, message: err.message };
  if (err.validationMessage) return { status, message: err.validationMessage };
  if (err.code?.startsWith('FST_ERR_CTP')) return { status, message: 'body: is not valid JSON' };
  return { status, message: null };
}

/** The gateway surface (/api/...): a request it cannot read is 4002 with HTTP 400 (413 too large); anything else 9999. */
export function gatewayAnswer(err: FrameworkError): Answer {
  const problem = clientProblem(err);
  if (problem) {
    const message = problem.message ?? 'body: is not valid JSON';
    return { status: problem.status === 413 ? 413 : 400, body: gatewayRefusal(message), resultCode: GatewayCodes.VALIDATION };
  }
  return {
    status: 500, resultCode: GatewayCodes.INTERNAL,
    body: { result_code: -1, result_msg: 'internal error', result_data: { RESULT_CODE: GatewayCodes.INTERNAL, RESULT_MSG: INTERNAL_MSG } },
  };
}

/** Every other JSON surface (/app/v1, /sandbox, operations): the invoicing envelope. */
export function appAnswer(err: FrameworkError): Answer {
  if (err instanceof AppError) return { status: err.httpStatus, body: appEnvelope(err.resultCode, err.message), resultCode: String(err.resultCode) };
  const problem = clientProblem(err);
  if (problem?.status === 429) return answer('TOO_MANY', 'too many requests; slow down');
  if (problem) return { ...answer('VALIDATION', problem.message ?? err.message), status: problem.status === 413 ? 413 : AppCodes.VALIDATION.http };
  return answer('INTERNAL', INTERNAL_MSG);
}

export function answer(kind: AppCode, message: string): Answer {
  const c = AppCodes[kind];
  return { status: c.http, body: appEnvelope(c.code, message), resultCode: String(c.code) };
}

/**
 * What @fastify/rate-limit throws when a limit is reached; each surface's error handler
 * answers it as 429 (-29 in the JSON envelope, a page on pages).
 */
export function rateLimitError(_req: unknown, ctx: { statusCode: number; after: string }) {
  return { statusCode: ctx.statusCode, result_code: AppCodes.TOO_MANY.code, result_msg: `too many requests; try again in ${ctx.after}`, result_data: null };
}
