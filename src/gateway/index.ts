/**
 * The gateway's public surface: what other modules (invoicing, pages, the console, the CLI,
 * the app root) may use. Everything else under src/gateway is private to it.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { JobWorker } from '../jobs/worker.js';
import type { Metrics } from '../platform/metrics.js';
import type { HttpOut } from '../ports/http-out.js';
import { CALLBACK_JOB } from './callback.js';
import { ENDPOINT_JOB, endpointListener } from './endpoints.js';
import { countPaymentsByState, findStoreByCode, type Store } from './repository.js';
import { GatewayService, type GatewayDeps } from './service.js';

export { lineNet, MAX_LINE_AMOUNT, type Line } from './amounts.js';
export { bizRegNumProblem, maskedCard, PaymentsConsole, type PaymentCursor, type PaymentFilter, type PaymentListRow, type StoreKey, type TimelineEntry } from './console.js';
export { CALLBACK_BACKOFF_SECONDS, CALLBACK_JOB, callbackBody } from './callback.js';
export {
  ENDPOINT_BACKOFF_SECONDS, ENDPOINT_EVENTS, ENDPOINT_JOB, EndpointService, FAILING_DISABLE_MS, MAX_ENDPOINTS, recordStoreEvent, ROTATION_OVERLAP_MS, TEST_EVENT,
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
export { APPROVED_MSG, returnUrlFor } from './views.js';

/** Builds the gateway: its service, its callback and endpoint jobs on the worker, the endpoints' listener, its gauge. */
export function createGateway(db: Kysely<Database>, deps: GatewayDeps & { http: HttpOut; worker: JobWorker; metrics: Metrics }): GatewayService {
  const gateway = new GatewayService(db, deps);
  deps.worker.register(CALLBACK_JOB, { db, http: deps.http, clock: deps.clock });
  deps.worker.register(ENDPOINT_JOB, { db, http: deps.http, clock: deps.clock, box: deps.box });
  gateway.addListener(endpointListener());
  deps.metrics.countGauge('sunap_payments', 'Payments by state', 'state', () => countPaymentsByState(db));
  return gateway;
}

/** A store by its code, for operator actions that only hold a database (the CLI). */
export function storeByCode(db: Kysely<Database>, code: string): Promise<Store | undefined> {
  return findStoreByCode(db, code);
}
