import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Paths pino blanks out wherever they appear. Card data never reaches a log call at all
 * (the page handler drops it before logging); these are the second line of defence.
 */
export const REDACT_PATHS = [
  'req.headers["x-access-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.API_SIGN', '*.API_KEY', '*.apiKey', 'apiKey',
  '*.password', 'password', '*.accessToken', '*.refreshToken',
  '*.webhookSecret', 'webhookSecret', '*.secret', 'secret',
  '*.cardNumber', 'cardNumber', '*.cardPassword', '*.expiry', '*.birth',
  '*.token', 'token',
  // Provider credentials (README.md, "Configuration"): adapters never log them; this is in case.
  '*.secretKey', 'secretKey', '*.apiSecret', 'apiSecret', 'req.headers["idempotency-key"]',
];

/**
 * A request's path as logged: no query string (the payment page's token rides there), and
 * the path segments that open something by themselves blanked: invoice numbers (`/pay/INV…`
 * and the public lookup open the invoice and its payment link) and console invite tokens.
 */
export function redactUrl(url: string): string {
  return url.split('?')[0]!
    .replace(/(\/sales\/public\/bill\/)[^/]+/i, '$1[redacted]')
    .replace(/(\/console\/invite\/)[^/]+/i, '$1[redacted]')
    .replace(/\/INV[^/]*/g, '/INV[redacted]');
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: redactUrl(req.url), id: req.id }),
      // The outcome code with the HTTP status: a gateway call answers HTTP 200 whatever its
      // RESULT_CODE (3001, 4002, ...), so the status alone says nothing. A code, never a secret.
      res: (reply: { statusCode: number; request?: { resultCode?: string } }) => {
        const resultCode = reply.request?.resultCode;
        return resultCode ? { statusCode: reply.statusCode, resultCode } : { statusCode: reply.statusCode };
      },
    },
  };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}
