import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { answer, appAnswer, gatewayAnswer, NOT_JSON_MESSAGE, type Answer } from './errors.js';
import type { App } from './http.js';
import type { Metrics } from './metrics.js';
import { checker } from './validation.js';

/**
 * How deep a JSON body may nest. The deepest real body (recipientItems[].items[]) has five
 * levels; a body nested thousands deep would reach recursive code (the requestId fingerprint)
 * and overflow the stack as a 500.
 */
export const MAX_JSON_DEPTH = 32;

/** True when the JSON text nests brackets deeper than `max`; strings are skipped, so `"[[["` counts nothing. */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The surfaces that take JSON bodies only (the gateway, the invoicing API, the sandbox API). */
const JSON_SURFACES = ['/api/', '/app/', '/sandbox/'];

/** True when the request carries a body (a length above 0, or a chunked one). */
function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

const JSON_TYPE = /json/i;

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim());
}

/**
 * What every route shares: schema validation whose first error names the field, the JSON body
 * parser behind a nesting limit, the security headers, metrics per request, and the one
 * error handler that turns any error into its surface's answer (src/platform/errors.ts).
 */
export function setUpHttp(app: App, deps: { metrics: Metrics; securityHeaders: Record<string, string>; isPage: (url: string) => boolean; renderPageProblem: (status: number) => string; pageHeaders: () => Record<string, string> }): {
  onFrameworkError: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => void;
} {
  // One schema drives validation and docs; its first error names the field (`members[0].studentPhone: ...`).
  app.setValidatorCompiler(({ schema }) => {
    const c = checker(schema as never);
    return (data: unknown) => {
      const err = c.firstError(data);
      return err ? { error: Object.assign(new Error(err), { validationMessage: err }) } : { value: data };
    };
  });

  // The default JSON parser (prototype-poisoning checks included), behind a nesting limit.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    // No bytes is no body: clients that send Content-Type: application/json on every call
    // (DELETE, PUT and refresh-status have no body) must not get "body: is not valid JSON".
    if ((body as string).trim() === '') {
      done(null, undefined);
      return;
    }
    if (jsonNestsDeeperThan(body as string, MAX_JSON_DEPTH)) {
      done(Object.assign(new Error(`body: is nested more than ${MAX_JSON_DEPTH} levels deep`), { statusCode: 400, code: 'SUNAP_JSON_TOO_DEEP' }), undefined);
      return;
    }
    parseJson(req, body as string, done);
  });

  app.addHook('onRequest', (req, reply, done) => {
    reply.headers(deps.securityHeaders);
    // The JSON APIs read JSON only: a form or text body is refused before any parser reads it.
    if (JSON_SURFACES.some((p) => req.url.startsWith(p)) && !deps.isPage(req.url) && hasBody(req) && !isJson(req.headers['content-type'])) {
      done(Object.assign(new Error(NOT_JSON_MESSAGE), { statusCode: 400, code: 'SUNAP_NOT_JSON' }));
      return;
    }
    done();
  });

  // JSON answers carry tokens, payment links and account data: no browser or shared cache keeps them.
  // Hooks with a callback, not async: an async hook costs a promise and a microtask per request.
  app.addHook('onSend', (_req, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && JSON_TYPE.test(type) && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });

  // The request line holds only what the serializers of src/platform/logging.ts let through
  // (method, the path with its secrets blanked, status, outcome code) and numbers, so it needs
  // no redaction pass; that pass, over every redacted path, was most of the line's cost.
  // Every other log call keeps it.
  const requestLine = app.log.child({}, { redact: [] });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const code = req.resultCode || String(status);
    deps.metrics.requests.inc({ method: req.method, route, status: String(status), result_code: code });
    deps.metrics.latency.observe({ method: req.method, route, result_code: code }, reply.elapsedTime / 1000);
    // The one log line of a request (Fastify's own two are off, src/app.ts): what was asked,
    // its outcome code beside the status, and how long it took (README.md, "Operations").
    requestLine.info({ reqId: req.id, req, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });

  const send = (req: FastifyRequest, reply: FastifyReply, a: Answer) => {
    req.resultCode = a.resultCode;
    // Plain JSON, never the route's success schema: a token error answers HTTP 200 (-1 / -2)
    // with result_data null, which the 200 schema would turn into {}.
    return reply.code(a.status).type('application/json; charset=utf-8').serializer(JSON.stringify).send(a.body);
  };
  const onError = async (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const a = req.url.startsWith('/api/') ? gatewayAnswer(err) : appAnswer(err);
    if (a.status >= 500) req.log.error({ err }, 'request failed');
    // A sign-in throttle says how long to wait; clients that honour Retry-After read it there.
    const wait = a.status === 429 ? /try again in (\d+) seconds/.exec(err.message ?? '') : null;
    if (wait) reply.header('retry-after', wait[1]);
    return send(req, reply, a);
  };
  app.setErrorHandler(onError);

  app.setNotFoundHandler(async (req, reply) => {
    if (req.url.startsWith('/app/')) return send(req, reply, answer('NOT_FOUND', 'not found'));
    return reply.code(404).type('application/json').send({ message: 'not found' });
  });

  return {
    // Fastify answers bad URLs before routing: pages get a page, the APIs their envelope.
    onFrameworkError: (err, req, reply) => {
      if (deps.isPage(req.url)) {
        void reply.code(400).headers(deps.pageHeaders()).send(deps.renderPageProblem(400));
        return;
      }
      void onError(err, req, reply);
    },
  };
}
