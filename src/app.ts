import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { migrate, openDatabase, type DatabaseHandle } from './db/index.js';
import { consoleRoutes, createConsoleParts } from './console/index.js';
import {
  createGateway, gatewayRoutes, PaymentsConsole, processorEventRoutes, ProcessorUnavailable, sandboxGatewayRoutes, type CheckoutFactories, type GatewayService,
  type ProcessorSetup, type SettingsContext,
} from './gateway/index.js';
import { ACCOUNT_EXPIRY_JOB } from './gateway/account-expiry.js';
import { ATTEMPT_LOOKUP_JOB } from './gateway/late-charge.js';
import { ORDER_VOID_JOB } from './gateway/order-void.js';
import { AuthService, createInvoicing, dueDateOfPayment, invoicingRoutes, publicInvoiceRoutes, type InvoiceService, type Invoicing } from './invoicing/index.js';
import { CALLBACK_JOB } from './gateway/callback.js';
import { ENDPOINT_JOB } from './gateway/endpoints.js';
import { THROTTLE_PURGE_JOB } from './invoicing/accounts.js';
import { DELIVERY_JOB } from './invoicing/delivery.js';
import { SEND_JOB } from './invoicing/sends.js';
import { SCHEDULE_JOB } from './invoicing/schedules.js';
import { REMINDER_JOB } from './invoicing/reminders.js';
import { WEBHOOK_JOB } from './invoicing/webhooks.js';
import type { JobDefinition } from './jobs/define.js';
import { countJobsByKind } from './jobs/repository.js';
import { PRUNE_JOB, startRetention } from './jobs/retention.js';
import { JobWorker } from './jobs/worker.js';
import { pageHeaders } from './pages/html.js';
import { invoicePagePath, invoicePageRoutes } from './pages/invoice-page.js';
import { sandboxOutboxRoutes } from './pages/outbox.js';
import { paymentPagePaths, renderProblem } from './pages/payment-page.js';
import { pageRoutes } from './pages/routes.js';
import { shortLinkBase, shortLinkRoutes } from './pages/short-link.js';
import { sandboxWindowPath } from './pages/sandbox-window.js';
import type { CardProcessor } from './ports/card-processor.js';
import { createHttpOut, type HttpOut } from './ports/http-out.js';
import type { MessagingProvider } from './ports/messaging.js';
import { SandboxCardProcessor } from './ports/sandbox-card-processor.js';
import { SandboxCheckout } from './ports/sandbox-checkout.js';
import { SandboxMessaging } from './ports/sandbox-messaging.js';
import { SolapiMessaging } from './ports/solapi-messaging.js';
import { TossCardProcessor } from './ports/toss-card-processor.js';
import { TossCheckout } from './ports/toss-checkout.js';
import { ServiceClock, type SharedClock } from './platform/clock.js';
import type { Config } from './platform/config.js';
import { merchantUrlPolicy } from './platform/urls.js';
import { hmacToken, SecretBox } from './platform/crypto.js';
import { TOSS_API_URL, TOSS_SDK_URL } from './platform/providers.js';
import type { CheckoutFactory } from './gateway/processors.js';
import type { CheckoutProcessorId, PayWay } from './ports/checkout.js';
import { PortoneCheckout } from './ports/portone-checkout.js';
import type { App } from './platform/http.js';
import { setUpHttp } from './platform/http-setup.js';
import { createLogger, lazyRequestLogger } from './platform/logging.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { opsRoutes, sandboxClockRoutes } from './platform/ops.js';
import { sandboxGuard } from './platform/sandbox-guard.js';
import { securityHeaders } from './platform/security-headers.js';

export { jsonNestsDeeperThan, MAX_JSON_DEPTH } from './platform/http-setup.js';

declare module 'fastify' {
  interface FastifyInstance {
    sunap: Sunap;
  }
}

/** Everything the app is made of, for the server, the tests and the operator's tools. */
export interface Sunap {
  config: Config;
  database: DatabaseHandle;
  clock: SharedClock;
  box: SecretBox;
  gateway: GatewayService;
  invoices: InvoiceService;
  auth: AuthService;
  /** The invoicing side as a whole (templates, team, recharges, the console's reads). */
  invoicing: Invoicing;
  worker: JobWorker;
  http: HttpOut;
  metrics: Metrics;
  log: Logger;
}

/**
 * What a caller may put in place of the real parts. The ports (card processor, messaging
 * provider, outbound HTTP, clock) plug in here, for tests and for the live providers alike.
 */
export interface BuildOptions {
  logger?: Logger;
  /** Start the job worker and the reconcile sweep when the server is ready (default true). */
  runJobs?: boolean;
  /** Every key-in (card-number) processor, for tests that script the card network. */
  processor?: CardProcessor;
  /** Checkout adapters by processor id, in place of (or besides) the configured ones. */
  checkout?: CheckoutFactories;
  messaging?: MessagingProvider;
  http?: HttpOut;
  clock?: SharedClock;
}

/** How often attempts left open by a dead process are settled. */
/**
 * Every job the app registers (src/jobs/README.md, "Every job"). The reliability harness and the
 * bench read the definitions' flags from here (which kinds are `housekeeping`) instead of
 * repeating kinds as strings.
 */
export const JOBS: readonly JobDefinition<never, never>[] = [CALLBACK_JOB, ENDPOINT_JOB, ACCOUNT_EXPIRY_JOB, ATTEMPT_LOOKUP_JOB, ORDER_VOID_JOB, SEND_JOB, WEBHOOK_JOB, DELIVERY_JOB, THROTTLE_PURGE_JOB, PRUNE_JOB, SCHEDULE_JOB, REMINDER_JOB];

const RECONCILE_EVERY_MS = 30_000;

/** One root that composes the whole service; the server and every test build the same app. */
export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<App> {
  const log = opts.logger ?? createLogger(config.logLevel);
  const database = openDatabase(config.databaseUrl, { groupCommit: config.sqliteGroupCommit, poolSize: config.pgPoolSize });
  const { db } = database;
  try {
    await migrate(db);
  } catch (err) {
    await database.close();
    throw err;
  }
  const sandbox = config.mode === 'sandbox';
  const clock = opts.clock ?? new ServiceClock(sandbox ? db : null);
  await clock.refresh();
  const box = new SecretBox(config.secretKey);
  const http = opts.http ?? createHttpOut({ allowPrivateTargets: config.allowPrivateTargets, timeoutMs: config.outboundTimeoutMs });
  const metrics = createMetrics();
  const worker = new JobWorker(db, database.engine, clock, log, {
    pollMs: config.jobPollMs, leaseMs: config.jobLeaseMs, concurrency: config.jobConcurrency, batch: Math.min(64, config.jobConcurrency), perStore: config.jobStoreConcurrency,
    // A platform never gets less than one of its stores would.
    perPlatform: Math.max(config.jobPlatformConcurrency, config.jobStoreConcurrency),
    // A quarter of the slots stay for stores under their limit; the rest is spare capacity any store may use.
    reserve: Math.max(config.jobStoreConcurrency, Math.ceil(config.jobConcurrency / 4)),
    onFailure: (kind, final) => metrics.jobFailures.inc({ kind, final: String(final) }),
  });
  metrics.countGauge('sunap_jobs_pending', 'Jobs waiting to run (queue depth) by kind', 'kind', () => countJobsByKind(db, 'PENDING'));
  metrics.countGauge('sunap_jobs_dead', 'Jobs given up after their last attempt, by kind', 'kind', () => countJobsByKind(db, 'DEAD'));

  worker.register(PRUNE_JOB, { db, clock, retentionDays: config.deliveryRetentionDays, onPruned: (n) => n > 0 && log.info({ pruned: n }, 'old delivery attempts pruned') });
  const wake = () => worker.wake();
  const urlPolicy = merchantUrlPolicy(config.mode);
  const sandboxCheckout = sandboxCheckoutOf(config, db, clock);
  const processorSetup = processorSetupOf(config, db, log, { processor: opts.processor, checkout: opts.checkout, sandbox: sandboxCheckout });
  const messaging = opts.messaging ?? messagingOf(config, db, clock, log);
  const gateway = createGateway(db, {
    clock, box, http, processorSetup, secretKey: config.secretKey, callLimitMs: operatorCallLimitMs(processorSetup),
    paymentPageUrl: config.paymentPageUrl, shortLinkUrl: shortLinkUrlOf(config), signMaxSkewSeconds: config.signMaxSkewSeconds, confirmUrlPolicy: urlPolicy,
    log, wake, worker, metrics,
  });
  const invoicing = createInvoicing(db, {
    gateway, messaging, http, clock, box, costs: config.costs, log, worker,
    outboundTimeoutMs: config.outboundTimeoutMs, alimtalkShortLink: config.alimtalkShortLink, webhookUrlPolicy: urlPolicy, loginRateLimit: config.loginRateLimit,
    recharge: { storeCode: config.rechargeStoreCode, sandbox, returnUrl: (id) => `${config.publicUrl}/console/points?recharge=${encodeURIComponent(id)}` },
  });
  metrics.countTotal('sunap_schedule_runs_total', 'Schedule runs by status (SENT, WAITING_POINTS, MISSED, SKIPPED), counted in the database', 'status', invoicing.billing.runCounts);
  metrics.countTotal('sunap_reminders_sent_total', 'Reminders to the unpaid by status (SENT: handed to the messaging provider; SKIPPED: paid, cancelled, deleted or short of points first), counted in the database', 'status', invoicing.billing.reminderCounts);
  const { auth, invoices } = invoicing;

  const pagePrefixes = [paymentPagePaths(config.paymentPageUrl).page, `${new URL(config.publicPayPageUrl).pathname.replace(/\/+$/, '')}/`, `${shortLinkBase(shortLinkUrlOf(config))}/`];
  let frameworkError: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => void = () => {};
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    requestIdHeader: false,
    // One line per request, written when it is answered (src/platform/http-setup.ts), instead of
    // Fastify's two: the second line was a quarter of a searchPayment's CPU at the info level.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, options) => lazyRequestLogger(logger as Logger, bindings, options) as FastifyBaseLogger,
    // Long path values (a 64-char TRANS_SEQNO, URL-encoded) must reach validation, not a bare 414.
    routerOptions: { maxParamLength: 1000 },
    trustProxy: trustProxyOption(config.trustProxy),
    forceCloseConnections: false,
    // Slow clients (docs/security.md): a request that has not fully arrived in time is answered
    // 408 and its connection closed. Node checks the open requests every
    // connectionsCheckingInterval, so that follows the shorter limit.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.http.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.http.headersTimeoutMs / 4))),
    },
    // Fastify answers these before routing; send them to our handlers instead of its own JSON.
    frameworkErrors: (err, req, res) => frameworkError(err, req, res as unknown as FastifyReply),
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Connections past the cap are closed as they arrive, before any request is read.
  app.server.maxConnections = config.http.maxConnections;
  app.decorate('sunap', { config, database, clock, box, gateway, invoices, auth, invoicing, worker, http, metrics, log });
  app.decorateRequest('resultCode', '');

  frameworkError = setUpHttp(app, {
    metrics,
    securityHeaders: securityHeaders({
      // Pages set their own CSP (the form must be allowed to go back to the merchant).
      contentSecurityPolicy: false,
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
      hsts: config.publicUrl.startsWith('https:'),
    }),
    isPage: (url) => pagePrefixes.some((p) => url.startsWith(p)),
    renderPageProblem: renderProblem,
    pageHeaders: () => pageHeaders(),
  }).onFrameworkError;

  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await app.register(rateLimit, { global: false });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Sunap',
        version: '0.1.0',
        description: 'Payment gateway (/api) and invoicing server (/app/v1). Gateway calls answer HTTP 200 with the outcome in result_data.RESULT_CODE; invoicing calls answer result_code 0 on success. Every code and its cause: docs/reference.md in the repository.',
      },
      components: { securitySchemes: { accessToken: { type: 'apiKey', in: 'header', name: 'x-access-token', description: 'From /app/v1/auth/login. Missing: 401 / -1. Present but unknown, revoked or replaced: 200 / -1; expired: 200 / -2 (renew with /app/v1/auth/refresh, or log in again).' } } },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  opsRoutes(app, { db, metrics, metricsToken: config.metricsToken });
  gatewayRoutes(app, gateway);
  // Encapsulated: the payment page's HTML error handler applies to its routes only.
  await app.register(async (pages) => pageRoutes(pages, {
    gateway, clock, paymentPageUrl: config.paymentPageUrl, sandbox, sandboxWindow: sandbox ? sandboxCheckout : null,
    dueDateOf: (p) => dueDateOfPayment(db, p.id, p.store_code),
  }));
  // Encapsulated: the raw-body parser of processors' notices applies to their routes only.
  await app.register(async (scope) => processorEventRoutes(scope, gateway));
  invoicingRoutes(app, { auth, invoices, costs: config.costs, loginRateLimit: config.loginRateLimit, deliveries: invoicing.deliveries, endpoints: invoicing.endpoints, billing: invoicing.billing });
  publicInvoiceRoutes(app, db, gateway, clock);
  invoicePageRoutes(app, { db, gateway, publicPayPageUrl: config.publicPayPageUrl, clock });
  shortLinkRoutes(app, { gateway, shortLinkUrl: shortLinkUrlOf(config) });
  const consoleParts = createConsoleParts(db, { gateway, invoicing, clock });
  // Encapsulated under /console: its cookies, CSRF tokens, uploads and HTML errors stay there.
  await app.register(async (scope) => consoleRoutes(scope, {
    gateway, payments: new PaymentsConsole(db), invoicing, ...consoleParts, clock, costs: config.costs, publicUrl: config.publicUrl,
    publicPayPageUrl: config.publicPayPageUrl, sandbox, secureCookies: config.publicUrl.startsWith('https:'), loginRateLimit: config.loginRateLimit,
    settings: settingsContextOf(config, db, box),
    secretKey: config.secretKey,
  }), { prefix: '/console' });
  // A person who opens the service's address lands in the console.
  app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.code(303).header('location', '/console').send());
  if (sandbox) {
    app.addHook('onRequest', sandboxGuard({
      hosts: [config.publicUrl, config.paymentPageUrl, config.publicPayPageUrl].map((u) => new URL(u).hostname),
      open: config.sandboxOpen,
    }));
    sandboxClockRoutes(app, { clock, wake });
    sandboxGatewayRoutes(app, gateway);
    sandboxOutboxRoutes(app, db);
  }

  let sweep: NodeJS.Timeout | null = null;
  let stopRetention = () => {};
  if (opts.runJobs !== false) {
    app.addHook('onReady', async () => {
      await auth.schedulePurge();
      worker.start();
      stopRetention = startRetention({ db, clock, wake, onError: (err) => log.warn({ err: err.message }, 'could not schedule the delivery-log pruning') });
      // Attempts left open by a process that died mid-payment are settled in the background:
      // once at start (a restart after a crash), then at least twice per staleness window.
      const settle = () => void gateway.reconcileAll().catch((err) => log.warn({ err: (err as Error).message }, 'reconcile sweep failed'));
      settle();
      sweep = setInterval(settle, Math.min(RECONCILE_EVERY_MS, Math.ceil(gateway.staleAttemptMs / 2)));
      sweep.unref();
    });
  }
  app.addHook('onClose', async () => {
    if (sweep) clearInterval(sweep);
    stopRetention();
    await worker.stop();
    await database.close();
  });
  return app;
}

export { invoicePagePath };

/**
 * SUNAP_TRUST_PROXY as Fastify's trustProxy. A hop count trusts that many nearest hops,
 * whoever they are (only safe when the port is reachable through the proxies alone: see
 * docs/security.md); addresses and CIDRs trust those proxies only.
 */
function trustProxyOption(t: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof t === 'number') return (_address, hop) => hop < t;
  return t;
}

/** The sandbox's checkout processor: its window beside the payment page, its address signed under the master key. */
export function sandboxCheckoutOf(config: Config, db: DatabaseHandle['db'], clock: { nowMs(): number }): SandboxCheckout {
  return new SandboxCheckout({
    db, clock, windowPath: sandboxWindowPath(config.paymentPageUrl), tokenKey: Buffer.from(hmacToken(config.secretKey, 'sandbox-window', 'v1', 32), 'base64url'),
  });
}

/**
 * The processors the app can use (src/gateway/processors.ts), one factory per processor id,
 * and the operator's processor, way and keys. A store's own keys are handed to the same
 * factories: `toss` is Toss Payments' window (src/ports/toss-checkout.ts), `toss-keyin` its
 * card-number API; a processor without a factory (or without keys) is told it is not available.
 */
export function processorSetupOf(config: Config, db: DatabaseHandle['db'], log: Logger, over: { processor?: CardProcessor; checkout?: CheckoutFactories; sandbox: SandboxCheckout }): ProcessorSetup {
  const c = config.cardProcessor;
  const toss = c.kind === 'toss' || c.kind === 'toss-keyin' ? { baseUrl: c.baseUrl, testCode: c.testCode, sdkUrl: c.kind === 'toss' ? c.sdkUrl : TOSS_SDK_URL } : { baseUrl: TOSS_API_URL, sdkUrl: TOSS_SDK_URL };
  const sandboxNetwork = new SandboxCardProcessor(db);
  return {
    global: operatorWayOf(config),
    globalKeys: c.kind === 'toss' ? { toss: { clientKey: c.clientKey, secretKey: c.secretKey } } : c.kind === 'toss-keyin' ? { toss: { secretKey: c.secretKey } }
      : c.kind === 'portone' ? { portone: { apiSecret: c.apiSecret, storeId: c.storeId, channelKey: c.channelKey, webhookSecret: c.webhookSecret } } : {},
    live: config.mode === 'live',
    checkout: {
      sandbox: () => over.sandbox,
      toss: (keys) => {
        if (!keys.clientKey || !keys.secretKey) throw new ProcessorUnavailable('toss: no client key and secret key (SUNAP_TOSS_CLIENT_KEY and SUNAP_TOSS_SECRET_KEY, or the store\'s own: sunap store set-processor)');
        return new TossCheckout({ clientKey: keys.clientKey, secretKey: keys.secretKey, baseUrl: toss.baseUrl, sdkUrl: toss.sdkUrl, timeoutMs: config.outboundTimeoutMs }, log);
      },
      portone: portoneFactory(config, log),
      ...over.checkout,
    },
    keyIn: {
      'sandbox-keyin': () => over.processor ?? sandboxNetwork,
      'toss-keyin': (keys) => {
        if (over.processor) return over.processor;
        if (!keys.secretKey) throw new ProcessorUnavailable('toss-keyin: no secret key (SUNAP_TOSS_SECRET_KEY, or the store\'s own: sunap store set-processor)');
        return new TossCardProcessor({ secretKey: keys.secretKey, baseUrl: toss.baseUrl, testCode: toss.testCode, timeoutMs: config.outboundTimeoutMs }, log);
      },
    },
  };
}

/** The operator's processor and way (SUNAP_CARD_PROCESSOR): what a store without settings of its own uses. */
function operatorWayOf(config: Config): { processor: CheckoutProcessorId; way: PayWay } {
  const k = config.cardProcessor.kind;
  return { processor: k === 'sandbox' ? 'sandbox' : k === 'portone' ? 'portone' : 'toss', way: k === 'toss-keyin' ? 'key-in' : 'checkout' };
}

/**
 * PortOne V2's adapter (src/ports/portone-checkout.ts) with a store's keys or the operator's;
 * SUNAP_PORTONE_API_URL (the fake in a rehearsal) applies to both.
 */
function portoneFactory(config: Config, log: Logger): CheckoutFactory {
  const baseUrl = config.portoneApiUrl;
  return (keys, scope) => {
    if (!keys.apiSecret || !keys.storeId || !keys.channelKey) {
      throw new ProcessorUnavailable('portone: no API secret, store id and channel key (SUNAP_PORTONE_*, or the store\'s own: sunap store set-processor)');
    }
    // Each payment names where PortOne posts its notices: the store's own address when the keys are its own.
    const noticeUrl = `${config.publicUrl}/processor-events/portone${scope?.storeCode ? `/${encodeURIComponent(scope.storeCode)}` : ''}`;
    return new PortoneCheckout({ apiSecret: keys.apiSecret, storeId: keys.storeId, channelKey: keys.channelKey, webhookSecret: keys.webhookSecret, baseUrl, timeoutMs: config.outboundTimeoutMs, noticeUrl }, log);
  };
}

/** What a store's processor settings are checked against: the mode, the operator's processor and which keys the operator configured. */
export function settingsContextOf(config: Config, db: DatabaseHandle['db'], box: SecretBox): SettingsContext {
  const c = config.cardProcessor;
  return {
    db, box, live: config.mode === 'live',
    operator: operatorWayOf(config),
    operatorKeys: c.kind === 'sandbox' ? [] : c.kind === 'portone' ? ['portone'] : ['toss'],
  };
}

/** The longest call of the operator's own processor (the reconcile's staleness), when it says. */
export function operatorCallLimitMs(setup: ProcessorSetup): number | undefined {
  const { processor, way } = setup.global;
  const keys = setup.globalKeys[processor] ?? {};
  try {
    if (way === 'key-in') return setup.keyIn[`${processor}-keyin` as 'toss-keyin']?.(keys).callLimitMs;
    return setup.checkout[processor]?.(keys).callLimitMs;
  } catch {
    return undefined;
  }
}

/** The operator's key-in processor, for `sunap doctor`'s credential check; null when the operator's way is the window. */
export function cardProcessorOf(config: Config, db: DatabaseHandle['db'], log: Logger): CardProcessor | null {
  const c = config.cardProcessor;
  if (c.kind === 'toss-keyin') return new TossCardProcessor({ secretKey: c.secretKey, baseUrl: c.baseUrl, testCode: c.testCode, timeoutMs: config.outboundTimeoutMs }, log);
  return c.kind === 'sandbox' ? new SandboxCardProcessor(db) : null;
}

export function messagingOf(config: Config, db: DatabaseHandle['db'], clock: SharedClock, log: Logger): MessagingProvider {
  const m = config.messaging;
  if (m.kind === 'solapi') return new SolapiMessaging({ ...m, timeoutMs: config.outboundTimeoutMs }, log);
  return new SandboxMessaging(db, clock);
}

/** Short payment links live at `{SUNAP_PUBLIC_URL}/s/<code>` (src/pages/short-link.ts). */
function shortLinkUrlOf(config: Config): string {
  return `${config.publicUrl.replace(/\/+$/, '')}/s`;
}
