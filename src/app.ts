import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { migrate, openStore, type Store } from './db/index.js';
import { callbackHandler } from './gateway/callback.js';
import { gatewayRoutes, notJsonObject } from './gateway/routes.js';
import { sandboxGatewayRoutes } from './gateway/sandbox-routes.js';
import { CALLBACK_JOB, GatewayService } from './gateway/service.js';
import { JobWorker } from './jobs/queue.js';
import { invoicingPlugin } from './invoicing/index.js';
import { invoicingWebPlugin } from './invoicing/webhooks.js';
import { pageHeaders } from './pages/html.js';
import { paymentPagePaths, renderProblem } from './pages/payment-page.js';
import { pageRoutes } from './pages/routes.js';
import type { CardProcessor } from './ports/card-processor.js';
import { createHttpOut, type HttpOut } from './ports/http-out.js';
import { SandboxCardProcessor } from './ports/sandbox-card-processor.js';
import { ServiceClock } from './platform/clock.js';
import type { Config } from './platform/config.js';
import { SecretBox } from './platform/crypto.js';
import { AppError, appEnvelope, GatewayCodes } from './platform/errors.js';
import { createLogger } from './platform/logging.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { opsRoutes, sandboxClockRoutes } from './platform/ops.js';
import { securityHeaders } from './platform/security-headers.js';
import { checker } from './platform/validation.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Outcome code of the call (RESULT_CODE or result_code), for metrics and logs. */
    resultCode: string;
  }
  interface FastifyInstance {
    sunap: Sunap;
  }
}

export interface Sunap {
  config: Config;
  store: Store;
  clock: ServiceClock;
  box: SecretBox;
  gateway: GatewayService;
  worker: JobWorker;
  http: HttpOut;
  metrics: Metrics;
  log: Logger;
}

export interface BuildOptions {
  logger?: Logger;
  /** Start the job worker when the server is ready (default true). */
  runJobs?: boolean;
  processor?: CardProcessor;
}

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

/** Path problems Fastify finds before any route runs, as `path: reason` (each surface wraps it in its envelope). */
const PATH_PROBLEMS: Record<string, string> = {
  FST_ERR_BAD_URL: 'path: is not a valid URL (malformed percent-encoding)',
  FST_ERR_MAX_PARAM_LENGTH: 'path: a path segment is longer than 1000 characters',
};

/** One root that composes the whole service; the server and every test build the same app. */
export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const log = opts.logger ?? createLogger(config.logLevel);
  const store = openStore(config.databaseUrl);
  try {
    await migrate(store.db);
  } catch (err) {
    await store.close();
    throw err;
  }
  const clock = new ServiceClock(config.mode === 'sandbox' ? store.db : null);
  await clock.refresh();
  const box = new SecretBox(config.secretKey);
  const http = createHttpOut({ allowPrivateTargets: config.allowPrivateTargets, timeoutMs: config.outboundTimeoutMs });
  const metrics = createMetrics(store.db);
  const worker = new JobWorker(store.db, store.engine, clock, log, {
    pollMs: config.jobPollMs, leaseMs: config.jobLeaseMs, concurrency: config.jobConcurrency, batch: Math.min(64, config.jobConcurrency),
    onFailure: (kind, final) => metrics.jobFailures.inc({ kind, final: String(final) }),
  });
  const gateway = new GatewayService(store.db, {
    clock, box, processor: opts.processor ?? new SandboxCardProcessor(store.db), secretKey: config.secretKey,
    paymentPageUrl: config.paymentPageUrl, signMaxSkewSeconds: config.signMaxSkewSeconds, log, wake: () => worker.wake(),
  });
  worker.register(CALLBACK_JOB, callbackHandler(store.db, http, clock));

  const pagePrefixes = [
    paymentPagePaths(config.paymentPageUrl).page,
    `${new URL(config.publicPayPageUrl).pathname.replace(/\/+$/, '')}/`,
  ];
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    requestIdHeader: false,
    // Long path values (a 64-char TRANS_SEQNO, URL-encoded) must reach validation, not a bare 414.
    routerOptions: { maxParamLength: 1000 },
    trustProxy: config.trustProxy,
    forceCloseConnections: false,
    // Fastify answers these in its own JSON before routing: send them to the error handler
    // below (the API envelopes), or answer a page on page paths.
    frameworkErrors: (err, req, res) => {
      const reply = res as unknown as FastifyReply;
      if (pagePrefixes.some((p) => req.url.startsWith(p))) {
        void reply.code(400).headers(pageHeaders()).type('text/html; charset=utf-8').send(renderProblem(400));
        return;
      }
      void onError(err, req as unknown as FastifyRequest, reply);
    },
  }) as unknown as FastifyInstance;
  app.decorate('sunap', { config, store, clock, box, gateway, worker, http, metrics, log });
  app.decorateRequest('resultCode', '');

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
    if (jsonNestsDeeperThan(body as string, MAX_JSON_DEPTH)) {
      done(Object.assign(new Error(`body: is nested more than ${MAX_JSON_DEPTH} levels deep`), { statusCode: 400, code: 'SUNAP_JSON_TOO_DEEP' }), undefined);
      return;
    }
    parseJson(req, body as string, done);
  });

  const security = securityHeaders({
    // Pages set their own CSP (the form must be allowed to go back to the merchant).
    contentSecurityPolicy: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    hsts: config.publicUrl.startsWith('https:'),
  });
  app.addHook('onRequest', (_req, reply, done) => {
    reply.headers(security);
    done();
  });
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await app.register(rateLimit, { global: false });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Sunap',
        version: '0.1.0',
        description: 'Payment gateway (/api) and invoicing server (/app/v1). Gateway calls answer HTTP 200 with the outcome in result_data.RESULT_CODE; invoicing calls answer result_code 0 on success.',
      },
      components: { securitySchemes: { accessToken: { type: 'apiKey', in: 'header', name: 'x-access-token' } } },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const code = req.resultCode || String(reply.statusCode);
    metrics.requests.inc({ method: req.method, route, status: String(reply.statusCode), result_code: code });
    metrics.latency.observe({ method: req.method, route, result_code: code }, reply.elapsedTime / 1000);
  });

  const onError = async (err: Error & { statusCode?: number; code?: string; validation?: unknown; validationMessage?: string }, req: FastifyRequest, reply: FastifyReply) => {
    const status = err.statusCode ?? 500;
    const url = req.url;
    if (url.startsWith('/api/')) {
      if (status >= 400 && status < 500) {
        req.resultCode = GatewayCodes.VALIDATION;
        const body = notJsonObject();
        if (status === 413) body.result_data.RESULT_MSG = 'body: is larger than the allowed size';
        else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') body.result_data.RESULT_MSG = 'body: must be sent as application/json';
        else if (err.code && PATH_PROBLEMS[err.code]) body.result_data.RESULT_MSG = PATH_PROBLEMS[err.code]!;
        else if (err.code === 'SUNAP_JSON_TOO_DEEP') body.result_data.RESULT_MSG = err.message;
        else if (err.code !== 'FST_ERR_VALIDATION') body.result_data.RESULT_MSG = 'body: is not valid JSON';
        return reply.code(status === 413 ? 413 : 400).send(body);
      }
      req.log.error({ err }, 'gateway call failed');
      req.resultCode = GatewayCodes.INTERNAL;
      return reply.code(500).send({ result_code: -1, result_msg: 'internal error', result_data: { RESULT_CODE: GatewayCodes.INTERNAL, RESULT_MSG: 'internal error; nothing was changed, try again' } });
    }
    if (err instanceof AppError) {
      req.resultCode = String(err.resultCode);
      return reply.code(err.httpStatus).send(appEnvelope(err.resultCode, err.message));
    }
    if (status >= 400 && status < 500) {
      let msg = err.validationMessage ?? err.message;
      if (status === 413) msg = 'body: is larger than the allowed size';
      else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') msg = 'body: must be sent as application/json';
      else if (err.code?.startsWith('FST_ERR_CTP')) msg = 'body: is not valid JSON';
      else if (err.code && PATH_PROBLEMS[err.code]) msg = PATH_PROBLEMS[err.code]!;
      if (status === 429) {
        req.resultCode = '-29';
        return reply.code(429).send(appEnvelope(-29, 'too many requests; slow down'));
      }
      req.resultCode = '-20';
      return reply.code(status === 413 ? 413 : 400).send(appEnvelope(-20, msg));
    }
    req.log.error({ err }, 'request failed');
    req.resultCode = '-99';
    return reply.code(500).send(appEnvelope(-99, 'internal error; nothing was changed, try again'));
  };
  app.setErrorHandler(onError);

  app.setNotFoundHandler(async (req, reply) => {
    if (req.url.startsWith('/app/')) return reply.code(404).send(appEnvelope(-10, 'not found'));
    return reply.code(404).type('application/json').send({ message: 'not found' });
  });

  opsRoutes(app);
  gatewayRoutes(app, gateway);
  await app.register(pageRoutes);
  // Registered without encapsulation (fastify-plugin style) would leak hooks; these plugins
  // only add routes, jobs and listeners through app.sunap, so plain calls keep it simple.
  await invoicingPlugin(app);
  await invoicingWebPlugin(app);
  if (config.mode === 'sandbox') {
    sandboxClockRoutes(app);
    sandboxGatewayRoutes(app);
  }

  // Attempts left open by a process that died mid-payment are settled in the background.
  let sweep: NodeJS.Timeout | null = null;
  if (opts.runJobs !== false) {
    app.addHook('onReady', async () => {
      worker.start();
      sweep = setInterval(() => void gateway.reconcileAll().catch((err) => log.warn({ err: (err as Error).message }, 'reconcile sweep failed')), 30_000);
      sweep.unref();
    });
  }
  app.addHook('onClose', async () => {
    if (sweep) clearInterval(sweep);
    await worker.stop();
    await store.close();
  });
  return app;
}
