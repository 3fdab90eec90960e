/**
 * The invoicing module's public surface: what other modules (pages, the console, the CLI, the
 * app root) may use. Everything else under src/invoicing is private to it.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import { EndpointService, type GatewayService } from '../gateway/index.js';
import type { JobWorker } from '../jobs/worker.js';
import type { HttpOut } from '../ports/http-out.js';
import type { MessagingProvider } from '../ports/messaging.js';
import type { Clock } from '../platform/clock.js';
import type { SecretBox } from '../platform/crypto.js';
import type { HttpPolicy } from '../platform/urls.js';
import { AuthService, THROTTLE_PURGE_JOB } from './accounts.js';
import { DeliveryLog } from './delivery-log.js';
import { InvoicingConsole } from './console.js';
import { RechargeService, type RechargeDeps } from './recharge.js';
import { TeamService } from './team.js';
import { TemplateService } from './templates.js';
import type { Costs } from './points.js';
import { DELIVERY_JOB } from './delivery.js';
import { SEND_JOB, SendRunner } from './sends.js';
import { InvoiceService } from './service.js';
import { WEBHOOK_JOB } from './webhooks.js';
import { createBilling, type Billing } from './billing.js';
import { SCHEDULE_JOB } from './schedules.js';
import { REMINDER_JOB } from './reminders.js';

export { AuthService, THROTTLE_PURGE_JOB, createAccount, emailProblem, grantPoints, normalizeEmail, passwordProblem, setInvoicingEnabled, tenantOf } from './accounts.js';
export { InvoicingConsole, type InvoiceCursor, type InvoiceFilter, type InvoiceListRow, type LedgerLine, type LedgerRow } from './console.js';
export type { Recharge } from './console-repository.js';
export { RECHARGE_LIMITS, RechargeService, WON_PER_POINT, type RechargeStart } from './recharge.js';
export type { Account } from './repository.js';
export { BillItem, CreateBillBody, TemplateBody } from './schemas.js';
export { hasRole, isRole, ROLE_RANK, setRoleByEmail, TeamService } from './team.js';
export { ACCESS, ACCESS_RANK, API_ROUTES, can, isAction, requireEntries, roleFor, routeKey, type AccessLevel, type Action, type RouteAccess } from './access.js';
export { MAX_TEMPLATES, TemplateService, type TemplateView } from './templates.js';
export { invoiceLines, itemView } from './items.js';
export * from './invoice-state.js';
export type { Costs } from './points.js';
export { dueDateOfPayment, lookupPublicInvoice, maskPhone, PUBLIC_RATE_LIMIT, publicInvoiceRoutes, type PublicInvoice, type PublicLine } from './public.js';
export { invoicingRoutes } from './routes.js';
export { DeliveryLog, FAILING_WINDOW_MS, SKIP_REASONS, type AttemptView, type DeliveryDetail, type DeliveryView, type RecoverResult, type SkipReason } from './delivery-log.js';
export { isFailing } from '../jobs/job-state.js';
export { InvoiceService } from './service.js';
export type { Billing } from './billing.js';
export type { ClassMonth, UnpaidRow } from './class-month.js';
export { MAX_SCHEDULES, POINTS_RETRY_MINUTES, REMINDER_LIMITS, SCHEDULE_BACKOFF_SECONDS, SCHEDULE_JOB, type RunView, type ScheduleView } from './schedules.js';
export { billingDay, ONCE_PERIOD_DAYS } from './schedule-time.js';
export { outsideQuietHours, QUIET_HOURS, REMINDER_BACKOFF_SECONDS, REMINDER_JOB } from './reminders.js';
export { MAX_CLASS_MEMBERS, MAX_CLASSES, type ClassMemberView, type ClassView } from './classes.js';
export { dueDateProblem, dueDateText, isOverdue, MAX_DUE_AHEAD_DAYS, MAX_DUE_DAYS } from './due.js';
export { SEND_BACKOFF_SECONDS, SEND_JOB } from './sends.js';
export { DELIVERY_BACKOFF_SECONDS, DELIVERY_JOB } from './delivery.js';
export { fillTemplate, INVOICE_TEMPLATE, invoiceVariables, NO_DETAILS } from './items.js';
export { recordWebhookEvent, WEBHOOK_BACKOFF_SECONDS, WEBHOOK_JOB, webhookBody } from './webhooks.js';

export interface InvoicingDeps {
  gateway: GatewayService;
  messaging: MessagingProvider;
  http: HttpOut;
  clock: Clock;
  box: SecretBox;
  costs: Costs;
  log: Logger;
  worker: JobWorker;
  /** Time limit of one provider call, in milliseconds. */
  outboundTimeoutMs: number;
  /** ALIMTALK carries the short payment link too (SUNAP_ALIMTALK_SHORT_LINK); SMS always does. */
  alimtalkShortLink?: boolean;
  webhookUrlPolicy: HttpPolicy;
  /** Sign-in attempts a minute per client address (SUNAP_LOGIN_RATE_LIMIT); 0: none. */
  loginRateLimit?: number;
  /** Points recharges: the store that sells them (null: none), sandbox, and the way back to the console. */
  recharge: Pick<RechargeDeps, 'storeCode' | 'sandbox' | 'returnUrl'>;
}

export interface Invoicing {
  auth: AuthService;
  invoices: InvoiceService;
  templates: TemplateService;
  team: TeamService;
  recharges: RechargeService;
  console: InvoicingConsole;
  /** The store's callbacks and webhooks: the log, redelivery, recovery. */
  deliveries: DeliveryLog;
  /** The store's webhook endpoints. */
  endpoints: EndpointService;
  /** Billing that runs itself: classes (docs/invoicing.md). */
  billing: Billing;
}

/**
 * Builds the invoicing side: its services, its two jobs on the worker (sends and webhooks), and
 * the listener that moves an invoice with its gateway payment.
 */
export function createInvoicing(db: Kysely<Database>, deps: InvoicingDeps): Invoicing {
  const runner = new SendRunner(db, { gateway: deps.gateway, messaging: deps.messaging, clock: deps.clock, costs: deps.costs, log: deps.log, timeoutMs: deps.outboundTimeoutMs, alimtalkShortLink: deps.alimtalkShortLink ?? false });
  const invoices = new InvoiceService(db, {
    gateway: deps.gateway, messaging: deps.messaging, runner, clock: deps.clock, box: deps.box, costs: deps.costs, log: deps.log,
    webhookUrlPolicy: deps.webhookUrlPolicy, wake: () => deps.worker.wake(),
  });
  deps.worker.register(SEND_JOB, runner);
  deps.worker.register(WEBHOOK_JOB, { db, http: deps.http, clock: deps.clock, box: deps.box });
  const auth = new AuthService(db, deps.clock, { perAddressPerMinute: deps.loginRateLimit ?? 0 });
  deps.worker.register(THROTTLE_PURGE_JOB, auth);
  deps.worker.register(DELIVERY_JOB, { db, messaging: deps.messaging, clock: deps.clock, costs: deps.costs, log: deps.log });
  deps.gateway.addListener(invoices.listener());
  const billing = createBilling(db, { clock: deps.clock, costs: deps.costs, log: deps.log, wake: () => deps.worker.wake(), sends: runner });
  deps.worker.register(SCHEDULE_JOB, billing.runner);
  deps.worker.register(REMINDER_JOB, billing.reminders);
  const recharges = new RechargeService(db, { gateway: deps.gateway, clock: deps.clock, log: deps.log, ...deps.recharge });
  deps.gateway.addListener(recharges.listener());
  return {
    auth, invoices, templates: new TemplateService(db, deps.clock), team: new TeamService(db, deps.clock, auth),
    recharges, console: new InvoicingConsole(db), deliveries: new DeliveryLog(db, { clock: deps.clock, wake: () => deps.worker.wake() }),
    endpoints: new EndpointService(db, { clock: deps.clock, box: deps.box, wake: () => deps.worker.wake() }),
    billing,
  };
}
