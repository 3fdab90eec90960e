/**
 * The gateway's public surface: what other modules (invoicing, pages, the console, the CLI,
 * the app root) may use. Everything else under src/gateway is private to it.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { JobWorker } from '../jobs/worker.js';
import type { Metrics } from '../platform/metrics.js';
import type { HttpOut } from '../ports/http-out.js';
import { ACCOUNT_EXPIRY_JOB } from './account-expiry.js';
import { ATTEMPT_LOOKUP_JOB, lookUpUnknown } from './late-charge.js';
import { countVoiding, ORDER_VOID_JOB, retryVoid } from './order-void.js';
import { CALLBACK_JOB } from './callback.js';
import { ProcessorRegistry, type ProcessorSetup } from './processors.js';
import { expireAccount } from './settle.js';
import { ENDPOINT_JOB, endpointListener } from './endpoints.js';
import { countPaymentsByState, findStoreByCode, type Store } from './repository.js';
import { GatewayService, type GatewayDeps } from './service.js';

export { lineNet, MAX_LINE_AMOUNT, type Line } from './amounts.js';
export { bizRegNumProblem, maskedCard, PaymentsConsole, type PaymentCursor, type PaymentFilter, type PaymentListRow, type StoreKey, type TimelineEntry } from './console.js';
export { CALLBACK_BACKOFF_SECONDS, CALLBACK_JOB, callbackBody } from './callback.js';
export {
  ENDPOINT_BACKOFF_SECONDS, ENDPOINT_EVENTS, ENDPOINT_JOB, EndpointService, endpointState, FAILING_DISABLE_MS, MAX_ENDPOINTS, recordStoreEvent, ROTATION_OVERLAP_MS, TEST_EVENT,
  type EndpointEvent, type EndpointView,
} from './endpoints.js';
export type { PayResult } from './approval.js';
export type { PaymentListener } from './context.js';
export { INSTALLMENT_MIN_AMOUNT, INSTALLMENT_MONTHS, installmentProblem, LUMP_SUM } from './installments.js';
export { parseStoredLines, storedLine, storeLines, type StoredLine } from './items.js';
export { createPlatform, createStore, OperatorError, rotateKey } from './merchants.js';
export * from './payment-state.js';
export type { Payment, Store } from './repository.js';
export { gatewayRoutes, notJsonObject } from './routes.js';
export { sandboxGatewayRoutes } from './sandbox-routes.js';
export { GatewayService, type PaymentInput } from './service.js';
export { STALE_ATTEMPT_MS } from './reconcile.js';
export { APPROVED_MSG, cardPaid, returnUrlFor } from './views.js';
export { ACCOUNT_EXPIRY_BACKOFF_SECONDS, ACCOUNT_EXPIRY_JOB } from './account-expiry.js';
export { ATTEMPT_LOOKUP_JOB, LATE_CHARGE_BACKOFF_SECONDS, LATE_CHARGE_FIRST_LOOKUP_SECONDS, LATE_CHARGE_MESSAGES } from './late-charge.js';
export { ORDER_VOID_BACKOFF_SECONDS, ORDER_VOID_FIRST_SECONDS, ORDER_VOID_JOB, ORDER_VOID_MESSAGES, retryVoid, type OrderVoidEvent } from './order-void.js';
export { checkedRefund, REFUND_FIELDS } from './cancellation.js';
export { ACCOUNT_HOURS, CONFIG_MESSAGE, type BeginResult, type ReturnResult } from './checkout.js';
export { ORDER_MESSAGES, type OrderOutcome } from './checkout-commit.js';
export { EVENT_BODY_LIMIT, processorEventRoutes } from './event-routes.js';
export type { EventAnswer } from './processor-events.js';
export {
  ProcessorRegistry, ProcessorUnavailable, type CheckoutFactories, type CheckoutFactory, type KeyInFactories, type KeyInFactory, type ProcessorSetup, type StoreWay,
} from './processors.js';
export { WINDOW_SWEEP_MS } from './reconcile.js';
export type { SandboxPayAnswer } from './sandbox-pay.js';
export type { CloseResult } from './settle.js';
export {
  KEY_RULES, resetSettings, setSettings, SettingsProblem, viewSettings, type KeyField, type SettingsContext, type SettingsField, type SettingsInput, type SettingsView,
} from './store-settings.js';

/** Builds the gateway: its service, its processors, its jobs (callback, endpoint webhooks, account expiry, look-ups of unknown attempts) on the worker, the endpoints' listener, its gauge. */
export function createGateway(db: Kysely<Database>, deps: Omit<GatewayDeps, 'processors'> & { processorSetup: ProcessorSetup; http: HttpOut; worker: JobWorker; metrics: Metrics }): GatewayService {
  const processors = new ProcessorRegistry(db, deps.box, deps.processorSetup);
  const gateway = new GatewayService(db, { ...deps, processors });
  deps.worker.register(CALLBACK_JOB, { db, http: deps.http, clock: deps.clock });
  deps.worker.register(ENDPOINT_JOB, { db, http: deps.http, clock: deps.clock, box: deps.box });
  deps.worker.register(ACCOUNT_EXPIRY_JOB, { expire: (payload) => expireAccount(gateway.context, payload) });
  deps.worker.register(ATTEMPT_LOOKUP_JOB, { lookUp: (payload, final) => lookUpUnknown(gateway.context, payload, final) });
  deps.worker.register(ORDER_VOID_JOB, { retry: (payload, final) => retryVoid(gateway.context, payload, final) });
  gateway.addListener(endpointListener());
  deps.metrics.countGauge('sunap_payments', 'Payments by state', 'state', () => countPaymentsByState(db));
  deps.metrics.countGauge('sunap_order_voids', 'Window orders whose automatic void the processor refused or never answered, still being retried (state="pending")', 'state', () => countVoiding(db));
  return gateway;
}

/** A store by its code, for operator actions that only hold a database (the CLI). */
export function storeByCode(db: Kysely<Database>, code: string): Promise<Store | undefined> {
  return findStoreByCode(db, code);
}
