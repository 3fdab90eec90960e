import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AppCodes, appOk } from './errors.js';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';

/**
 * The app as every route module sees it: the TypeBox type provider types `req.body`,
 * `req.query` and `req.params` from the route's schema, so routes need no casts.
 */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Outcome code of the call (RESULT_CODE or result_code), for metrics and the request's log line. */
    resultCode: string;
  }
}

export type { FastifyReply, FastifyRequest };

/** An invoicing success answer, with its code recorded for metrics and the log line. */
export function ok<T = null>(req: FastifyRequest, data?: T): { result_code: number; result_msg: string; result_data: T } {
  req.resultCode = String(AppCodes.OK.code);
  return appOk((data ?? null) as T);
}
